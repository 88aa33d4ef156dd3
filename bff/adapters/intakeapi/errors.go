package intakeapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/intakeservice"
)

// Code is an error code of the service's error envelope (package intakeservice's).
// Unknown codes are kept as received.
type Code = intakeservice.Code

// Codes of the spec's Errors table, plus the two the sandbox documents where
// the spec is silent.
const (
	CodeInvalidRequest = intakeservice.CodeInvalidRequest // 400 (413 for a body over 64 KB in the sandbox)
	CodeUnauthorized   = intakeservice.CodeUnauthorized   // 401
	CodeNotFound       = intakeservice.CodeNotFound       // 404
	CodeIntakeClosed   = intakeservice.CodeIntakeClosed   // 409: stop sending turns; read the handoff
	CodeIntakeExpired  = intakeservice.CodeIntakeExpired  // 410: create a new intake; the handoff stays readable
	CodeRateLimited    = intakeservice.CodeRateLimited    // 429 with Retry-After
	CodeQuotaExceeded  = intakeservice.CodeQuotaExceeded  // 429: resume after 00:00 UTC
	CodeUpstreamError  = intakeservice.CodeUpstreamError  // 502: retry once with the same Idempotency-Key
	CodeUnavailable    = intakeservice.CodeUnavailable    // 503: retry with backoff
	CodeInternalError  = intakeservice.CodeInternalError  // 500: retry once

	// Sandbox choices where the spec is silent.
	CodeTurnInProgress   = intakeservice.CodeTurnInProgress   // 409: the previous reply is still streaming
	CodeMethodNotAllowed = intakeservice.CodeMethodNotAllowed // 405
)

// Error is an error answer of the service, or a request refused locally before
// sending (Status 0). Error() is safe to show and never contains the API key.
type Error struct {
	// Status is the HTTP status, or 0 for a request refused locally, or 200
	// for an error event inside a stream (see InStream).
	Status int
	// Code is the envelope's code; empty when the body was not an error
	// envelope (a proxy's HTML 502, say): branch on Status then.
	Code Code
	// Message is the envelope's message, or a description of the body that
	// could not be decoded.
	Message     string
	EncounterID string
	// RetryAfter is the Retry-After header (0 when absent; 1 s for a
	// rate_limited answer that lacks it).
	RetryAfter time.Duration
	// Release is the x-service-release of the response, if any.
	Release string
	// InStream is true for an error event after a stream started: never
	// retried automatically; read the handoff first.
	InStream bool
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("intakeapi: ")
	switch {
	case e.InStream:
		b.WriteString("stream error")
	case e.Status == 0:
		b.WriteString("request refused locally")
	default:
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.EncounterID != "" {
		fmt.Fprintf(&b, " [encounter %s]", e.EncounterID)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// Coder is implemented by errors that carry a service error code. *Error does;
// so does a Gate's refusal that stands for one (pacer's spent-quota error
// reports CodeQuotaExceeded), so callers branch on one helper.
type Coder interface {
	ErrorCode() Code
}

// ErrorCode implements Coder.
func (e *Error) ErrorCode() Code { return e.Code }

// IsCode reports whether err (or any error it wraps) carries code.
func IsCode(err error, code Code) bool {
	var c Coder
	if errors.As(err, &c) {
		return c.ErrorCode() == code
	}
	return false
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsTurnInProgress reports whether err carries CodeTurnInProgress.
func IsTurnInProgress(err error) bool { return IsCode(err, CodeTurnInProgress) }

// Transport-level failures. The caller cannot know whether the service acted
// on the request, so it reconciles (reads the handoff) before resending a turn.
var (
	// ErrTransport: no HTTP answer (connection refused or cut, timeout before
	// the response, a body cut while reading).
	ErrTransport = errors.New("intakeapi: no complete response from the service")
	// ErrStreamInterrupted: a streaming turn ended before turn.completed or an
	// error event.
	ErrStreamInterrupted = errors.New("intakeapi: stream interrupted before turn.completed")
)

// transportError wraps a low-level failure under ErrTransport (or
// ErrStreamInterrupted) and keeps the cause for errors.Is (context errors).
type transportError struct {
	kind  error
	op    Op
	cause error
	text  string // cause's text with the key redacted
}

func (e *transportError) Error() string {
	return fmt.Sprintf("%s (%s): %s", e.kind.Error(), e.op, e.text)
}

func (e *transportError) Unwrap() []error { return []error{e.kind, e.cause} }
