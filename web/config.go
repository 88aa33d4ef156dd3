package web

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is everything the web app needs. Each field is read from the
// environment variable in its `env` tag by ConfigFromEnv; the README's
// configuration table lists them all.
type Config struct {
	ListenAddr   string `env:"LISTEN_ADDR"`   // default 127.0.0.1:8080
	DatabasePath string `env:"DATABASE_PATH"` // SQLite file; default ./intake-web.db
	PublicURL    string `env:"PUBLIC_URL"`    // how browsers reach the app; https makes cookies Secure
	// CookieSecure forces the Secure cookie flag on or off; unset follows PublicURL.
	CookieSecure *bool `env:"COOKIE_SECURE"`

	UpstreamURL string `env:"INTAKE_BASE_URL"` // the Clinical Intake Service; empty = embedded sandbox
	APIKey      string `env:"INTAKE_API_KEY"`  // never logged; or INTAKE_API_KEY_FILE
	Embedded    bool   // the upstream is the embedded sandbox (set by cmd/intake-web)
	// DemoClinician creates a "demo" clinician with a random password on a
	// database without clinicians, and logs the credentials once. Only with
	// the embedded sandbox.
	DemoClinician bool

	PacerPerMinute int `env:"PACER_PER_MINUTE"` // default 6; negative = no pacing
	TurnsPerDay    int `env:"PACER_TURNS_PER_DAY"`
	IntakesPerDay  int `env:"PACER_INTAKES_PER_DAY"`

	ShutdownGrace time.Duration `env:"SHUTDOWN_GRACE"` // default 30s: running turns may finish
	BcryptCost    int           // 0 = the service's default (12); tests lower it
	// ClinicianIdle signs a clinician out after this long without a request
	// (CLINICIAN_IDLE; default 30m).
	ClinicianIdle time.Duration    `env:"CLINICIAN_IDLE"`
	Now           func() time.Time // the web layer's clock; nil = time.Now (tests move it)
	Logger        *slog.Logger

	Limits Limits
}

// Limits are the HTTP server's limits and the caps per browser session
// (docs/operations.md says why each default). Zero means the default.
type Limits struct {
	// MaxConnections caps open connections; beyond it a connection gets 503.
	// It is lowered to the open-file limit less fileReserve at start.
	MaxConnections int           `env:"HTTP_MAX_CONNECTIONS"`  // default 4096
	MaxHeaderBytes int           `env:"HTTP_MAX_HEADER_BYTES"` // request line and headers; 431 beyond; default 16 KiB
	MaxBodyBytes   int           `env:"HTTP_MAX_BODY_BYTES"`   // 413 beyond, on every route; default 256 KiB
	ReadTimeout    time.Duration `env:"HTTP_READ_TIMEOUT"`     // to receive a whole request; default 15s
	WriteTimeout   time.Duration `env:"HTTP_WRITE_TIMEOUT"`    // to send a response, per write on event streams; default 60s
	IdleTimeout    time.Duration `env:"HTTP_IDLE_TIMEOUT"`     // an idle keep-alive connection is closed; default 60s

	StreamsPerSession        int `env:"STREAMS_PER_SESSION"`          // open event streams; default 12
	IntakesPerHour           int `env:"INTAKES_PER_HOUR"`             // intakes started per session; default 10
	IntakesPerHourPerAddress int `env:"INTAKES_PER_HOUR_PER_ADDRESS"` // per client address, any session; default 30
	TurnsPerMinute           int `env:"TURNS_PER_MINUTE"`             // messages sent per session; default 10

	// StreamRecheck is how often an open clinician stream checks that its
	// sign-in still holds (signed out, disabled, idle, expired); default 3s.
	StreamRecheck time.Duration
	// Heartbeat is how often an idle event stream sends a comment, which is
	// also how soon a closed browser is noticed and its slot freed; default 15s.
	Heartbeat time.Duration
}

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.MaxConnections, 4096)
	def(&l.MaxHeaderBytes, 16<<10)
	def(&l.MaxBodyBytes, 256<<10)
	defDur(&l.ReadTimeout, 15*time.Second)
	defDur(&l.WriteTimeout, 60*time.Second)
	defDur(&l.IdleTimeout, 60*time.Second)
	def(&l.StreamsPerSession, 12)
	def(&l.IntakesPerHour, 10)
	def(&l.IntakesPerHourPerAddress, 30)
	def(&l.TurnsPerMinute, 10)
	defDur(&l.StreamRecheck, 3*time.Second)
	defDur(&l.Heartbeat, 15*time.Second)
	return l
}

