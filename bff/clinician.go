package bff

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Clinician is an account that may sign in to the clinician area. What it
// may do there is its Roles.
type Clinician struct {
	Username     string
	PasswordHash []byte // bcrypt
	Disabled     bool
	CreatedAt    time.Time
	// Roles are what the account may do, in AllRoles' order, none twice.
	// An account with none may sign in and see its own sessions, nothing
	// more.
	Roles []Role
}

// Role is a part of the clinician area an account may use. An account
// holds any number of them.
type Role string

// The roles.
const (
	// RoleReviewer reads the worklist, handoffs (their JSON and FHIR
	// downloads) and the audit log, refreshes and reviews handoffs.
	RoleReviewer Role = "reviewer"
	// RoleScenarioRunner runs scenario suites and works with their
	// results: runs, readings, variations, comparisons.
	RoleScenarioRunner Role = "scenario_runner"
	// RoleAdministrator arms the embedded sandbox's faults, reads the audit
	// log and sees and ends anyone's sessions.
	RoleAdministrator Role = "administrator"
)

// AllRoles lists every role in its fixed order. Accounts that existed
// before roles did were given all of them, so nothing changed on upgrade.
func AllRoles() []Role { return []Role{RoleReviewer, RoleScenarioRunner, RoleAdministrator} }

// Label is the role in words, for pages.
func (r Role) Label() string {
	switch r {
	case RoleReviewer:
		return "reviewer"
	case RoleScenarioRunner:
		return "scenario runner"
	case RoleAdministrator:
		return "administrator"
	}
	return string(r)
}

// ParseRoles reads a comma-separated list of role names ("reviewer,
// scenario_runner"; "all" for every role; "runner" and "admin" are short
// for scenario_runner and administrator) into NormalRoles order. EINVALID
// (field "roles") names the first unknown word.
func ParseRoles(list string) ([]Role, error) {
	var out []Role
	for _, w := range strings.Split(list, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		switch w {
		case "":
			continue
		case "all":
			out = append(out, AllRoles()...)
		case "runner", "scenario-runner":
			out = append(out, RoleScenarioRunner)
		case "admin":
			out = append(out, RoleAdministrator)
		default:
			if !slices.Contains(AllRoles(), Role(w)) {
				return nil, Invalid("roles", "%q is not a role: the roles are reviewer, scenario_runner and administrator (or all).", w)
			}
			out = append(out, Role(w))
		}
	}
	return NormalRoles(out), nil
}

// NormalRoles is roles in AllRoles' order, each once, unknown ones dropped.
func NormalRoles(roles []Role) []Role {
	out := []Role{}
	for _, r := range AllRoles() {
		if slices.Contains(roles, r) {
			out = append(out, r)
		}
	}
	return out
}

// HasRole reports whether the account holds r.
func (c *Clinician) HasRole(r Role) bool { return c != nil && slices.Contains(c.Roles, r) }

// RoleNames is roles in words, comma-separated ("none" for none).
func RoleNames(roles []Role) string {
	if len(roles) == 0 {
		return "none"
	}
	words := make([]string, len(roles))
	for i, r := range roles {
		words[i] = string(r)
	}
	return strings.Join(words, ", ")
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
	AuditClinicianRoles    = "clinician_roles" // Detail: the account, its roles before and after
	// AuditAccessRefused: a signed-in clinician refused a page their roles
	// do not grant. Detail: the method, the route and the roles it needs.
	AuditAccessRefused = "access_refused"
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
	// SetClinicianRoles replaces an account's roles with roles (in
	// NormalRoles order; none is allowed), and nothing else; ENOTFOUND if
	// none.
	SetClinicianRoles(ctx context.Context, username string, roles []Role) error
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
