package safety

// Verdict is a clinical safety officer's decision on a release.
type Verdict string

// The verdicts.
const (
	Approve               Verdict = "approve"
	ApproveWithConditions Verdict = "approve_with_conditions"
	Reject                Verdict = "reject"
)

// Valid reports whether v is one of the verdicts.
func (v Verdict) Valid() bool { return v == Approve || v == ApproveWithConditions || v == Reject }

// Label is the verdict in words.
func (v Verdict) Label() string {
	switch v {
	case Approve:
		return "approved"
	case ApproveWithConditions:
		return "approved with conditions"
	case Reject:
		return "rejected"
	}
	return string(v)
}
