package scenarios

// Exchange is one exchange of an item as it happened: the patient's
// message and the engine's blocking reply.
type Exchange struct {
	Message string `json:"message"`
	// Why the simulated patient said Message (nil in exchanges recorded
	// before reasons were kept).
	Why          *Why     `json:"why,omitempty"`
	Reply        string   `json:"reply"`
	Choices      []string `json:"choices,omitempty"`
	Terminal     bool     `json:"terminal"`
	Urgent       bool     `json:"urgent"`
	Disposition  string   `json:"disposition,omitempty"`
	SafetyStatus string   `json:"safety_status,omitempty"`
	// Replayed: the service answered from its idempotency store (the turn
	// had been driven before a restart); it spent no quota.
	Replayed bool `json:"replayed,omitempty"`
	// Release is the engine release that sent Reply (ReleaseOf its
	// x-service-release header; "" in exchanges recorded before): the
	// release whose reviewed readings answer the next message.
	Release string `json:"release,omitempty"`
}
