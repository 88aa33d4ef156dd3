package templates

// View types of the clinician area's Scenarios section (runs of synthetic
// patient suites against the engine, their scores and comparisons). Values
// are display-ready strings; texts from the engine and from suite files are
// shown as received (escaped).

// ScenariosPage is the section's index: the suites, the two ways to start
// a run, the runs so far and the comparison form.
type ScenariosPage struct {
	Layout
	Suites  []ScenarioSuite
	Start   ScenarioStartForm
	Upload  ScenarioUploadForm
	Runs    []ScenarioRunRow
	Compare ScenarioCompareForm
	// ReadingsURL is the review of the patient's readings ("" = none).
	ReadingsURL string
	// Errors by field id: "suite", "repeats", "label" (the suite form),
	// "upload", "upload-repeats", "upload-label" (the file form), "base",
	// "head" (the comparison form); "" for the page.
	Errors FieldErrors
}

// ScenarioSuite is one built-in suite.
type ScenarioSuite struct {
	Name, Title string
	Vignettes   int
	AtOnce      int // vignettes played at the same time in a run of one repeat
}

// ScenarioStartForm starts a run of a built-in suite: a GET form to the
// estimate page (nothing starts before the estimate is confirmed).
type ScenarioStartForm struct {
	Action                string // GET URL of the estimate page
	Suite, Repeats, Label string // kept after an error
	Variations            []ScenarioVariationOption
	UrgentFirst           bool
}

// ScenarioVariationOption is one variation as a checkbox.
type ScenarioVariationOption struct {
	Name, Label string
	Checked     bool
}

// ScenarioUploadForm starts a run of a suite file the clinician sends
// (multipart POST, CSRF token in the form).
type ScenarioUploadForm struct {
	Action         string
	Repeats, Label string // kept after an error (a file input cannot be refilled)
	Variations     []ScenarioVariationOption
	UrgentFirst    bool
	MaxSize        string // "200 KiB"
	// MaxBytes and TooLarge let clinician.js refuse a file over the limit
	// before it is sent: the limit in bytes and the sentence it shows.
	MaxBytes int
	TooLarge string
	// FormatURL is the suite format page; Problems are those of the file
	// just refused, listed one a line under the field's error.
	FormatURL string
	Problems  []SuiteProblem
}

// SuiteProblem is one problem of a suite file that does not load.
type SuiteProblem struct {
	Where string // `line 12: vignette "chest-pain" (3): facts[2].concept`; "" for the whole file
	Rule  string
	// HelpURL and HelpLabel link to the part of the suite format page that
	// explains the rule (the concept vocabulary); "" for none.
	HelpURL, HelpLabel string
}

// SuiteFormatPage is the suite format for the people who write suite
// files: an example, the fields and the concept vocabulary by group.
type SuiteFormatPage struct {
	Layout
	ScenariosURL string // where a suite file is uploaded
	MaxSize      string // the upload limit: "200 KiB"
	MaxVignettes int
	Example      string
	Fields       []SuiteField
	Concepts     []ConceptGroup
}

// SuiteField is one field of a suite file. Rule and Meaning quote names
// of the format in backticks, shown as code.
type SuiteField struct {
	Name, Type, Rule, Meaning string
}

// ConceptGroup is one section of the concept vocabulary ("about the
// person"), its concepts in the vocabulary's order.
type ConceptGroup struct {
	ID, Title string // ID is the section's anchor
	Concepts  []ConceptHelp
}

// ConceptHelp is one concept: its id, what kind of answer it takes, what
// it is about and, for a yes/no concept, what a "yes" means.
type ConceptHelp struct {
	ID, Kind, Means, Yes string
}

// ScenarioRunRow is one run in the runs table.
type ScenarioRunRow struct {
	ID, URL, Label, Suite, Target, State, StartedBy, Started string
	Played, Items                                            int
	// Scored is set when any item was scored; Accuracy and UnderTriage are
	// then percentages ("83%").
	Scored                bool
	Accuracy, UnderTriage string
}

// ScenarioCompareForm picks two runs to compare (GET form).
type ScenarioCompareForm struct {
	Action     string
	Runs       []ScenarioRunOption
	Base, Head string // selected run ids
}

