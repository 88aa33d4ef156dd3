package scenarios

import (
	"context"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// A scenario run plays a suite of synthetic patients (bff/scenarios) against
// the engine in batch: every vignette, Repeats times, as
// blocking turns at a priority below live patients. It is a durable job:
// the run is leased to one replica, which plays several items at once
// (as many as the key's budget can feed), each item (one vignette, one repeat)
// records its encounter and every reply as it goes, so a restart resumes
// an item at its next turn and never drives the engine twice.

// RunState is where a scenario run stands.
type RunState string

// Run states.
const (
	RunQueued RunState = "queued" // created; no replica has played anything yet
	RunActive RunState = "active" // being played
	// RunWaiting: today's turns for runs are spent (the daily quota minus
	// what is kept for patients); it goes on at NotBefore.
	RunWaiting   RunState = "waiting"
	RunDone      RunState = "done"      // every item played (some may have failed)
	RunCancelled RunState = "cancelled" // a clinician stopped it; played items stay
)

// Ended reports whether the run will play nothing more.
func (s RunState) Ended() bool { return s == RunDone || s == RunCancelled }

// Run is one batch run of a suite.
type Run struct {
	ID string // "sr_" and random hex
	// Suite is the suite as it was when the run started: a resumed run
	// plays the same vignettes. nil in the lists of ScenarioRuns.
	Suite *Suite
	// SuiteName is its name, in lists too.
	SuiteName string
	Repeats   int    // 1-10
	Label     string // what the clinician called it ("release 2.4 candidate"), at most 100 characters
	// Target says where it plays: "sandbox" (an embedded sandbox with its
	// limits off) or "service" (the configured key, within its budget).
	Target    string
	StartedBy string // clinician username
	State     RunState
	Items     int // vignettes × repeats
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
	Summary *Summary

	// The lease of the replica playing it (empty while nobody is).
	LeaseOwner string
	LeaseUntil time.Time
}

// SuiteLabel is the name the run is listed under: SuiteName, else its
// suite's name ("" when it has neither).
func (r *Run) SuiteLabel() string {
	if r.SuiteName == "" && r.Suite != nil {
		return r.Suite.Name
	}
	return r.SuiteName
}

// ItemState is where one item of a run stands.
type ItemState string

// Item states.
const (
	ItemPending ItemState = "pending" // not started
	ItemPlaying ItemState = "playing" // its intake exists upstream (EncounterID) and turns are under way
	ItemDone    ItemState = "done"    // Result holds what the engine concluded
	ItemFailed  ItemState = "failed"  // Result.Error says why (not scored)
)

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
}

// Item is one vignette, one repeat, of a run.
type Item struct {
	RunID      string
	Seq        int // 0-based play order: repeat by repeat, vignettes in suite order
	VignetteID string
	Title      string
	Repeat     int // 1-based
	// Variation is how the patient speaks in it (bff/scenarios/variations);
	// "" for the vignette as written.
	Variation string
	State     ItemState
	// EncounterID is the intake created upstream for it ("" until then).
	EncounterID string
	// Turns are the exchanges so far, in order: what a resumed item replays
	// to its simulated patient instead of asking the engine again.
	Turns []Exchange
	// Result is set when the item is done or failed.
	Result *Result
	// Handoff is the handoff's JSON exactly as the service sent it (nil
	// when it could not be read).
	Handoff []byte
	// Decoded is Handoff decoded, as Service.Item returns it (never
	// stored); nil when there is no handoff or it does not decode.
	Decoded   *bff.Handoff
	UpdatedAt time.Time
}

// RunAdjudication is a clinician's verdict on a vignette where the
// engine and the gold label disagree; it carries into later comparisons.
type RunAdjudication struct {
	ID int64 // assigned by the store
	Adjudication
	BaseRun, HeadRun string // the comparison it was made in
}

// RunStore keeps scenario runs, their items and adjudications.
//
// Error contract as for the other stores: ENOTFOUND for a missing row,
// ECONFLICT as documented per method, anything else internal. Methods
// honour ctx.
type RunStore interface {
	// CreateScenarioRun inserts r (State queued, no lease) and its items
	// (all pending) in one transaction; ECONFLICT if r.ID exists.
	CreateScenarioRun(ctx context.Context, r *Run, items []*Item) error
	// ScenarioRun returns a run.
	ScenarioRun(ctx context.Context, id string) (*Run, error)
	// ScenarioRuns returns runs newest first, at most limit (0 = all),
	// without their Suite (SuiteName is set).
	ScenarioRuns(ctx context.Context, limit int) ([]*Run, error)
	// ClaimScenarioRun leases to owner, until until, the oldest run (by
	// CreatedAt) that has not ended, whose NotBefore is at or before now,
	// and whose lease is empty or ran out at or before stale (now, with
	// other replicas; later, for a lone replica taking back the runs of
	// its own previous process at once); ENOTFOUND when there is none.
	// Two replicas claiming at once never get the same run.
	ClaimScenarioRun(ctx context.Context, owner string, now, stale, until time.Time) (*Run, error)
	// RenewScenarioLeases extends every lease owner holds on a run that is
	// not ended to until, returning how many.
	RenewScenarioLeases(ctx context.Context, owner string, until time.Time) (int, error)
	// UpdateScenarioRun writes r's State, NotBefore, Note, UpdatedAt,
	// FinishedAt, Release and Summary, and its lease (LeaseOwner "" releases it),
	// if owner holds the run's lease and the run has not ended; ECONFLICT
	// otherwise (another replica took it over, or a clinician cancelled
	// it: the caller must stop playing it). Played and TurnsUsed are
	// SaveScenarioItem's.
	UpdateScenarioRun(ctx context.Context, r *Run, owner string) error
	// CancelScenarioRun ends a run that has not ended: State cancelled,
	// Note, FinishedAt and UpdatedAt at, lease cleared. ENOTFOUND for no
	// such run, ECONFLICT when it had ended.
	CancelScenarioRun(ctx context.Context, id, note string, at time.Time) error
	// ScenarioItems returns a run's items in Seq order.
	ScenarioItems(ctx context.Context, runID string) ([]*Item, error)
	// ScenarioItem returns one item.
	ScenarioItem(ctx context.Context, runID string, seq int) (*Item, error)
	// PlayingScenarioItems returns a run's items in state playing, in
	// Seq order, at most limit (none: an empty slice, not an error).
	PlayingScenarioItems(ctx context.Context, runID string, limit int) ([]*Item, error)
	// SaveScenarioItem writes its State, EncounterID, Turns, Result,
	// Handoff and UpdatedAt, adds turnsSpent to its run's TurnsUsed and,
	// when the item goes from pending or playing to done or failed, one
	// to its run's Played; in one transaction, if owner holds the run's
	// lease and the run has not ended; ECONFLICT otherwise.
	SaveScenarioItem(ctx context.Context, it *Item, turnsSpent int, owner string) error
	// AddScenarioAdjudication appends a (setting a.ID).
	AddScenarioAdjudication(ctx context.Context, a *RunAdjudication) error
	// ScenarioAdjudications returns every adjudication, oldest first (a
	// later verdict on a vignette replaces an earlier one).
	ScenarioAdjudications(ctx context.Context) ([]*RunAdjudication, error)
}

