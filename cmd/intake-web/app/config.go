package app

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/services/intakes"
	"github.com/clinical-intake/intake-web/sandbox/rules"
	"github.com/clinical-intake/intake-web/web"
)

// Config is everything the assembled app needs: the web layer's settings
// and those of its adapters. options() is the one place that reads the
// environment variables, and intake-web -h prints it; the README's
// configuration table lists them too (a test checks it lists each).
type Config struct {
	web.Config

	DatabasePath string // SQLite file, when DatabaseURL is empty
	// DatabaseURL is a PostgreSQL database (postgres://...): several
	// replicas share it, their turns, their events and the key's budget.
	DatabaseURL string
	// ReplicaName names this process among replicas (default host-pid).
	ReplicaName string
	// TurnLease is how long a turn stays with its replica without renewal
	// (default 30 s): a dead replica's turns are taken over after about
	// this long.
	TurnLease   time.Duration
	UpstreamURL string // the Clinical Intake Service
	APIKey      string // never logged, never sent to a browser
	// DemoClinician creates a "demo" clinician with a random password on a
	// database without clinicians, and logs it once. Embedded sandbox only.
	DemoClinician bool
	// SandboxFaults says the upstream is the embedded sandbox with its fault
	// injection on: clinicians get a fault panel that arms faults with
	// APIKey (which stays in this process). FromEnv reads SANDBOX_FAULTS
	// into it; cmd/intake-web keeps it only with the embedded sandbox.
	SandboxFaults bool
	// Demo is the switch for local use (DEMO=1, -demo): the embedded
	// sandbox without its rate limit and daily quotas and the app without
	// its pacing, together (cmd/intake-web lifts the sandbox's, ApplyDemo
	// the app's). Embedded sandbox only: check refuses it otherwise.
	Demo bool
	// SandboxLimits are the embedded sandbox's own limits (zero: none).
	// check refuses a pacing that would send past them: the sandbox would
	// answer 429 with Retry-After and every intake would pause.
	SandboxLimits SandboxLimits

	PacerPerMinute int // negative = no pacing
	TurnsPerDay    int
	IntakesPerDay  int

	// ScenarioTarget is where scenario runs play: "sandbox" (a limitless
	// embedded sandbox of their own; the default with the embedded
	// sandbox) or "service" (the upstream, through the key's budget; the
	// default otherwise).
	ScenarioTarget string
	// ScenarioVoice is the voice of the scenario sandbox's engine (rules.Voices:
	// plain, the default, or conversational): every question worded
	// differently with the same decisions, to show a suite's figures do not
	// hang on the engine's wording. Only with ScenarioTarget sandbox.
	ScenarioVoice string
	// PatientReserve is the turns of each day's quota scenario runs leave
	// to patients (default 30).
	PatientReserve int
	// ScenarioParallel is the most items of a scenario run played at once
	// (default 64): within it, a run plays as many as the key's requests a
	// minute can feed (one at the spec's 6 a minute).
	ScenarioParallel int

	// OIDC is single sign-on through an OpenID Provider; off while its
	// Issuer is empty.
	OIDC OIDC

	ShutdownGrace time.Duration // running turns may finish
	BcryptCost    int           // 0 = the service's default (12); tests lower it

	apiKeyFile string // INTAKE_API_KEY_FILE, read by FromEnv
}

// OIDC is the app's registration at an OpenID Provider (docs/operations.md,
// "Single sign-on").
type OIDC struct {
	Issuer       string // the issuer URL; "" = no single sign-on
	ClientID     string
	ClientSecret string // never logged
	RedirectURL  string // https://<the app>/clinician/sso/callback
	ProviderName string // on the sign-in button
	// UsernameClaim and RolesClaim name the ID token's claims (a dotted
	// path for a nested one); "" = preferred_username and roles.
	UsernameClaim, RolesClaim string
	// RoleMap maps a roles claim value to the app's roles; nil = each role
	// from its own name.
	RoleMap map[string][]string
	// NoLocalPasswords turns local passwords off: only single sign-on
	// signs in (OIDC_LOCAL_PASSWORDS=0).
	NoLocalPasswords bool

	secretFile     string // OIDC_CLIENT_SECRET_FILE, read by FromEnv
	localPasswords *bool  // OIDC_LOCAL_PASSWORDS as given
}