// ScenarioRunOption is a run as a choice or a heading: its id, a label for
// people and its page.
type ScenarioRunOption struct {
	ID, Label, URL string
}

// ScenarioEstimatePage says what a run of a built-in suite will cost before
// it starts, with the form that starts it.
type ScenarioEstimatePage struct {
	Layout
	Suite     ScenarioSuite
	Repeats   int
	Label     string
	Estimate  ScenarioEstimate
	Action    string // POST URL that starts the run
	ChangeURL string // back to the start form with these values
	// Variations are the chosen ones' names (hidden fields) and labels.
	Variations  []ScenarioVariationOption
	UrgentFirst bool
}

// ScenarioEstimate is a run's expected cost and finish.
type ScenarioEstimate struct {
	Intakes, Turns, MaxTurns int
	// Parallel is how many items are played at once (what the key's
	// requests a minute can feed, within the ceiling); 0: not said.
	Parallel int
	// Unlimited: the embedded sandbox with its limits off; the rest does
	// not apply.
	Unlimited bool
	// NoQuota: the key has no daily quota; PerDay and LeftToday do not
	// apply.
	NoQuota                 bool
	PerDay, LeftToday, Days int
	Finish                  string // expected finish, UTC
	// PerVariation is each variation's share, the unvaried plays first;
	// nil without variations.
	PerVariation []ScenarioVariationCost
}

// ScenarioVariationCost is the intakes and expected turns of a variation.
type ScenarioVariationCost struct {
	Label          string
	Intakes, Turns int
}

// ScenarioRunPage is one run: progress, scores, confusion matrix, results.
type ScenarioRunPage struct {
	Layout
	ID, Label, Suite, Target, StartedBy string
	Repeats                             int
	Created, Finished                   string // Finished "" until it ends
	Progress                            ScenarioProgress
	// CancelAction is the POST URL of the Cancel button; "" once ended.
	CancelAction    string
	JSONURL, CSVURL string
	JSONName        string // download file names
	CSVName         string
	Summary         *ScenarioSummary // nil before any item was scored
	ConfusionSVG    string           // bff/scenarios.ConfusionSVG: escaped, no scripts or styles
	// Results are those the filter (?show=) keeps, under-triaged first,
	// then simulator-limited, then the rest; AllResults counts every
	// finished one. Filters are the choices, Filter the current one's label.
	Results    []ScenarioResultRow
	AllResults int
	Filters    []ScenarioResultFilter
	Filter     string
	BackURL    string
	Flips      *ScenarioFlips // nil when the run varied nothing
	// Replay is set when the run replays another's items (nil otherwise).
	Replay *ScenarioReplayLink
	// Corrected are the questions this run asked whose reading a reviewer
	// has since corrected (or found unanswerable), each with a form that
	// replays the items that asked it; empty until the run ends.
	Corrected []RunCorrectedReading
}

// RunCorrectedReading is one question of a run whose reading a reviewer
// decided otherwise than the patient read it, and the form replaying it.
type RunCorrectedReading struct {
	Question, Review string
	Action, Release  string
	Run, ReadingsURL string
	ID               string // the form's id, for the button
}

// ScenarioReplayLink says which run a replay replays, and why.
type ScenarioReplayLink struct {
	Of, OfURL  string // the run replayed and its page
	Question   string // the question whose reading was reviewed
	CompareURL string // the comparison of the two runs
}

// ScenarioResultFilter is one choice of which results a run's page lists:
// a link (GET), so it works without JavaScript.
type ScenarioResultFilter struct {
	Label   string // "Under-triaged"
	Count   int
	Current bool
	URL     string
}

// ScenarioItemNav steps through the results a run's page listed, in its
// order, from an item's page.
type ScenarioItemNav struct {
	Filter           string // the filter's label: "All", "Under-triaged", ...
	Position, Total  int    // 1-based; Position 0: the item is not among them
	PrevURL, NextURL string // "" at either end
	ListURL          string // the run's page with that filter
}

// ScenarioFlips is a run's flip table: per variation and gold class, the
// vignettes whose final class moved against their unvaried play.
type ScenarioFlips struct {
	Classes     []string // column headings, "All" first
	Rows        []ScenarioFlipRow
	Flips       []ScenarioFlip // downward first
	NotCompared int
}

