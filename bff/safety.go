package bff

import (
	"context"
	"time"

	"github.com/clinical-intake/intake-web/bff/safety"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// HazardLogVersion is one version of the hazard log: every change to the
// log is a new version (docs/safety.md), kept whole, with who made it and
// why.
type HazardLogVersion struct {
	Version int // 1, 2, ...: assigned as the latest plus one
	Log     *safety.Log
	By      string // a clinician's username, "system" or "cli:" and a login
	At      time.Time
	Note    string // what changed, for people
}

// SafetyDecision is a clinical safety officer's decision on a release,
// with the evidence it was made on frozen: the evaluation as it stood and
// its content hash. A later run changes neither.
type SafetyDecision struct {
	ID         int64 // assigned by the store, increasing
	Subject    safety.Subject
	Verdict    safety.Verdict
	Conditions string // for approve_with_conditions
	Reasoning  string
	By         string
	At         time.Time
	LogVersion int
	Hash       string             // Snapshot.Hash
	Snapshot   *safety.Evaluation // the evidence signed
}

// SafetyStore keeps the hazard log's versions and the release decisions.
// Both are appended, never changed. Error contract as for the other stores.
type SafetyStore interface {
	// AddHazardLog stores v as the version after the latest (the first:
	// 1), setting v.Version; ECONFLICT when v.Version was set and is not
	// that number (someone else saved a version first).
	AddHazardLog(ctx context.Context, v *HazardLogVersion) error
	// HazardLog returns a version of the log (0: the latest); ENOTFOUND
	// when there is no such version (none yet, for 0).
	HazardLog(ctx context.Context, version int) (*HazardLogVersion, error)
	// HazardLogVersions returns every version, newest first, without
	// their Log.
	HazardLogVersions(ctx context.Context) ([]*HazardLogVersion, error)
	// AddSafetyDecision appends d, setting d.ID.
	AddSafetyDecision(ctx context.Context, d *SafetyDecision) error
	// SafetyDecisions returns the decisions on subject, oldest first (the
	// latest is in force).
	SafetyDecisions(ctx context.Context, subject safety.Subject) ([]*SafetyDecision, error)
}

// Audited actions of the safety case (IntakeID is "").
const (
	// AuditHazardLog: a new version of the hazard log. Detail: the version
	// and the note.
	AuditHazardLog = "safety_log"
	// AuditSafetyDecision: a release decision recorded. Detail: the
	// release, the verdict and the snapshot's hash.
	AuditSafetyDecision = "safety_decision"
	// AuditSafetyRefused: a decision refused to someone who is not the
	// clinical safety officer. Detail: the release.
	AuditSafetyRefused = "safety_decision_refused"
)

// SafetyRelease is an engine release (and voice) with finished scenario
// runs: a subject a safety case can be made for.
type SafetyRelease struct {
	Subject  safety.Subject
	Runs     int       // finished runs
	LastRun  time.Time // when the newest finished
	Decision *SafetyDecision
}

// SafetyReleaseView is what the release page shows: the evidence now, the
// decision in force with the evidence it froze, and the comparison with
// the previous release.
type SafetyReleaseView struct {
	Subject safety.Subject
	// Live is the current log evaluated against every finished run of the
	// subject now.
	Live *safety.Evaluation
	// Decision is the decision in force (nil: none yet); Decisions every
	// decision, oldest first. Changed: the evidence now differs from what
	// the decision froze (Live.Hash != Decision.Hash); the decision still
	// stands on its own snapshot.
	Decision  *SafetyDecision
	Decisions []*SafetyDecision
	Changed   bool
	// Previous is the release before this one (nil: none); Comparison its
	// newest run (BaseRun) against this one's (HeadRun), with the
	// adjudications applied: which vignettes got worse, newly
	// under-triaged first, and the clustered test where runs have repeats.
	Previous         *safety.Subject
	BaseRun, HeadRun string
	Comparison       *scenarios.Comparison
}

// SafetyDecisionForm is what the clinical safety officer submits.
type SafetyDecisionForm struct {
	Subject    safety.Subject
	Verdict    safety.Verdict
	Conditions string
	Reasoning  string
	// Hash is the evidence's hash the page showed: the decision is
	// refused (ECONFLICT) when the evidence changed since, so what is
	// signed is what was read.
	Hash string
}

// HazardForm is one hazard as its form on the safety case's page submits
// it: the texts as typed, causes and effects one a line, the controls as
// the YAML list the log file holds under a hazard.
type HazardForm struct {
	// Was is the id of the hazard edited; "" for a new hazard.
	Was string
	// Base is the version of the log the form was read from: the save is
	// refused (ECONFLICT) when another version was saved since.
	Base                                 int
	ID, Title, Description               string
	Causes, Effects                      string
	InitialSeverity, InitialLikelihood   string
	ResidualSeverity, ResidualLikelihood string
	Controls                             string
	Owner, Status                        string
	// Note is why the hazard changed: required, kept with the version.
	Note string
}

// SafetyReport is the safety case report of a release: the decision in
// force with the evidence it froze, or, before any, the evidence now
// (Draft).
type SafetyReport struct {
	Subject    safety.Subject
	Evaluation *safety.Evaluation
	Decision   *SafetyDecision
	Draft      bool
	Log        *HazardLogVersion // the version evaluated
	Generated  time.Time
}

// SafetyService is the clinical safety case in the clinician area
// (/clinician/safety) and the command line (intake-web safety). Every
// change is audited.
type SafetyService interface {
	// HazardLog returns a version of the log (0: the latest). With none
	// stored yet, the starter log is adopted as version 1 (audited under
	// "system").
	HazardLog(ctx context.Context, version int) (*HazardLogVersion, error)
	// HazardLogVersions lists the versions, newest first, without logs.
	HazardLogVersions(ctx context.Context) ([]*HazardLogVersion, error)
	// ExportLog writes a version (0: the latest) as YAML.
	ExportLog(ctx context.Context, version int) ([]byte, error)
	// ImportLog stores data (YAML) as the next version under actor, with
	// note, and audits it. EINVALID ("file") naming the line and the
	// field when the file has a fault: nothing is stored.
	ImportLog(ctx context.Context, actor string, data []byte, note string) (*HazardLogVersion, error)
	// MayEditLog reports whether c may change the hazard log (a hazard's
	// form, a YAML file pasted on the page): an administrator or the
	// clinical safety officer.
	MayEditLog(c *Clinician) bool
	// SaveHazard stores the latest log with the hazard of f in place of
	// f.Was (or added) as the next version, under c with f.Note, audited
	// as ImportLog is. EFORBIDDEN (audited) when c may not edit the log;
	// EINVALID naming the form's field and the rule ("id", "title",
	// "initial_severity", "controls" with the line or the control, "note",
	// ...), nothing stored; ECONFLICT when a version was saved after
	// f.Base; ENOTFOUND when f.Was names no hazard.
	SaveHazard(ctx context.Context, c *Clinician, f HazardForm) (*HazardLogVersion, error)
	// Releases lists the releases with finished runs, newest run first.
	Releases(ctx context.Context) ([]SafetyRelease, error)
	// Release evaluates the latest log against the subject's finished
	// runs. ENOTFOUND when the subject has none.
	Release(ctx context.Context, s safety.Subject) (*SafetyReleaseView, error)
	// MayDecide reports whether c may record a release decision: the
	// clinical safety officer only.
	MayDecide(c *Clinician) bool
	// Decide records c's decision, freezing the evidence shown (f.Hash).
	// EFORBIDDEN (audited) when c may not decide; EINVALID naming the
	// field: "verdict", "reasoning" blank or over 4,000 characters,
	// "conditions" missing for approve_with_conditions; ECONFLICT when
	// the evidence changed since f.Hash; ENOTFOUND for a subject with no
	// finished run.
	Decide(ctx context.Context, c *Clinician, f SafetyDecisionForm) (*SafetyDecision, error)
	// Report is the safety case report of the subject; ENOTFOUND as
	// Release.
	Report(ctx context.Context, s safety.Subject) (*SafetyReport, error)
}
