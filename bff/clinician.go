package bff

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	// TOTPSecret is the account's second factor, a TOTP (RFC 6238)
	// secret sealed by the account service (AES-256-GCM under a key kept
	// in the database's secrets); nil: none enrolled. The store keeps it
	// as it is given and never reads it.
	TOTPSecret []byte
	// TOTPStep is the last 30-second time step a code was accepted for: a
	// code is accepted once, for a later step only.
	TOTPStep int64
}

// HasSecondFactor reports whether the account has a second factor
// enrolled: signing in then asks for a code after the password.
func (c *Clinician) HasSecondFactor() bool { return c != nil && len(c.TOTPSecret) > 0 }

// TOTPEnrolment is a second factor being set up: the secret to put in an
// authenticator app (a QR code of its otpauth URI, and the secret in text
// for whoever cannot scan it), and the same secret sealed, which the web
// layer keeps in the session until the clinician confirms it with a code.
type TOTPEnrolment struct {
	Secret string // base32, as apps take it typed
	URI    string // otpauth://totp/...
	QRPNG  []byte // the URI as a QR code, PNG
	Sealed []byte
}

// RecoveryCode is one of an account's single-use codes that sign in in
// place of a TOTP code, kept as a SHA-256 of a random salt and the code:
// the code itself is shown once, when made, and stored nowhere.
type RecoveryCode struct {
	ID   int // 1 to 10
	Salt []byte
	Hash []byte
	Used bool
}

// ClinicianSession is a signed-in clinician's session, as the sessions
// pages list it. Its ID is SessionID of its token, which never leaves the
// server.
type ClinicianSession struct {
	ID         string
	Username   string
	Device     string // from the User-Agent, in short words ("Firefox on Linux")
	Address    string // the client address at sign-in
	SignedInAt time.Time
	LastSeen   time.Time
	ExpiresAt  time.Time // the session ends then, whatever happens before
}

// SessionID is the public id of the session with token: the first 16
// bytes of its SHA-256, in hex. A page may show it and a form post it; the
// token cannot be had from it.
func SessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:16])
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
	// RoleSafetyOfficer is the clinical safety officer (DCB0129): reads
	// the safety case and alone records a release decision.
	RoleSafetyOfficer Role = "safety_officer"
)

// AllRoles lists every role in its fixed order. Accounts that existed
// before roles did were given the first three (the safety officer's came
// later and is granted by hand), so nothing changed on upgrade.
func AllRoles() []Role {
	return []Role{RoleReviewer, RoleScenarioRunner, RoleAdministrator, RoleSafetyOfficer}
}

// Label is the role in words, for pages.
func (r Role) Label() string {
	switch r {
	case RoleReviewer:
		return "reviewer"
	case RoleScenarioRunner:
		return "scenario runner"
	case RoleAdministrator:
		return "administrator"
	case RoleSafetyOfficer:
		return "clinical safety officer"
	}
	return string(r)
}

// ParseRoles reads a comma-separated list of role names ("reviewer,
// scenario_runner"; "all" for every role; "runner", "admin" and "officer"
// are short for scenario_runner, administrator and safety_officer) into
// NormalRoles order. EINVALID
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
		case "officer", "safety-officer":
			out = append(out, RoleSafetyOfficer)
		default:
			if !slices.Contains(AllRoles(), Role(w)) {
				return nil, Invalid("roles", "%q is not a role: the roles are %s (or all).", w, RoleList("and"))
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

// RoleList is every role's name, comma-separated, the last two joined by
// conj ("and", "or"): for messages that list them.
func RoleList(conj string) string {
	names := make([]string, 0, len(AllRoles()))
	for _, r := range AllRoles() {
		names = append(names, string(r))
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
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
	// AuditSignInPassword: the password was right and the second factor
	// is asked next (AuditSignIn follows when it is given).
	AuditSignInPassword = "sign_in_password"
	AuditTOTPEnrol      = "totp_enrol" // a second factor enrolled by the clinician
	AuditTOTPReset      = "totp_reset" // removed (intake-web clinician reset-totp); Detail names the account
	// AuditSessionEnd: a session ended by its clinician (sign out
	// everywhere else) or an administrator. Detail: whose, which device.
	AuditSessionEnd = "session_end"
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
	// SetClinicianTOTP replaces an account's second factor: its sealed
	// secret (nil: none), its step (0) and its recovery codes (codes, all
	// unused; none when sealed is nil), together; ENOTFOUND if none.
	SetClinicianTOTP(ctx context.Context, username string, sealed []byte, codes []RecoveryCode) error
	// AdvanceTOTPStep records that a code of step was accepted: ECONFLICT
	// when the account's step is already step or later (the code, or an
	// older one, was used: a replay); ENOTFOUND if none.
	AdvanceTOTPStep(ctx context.Context, username string, step int64) error
	// RecoveryCodes returns an account's recovery codes by ID (none for an
	// unknown account).
	RecoveryCodes(ctx context.Context, username string) ([]RecoveryCode, error)
	// UseRecoveryCode marks a code used; ENOTFOUND when there is no such
	// code or it was used already (so two uses at once: one wins).
	UseRecoveryCode(ctx context.Context, username string, id int) error
}

// ClinicianSessionStore is the index of signed-in clinicians' sessions,
// kept beside the session store's own table (whose rows it names by token)
// so that a clinician's sessions can be listed and ended. Error contract
// as for the other stores.
type ClinicianSessionStore interface {
	// AddClinicianSession indexes the session with token (s.ID is
	// SessionID(token)); a second add of one token replaces the first.
	AddClinicianSession(ctx context.Context, token string, s *ClinicianSession) error
	// ClinicianSession returns the indexed session with token; ENOTFOUND
	// when it is not indexed (ended, signed out) or has expired at now.
	ClinicianSession(ctx context.Context, token string, now time.Time) (*ClinicianSession, error)
	// TouchClinicianSession sets a session's LastSeen; ENOTFOUND if it is
	// not indexed.
	TouchClinicianSession(ctx context.Context, token string, at time.Time) error
	// ClinicianSessions returns username's sessions ("" for everyone's)
	// not expired at now, the latest seen first.
	ClinicianSessions(ctx context.Context, username string, now time.Time) ([]*ClinicianSession, error)
	// EndClinicianSession removes the session with id from the index and
	// from the session store (its browser is signed out at its next
	// request) and returns it; ENOTFOUND if there is none.
	EndClinicianSession(ctx context.Context, id string) (*ClinicianSession, error)
	// RemoveClinicianSession removes the session with token from the
	// index only (signing out: the session store drops the token itself);
	// none is no error.
	RemoveClinicianSession(ctx context.Context, token string) error
	// PruneClinicianSessions removes the sessions expired at before.
	PruneClinicianSessions(ctx context.Context, before time.Time) (int64, error)
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
