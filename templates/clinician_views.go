package templates

// View types of the clinician area. Values are display-ready strings; the
// handoff's fields are passed through as the service sent them.

// SignInPage is the clinician sign-in form.
type SignInPage struct {
	Layout
	Action   string // "/clinician/signin"
	Next     string // where to go after signing in (a local path)
	Username string // kept after a failure
	Error    string // shown in the error summary above the form
	// ErrorField is the field Error links to: "username" (wrong
	// credentials: the first field to check), "password", or "" for an
	// error of the whole form (too many attempts).
	ErrorField string
	SSO        SignInSSO // single sign-on; zero: none
}

// SignInSSO is single sign-on's part of the sign-in page.
type SignInSSO struct {
	Provider string // "" = no single sign-on
	Action   string // the form that starts it: "/clinician/sso/start"
	LocalOff bool   // local passwords are off: no username and password form
	// EndSessionURL, just after a sign-out, is where the clinician may
	// sign out of the provider too.
	EndSessionURL string
}

// WorklistPage is one page of the intakes for review.
type WorklistPage struct {
	Layout
	Filter WorklistFilter
	Rows   []WorklistRow
	// RowURL + intake id + RowQuery is one row's fragment (GET; 204 when
	// it no longer matches the filter), for the live feed.
	RowURL    string
	RowQuery  string
	EventsURL string // the live feed (EventSource)
	AuditURL  string
	// PageURL is the "changes elsewhere: show the latest" link: the first
	// page of this filter, where new and escalated intakes land.
	PageURL string
	// FirstURL, PrevURL and NextURL are the page links; "" for none.
	FirstURL, PrevURL, NextURL string
	FirstPage, LastPage        bool // nothing before / after this page
}

// WorklistFilter is the filter form's state (GET form, no JS needed).
type WorklistFilter struct {
	Status     string // "", "open", "closed", "expired"
	UrgentOnly bool
	Unreviewed bool
}

// WorklistRow is one intake in the worklist.
type WorklistRow struct {
	ID               string
	URL              string // the handoff view
	Opening          string // the patient's first message, shortened for the row ("" = none yet)
	OpeningFull      string // the whole first message, for screen readers when Opening is shortened
	Group            string // "Urgent", "Awaiting review", "Open", "Expired", "Reviewed"
	Rank             int    // the group's place in the order (0 first)
	SortTime         string // updated time, fixed width: orders rows within a group (newest first)
	Created          string
	Updated          string
	Status           string // open, closed, expired as received
	Turns            int
	SafetyStatus     string // as received; "" = not reported
	DispositionLabel string
	Urgent           bool
	ActiveProtocol   string
	Reviewed         bool
	ReviewedBy       string
	ReviewedAt       string
	// DownloadURL and FHIRURL are the row's downloads: the handoff as the
	// service sent it, and as a FHIR R4 document; "" offers none.
	DownloadURL string
	FHIRURL     string
}

// HandoffPage is the clinician's view of one handoff.
type HandoffPage struct {
	Layout
	ID         string
	BackURL    string // the worklist
	Status     string // intake status as received
	Urgent     bool
	Terminal   bool
	CapturedAt string // "as of" time from the handoff
	FetchedAt  string // when this app last read it from the service ("last updated")
	// Release is the x-service-release header (release+build) of the read
	// that served it: the service, not the engine that wrote the handoff,
	// which is EngineRelease (provenance.release; "" = null).
	Release       string
	EngineRelease string
	Stale         bool // a re-read failed; StaleReason says why
	StaleReason   string
	// RefreshAction is the POST URL of the refresh button; "" when the
	// handoff can no longer change (closed or expired intakes).
	RefreshAction string
	DownloadURL   string // GET: the handoff as JSON, exactly as received
	FHIRURL       string // GET: the handoff as a FHIR R4 document bundle
	CSRF          string

	SafetyStatus     string // as received; "" = null
	Disposition      string
	DispositionLabel string
	IntakeStatus     string

	SOAP               SOAPView
	SafetyNotes        []string
	Facts              []Fact // Age, Sex, Pregnancy, in that order
	ActiveProtocol     string
	CandidateProtocols []string
	Scores             []ScoreView
	Conversation       []MessageView
	Provenance         []Fact // every provenance field, in the spec's order; "" value = null

	Reviews      []ReviewView
	ReviewAction string // POST URL of the review form
	ReviewNote   string // kept after an error
	ReviewError  string
}