// KeyRules are the key's limits the configuration sets, for the budget
// (the pacer, or the PostgreSQL budget replicas share).
func (c Config) KeyRules() pacing.Rules {
	return pacing.Rules{PerMinute: c.PacerPerMinute, TurnsPerDay: c.TurnsPerDay, IntakesPerDay: c.IntakesPerDay}
}

// SandboxLimits are an embedded sandbox's requests a minute and daily
// quotas, as its own configuration has them: zero means no limit.
type SandboxLimits struct {
	PerMinute, TurnsPerDay, IntakesPerDay int
}

// ApplyDemo turns the app's pacing and its daily quotas off: the app's half
// of the demo switch, whose other half is an embedded sandbox started
// without limits. It overrides PACER_PER_MINUTE, PACER_TURNS_PER_DAY and
// PACER_INTAKES_PER_DAY.
func (c *Config) ApplyDemo() {
	c.Demo = true
	c.PacerPerMinute, c.TurnsPerDay, c.IntakesPerDay = -1, -1, -1
}

// Defaults returns the configuration with nothing set.
func Defaults() Config {
	return Config{
		Config:           web.Config{ListenAddr: "127.0.0.1:8080", ClinicianIdle: 30 * time.Minute, ClinicianLifetime: web.DefaultClinicianLifetime},
		DatabasePath:     "intake-web.db",
		PatientReserve:   DefaultPatientReserve,
		ScenarioParallel: DefaultScenarioParallel,
		ShutdownGrace:    30 * time.Second,
	}
}

// option is one environment variable: its name, what it means (intake-web
// -h prints it), how it sets its field and how that field reads back (the
// default, in -h; "" when there is nothing to show).
type option struct {
	env, help string
	set       func(v string) error
	show      func() string
}

func stringOpt(env, help string, dst *string) option {
	return option{env, help, func(v string) error { *dst = v; return nil }, func() string { return *dst }}
}

func showInt(n *int) func() string {
	return func() string {
		if *n == 0 {
			return ""
		}
		return strconv.Itoa(*n)
	}
}

func intOpt(env, help string, dst *int, min int) option {
	return option{env, help, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < min {
			return fmt.Errorf("must be a whole number of at least %d", min)
		}
		*dst = n
		return nil
	}, showInt(dst)}
}

// signedIntOpt is a count where a negative number means "none".
func signedIntOpt(env, help string, dst *int) option {
	return option{env, help, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errors.New("must be a whole number (negative: no limit)")
		}
		*dst = n
		return nil
	}, showInt(dst)}
}

func durationOpt(env, help string, dst *time.Duration) option {
	return option{env, help, func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errors.New("must be a positive duration such as 30s or 5m")
		}
		*dst = d
		return nil
	}, func() string {
		if *dst == 0 {
			return ""
		}
		// 30m0s reads 30m, 1h0m0s 1h.
		t := dst.String()
		if strings.HasSuffix(t, "m0s") {
			t = strings.TrimSuffix(t, "0s")
		}
		if strings.HasSuffix(t, "h0m") {
			t = strings.TrimSuffix(t, "0m")
		}
		return t
	}}
}

func boolOpt(env, help string, dst *bool) option {
	return option{env, help, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be 1 or 0 (true or false)")
		}
		*dst = b
		return nil
	}, func() string {
		if *dst {
			return "1"
		}
		return "off"
	}}
}

func boolPtrOpt(env, help string, dst **bool) option {
	return option{env, help, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		*dst = &b
		return nil
	}, func() string { return "" }}
}

// prefixesOpt reads a comma-separated list of IP addresses and CIDR ranges
// ("127.0.0.1, 10.0.0.0/8").
func prefixesOpt(env, help string, dst *[]netip.Prefix) option {
	return option{env, help, func(v string) error {
		var out []netip.Prefix
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			if p, err := netip.ParsePrefix(f); err == nil {
				out = append(out, p.Masked())
			} else if a, err := netip.ParseAddr(f); err == nil {
				out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			} else {
				return fmt.Errorf("must be IP addresses or CIDR ranges separated by commas (%q is neither)", f)
			}
		}
		*dst = out
		return nil
	}, func() string { return "" }}
}

