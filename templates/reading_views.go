package templates

// ReadingsPage is the review of the simulated patient's readings of one
// engine release (/clinician/scenarios/readings): every distinct question,
// unreviewed first, each with a form to confirm, correct or set it aside.
type ReadingsPage struct {
	Layout
	Release string
	// Releases to switch to, newest first.
	Releases []ReadingReleaseLink
	// Previous is the release whose reviews are offered as suggestions.
	Previous        string
	Total, Reviewed int
	// Questions are the page's (From to To of Total, counted from 1);
	// Pages leads to the others.
	Questions []ReadingRow
	From, To  int
	Pages     PageLinks
	// Concepts are the vocabulary to choose another concept from, in its
	// groups.
	Concepts     []ConceptGroup
	ReviewAction string // where every form posts
	BackURL      string
}

// ReadingReleaseLink is one release of the switcher.
type ReadingReleaseLink struct {
	Release, URL string
	Current      bool
}

// ReadingRow is one question and its form.
type ReadingRow struct {
	Anchor   string // the row's id, "q-3"
	At       int    // its position, posted back so the next question follows
	Question string // the normal text, posted back
	Example  string // as the engine worded it
	Answer   string // what the patient said to it
	Reading  string // how the patient read it, in words
	Kind     string // the reading's kind (scenarios.ReadingKind)
	Plays    int
	// Vignettes, Voices and Runs, comma-separated.
	Vignettes, Voices string
	// Review is the decision in force, in words ("" = unreviewed);
	// Suggestion the previous release's, offered.
	Review, Suggestion string
	// Current: the question the keys act on (its Confirm button has the
	// focus and the access key); NextURL moves the keys to the next one.
	Current bool
	NextURL string
	// What the form shows: the concept chosen (a suggestion's, or what was
	// typed), the opposite sense, the note; Errors by field ("decision",
	// "concept", "note", "" for the form).
	Concept string
	Inverse bool
	Note    string
	Errors  FieldErrors
	// Replay offers, after a decision other than a confirmation, to
	// replay the items of the latest run that asked the question (nil:
	// no offer).
	Replay *ReadingReplayOffer
}

// ReadingReplayOffer is the form that replays what a decision affects.
type ReadingReplayOffer struct {
	Action string // where it posts
	Run    string // the run whose items are replayed
	RunURL string
}