// SuiteInfo describes a suite a clinician can start a run of.
type SuiteInfo struct {
	Name      string // "builtin", or "builtin/heart_lungs" for one file of it
	Title     string // for people
	Vignettes int
}

// RunForm is what a clinician submits to start a run.
type RunForm struct {
	Suite string // a SuiteInfo.Name; ignored when Upload is set
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

// RunEstimate is what a run will cost and when it will finish, said
// before it starts.
type RunEstimate struct {
	Intakes int // vignettes × repeats
	// Turns is the expected number of turns (from earlier runs of the same
	// vignettes where there are some, else from each vignette's facts);
	// MaxTurns is the most it can take (every turn limit reached).
	Turns, MaxTurns int
	// Unlimited: the run plays against an embedded sandbox with its limits
	// off; the rest of the estimate does not apply.
	Unlimited bool
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
	PerVariation []VariationCost
}

// VariationCost is the intakes and expected turns of one variation's plays.
type VariationCost struct {
	Variation      string
	Intakes, Turns int
}

// RunProgress is a run's live state, for a progress page that follows it.
type RunProgress struct {
	Run *Run
	// Playing are the items in flight (their intakes open upstream), in
	// Seq order; none when nothing is being played.
	Playing []*Item
}

// Service is the Scenarios section of the clinician area. Every
// call is a signed-in clinician's; starting, cancelling and adjudicating
// are audited under their name.
type Service interface {
	// Suites lists the built-in suites: the whole built-in suite first,
	// then each of its files.
	Suites() []SuiteInfo
	// Estimate estimates a run of f without starting it; EINVALID as
	// StartRun.
	Estimate(ctx context.Context, f RunForm) (*RunEstimate, error)
	// StartRun validates f and records the run, which a replica then plays
	// in the background. EINVALID naming the field: "suite" for an unknown
	// suite name, "upload" for a suite file that does not load (the
	// message names the file, the vignette and the field), "repeats" out
	// of 1-10, "label" over 100 characters.
	StartRun(ctx context.Context, clinician string, f RunForm) (*Run, *RunEstimate, error)
	// Runs lists runs, newest first (at most 200).
	Runs(ctx context.Context) ([]*Run, error)
	// Run returns a run and its items; ENOTFOUND for no such run.
	Run(ctx context.Context, id string) (*Run, []*Item, error)
	// Report scores a run's finished items (NewReport); a run
	// still playing gives the report so far. ENOTFOUND for no such run.
	Report(ctx context.Context, id string) (*Report, error)
	// Item returns one item of a run (transcript, result, handoff with
	// Decoded set); ENOTFOUND for no such run or item.
	Item(ctx context.Context, runID string, seq int) (*Run, *Item, error)
	// Compare compares two runs per vignette, with every adjudication
	// made so far applied. ENOTFOUND for either run missing; EINVALID
	// ("head") when both are the same run.
	Compare(ctx context.Context, base, head string) (*Comparison, error)
	// Adjudicate records a verdict on a vignette of a comparison and
	// audits it (AuditAdjudicate). EINVALID naming the field: "verdict"
	// not gold_wrong or engine_wrong, "note" blank or over 2,000
	// characters, "vignette" not in the head run; ENOTFOUND for a missing
	// run.
	Adjudicate(ctx context.Context, clinician, base, head, vignette string, v Verdict, note string) (*RunAdjudication, error)
	// Adjudications returns the verdicts in force by vignette id.
	Adjudications(ctx context.Context) (map[string]Adjudication, error)
	// CancelRun stops a run that has not ended (its played items stay)
	// and audits it; ENOTFOUND for no such run, ECONFLICT when it ended.
	CancelRun(ctx context.Context, clinician, id string) error
	// Progress returns a run's state and the item being played, for a
	// page that follows it; ENOTFOUND for no such run.
	Progress(ctx context.Context, id string) (*RunProgress, error)
}