// ScenarioFlipRow is one variation's cells, in Classes order.
type ScenarioFlipRow struct {
	Variation string // label
	Cells     []ScenarioFlipCell
}

// ScenarioFlipCell is "2 of 24 down, 1 up"; Compared 0 shows a dash.
type ScenarioFlipCell struct {
	Compared, Down, Up int
}

// ScenarioFlip is one flipped vignette under one variation.
type ScenarioFlip struct {
	VignetteID, Title, Variation string // Variation is a label
	Gold, Base, Varied           string // class labels
	Down                         bool
	URL                          string // the side-by-side page
}

// ScenarioSidePage shows a vignette's unvaried and varied plays side by
// side.
type ScenarioSidePage struct {
	Layout
	RunURL, RunLabel  string
	VignetteID, Title string
	Variation         string // label
	Gold              string
	Down              bool
	Sides             [2]ScenarioSide // unvaried, varied
}

// ScenarioSide is one play of the two.
type ScenarioSide struct {
	Heading string // "As written (repeat 1)"
	Final   string // class label
	URL     string // its item page; "" when missing
	Turns   []ScenarioExchange
}

// ScenarioProgress is a run's live state: the region scenarios.js updates.
type ScenarioProgress struct {
	RunURL string // the run page (the no-JavaScript "Refresh" link)
	// PollURL is the fragment scenarios.js polls; "" once the run ended.
	PollURL        string
	State          string // queued, active, waiting, done, cancelled
	StateLabel     string
	Ended          bool
	Played, Items  int
	PlayedText     string   // "12 of 61 played"
	TurnsText      string   // "Turns used: 40 (estimate: 80)"
	Note           string   // why it waits, until when, or how it ended
	Current        string   // "Playing 3 vignettes at once:", "" when none
	Playing        []string // each item in flight: title, repeat, exchanges so far
	Release        string
	ProgressValues bool // Items > 0: the <progress> has a value
}

// ScenarioSummary is a run's scores so far, display-ready.
type ScenarioSummary struct {
	Vignettes, Runs, Scored, Errors   int
	Accuracy, UnderTriage, OverTriage string
	WrongDisposition                  int
	PerClass                          []ScenarioClassRow
	// Sentences with their counts: "75.0% of 4 expected (1 missed)", or
	// "none expected" when there was nothing to check.
	RedFlagRecall, ProtocolMatch, ScoreBandAgreement string
	FalseAlarms                                      int
	MeanTurns                                        string
	// SimulatorLimited counts the results left out of every rate because
	// the simulated patient did not understand a question; Coverage is the
	// simulator coverage ("98.5% of 320 questions understood"); Readings
	// the questions by how the patient read them ("315 concept, 2 quick
	// reply, 3 not understood").
	SimulatorLimited int
	Coverage         string
	Readings         string
	// Basis is what the answers rest on ("12.5% on reviewed readings,
	// 85.0% automatic, 2.5% not understood, of 320 answers"); Provisional
	// the results whose outcome rests on an unreviewed reading (the
	// figures are provisional while it is not 0).
	Basis           string
	Provisional     int
	Provenance      []Fact
	MixedProvenance bool
}

// ScenarioClassRow is the scores of one gold class; the rates are "—"
// when no result had that gold class.
type ScenarioClassRow struct {
	Class                             string
	N, Correct, Under, Over           int
	SimulatorLimited                  int // left out of N
	Accuracy, UnderTriage, OverTriage string
}

// ScenarioResultRow is one item's result in the results table.
type ScenarioResultRow struct {
	URL               string // the item page; "" when no item matches
	VignetteID, Title string
	Variation         string // its label; "" as written
	Repeat            int
	Gold, Final       string // class labels
	Triage            string // correct, under, over, ... as scored
	Under             bool
	Turns             int
	Error             string
	// SimulatorLimited: not scored, the patient did not understand a
	// question (listed first); Coverage is "9 of 10 questions understood".
	SimulatorLimited bool
	Coverage         string
}

