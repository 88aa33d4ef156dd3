package bff

import "context"

// FaultArmer arms the fault injection of the embedded sandbox upstream, so
// testers can make the next turns fail on purpose (sandbox/README.md, "Fault
// injection"). It exists only when the upstream is the embedded sandbox with
// faults enabled; against a real service there is none, and the web layer
// shows no fault panel. The sandbox's key stays inside the implementation:
// nothing it returns carries it.
//
// ArmFault arms f for clinician and records it in the audit log. Errors:
// EINVALID (Field "kind", "intake" or "count") for an unknown kind, a count
// outside 1..MaxFaultCount or a malformed intake id; ENOTFOUND (Field
// "intake") for an intake the sandbox does not know; EUNAVAILABLE when the
// sandbox does not answer. Nothing is armed when it returns an error.
type FaultArmer interface {
	ArmFault(ctx context.Context, clinician string, f Fault) error
}

// Fault is one arming: the next Count turns of IntakeID (or of every intake
// when IntakeID is "") get Kind.
type Fault struct {
	Kind     string
	IntakeID string
	Count    int
}

// MaxFaultCount bounds one arming.
const MaxFaultCount = 20

// FaultKind is one kind of fault and what a turn that meets it gets.
type FaultKind struct {
	Kind, Effect string
}

// FaultKinds are the sandbox's fault kinds, in the order of its README.
var FaultKinds = []FaultKind{
	{"upstream_error", "502 upstream_error before any processing (the turn is not applied)"},
	{"unavailable", "503 unavailable (not applied)"},
	{"internal_error", "500 internal_error (not applied)"},
	{"rate_limited", "429 rate_limited with Retry-After: 3 (not applied)"},
	{"quota_exceeded", "429 quota_exceeded (not applied)"},
	{"stream_drop", "the connection is cut after a few fragments; the turn IS applied and shows in the handoff"},
	{"stream_error", "an error event after a few fragments, or 502 for a blocking turn (not applied)"},
	{"null_state", "the turn completes with safety_status, disposition and disposition_label null"},
	{"slow_start", "5 s more before the first fragment or the blocking response (applied)"},
}

// IsFaultKind reports whether kind is one of FaultKinds.
func IsFaultKind(kind string) bool {
	for _, k := range FaultKinds {
		if k.Kind == kind {
			return true
		}
	}
	return false
}
