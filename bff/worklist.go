package bff

import "context"

// WorkItem is one row of the clinicians' worklist.
type WorkItem struct {
	Intake *Intake
	Review *Review // the latest review, nil if none
	Group  int     // the worklist's order: see Worklist
	// Opening is the patient's first message, "" before any: what tells
	// intakes apart at a glance.
	Opening string
}

// WorkGroup names, in worklist order.
const (
	GroupUrgent   = iota // urgent and not yet reviewed
	GroupToReview        // closed, awaiting review
	GroupOpen            // still in conversation
	GroupExpired         // passed the two-hour limit, not reviewed
	GroupReviewed        // reviewed
)

// WorklistFilter narrows the worklist; zero values select everything.
type WorklistFilter struct {
	Status     string // open, closed or expired
	UrgentOnly bool
	Unreviewed bool
}

// WorklistStore keeps what the worklist shows beyond the intakes' own rows.
type WorklistStore interface {
	// OpeningMessages returns each intake's first turn's message, keyed by
	// intake id (intakes without a turn are absent).
	OpeningMessages(ctx context.Context) (map[string]string, error)
	// SetActiveProtocol records an intake's active protocol, and nothing
	// else of it (a turn may be updating the rest); ENOTFOUND for no such
	// intake.
	SetActiveProtocol(ctx context.Context, id, protocol string) error
}