// options is the table of every environment variable the app reads: the
// one place that reads them, and what intake-web -h lists.
func (c *Config) options() []option {
	l := &c.Limits
	return []option{
		stringOpt("LISTEN_ADDR", "address to serve on", &c.ListenAddr),
		stringOpt("DATABASE_PATH", "SQLite database file (created, migrated on start)", &c.DatabasePath),
		stringOpt("DATABASE_URL", "a PostgreSQL URL (postgres://user@host:port/db) that replicas share; unset: SQLite", &c.DatabaseURL),
		stringOpt("REPLICA_NAME", "this replica's name in its leases and logs (unset: host and pid)", &c.ReplicaName),
		durationOpt("TURN_LEASE", "how long a turn stays with its replica without renewal", &c.TurnLease),
		stringOpt("PUBLIC_URL", "the URL browsers use; https:// makes cookies Secure and turns on HSTS", &c.PublicURL),
		prefixesOpt("TRUSTED_PROXIES", "proxies whose X-Forwarded-For is believed: IP addresses or CIDR ranges, comma-separated", &c.TrustedProxies),
		boolPtrOpt("COOKIE_SECURE", "force the Secure cookie flag true or false (unset: from PUBLIC_URL)", &c.CookieSecure),
		stringOpt("INTAKE_BASE_URL", "the Clinical Intake Service; unset: the embedded sandbox", &c.UpstreamURL),
		stringOpt("INTAKE_API_KEY", "its key (server memory only: never logged, never sent to a browser)", &c.APIKey),
		stringOpt("INTAKE_API_KEY_FILE", "read the key from this file instead", &c.apiKeyFile),
		boolOpt("DEMO", "for local use: the embedded sandbox without its rate limit and quotas, and the app without pacing", &c.Demo),
		signedIntOpt("PACER_PER_MINUTE", "upstream requests per rolling minute; negative: no pacing", &c.PacerPerMinute),
		signedIntOpt("PACER_TURNS_PER_DAY", "turns per UTC day before the app refuses early; negative: none", &c.TurnsPerDay),
		signedIntOpt("PACER_INTAKES_PER_DAY", "intakes per UTC day; negative: none", &c.IntakesPerDay),
		stringOpt("SCENARIO_TARGET", "where scenario runs play: sandbox (unset, with the embedded sandbox) or service (unset, otherwise)", &c.ScenarioTarget),
		stringOpt("SCENARIO_VOICE", "the scenario sandbox engine's wording: "+strings.Join(rules.Voices(), " or ")+" (unset: "+rules.VoicePlain+")", &c.ScenarioVoice),
		intOpt("SCENARIO_PATIENT_RESERVE", "turns of each day's quota scenario runs leave to patients", &c.PatientReserve, 0),
		intOpt("SCENARIO_PARALLEL", "most items of a scenario run played at once", &c.ScenarioParallel, 1),
		durationOpt("SHUTDOWN_GRACE", "on SIGTERM, how long running turns may finish", &c.ShutdownGrace),
		durationOpt("CLINICIAN_IDLE", "a clinician is signed out after this long without a request", &c.ClinicianIdle),
		durationOpt("CLINICIAN_SESSION_LIFETIME", "a clinician is signed out this long after signing in, however busy", &c.ClinicianLifetime),
		boolOpt("CLINICIAN_REQUIRE_TOTP", "every clinician account must have a second factor (TOTP): one without sets it up at its next sign-in, before anything else", &c.RequireTOTP),
		boolOpt("SANDBOX_FAULTS", "with the embedded sandbox: its fault injection, armed from the clinician area's Sandbox faults page", &c.SandboxFaults),
		stringOpt("OIDC_ISSUER_URL", "single sign-on: the OpenID Provider's issuer URL (unset: no single sign-on)", &c.OIDC.Issuer),
		stringOpt("OIDC_CLIENT_ID", "single sign-on: the app's client id at the provider", &c.OIDC.ClientID),
		secretOpt("OIDC_CLIENT_SECRET", "single sign-on: the client secret (server memory only: never logged)", &c.OIDC.ClientSecret),
		stringOpt("OIDC_CLIENT_SECRET_FILE", "read the client secret from this file instead", &c.OIDC.secretFile),
		stringOpt("OIDC_REDIRECT_URL", "single sign-on: the redirect URL registered at the provider, https://<this app>/clinician/sso/callback", &c.OIDC.RedirectURL),
		stringOpt("OIDC_PROVIDER_NAME", "single sign-on: the provider's name on the sign-in button (unset: your organisation)", &c.OIDC.ProviderName),
		stringOpt("OIDC_USERNAME_CLAIM", "single sign-on: the ID token claim that gives the username (unset: preferred_username; upn for Entra ID)", &c.OIDC.UsernameClaim),
		stringOpt("OIDC_ROLES_CLAIM", "single sign-on: the ID token claim that gives the roles, a.b for a nested one (unset: roles)", &c.OIDC.RolesClaim),
		roleMapOpt("OIDC_ROLE_MAP", "single sign-on: claim values to the app's roles, value=role;value=role (unset: each role from its own name)", &c.OIDC.RoleMap),
		boolPtrOpt("OIDC_LOCAL_PASSWORDS", "with single sign-on: whether local accounts still sign in with passwords (unset: true)", &c.OIDC.localPasswords),
		intOpt("HTTP_MAX_CONNECTIONS", "open connections, 503 beyond", &l.MaxConnections, 16),
		intOpt("HTTP_MAX_HEADER_BYTES", "request line and headers, 431 beyond", &l.MaxHeaderBytes, 4<<10),
		intOpt("HTTP_MAX_BODY_BYTES", "request body on every route, 413 beyond", &l.MaxBodyBytes, 64<<10),
		durationOpt("HTTP_READ_TIMEOUT", "to receive a whole request, 408 beyond", &l.ReadTimeout),
		durationOpt("HTTP_WRITE_TIMEOUT", "to send a page (event streams push it on at every write)", &l.WriteTimeout),
		durationOpt("HTTP_IDLE_TIMEOUT", "an idle keep-alive connection is closed after", &l.IdleTimeout),
		intOpt("STREAMS_PER_SESSION", "open event streams per browser session", &l.StreamsPerSession, 1),
		intOpt("INTAKES_PER_HOUR", "intakes a browser session may start in an hour", &l.IntakesPerHour, 1),
		intOpt("INTAKES_PER_HOUR_PER_ADDRESS", "intakes started in an hour per client address", &l.IntakesPerHourPerAddress, 1),
		intOpt("TURNS_PER_MINUTE", "messages a browser session may send in a minute", &l.TurnsPerMinute, 1),
	}
}