// ScenarioItemPage is one item of a run: transcript, outcome, handoff.
type ScenarioItemPage struct {
	Layout
	RunURL, RunLabel  string
	Seq               int
	VignetteID, Title string
	Repeat            int
	Variation         string // how the patient spoke, for a varied play; "" as written
	State             string
	Outcome           *ScenarioOutcome // nil until the item finished
	Turns             []ScenarioExchange
	Handoff           *ScenarioHandoff // nil when none was read
	HandoffError      string           // the handoff could not be decoded
	Error             string           // why the item failed
	Nav               *ScenarioItemNav // nil before the item finished
}

// ScenarioOutcome is an item's result against its gold.
type ScenarioOutcome struct {
	Gold, Final, Triage string
	Correct, Under      bool
	Disposition         string
	Urgent              bool
	SafetyStatus        string
	Protocol            string
	GoldProtocol        string
	RedFlagsHit         []string
	RedFlagsMissed      []string
	FalseAlarms         []string
	SimulatorLimited    bool
	Coverage            string // "9 of 10 questions understood"
	Readings            string // "8 concept, 1 quick reply, 1 low margin"
	Basis               string // as ScenarioSummary.Basis
	Provisional         bool   // an answer that changed the outcome rests on an unreviewed reading
}

// ScenarioExchange is one exchange of an item's transcript.
type ScenarioExchange struct {
	N                          int // 1-based
	Message, Reply             string
	Choices                    []string
	Urgent, Terminal, Replayed bool
	Disposition, SafetyStatus  string
	// Why the simulated patient said Message, in one line; NotUnderstood
	// marks a question it could not place.
	Why           string
	NotUnderstood bool
}

// ScenarioHandoff is the read-only subset of an item's handoff.
type ScenarioHandoff struct {
	SafetyStatus, Disposition, DispositionLabel string
	SOAP                                        SOAPView
	SafetyNotes                                 []string
	Facts                                       []Fact
	ActiveProtocol                              string
	Scores                                      []ScoreView
	Provenance                                  []Fact
}

// ScenarioClusteredTest is the comparison's test over repeated plays.
type ScenarioClusteredTest struct {
	Method, BaseCorrect, HeadCorrect, PValue string
	Clusters                                 int
}

// ScenarioComparePage is a head run compared with a base run.
type ScenarioComparePage struct {
	Layout
	Base, Head                                                       ScenarioRunOption
	BaseScope, HeadScope                                             ScenarioCompareScope
	Regressions, SetAside, Others, Improvements                      []ScenarioChange
	GoldChanges                                                      []ScenarioChange // the gold label differs: not the engine
	OnlyInBase, OnlyInHead                                           []string
	Paired, BothCorrect, BaseOnlyCorrect, HeadOnlyCorrect, BothWrong int
	PValue                                                           string
	// Clustered is the test for runs with repeats (nil when every
	// vignette was played once in both): the McNemar above pairs one
	// majority outcome per vignette and is for single plays.
	Clustered        *ScenarioClusteredTest
	AdjudicateAction string
	BackURL          string
}

// ScenarioCompareScope is what the comparison took of one run and what it
// left out.
type ScenarioCompareScope struct {
	Plays, Scored, NotScored int    // plays as written
	Varied                   int    // varied plays, left out
	Variations               string // their labels, joined
	// Flips are the run's varied plays against its own plays as written,
	// downward first (nil without variations).
	Flips              *ScenarioFlips
	FlipsDown, FlipsUp int
}

// ScenarioChange is one vignette across the two runs, with its
// adjudication form.
type ScenarioChange struct {
	Key                    string // unique on the page, for element ids
	VignetteID, Title      string
	Gold                   string
	BaseFinal, HeadFinal   string
	BaseCorrect            bool
	HeadCorrect            bool
	BaseScored, HeadScored string // "2 of 3 scored"
	UnderTriage            bool
	// GoldChanged: the gold label differs between the runs; BaseGold is
	// the base's. Both runs are judged against Gold, the head's.
	GoldChanged   bool
	BaseGold      string
	EngineChanged bool                  // the engine's answer differs too
	Adjudication  *ScenarioAdjudication // the verdict in force
	// The form's values and errors after a refused adjudication (keys:
	// verdict, note, vignette).
	Verdict, Note string
	Errors        FieldErrors
}

// ScenarioAdjudication is a verdict in force.
type ScenarioAdjudication struct {
	Verdict, Note, By, At string
}
