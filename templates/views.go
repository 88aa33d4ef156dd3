// Package templates renders the intake web app's pages and the fragments the
// server sends inside stream events. It knows only the view types below and
// templ: the web handlers fill the views, the components render them.
//
// Text from the engine and from patients is always rendered as text (escaped
// by templ) inside elements styled with white-space: pre-wrap, so it is shown
// exactly as received.
package templates

// Layout is the frame every full page shares.
type Layout struct {
	Title      string
	CSRF       string    // <meta name="csrf-token"> and hidden inputs named "_csrf"
	Embedded   bool      // shows the "Practice engine" banner (sandboxBanner)
	Release    string    // x-service-release, shown small in the footer when set
	Nav        []NavLink // header navigation
	SignedInAs string    // clinician username; "" for patients
	// SignOutURL is where the sign-out form posts; "" means "/signout".
	SignOutURL string
	Flash      string // a one-time message after a redirect ("Review saved."); "" = none
}

// NavLink is one header navigation entry.
type NavLink struct {
	Label   string
	URL     string
	Current bool // rendered with aria-current="page"
}

// FieldErrors maps a form field name to its message; "" is a form-level error.
type FieldErrors map[string]string

// StartPage is the page that creates an intake.
type StartPage struct {
	Layout
	// Action is the URL the form posts to; "" means "/intakes".
	Action  string
	Form    StartForm
	Errors  FieldErrors // keys: "age", "sex", "history", "synthetic", "" (form-level)
	Earlier []IntakeLink
	Limits  StartLimits
}

// StartForm holds the start form's values (kept on a validation error).
type StartForm struct {
	Age          string
	Sex          string // "", "female", "male", "intersex"
	History      string
	Synthetic    bool
	SubmissionID string
}

// StartLimits are the limits shown next to the fields.
type StartLimits struct {
	AgeMin     int // 0
	AgeMax     int // 130
	HistoryMax int // 4000
}

// IntakeLink is one of this browser's earlier intakes, listed on the start page.
type IntakeLink struct {
	URL              string
	Opening          string // the first message, shortened ("" before any)
	OpeningFull      string // the whole first message when Opening is shortened
	ActiveProtocol   string // as the service reported it, "" when none yet
	Created          string // human-readable creation time
	Status           string // open, closed, expired as received
	DispositionLabel string
	Urgent           bool
	Turns            int
}

// IntakePage is the conversation page of one intake.
type IntakePage struct {
	Layout
	ID, URL    string
	Status     string // open, closed, expired as received
	StatusNote string // human explanation for closed/expired
	TimeLeft   string // "1 h 42 min left"; "" when not open
	ExpiresAt  string // RFC 3339, for the JS countdown
	State      StateView
	// Emergency, when Show is set, is the first thing on the page: the
	// engine's reply that made the intake urgent, unedited.
	Emergency EmergencyView
	Turns     []TurnView
	Composer  ComposerView
	// EventsURL is non-empty while a turn is in progress; the pending turn
	// (Pending true) is rendered as <li id="pending" data-events-url=...>.
	EventsURL string
}

// StateView is the engine's state, shown exactly as received. An empty string
// is shown as "not reported yet".
type StateView struct {
	Urgent           bool
	SafetyStatus     string
	DispositionLabel string
	Disposition      string
	Terminal         bool
}

// EmergencyView is the emergency care card of an urgent intake (or one whose
// disposition is an escalation): the engine's assistant_message exactly as
// received, and the disposition label as received.
type EmergencyView struct {
	Show             bool
	Message          string // the assistant_message of the turn that made it urgent
	DispositionLabel string // as received; "" leaves it out
}

// QueueView is a queued turn's place in line and wait as last reported
// (Position 0: none reported). ServiceAsked: the wait grew because the
// service asked for more time, by AddedSeconds.
type QueueView struct {
	Position, WaitSeconds int
	ServiceAsked          bool
	AddedSeconds          int
}

// TurnView is one exchange: the patient's message and the assistant's reply.
type TurnView struct {
	Index        int
	Message      string
	Reply        string
	Status       string // queued, streaming, completed, failed
	Pending      bool   // the reply is not complete yet
	Failed       bool
	ErrorMessage string
	// Queue is a queued turn's place and wait when the page was made.
	Queue QueueView
	// EventsURL, for a pending turn, is where the page follows the reply
	// (rendered as data-events-url on <li id="pending">). When empty, the
	// IntakePage's EventsURL is used for its pending turn.
	EventsURL string
	// Retry, when Action is set on a failed turn, renders a form that sends
	// the same message again as a new turn.
	Retry RetryForm
}

// RetryForm is the "Send again" form of a failed turn.
type RetryForm struct {
	Of           int    // the failed turn's index, sent as retry_of: the server checks it is still the one to retry
	Action       string // POST URL for turns
	CSRF         string
	SubmissionID string
}

// ComposerView is the message box, or its absence once the intake has ended.
type ComposerView struct {
	Open         bool   // false when terminal/closed/expired: no message box at all
	Action       string // POST URL for turns
	CSRF         string
	SubmissionID string
	Message      string   // kept on a validation error
	Error        string   // shown next to the box (aria-describedby)
	Choices      []string // quick replies
	Busy         bool     // a turn is in progress: Send disabled
	NewIntakeURL string   // "/" — "Start a new intake" when !Open
	MaxChars     int      // 8000
	// Note explains, when !Open, why no more messages can be sent; "" gives
	// a generic sentence.
	Note string
}

// ErrorPage is a full error page.
type ErrorPage struct {
	Layout
	Status  int
	Heading string
	Message string
	// BackURL and BackLabel are the page's way on; "" means the start
	// page ("/", "Go to the start page").
	BackURL, BackLabel string
}
