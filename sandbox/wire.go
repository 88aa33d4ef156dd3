package sandbox

// The JSON shapes of the spec, as the service sends them. Nullable fields are
// pointers; slices are never nil so they encode as [].

type wireIntake struct {
	EncounterID string `json:"encounter_id"`
	Status      string `json:"status"`
	CreatedAt   string `json:"created_at"`
	ExpiresAt   string `json:"expires_at"`
}

type wireSummary struct {
	EncounterID      string  `json:"encounter_id"`
	Status           string  `json:"status"`
	TurnCount        int     `json:"turn_count"`
	CreatedAt        string  `json:"created_at"`
	ExpiresAt        string  `json:"expires_at"`
	LastSafetyStatus *string `json:"last_safety_status"`
	LastDisposition  *string `json:"last_disposition"`
}

type wireTurn struct {
	EncounterID      string       `json:"encounter_id"`
	TurnIndex        int          `json:"turn_index"`
	AssistantMessage string       `json:"assistant_message"`
	Choices          []string     `json:"choices"`
	Terminal         bool         `json:"terminal"`
	Urgent           bool         `json:"urgent"`
	SafetyStatus     *string      `json:"safety_status"`
	Disposition      *string      `json:"disposition"`
	DispositionLabel *string      `json:"disposition_label"`
	Handoff          *wireHandoff `json:"handoff,omitempty"`
}

type wireHandoff struct {
	EncounterID        string         `json:"encounter_id"`
	CapturedAt         string         `json:"captured_at"`
	Terminal           bool           `json:"terminal"`
	Urgent             bool           `json:"urgent"`
	IntakeStatus       *string        `json:"intake_status"`
	SafetyStatus       *string        `json:"safety_status"`
	SafetyNotes        []string       `json:"safety_notes"`
	Disposition        *string        `json:"disposition"`
	DispositionLabel   *string        `json:"disposition_label"`
	SOAP               wireSOAP       `json:"soap"`
	CapturedFacts      wireFacts      `json:"captured_facts"`
	ActiveProtocol     *string        `json:"active_protocol"`
	CandidateProtocols []string       `json:"candidate_protocols"`
	Scores             []wireScore    `json:"scores"`
	Conversation       []wireMessage  `json:"conversation"`
	Provenance         wireProvenance `json:"provenance"`
}

type wireSOAP struct {
	Subjective string `json:"subjective"`
	Objective  string `json:"objective"`
	Assessment string `json:"assessment"`
	Plan       string `json:"plan"`
}

type wireFacts struct {
	Age       *string `json:"age"`
	Sex       *string `json:"sex"`
	Pregnancy *string `json:"pregnancy"`
}

type wireScore struct {
	Key        string `json:"key"`
	Total      string `json:"total"`
	Band       string `json:"band"`
	Components string `json:"components"`
}

type wireMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

type wireProvenance struct {
	Release        *string  `json:"release"`
	ServerModel    *string  `json:"server_model"`
	PromptHash     *string  `json:"prompt_hash"`
	SourceCommit   *string  `json:"source_commit"`
	DirectoryHash  *string  `json:"directory_hash"`
	RuntimeProfile *string  `json:"runtime_profile"`
	PromptProfile  *string  `json:"prompt_profile"`
	VoiceProfile   *string  `json:"voice_profile"`
	AuditRef       *string  `json:"audit_ref"`
	LatencyMS      *float64 `json:"latency_ms"`
	ProtocolCount  *float64 `json:"protocol_count"`
}

type wireHealth struct {
	OK       bool    `json:"ok"`
	Release  string  `json:"release"`
	BuildSHA *string `json:"build_sha"`
}

type wireFault struct {
	EncounterID *string `json:"encounter_id"`
	Kind        string  `json:"kind"`
	Count       int     `json:"count"`
}

// Stream event payloads.
type (
	evDelta struct {
		Text string `json:"text"`
	}
	evCompleted struct {
		ElapsedMS int64 `json:"elapsed_ms"`
	}
	evCompiling struct {
		Terminal bool `json:"terminal"`
	}
	evProgress struct {
		Chars int `json:"chars"`
	}
	evError struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
)

func strPtr(s string) *string { return &s }

// optStr maps "" to null: the engine's "not known yet".
func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
