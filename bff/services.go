package bff

import (
	"context"
	"time"

	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// The services the web layer calls. Their implementations live beside this
// package (bff/services/intakes, bff/services/review, bff/services/accounts, bff/services/scenarioruns); cmd/intake-web/app
// builds them. Every error they return is either an *Error, whose Code maps
// to a status and whose Message is safe to show, or an internal error,
// logged and shown only as a generic sentence (ErrorCode gives EINTERNAL).

// PatientService is what a patient's browser session may do. owner is the
// session's patient id. An intake of another owner, or none at all, is
// ENOTFOUND: the two cannot be told apart.
type PatientService interface {
	// StartIntake validates the form (an EINVALID *Error whose Fields name every field at
	// fault), creates the intake upstream and records it as owner's. The
	// same SubmissionID twice gives the same intake. ERATELIMIT when the
	// key's requests stay taken (the form may be sent again), EQUOTA when
	// today's intakes are spent, EUNAVAILABLE when the service fails.
	StartIntake(ctx context.Context, owner string, f StartForm) (*Intake, error)
	// Intake returns owner's intake and its turns in order.
	Intake(ctx context.Context, owner, id string) (*Intake, []*Turn, error)
	// IntakesOf returns owner's intakes, newest first.
	IntakesOf(ctx context.Context, owner string) ([]*Intake, error)
	// SendTurn records a message as a turn and starts it as a streaming
	// turn; it returns the queued turn at once. The same submissionID again
	// returns the turn it created. EINVALID for a blank or too long message;
	// ECONFLICT when the intake ended or a turn is still running; EGONE when
	// it expired; EUNAVAILABLE while the app shuts down. Nothing is sent
	// upstream in those cases.
	SendTurn(ctx context.Context, owner, intakeID, message, submissionID string) (*Turn, error)
	// SendTurnBlocking is SendTurn for browsers without JavaScript: one
	// blocking call with an Idempotency-Key derived from the submission, so
	// a resubmission, a retry or a restart replays it. Wait with WaitSettled.
	SendTurnBlocking(ctx context.Context, owner, intakeID, message, submissionID string) (*Turn, error)
	// Turn returns a turn of owner's intake, with the intake.
	Turn(ctx context.Context, owner, intakeID string, index int) (*Intake, *Turn, error)
	// CheckRetry allows sending a failed turn's text again only while it is
	// the intake's last turn and known not to have landed; ECONFLICT if not.
	CheckRetry(ctx context.Context, owner, intakeID string, index int) error
	// WaitSettled blocks until the turn settles, its stream ends or ctx ends.
	WaitSettled(ctx context.Context, intakeID string, index int)
	// FollowTurn delivers the turn's events after after, in order, until
	// its settling event or ctx's end; found is false when the turn's stream
	// is gone (long settled, or before a restart): read the turn instead.
	FollowTurn(ctx context.Context, intakeID string, index int, after int64) (events <-chan Event, found bool)
}

// ReviewService is what a signed-in clinician may do with intakes. Every
// read and every review is audited under the clinician's name.
type ReviewService interface {
	// WorklistPage returns at most limit intakes matching f in review order
	// (see WorkItem.Group) after the cursor from (zero: the first page;
	// Backward: the page before it), with the cursors of the pages around
	// it. limit <= 0 means 50, at most 200. Open intakes past their expiry
	// are marked expired first. Internal errors only: a cursor is checked
	// when parsed (ParseWorklistCursor).
	WorklistPage(ctx context.Context, f WorklistFilter, from WorklistCursor, limit int) (*WorklistPage, error)
	// WorkItem returns one intake's worklist row; ENOTFOUND for no such
	// intake.
	WorkItem(ctx context.Context, id string) (*WorkItem, error)
	// Handoff returns an intake's handoff: a closed or expired intake's from
	// the store with no upstream call, an open one's re-read when older than
	// 30 s or, with refresh, 10 s. ENOTFOUND for no such intake; when a
	// re-read fails, the stored copy marked Stale, or the upstream error.
	Handoff(ctx context.Context, clinician, id string, refresh bool) (*HandoffRecord, error)
	// RawHandoff returns the handoff's bytes exactly as the service sent
	// them, for download.
	RawHandoff(ctx context.Context, clinician, id string) ([]byte, error)
	// FHIRHandoff returns the handoff as a FHIR R4 document (a Bundle of
	// type document, JSON, media type application/fhir+json; docs/fhir.md),
	// read as Handoff reads it (a closed or expired intake's from the store,
	// no upstream call; a stored copy when a re-read fails) and audited as
	// AuditDownloadFHIR only. ENOTFOUND for no such intake; the upstream
	// error when nothing is stored and the read fails.
	FHIRHandoff(ctx context.Context, clinician, id string) ([]byte, error)
	// MarkReviewed records a review; EINVALID for a note over 2,000
	// characters, ENOTFOUND for no such intake.
	MarkReviewed(ctx context.Context, clinician, id, note string) (*Review, error)
	// AuditLog returns audit entries newest first, 100 a page, before an id.
	AuditLog(ctx context.Context, before int64) ([]*AuditEntry, error)
	// FollowWorklist subscribes to intake changes after the event id after:
	// the kept events, then live ones until cancel; gap means events were
	// missed (reload). live closes when the subscriber falls behind.
	FollowWorklist(after int64) (replay []Event, live <-chan Event, cancel func(), gap bool)
	// LastWorklistEvent is the newest worklist event id (0 before any).
	LastWorklistEvent() int64
}

// AccountService manages clinician accounts and their sign-in.
type AccountService interface {
	// AddClinician creates an account (lower-cased username) holding roles,
	// audited under actor; EINVALID for a bad username or password, or a
	// username taken.
	AddClinician(ctx context.Context, actor, username, password string, roles []Role) (*Clinician, error)
	// Clinicians lists the accounts by username.
	Clinicians(ctx context.Context) ([]*Clinician, error)
	// DisableClinician stops an account, audited under actor; its sessions
	// lose their rights at their next request. ENOTFOUND for no such account.
	DisableClinician(ctx context.Context, actor, username string) error
	// HasClinicians reports whether any account exists.
	HasClinicians(ctx context.Context) (bool, error)
	// ActiveClinician returns a signed-in session's account; ENOTFOUND when
	// it no longer exists or is disabled.
	ActiveClinician(ctx context.Context, username string) (*Clinician, error)
	// SignIn checks the credentials. EUNAUTHORIZED for a wrong username or
	// password or a disabled account, with the same message and the same
	// cost for each (no enumeration); ERATELIMIT after too many failures
	// for the username or the client address. Every attempt is audited.
	SignIn(ctx context.Context, username, password, address string) (*Clinician, error)
	// SignOut records a sign-out (or an idle sign-out) in the audit log.
	SignOut(ctx context.Context, username string)
	// AccessRefused records in the audit log that a signed-in clinician
	// was refused a page their roles do not open; detail says which and why.
	AccessRefused(ctx context.Context, username, detail string)

	// SignInSecondFactor is the second step of signing in to an account
	// whose SignIn returned it with HasSecondFactor: code is the
	// authenticator's six digits or an unused recovery code. Failures count
	// against the same limits as passwords: EUNAUTHORIZED for a wrong or
	// reused code, ERATELIMIT after too many; audited.
	SignInSecondFactor(ctx context.Context, username, code, address string) (*Clinician, error)
	// BeginTOTP starts the enrolment of username's second factor, or shows
	// again the one sealed in pending; EINVALID when it has one.
	BeginTOTP(ctx context.Context, username string, pending []byte) (*TOTPEnrolment, error)
	// ConfirmTOTP enrols the pending secret when code is its code now, and
	// returns the ten recovery codes, to show once; EINVALID (field "code")
	// otherwise. Audited.
	ConfirmTOTP(ctx context.Context, username string, pending []byte, code string) ([]string, error)
	// RecoveryCodesLeft is how many of username's recovery codes are unused.
	RecoveryCodesLeft(ctx context.Context, username string) (int, error)

	// StartSession records a signed-in session under its token.
	StartSession(ctx context.Context, token string, s *ClinicianSession) error
	// SessionActive returns the session with token; ENOTFOUND when it was
	// ended, signed out or has expired.
	SessionActive(ctx context.Context, token string) (*ClinicianSession, error)
	// SessionSeen notes that the session with token was used at at.
	SessionSeen(ctx context.Context, token string, at time.Time) error
	// SessionSignedOut forgets the session with token.
	SessionSignedOut(ctx context.Context, token string)
	// Sessions lists username's sessions ("" for everyone's), the latest
	// seen first, without those idle longer than idle.
	Sessions(ctx context.Context, username string, idle time.Duration) ([]*ClinicianSession, error)
	// EndSession ends the session with id (owner's only, unless owner is
	// ""), audited under actor; ENOTFOUND if there is none.
	EndSession(ctx context.Context, actor, owner, id string) (*ClinicianSession, error)
	// EndOtherSessions ends username's sessions but keep, audited, and
	// says how many.
	EndOtherSessions(ctx context.Context, username, keep string) (int, error)
}

// ScenarioService is the Scenarios section of the clinician area. Every
// call is a signed-in clinician's; starting, cancelling and adjudicating
// are audited under their name.
type ScenarioService interface {
	// Suites lists the built-in suites: the whole built-in suite first,
	// then each of its files.
	Suites() []ScenarioSuite
	// Estimate estimates a run of f without starting it; EINVALID as
	// StartRun.
	Estimate(ctx context.Context, f ScenarioRunForm) (*ScenarioRunEstimate, error)
	// StartRun validates f and records the run, which a replica then plays
	// in the background. EINVALID naming the field: "suite" for an unknown
	// suite name, "upload" for a suite file that does not load (the
	// message names the file, the vignette and the field), "repeats" out
	// of 1-10, "label" over 100 characters.
	StartRun(ctx context.Context, clinician string, f ScenarioRunForm) (*ScenarioRun, *ScenarioRunEstimate, error)
	// Runs lists runs, newest first (at most 200).
	Runs(ctx context.Context) ([]*ScenarioRun, error)
	// Run returns a run and its items; ENOTFOUND for no such run.
	Run(ctx context.Context, id string) (*ScenarioRun, []*ScenarioItem, error)
	// Report scores a run's finished items (NewReport); a run
	// still playing gives the report so far. ENOTFOUND for no such run.
	Report(ctx context.Context, id string) (*scenarios.Report, error)
	// Item returns one item of a run (transcript, result, handoff with
	// Decoded set); ENOTFOUND for no such run or item.
	Item(ctx context.Context, runID string, seq int) (*ScenarioRun, *ScenarioItem, error)
	// Compare compares two runs per vignette, with every adjudication
	// made so far applied. ENOTFOUND for either run missing; EINVALID
	// ("head") when both are the same run.
	Compare(ctx context.Context, base, head string) (*scenarios.Comparison, error)
	// Adjudicate records a verdict on a vignette of a comparison and
	// audits it (AuditAdjudicate). EINVALID naming the field: "verdict"
	// not gold_wrong or engine_wrong, "note" blank or over 2,000
	// characters, "vignette" not in the head run; ENOTFOUND for a missing
	// run.
	Adjudicate(ctx context.Context, clinician, base, head, vignette string, v scenarios.Verdict, note string) (*ScenarioAdjudication, error)
	// Adjudications returns the verdicts in force by vignette id.
	Adjudications(ctx context.Context) (map[string]scenarios.Adjudication, error)
	// CancelRun stops a run that has not ended (its played items stay)
	// and audits it; ENOTFOUND for no such run, ECONFLICT when it ended.
	CancelRun(ctx context.Context, clinician, id string) error
	// Progress returns a run's state and the item being played, for a
	// page that follows it; ENOTFOUND for no such run.
	Progress(ctx context.Context, id string) (*ScenarioRunProgress, error)
}

// ReadingService is the review of the simulated patient's readings in the
// clinician area (/clinician/scenarios/readings): every distinct engine
// question of a release, how the patient read it, and the reviewers'
// decisions, each audited (AuditReadingReview).
type ReadingService interface {
	// Readings returns the questions of release ("" for the newest
	// release with readings); ENOTFOUND for a release with none.
	Readings(ctx context.Context, release string) (*ReadingsPage, error)
	// ReviewReading records a decision under clinician's name and audits
	// it with the reading before and after. EINVALID naming the field:
	// "question" not asked in release, "decision" not one of confirmed,
	// corrected or unanswerable, "concept" not in the vocabulary (for
	// corrected), "note" over 2,000 characters; ENOTFOUND for a release
	// with no readings.
	ReviewReading(ctx context.Context, clinician string, f ReadingReviewForm) (*ReadingReview, error)
	// PlanReplay plans a replay of run's items whose transcripts asked
	// question (a normal question of release) and estimates it as any run
	// (ScenarioService.Estimate). ENOTFOUND for no such run; EINVALID
	// ("question") when none of its items asked it.
	PlanReplay(ctx context.Context, run, release, question string) (*ReplayPlan, error)
	// StartReplay starts the replay PlanReplay plans, as a new run linked
	// to run, under the same budget and priority as any run, and audits it
	// as a run started (AuditScenarioStart). Errors as PlanReplay, and as
	// StartRun for a run that could never finish.
	StartReplay(ctx context.Context, clinician, run, release, question string) (*ScenarioRun, *ScenarioRunEstimate, error)
	// ExportReviews is the decisions in force for release as a YAML file
	// (docs/scenarios.md), questions in order, for version control;
	// ENOTFOUND when the release has none.
	ExportReviews(ctx context.Context, release string) ([]byte, error)
	// ImportReviews adds the decisions of a file ExportReviews wrote (or a
	// person edited), each audited under actor like a decision made on the
	// page, and returns the release and how many it added. A file with any
	// fault adds nothing: EINVALID whose message names the line and the
	// field.
	ImportReviews(ctx context.Context, actor string, data []byte) (release string, added int, err error)
}