// Variable is one environment variable the app reads, for intake-web -h.
type Variable struct {
	Name    string
	Default string // as it reads when unset; "" when the help says
	Help    string
}

// Variables lists the environment variables in the configuration's table
// (options), each with the default it takes when unset: Defaults(), and
// where a zero there means another part's default, that part's.
func Variables() []Variable {
	c := Defaults()
	c.Limits = c.Limits.WithDefaults()
	c.PacerPerMinute, c.TurnsPerDay, c.IntakesPerDay = pacing.DefaultPerMinute, pacing.DefaultTurnsPerDay, pacing.DefaultIntakesPerDay
	c.TurnLease = intakes.DefaultLease
	var out []Variable
	for _, o := range c.options() {
		out = append(out, Variable{Name: o.env, Default: o.show(), Help: o.help})
	}
	return out
}

// Help is the meaning of the environment variable name ("" for none), for
// a flag that sets it.
func Help(name string) string {
	for _, v := range Variables() {
		if v.Name == name {
			return v.Help
		}
	}
	return ""
}

// FromEnv reads the configuration from the environment (getenv is
// os.Getenv in production) over Defaults. Every bad value is reported, each
// naming its variable and the rule. The API key may come from a file
// (INTAKE_API_KEY_FILE), so it never sits in the environment of child
// processes or in shell history.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Defaults()
	var errs []error
	for _, o := range c.options() {
		if v := getenv(o.env); v != "" {
			if err := o.set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s %w, got %q", o.env, err, v))
			}
		}
	}
	if f := c.apiKeyFile; f != "" {
		if c.APIKey != "" {
			errs = append(errs, errors.New("set INTAKE_API_KEY or INTAKE_API_KEY_FILE, not both"))
		}
		b, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("INTAKE_API_KEY_FILE: %w", err))
		}
		c.APIKey = strings.TrimSpace(string(b))
	}
	errs = append(errs, c.OIDC.fromEnv()...)
	if getenv("SAFETY_OFFICERS") != "" { // issue 39's first part; the officer is a role now
		errs = append(errs, errors.New("SAFETY_OFFICERS is no longer read: the clinical safety officer is a role; "+
			"grant it with intake-web clinician grant USERNAME safety_officer, and unset SAFETY_OFFICERS"))
	}
	if c.ScenarioVoice != "" && !slices.Contains(rules.Voices(), c.ScenarioVoice) {
		errs = append(errs, fmt.Errorf("SCENARIO_VOICE must be one of %s, got %q", strings.Join(rules.Voices(), ", "), c.ScenarioVoice))
	}
	return c, errors.Join(errs...)
}

