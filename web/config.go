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