// ConfigFromEnv reads the configuration; getenv is os.Getenv in production.
// The API key may come from a file (INTAKE_API_KEY_FILE) so it never sits in
// the process environment of child processes or in shell history.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		ListenAddr:   or(getenv("LISTEN_ADDR"), "127.0.0.1:8080"),
		DatabasePath: or(getenv("DATABASE_PATH"), "intake-web.db"),
		PublicURL:    getenv("PUBLIC_URL"),
		UpstreamURL:  getenv("INTAKE_BASE_URL"),
		APIKey:       getenv("INTAKE_API_KEY"),
		// Defaults here too, not only in check(): the caller (cmd/intake-web)
		// uses ShutdownGrace itself.
		ShutdownGrace: 30 * time.Second,
		ClinicianIdle: 30 * time.Minute,
	}
	var errs []error
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
	if v := getenv("COOKIE_SECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("COOKIE_SECURE must be true or false, got %q", v))
		}
		c.CookieSecure = &b
	}
	for name, dst := range map[string]*int{
		"PACER_PER_MINUTE": &c.PacerPerMinute, "PACER_TURNS_PER_DAY": &c.TurnsPerDay, "PACER_INTAKES_PER_DAY": &c.IntakesPerDay,
	} {
		if v := getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s must be a whole number, got %q", name, v))
			}
			*dst = n
		}
	}
	l := &c.Limits
	for _, o := range []struct {
		name string
		dst  *int
		min  int
	}{
		{"HTTP_MAX_CONNECTIONS", &l.MaxConnections, 16},
		{"HTTP_MAX_HEADER_BYTES", &l.MaxHeaderBytes, 4 << 10},
		{"HTTP_MAX_BODY_BYTES", &l.MaxBodyBytes, 64 << 10},
		{"STREAMS_PER_SESSION", &l.StreamsPerSession, 1},
		{"INTAKES_PER_HOUR", &l.IntakesPerHour, 1},
		{"INTAKES_PER_HOUR_PER_ADDRESS", &l.IntakesPerHourPerAddress, 1},
		{"TURNS_PER_MINUTE", &l.TurnsPerMinute, 1},
	} {
		if v := getenv(o.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < o.min {
				errs = append(errs, fmt.Errorf("%s must be a whole number of at least %d, got %q", o.name, o.min, v))
			}
			*o.dst = n
		}
	}
	for _, o := range []struct {
		name string
		dst  *time.Duration
	}{
		{"HTTP_READ_TIMEOUT", &l.ReadTimeout}, {"HTTP_WRITE_TIMEOUT", &l.WriteTimeout}, {"HTTP_IDLE_TIMEOUT", &l.IdleTimeout},
	} {
		if v := getenv(o.name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				errs = append(errs, fmt.Errorf("%s must be a positive duration such as 30s, got %q", o.name, v))
			}
			*o.dst = d
		}
	}
	if v := getenv("CLINICIAN_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("CLINICIAN_IDLE must be a positive duration such as 30m, got %q", v))
		}
		c.ClinicianIdle = d
	}
	if v := getenv("SHUTDOWN_GRACE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("SHUTDOWN_GRACE must be a duration such as 30s, got %q", v))
		}
		c.ShutdownGrace = d
	}
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	return c, nil
}

// check validates a complete configuration.
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
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 30 * time.Second
	}
	if c.ClinicianIdle == 0 {
		c.ClinicianIdle = 30 * time.Minute
	}
	c.Limits = c.Limits.withDefaults()
	return errors.Join(errs...)
}

// secureCookies reports whether cookies get the Secure flag.
func (c *Config) secureCookies() bool {
	if c.CookieSecure != nil {
		return *c.CookieSecure
	}
	return strings.HasPrefix(c.PublicURL, "https://")
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