// check validates a complete configuration and fills the web layer's
// defaults.
func (c *Config) check() error {
	var errs []error
	if c.UpstreamURL == "" {
		errs = append(errs, errors.New("INTAKE_BASE_URL is required (cmd/intake-web starts the embedded sandbox when it is unset)"))
	} else if u, err := url.Parse(c.UpstreamURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("INTAKE_BASE_URL must be an http(s) URL, got %q", c.UpstreamURL))
	}
	if c.APIKey == "" {
		errs = append(errs, errors.New("INTAKE_API_KEY (or INTAKE_API_KEY_FILE) is required with INTAKE_BASE_URL"))
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("PUBLIC_URL must be an http(s) URL, got %q", c.PublicURL))
		}
	}
	if c.DatabaseURL != "" && !postgresURL(c.DatabaseURL) {
		// Not quoted: a URL may hold a password.
		errs = append(errs, errors.New("DATABASE_URL must be a PostgreSQL URL (postgres://user@host:port/database); leave it unset for the SQLite file at DATABASE_PATH"))
	}
	if c.ScenarioTarget != "" && c.ScenarioTarget != "sandbox" && c.ScenarioTarget != "service" {
		errs = append(errs, fmt.Errorf("SCENARIO_TARGET must be sandbox or service, got %q", c.ScenarioTarget))
	}
	if c.Demo && !c.Embedded {
		errs = append(errs, errors.New("DEMO (-demo) lifts the embedded sandbox's limits and the app's pacing together, "+
			"so it needs the embedded sandbox: unset INTAKE_BASE_URL, or unset DEMO against a real service"))
	}
	errs = append(errs, c.checkPacing()...)
	errs = append(errs, c.OIDC.check()...)
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 30 * time.Second
	}
	if c.ListenAddr == "" {
		c.ListenAddr = "127.0.0.1:8080"
	}
	return errors.Join(errs...)
}

// checkPacing refuses a pacing that would send past the embedded sandbox's
// own limits: PACER_PER_MINUTE=-1 against the spec's 6 requests a minute
// draws a 429 with a Retry-After of most of a minute on the sixth request,
// and every intake pauses behind it (measured: 53 s), which is slower than
// pacing. A real upstream's limits are its own business (a raised key is
// why pacing can be turned off), so only the embedded sandbox is checked.
func (c *Config) checkPacing() []error {
	if !c.Embedded {
		return nil
	}
	var errs []error
	for _, l := range []struct {
		env               string
		app, def, limit   int
		unit, consequence string
	}{
		{"PACER_PER_MINUTE", c.PacerPerMinute, pacing.DefaultPerMinute, c.SandboxLimits.PerMinute, "requests a minute",
			"it would answer 429 with a Retry-After of up to a minute and every intake would pause"},
		{"PACER_TURNS_PER_DAY", c.TurnsPerDay, pacing.DefaultTurnsPerDay, c.SandboxLimits.TurnsPerDay, "turns a day",
			"it would refuse turns the app lets patients send"},
		{"PACER_INTAKES_PER_DAY", c.IntakesPerDay, pacing.DefaultIntakesPerDay, c.SandboxLimits.IntakesPerDay, "intakes a day",
			"it would refuse intakes the app lets patients start"},
	} {
		app := l.app
		if app == 0 {
			app = l.def
		}
		if l.limit <= 0 || (app > 0 && app <= l.limit) {
			continue
		}
		setting := "no limit"
		if app > 0 {
			setting = strconv.Itoa(app)
		}
		errs = append(errs, fmt.Errorf("%s=%d (%s) must not exceed the embedded sandbox's limit of %d %s: %s; "+
			"leave %s unset, or start with -demo (DEMO=1), which lifts the sandbox's limits and the pacing together",
			l.env, l.app, setting, l.limit, l.unit, l.consequence, l.env))
	}
	return errs
}
