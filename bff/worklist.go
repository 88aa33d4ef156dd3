package bff

// WorkItem is one row of the clinicians' worklist.
type WorkItem struct {
	Intake *Intake
	Review *Review // the latest review, nil if none
	Group  int     // the worklist's order: see Worklist
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
