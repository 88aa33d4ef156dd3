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
	"github.com/clinical-intake/intake-web/sandbox/rules"
	"github.com/clinical-intake/intake-web/web"
)

// Config is everything the assembled app needs: the web layer's settings
// and those of its adapters. The README's configuration table lists every
// environment variable; options() is the one place that reads them.
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
	// APIKey (which stays in this process).
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

	ShutdownGrace time.Duration // running turns may finish
	BcryptCost    int           // 0 = the service's default (12); tests lower it
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
		Config:           web.Config{ListenAddr: "127.0.0.1:8080", ClinicianIdle: 30 * time.Minute},
		DatabasePath:     "intake-web.db",
		PatientReserve:   DefaultPatientReserve,
		ScenarioParallel: DefaultScenarioParallel,
		ShutdownGrace:    30 * time.Second,
	}
}

// option is one environment variable: its name and how it sets its field.
type option struct {
	env string
	set func(v string) error
}

func stringOpt(env string, dst *string) option {
	return option{env, func(v string) error { *dst = v; return nil }}
}

func intOpt(env string, dst *int, min int) option {
	return option{env, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < min {
			return fmt.Errorf("must be a whole number of at least %d", min)
		}
		*dst = n
		return nil
	}}
}

// signedIntOpt is a count where a negative number means "none".
func signedIntOpt(env string, dst *int) option {
	return option{env, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errors.New("must be a whole number (negative: no limit)")
		}
		*dst = n
		return nil
	}}
}

func durationOpt(env string, dst *time.Duration) option {
	return option{env, func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errors.New("must be a positive duration such as 30s or 5m")
		}
		*dst = d
		return nil
	}}
}

func boolOpt(env string, dst *bool) option {
	return option{env, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be 1 or 0 (true or false)")
		}
		*dst = b
		return nil
	}}
}

func boolPtrOpt(env string, dst **bool) option {
	return option{env, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		*dst = &b
		return nil
	}}
}

// prefixesOpt reads a comma-separated list of IP addresses and CIDR ranges
// ("127.0.0.1, 10.0.0.0/8").
func prefixesOpt(env string, dst *[]netip.Prefix) option {
	return option{env, func(v string) error {
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
	}}
}

// options is the table of every environment variable the app reads.
func (c *Config) options() []option {
	l := &c.Limits
	return []option{
		stringOpt("LISTEN_ADDR", &c.ListenAddr),
		stringOpt("DATABASE_PATH", &c.DatabasePath),
		stringOpt("DATABASE_URL", &c.DatabaseURL),
		stringOpt("REPLICA_NAME", &c.ReplicaName),
		durationOpt("TURN_LEASE", &c.TurnLease),
		stringOpt("PUBLIC_URL", &c.PublicURL),
		prefixesOpt("TRUSTED_PROXIES", &c.TrustedProxies),
		boolPtrOpt("COOKIE_SECURE", &c.CookieSecure),
		stringOpt("INTAKE_BASE_URL", &c.UpstreamURL),
		stringOpt("INTAKE_API_KEY", &c.APIKey),
		boolOpt("DEMO", &c.Demo),
		signedIntOpt("PACER_PER_MINUTE", &c.PacerPerMinute),
		signedIntOpt("PACER_TURNS_PER_DAY", &c.TurnsPerDay),
		signedIntOpt("PACER_INTAKES_PER_DAY", &c.IntakesPerDay),
		stringOpt("SCENARIO_TARGET", &c.ScenarioTarget),
		stringOpt("SCENARIO_VOICE", &c.ScenarioVoice),
		intOpt("SCENARIO_PATIENT_RESERVE", &c.PatientReserve, 0),
		intOpt("SCENARIO_PARALLEL", &c.ScenarioParallel, 1),
		durationOpt("SHUTDOWN_GRACE", &c.ShutdownGrace),
		durationOpt("CLINICIAN_IDLE", &c.ClinicianIdle),
		intOpt("HTTP_MAX_CONNECTIONS", &l.MaxConnections, 16),
		intOpt("HTTP_MAX_HEADER_BYTES", &l.MaxHeaderBytes, 4<<10),
		intOpt("HTTP_MAX_BODY_BYTES", &l.MaxBodyBytes, 64<<10),
		durationOpt("HTTP_READ_TIMEOUT", &l.ReadTimeout),
		durationOpt("HTTP_WRITE_TIMEOUT", &l.WriteTimeout),
		durationOpt("HTTP_IDLE_TIMEOUT", &l.IdleTimeout),
		intOpt("STREAMS_PER_SESSION", &l.StreamsPerSession, 1),
		intOpt("INTAKES_PER_HOUR", &l.IntakesPerHour, 1),
		intOpt("INTAKES_PER_HOUR_PER_ADDRESS", &l.IntakesPerHourPerAddress, 1),
		intOpt("TURNS_PER_MINUTE", &l.TurnsPerMinute, 1),
	}
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
	if f := getenv("INTAKE_API_KEY_FILE"); f != "" {
		if c.APIKey != "" {
			errs = append(errs, errors.New("set INTAKE_API_KEY or INTAKE_API_KEY_FILE, not both"))
		}
		b, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("INTAKE_API_KEY_FILE: %w", err))
		}
		c.APIKey = strings.TrimSpace(string(b))
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
