package templates

// SafetyPage is the safety case's home (/clinician/safety): the hazard
// log in force, its versions, the releases with evidence, and the log's
// export and import.
type SafetyPage struct {
	Layout
	LogVersion            int
	LogBy, LogAt, LogNote string
	System                string
	Hazards               []HazardRow
	Matrix                RiskMatrix
	Versions              []SafetyVersionRow
	Releases              []SafetyReleaseRow
	ExportURL             string
	ImportAction          string
	// ImportText and ImportNote are what was typed, shown again with
	// Errors ("file", "note") when an import was refused.
	ImportText, ImportNote string
	Errors                 FieldErrors
	// MayEdit: the clinician may change the log (the hazards' forms and
	// the import); NewHazardURL is the form of a new hazard.
	MayEdit      bool
	NewHazardURL string
}

// RiskMatrix is DCB0129's 5 × 5 matrix: Severities are the columns (minor
// first), Rows the likelihoods (very high first).
type RiskMatrix struct {
	Severities []string
	Rows       []RiskMatrixRow
}

// RiskMatrixRow is one likelihood and its ratings by severity.
type RiskMatrixRow struct {
	Likelihood string
	Ratings    []int
}

// HazardRow is one hazard of the log, with its controls (evaluated on a
// release page and in the report; as written on the log page).
type HazardRow struct {
	ID, Title, Description string
	Causes, Effects        []string
	Initial, Residual      RiskCell
	Owner, Status          string
	// State is the worst of its controls' ("" on the log page), StateLabel
	// in words.
	State, StateLabel string
	Controls          []ControlRow
	// EditURL is the hazard's form, on the log page for those who may
	// change the log ("" otherwise).
	EditURL string
}

// RiskCell is a severity, a likelihood and their rating.
type RiskCell struct {
	Severity, Likelihood string
	Rating               int
	Meaning              string
}

// ControlRow is one control and its evidence.
type ControlRow struct {
	ID, Title, Description string
	State, StateLabel      string
	Checks                 []CheckRow
}

// CheckRow is one piece of evidence: what it requires, and (evaluated)
// its figure on which run, and the plays that fall short.
type CheckRow struct {
	Description       string
	State, StateLabel string
	Figure            string
	Run, RunURL       string
	// Failing are the first plays that fall short (at most
	// ten), MoreFailing how many more the run's page lists.
	Failing     []FailingRow
	MoreFailing int
}

// FailingRow is one play that falls short, linked to its transcript.
type FailingRow struct {
	Label, Why, URL string
}

// SafetyVersionRow is one version of the log.
type SafetyVersionRow struct {
	Version      int
	By, At, Note string
	ExportURL    string
}

// SafetyReleaseRow is one release with evidence.
type SafetyReleaseRow struct {
	Subject, URL string
	Runs         int
	LastRun      string
	Decision     string // "" = none yet
}

// EvaluationView is a log evaluated against a release's runs.
type EvaluationView struct {
	LogVersion                                 int
	Hash                                       string
	Runs                                       []SafetyRunRow
	Hazards                                    []HazardRow
	Controls, Met, Unmet, NoEvidence, Recorded int
}

// SafetyRunRow is a run an evaluation looked at.
type SafetyRunRow struct {
	ID, URL, Label, Suite, Finished string
	Items                           int
}

// DecisionView is a recorded decision.
type DecisionView struct {
	Verdict, VerdictLabel string
	Conditions, Reasoning string
	By, At, Hash          string
	LogVersion            int
}

// SafetyReleasePage is one release's safety case
// (/clinician/safety/release?release=&voice=).
type SafetyReleasePage struct {
	Layout
	Subject, Release, Voice string
	Live                    EvaluationView
	// Decision in force (nil: none), every decision, and whether the
	// evidence changed since it was signed.
	Decision  *DecisionView
	Decisions []DecisionView
	Changed   bool
	// Comparison with the previous release (nil: none).
	Comparison *SafetyComparison
	// The decision form: shown only to the clinical safety officer.
	MayDecide    bool
	DecideAction string
	Verdict      string
	Conditions   string
	Reasoning    string
	Errors       FieldErrors // "verdict", "conditions", "reasoning", ""
	ReportURL    string
	BackURL      string
}

// SafetyComparison is a release against the previous one.
type SafetyComparison struct {
	Previous         string
	BaseRun, BaseURL string
	HeadRun, HeadURL string
	CompareURL       string
	Regressions      []SafetyRegressionRow
	Improvements     int
	Paired           int
	Test             string // the clustered test (repeats) or McNemar's, in words
}

// SafetyRegressionRow is a vignette that got worse.
type SafetyRegressionRow struct {
	VignetteID, Title, Gold, Base, Head string
	UnderTriage                         bool
}

// SafetyReportPage is the safety case report of a release, in the layout
// of a DCB0129 clinical safety case report, for print and PDF.
type SafetyReportPage struct {
	Layout
	Subject, System string
	Draft           bool // no decision yet: the evidence now
	Generated       string
	LogVersion      int
	LogBy, LogAt    string
	Matrix          RiskMatrix
	Eval            EvaluationView
	OpenRisks       []HazardRow
	Decision        *DecisionView
	BackURL         string
}

// HazardFormPage is the form of one hazard of the log (or a new one): each
// save is the log's next version, with why.
type HazardFormPage struct {
	Layout
	Heading string
	Action  string
	BackURL string
	// Was is the id of the hazard edited ("" for a new one), Base the log
	// version the form was read from.
	Was  string
	Base int
	// The fields as typed (or as stored): causes and effects one a line,
	// the controls as YAML.
	ID, Title, Description               string
	Causes, Effects                      string
	InitialSeverity, InitialLikelihood   string
	ResidualSeverity, ResidualLikelihood string
	Controls                             string
	Owner, Status                        string
	Note                                 string
	// Severities, Likelihoods and Statuses are the choices, in the log's
	// words.
	Severities, Likelihoods, Statuses []string
	Errors                            FieldErrors
}

// hintID is the id of field's hint, "" when it has none.
func hintID(hint, field string) string {
	if hint == "" {
		return ""
	}
	return field + "-hint"
}