// SOAPView is the clinician note.
type SOAPView struct {
	Subjective, Objective, Assessment, Plan string
}

// Fact is a named value; an empty Value is shown as "not captured" (facts)
// or "null" (provenance).
type Fact struct {
	Name  string // field name as in the spec, e.g. "audit_ref"
	Label string // human label, e.g. "Audit reference"
	Value string
	Copy  bool // offer a copy button (audit_ref)
}

// ScoreView is one score; Band is strong, mid or weak as received.
type ScoreView struct {
	Key, Total, Band, Components string
}

// MessageView is one line of the patient-facing conversation.
type MessageView struct {
	Role string // "patient" or "assistant" as received
	Text string
}

// ReviewView is one review of the handoff.
type ReviewView struct {
	By, At, Note string
}

// AuditPage is the audit log.
type AuditPage struct {
	Layout
	Entries  []AuditRow
	OlderURL string // next page, "" when none
}

// AuditRow is one audit entry.
type AuditRow struct {
	At, Actor, Action, Detail string
	IntakeID                  string
	IntakeURL                 string // "" when the entry concerns no intake
}

// FaultsPage is the embedded sandbox's fault panel.
type FaultsPage struct {
	Layout
	Action   string // POST URL of the form
	Kinds    []FaultKindOption
	Kind     string // kept after an error
	IntakeID string
	Count    string
	Errors   FieldErrors // keys: kind, intake, count; shown in the error summary and beside each field
}

// FaultKindOption is one fault kind and what a turn that meets it gets.
type FaultKindOption struct {
	Kind, Effect string
}

// SignInCodePage asks for the second factor after the password.
type SignInCodePage struct {
	Layout
	Action   string // "/clinician/signin/code"
	Username string // whose sign-in this is
	Error    string // shown in the error summary; links to the code field
	// Locked is set when too many failures refuse every code for now: the
	// error is the form's, not the field's.
	Locked bool
}

// SecondFactorPage is the clinician's own second factor: set it up (a QR
// code, the secret in text, a field for the first code), see it is on, or
// read the recovery codes once, just after setting it up.
type SecondFactorPage struct {
	Layout
	Action string // "/clinician/second-factor"
	// Required: the app requires a second factor and this account has none
	// yet: nothing else opens until it is set up.
	Required bool
	// Enrolled: the account has a second factor; CodesLeft of its
	// recovery codes are unused, and ResetCommand removes it.
	Enrolled     bool
	CodesLeft    int
	ResetCommand string
	// Setting up: the QR code (a data: URL of a PNG made by the app) and
	// the same secret in text, grouped in fours for reading aloud.
	QRDataURL   string
	Secret      string
	SecretWords []string
	Error       string // the code field's error
	// RecoveryCodes are shown once, right after setting up.
	RecoveryCodes []string
	ContinueURL   string
}

// SessionsPage lists signed-in sessions: the clinician's own (with "sign
// out everywhere else") or, for an administrator, everyone's.
type SessionsPage struct {
	Layout
	Heading  string
	Everyone bool // the administrator's page: a Clinician column
	Sessions []SessionRow
	// EndOthersAction signs out every other session of one's own ("" on
	// the administrator's page, or when there are none).
	EndOthersAction string
	// AdminURL links the administrator's page from one's own ("" for none).
	AdminURL string
	Lifetime string // "12 hours", "30 minutes": the rules, in words
	Idle     string
}

// SessionRow is one signed-in session.
type SessionRow struct {
	Clinician  string
	Device     string
	Address    string
	SignedInAt string
	LastSeen   string
	Current    bool   // this browser's
	EndAction  string // posts to end it ("" for this browser's own)
	EndLabel   string // the button's accessible name ("End the session of dr.a on Firefox on Linux")
}
