package bff

import (
	"context"
	"time"
)

// Clinician is an account that may sign in to review handoffs.
type Clinician struct {
	Username     string
	PasswordHash []byte // bcrypt
	Disabled     bool
	CreatedAt    time.Time
}

// Review is a clinician's mark that a handoff was reviewed.
type Review struct {
	IntakeID   string
	Clinician  string
	Note       string // optional
	ReviewedAt time.Time
}

// AuditEntry records who did what to which intake, and when.
type AuditEntry struct {
	ID       int64 // assigned by the store, increasing
	At       time.Time
	Actor    string // a clinician's username, "system", or "cli:" and the login of who ran intake-web clinician
	Action   string // one of the Audit* constants
	IntakeID string // "" for actions on no intake
	Detail   string // short, no patient content
}

// Audited actions.
const (
	AuditSignIn       = "sign_in"
	AuditSignInFailed = "sign_in_failed"
	AuditSignOut      = "sign_out"
	AuditViewHandoff  = "view_handoff"
	AuditDownload     = "download_handoff"
	AuditDownloadFHIR = "download_fhir"
	AuditRefresh      = "refresh_handoff"
	AuditReview       = "review"
	AuditFaultArmed   = "fault_armed" // a sandbox fault armed from the clinician area
	// Account changes (IntakeID is ""; Detail names the account).
	AuditClinicianAdd      = "clinician_add"
	AuditClinicianPassword = "clinician_password"
	AuditClinicianDisable  = "clinician_disable"
	AuditClinicianUnlock   = "clinician_unlock"
	// Scenario runs (Detail names the run; IntakeID is "").
	AuditScenarioStart  = "scenario_start"
	AuditScenarioCancel = "scenario_cancel"
	AuditAdjudicate     = "scenario_adjudicate" // Detail: run pair, vignette, verdict
	// AuditReadingReview: a reading of an engine question reviewed.
	// Detail: the release, the question, the reading before and after.
	AuditReadingReview = "scenario_reading_review"
)

// ClinicianStore keeps clinician accounts. Error contract as for the other
// stores (ENOTFOUND, ECONFLICT as *Error; anything else internal).
type ClinicianStore interface {
	// CreateClinician inserts c; ECONFLICT if the username exists.
	CreateClinician(ctx context.Context, c *Clinician) error
	// Clinician returns the account with username (exact match).
	Clinician(ctx context.Context, username string) (*Clinician, error)
	// Clinicians returns every account ordered by username.
	Clinicians(ctx context.Context) ([]*Clinician, error)
	// SetClinicianDisabled enables or disables an account; ENOTFOUND if none.
	SetClinicianDisabled(ctx context.Context, username string, disabled bool) error
	// SetClinicianPassword replaces an account's password hash, and
	// nothing else; ENOTFOUND if none.
	SetClinicianPassword(ctx context.Context, username string, hash []byte) error
}

// ReviewStore keeps reviews. A handoff may be reviewed more than once.
type ReviewStore interface {
	// AddReview inserts r; ENOTFOUND if the intake does not exist.
	AddReview(ctx context.Context, r *Review) error
	// Reviews returns an intake's reviews, newest first.
	Reviews(ctx context.Context, intakeID string) ([]*Review, error)
	// LatestReviews returns the newest review of every reviewed intake.
	LatestReviews(ctx context.Context) (map[string]*Review, error)
}

// AuditStore keeps the audit log: append-only.
type AuditStore interface {
	// AddAudit appends e, setting e.ID.
	AddAudit(ctx context.Context, e *AuditEntry) error
	// Audit returns entries newest first: at most limit, with ID < before
	// (before <= 0 means from the newest).
	Audit(ctx context.Context, limit int, before int64) ([]*AuditEntry, error)
}

// SignInFailureStore keeps failed sign-ins by key ("u:"+username or
// "a:"+client address), so that the limits on them hold across restarts and,
// with a shared database, across replicas. Keys are short: the service checks
// a username's shape and bounds an address before either becomes a key.
//
// Error contract: no method returns ENOTFOUND or ECONFLICT (a key with no
// failures simply has none); every error is internal, and the service treats
// it as "cannot tell", refusing the sign-in rather than skipping the limit.
// Methods honour ctx.
type SignInFailureStore interface {
	// AddSignInFailure records one failure of each key at at.
	AddSignInFailure(ctx context.Context, at time.Time, keys ...string) error
	// SignInFailures returns the times of key's failures after since,
	// oldest first.
	SignInFailures(ctx context.Context, key string, since time.Time) ([]time.Time, error)
	// RemoveSignInFailure deletes one failure of key recorded at exactly at
	// (none is no error): an attempt recorded before its password was checked
	// that then succeeded.
	RemoveSignInFailure(ctx context.Context, key string, at time.Time) error
	// ClearSignInFailures deletes every failure of key.
	ClearSignInFailures(ctx context.Context, key string) error
	// PruneSignInFailures deletes every failure at or before before.
	PruneSignInFailures(ctx context.Context, before time.Time) error
}
