package bff

import (
	"time"

	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// A scenario run plays a suite of synthetic patients (bff/scenarios) against
// the engine in batch: every vignette, Repeats times, as
// blocking turns at a priority below live patients. It is a durable job:
// the run is leased to one replica, which plays several items at once
// (as many as the key's budget can feed), each item (one vignette, one repeat)
// records its encounter and every reply as it goes, so a restart resumes
// an item at its next turn and never drives the engine twice.

// ScenarioRunState is where a scenario run stands.
type ScenarioRunState string

// Scenario run states.
const (
	RunQueued ScenarioRunState = "queued" // created; no replica has played anything yet
	RunActive ScenarioRunState = "active" // being played
	// RunWaiting: today's turns for runs are spent (the daily quota minus
	// what is kept for patients); it goes on at NotBefore.
	RunWaiting   ScenarioRunState = "waiting"
	RunDone      ScenarioRunState = "done"      // every item played (some may have failed)
	RunCancelled ScenarioRunState = "cancelled" // a clinician stopped it; played items stay
)

// Ended reports whether the run will play nothing more.
func (s ScenarioRunState) Ended() bool { return s == RunDone || s == RunCancelled }

// ScenarioRun is one batch run of a suite.
type ScenarioRun struct {
	ID string // "sr_" and random hex
	// Suite is the suite as it was when the run started: a resumed run
	// plays the same vignettes. nil in the lists of ScenarioRuns.
	Suite *scenarios.Suite
	// SuiteName is its name, in lists too.
	SuiteName string
	Repeats   int    // 1-10
	Label     string // what the clinician called it ("release 2.4 candidate"), at most 100 characters
	// Target says where it plays: "sandbox" (an embedded sandbox with its
	// limits off) or "service" (the configured key, within its budget).
	Target    string
	StartedBy string // clinician username
	State     ScenarioRunState
	Items     int // plays × repeats (each vignette as written and under each variation that applies to it)
	Played    int // items finished (done or failed)
	TurnsUsed int // turns sent upstream for it (each answered turn once, a replay of an unrecorded send included)
	// Estimate is the turns it was expected to need when it started.
	Estimate int
	// NotBefore is when a waiting run goes on (zero otherwise).
	NotBefore time.Time
	// Note says why it waits or how it ended, for people.
	Note       string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt time.Time // zero until it ends
	// Release is the engine's release as the first handoff reported it.
	Release string
	// Summary is the scores of the items played so far (nil before any),
	// kept with the run so lists show them without reading the items.
	Summary *scenarios.Summary
	// ReplayOf is the run this one replays ("" for a run of its own): it
	// plays only that run's items whose transcripts asked ReplayQuestion
	// (a scenarios.NormalQuestion of the run's release), after a reviewer
	// decided how the patient must read it.
	ReplayOf, ReplayQuestion string

	// The lease of the replica playing it (empty while nobody is).
	LeaseOwner string
	LeaseUntil time.Time
}

// SuiteLabel is the name the run is listed under: SuiteName, else its
// suite's name ("" when it has neither).
func (r *ScenarioRun) SuiteLabel() string {
	if r.SuiteName == "" && r.Suite != nil {
		return r.Suite.Name
	}
	return r.SuiteName
}

// ScenarioItemState is where one item of a run stands.
type ScenarioItemState string

// Scenario item states.
const (
	ItemPending ScenarioItemState = "pending" // not started
	ItemPlaying ScenarioItemState = "playing" // its intake exists upstream (EncounterID) and turns are under way
	ItemDone    ScenarioItemState = "done"    // Result holds what the engine concluded
	ItemFailed  ScenarioItemState = "failed"  // Result.Error says why (not scored)
)

// ScenarioItem is one vignette, one repeat, of a run.
type ScenarioItem struct {
	RunID      string
	Seq        int // 0-based play order: repeat by repeat, each in the run's order (the suite's, or emergencies and last run's flips first)
	VignetteID string
	Title      string
	Repeat     int // 1-based
	// Variation is how the patient speaks in it (bff/scenarios/variations);
	// "" for the vignette as written.
	Variation string
	State     ScenarioItemState
	// EncounterID is the intake created upstream for it ("" until then).
	EncounterID string
	// Turns are the exchanges so far, in order: what a resumed item replays
	// to its simulated patient instead of asking the engine again.
	Turns []scenarios.Exchange
	// Result is set when the item is done or failed.
	Result *scenarios.Result
	// Handoff is the handoff's JSON exactly as the service sent it (nil
	// when it could not be read).
	Handoff []byte
	// Decoded is Handoff decoded, as ScenarioService.Item returns it (never
	// stored); nil when there is no handoff or it does not decode.
	Decoded   *Handoff
	UpdatedAt time.Time
}

// ScenarioResults are the results of the items that have one (done or
// failed), in the items' order.
func ScenarioResults(items []*ScenarioItem) []scenarios.Result {
	var out []scenarios.Result
	for _, it := range items {
		if it.Result != nil {
			out = append(out, *it.Result)
		}
	}
	return out
}

// ScenarioAdjudication is a clinician's verdict on a vignette where the
// engine and the gold label disagree; it carries into later comparisons.
type ScenarioAdjudication struct {
	ID int64 // assigned by the store
	scenarios.Adjudication
	BaseRun, HeadRun string // the comparison it was made in
}

// ScenarioSuite describes a suite a clinician can start a run of.
type ScenarioSuite struct {
	Name      string // "builtin", or "builtin/heart_lungs" for one file of it
	Title     string // for people
	Vignettes int
	// AtOnce is how many of its vignettes a run of one repeat plays at
	// the same time here: as many as the key's requests a minute left to
	// runs can feed, within the configured ceiling (SCENARIO_PARALLEL).
	AtOnce int
}

// ScenarioRunForm is what a clinician submits to start a run.
type ScenarioRunForm struct {
	Suite string // a ScenarioSuite.Name; ignored when Upload is set
	// Upload is a suite file (YAML, docs/md) the clinician sent
	// instead, with its file name.
	Upload     []byte
	UploadName string
	Repeats    int    // 1-10
	Label      string // optional, at most 100 characters
	// Variations are played besides each vignette as written
	// (bff/scenarios/variations names them); none: nil.
	Variations []string
	// UrgentFirst plays emergency vignettes, and those a variation flipped
	// in the latest run with variations, before the others, so a run cut
	// short by the day's quota has answered the most important first.
	UrgentFirst bool
}

// ScenarioRunEstimate is what a run will cost and when it will finish, said
// before it starts.
type ScenarioRunEstimate struct {
	Intakes int // plays × repeats, as Items
	// Turns is the expected number of turns (from earlier runs of the same
	// vignettes where there are some, else from each vignette's facts);
	// MaxTurns is the most it can take (every turn limit reached).
	Turns, MaxTurns int
	// Unlimited: the run plays against an embedded sandbox with its limits
	// off; the rest of the estimate does not apply.
	Unlimited bool
	// NoQuota: the run plays against the key, which has no daily quota
	// (PACER_TURNS_PER_DAY <= 0): PerDay and LeftToday do not apply, Days
	// is 1, and Finish is the key's pace alone.
	NoQuota bool
	// PerDay is the turns a day runs may spend: the daily quota less the
	// turns kept for patients. LeftToday is what remains of it today.
	PerDay, LeftToday int
	// Parallel is how many items are played at once: what the key's
	// requests a minute left to runs can feed, within the configured
	// ceiling (1 at the spec's 6 a minute).
	Parallel int
	// Days is how many quota days the run spreads over (1: it fits today).
	Days int
	// Finish is when it is expected to end, given the key's pace and the
	// days it must wait for.
	Finish time.Time
	// PerVariation is what each variation adds, the unvaried plays first
	// (Variation ""); nil when the run has no variations.
	PerVariation []ScenarioVariationCost
}

// ScenarioVariationCost is the intakes and expected turns of one variation's plays.
type ScenarioVariationCost struct {
	Variation      string
	Intakes, Turns int
}

// ScenarioRunProgress is a run's live state, for a progress page that follows it.
type ScenarioRunProgress struct {
	Run *ScenarioRun
	// Playing are the items in flight (their intakes open upstream), in
	// Seq order; none when nothing is being played.
	Playing []*ScenarioItem
}

// ScenarioReading is one distinct engine question a run asked, as the
// simulated patient read it (scenarios.QuestionRead), recorded with the
// run so that a release's questions can be reviewed once for every run.
type ScenarioReading struct {
	RunID string
	scenarios.QuestionRead
	SeenAt time.Time // when the run recorded it
}

// ReadingRelease is an engine release that has readings, and when the
// first of them was recorded.
type ReadingRelease struct {
	Release   string
	FirstSeen time.Time
}

// ReadingReview is a reviewer's decision on how the patient must read one
// engine question of one release: the latest for a question is in force
// for every later run against that release, and only that release.
type ReadingReview struct {
	ID       int64 // assigned by the store, increasing
	Release  string
	Question string // scenarios.NormalQuestion
	scenarios.Reviewed
	// Concept and Inverse: the concept chosen (ReviewCorrected) and
	// whether the question asks its opposite; for people and exports.
	Concept string
	Inverse bool
	Note    string // optional, at most 2,000 characters
}

// ReadingReviewForm is what a reviewer submits about one question.
type ReadingReviewForm struct {
	Release  string
	Question string // its normal text, as the page gave it
	Decision scenarios.ReviewDecision
	Concept  string // for ReviewCorrected: a concept of the vocabulary
	Inverse  bool   // the question asks the concept's opposite
	Note     string
}

// ReadingQuestion is one question of a release on the review page.
type ReadingQuestion struct {
	scenarios.QuestionRead // as first recorded; Plays and Vignettes over every run
	Runs                   []string
	// Review is the decision in force (nil: unreviewed); Suggestion the
	// previous release's decision on the same question, offered, never
	// applied (nil: none, or this release has its own).
	Review, Suggestion *ReadingReview
}

// ReadingsPage is what the review page shows of one release.
type ReadingsPage struct {
	Release string
	// Releases are the releases with readings, newest first; Previous the
	// one before Release whose reviews are offered as suggestions.
	Releases []ReadingRelease
	Previous string
	// Questions: unreviewed first, then by how many plays asked them.
	Questions []*ReadingQuestion
	// Concepts are the vocabulary's ids, for choosing another.
	Concepts []string
	Reviewed int // questions with a decision in force
}

// ReplayPlan is a replay, before it starts, of the items of a run that
// asked one question: each (vignette, variation) played once, in the run's
// order, as a new run linked to it (ScenarioRun.ReplayOf).
type ReplayPlan struct {
	Run               *ScenarioRun // the run replayed
	Release, Question string
	// Items are the run's items whose transcripts asked Question of
	// Release; Plays the distinct (vignette, variation) among them, which
	// the replay plays once each.
	Items    []*ScenarioItem
	Plays    int
	Estimate *ScenarioRunEstimate
}
