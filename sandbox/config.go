package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// Config is everything the service needs. DefaultConfig gives the spec's
// limits; Keys and Engine must be set by the caller.
type Config struct {
	Keys      []string // accepted API keys, shaped <KeyPrefix>_sb_<hex>
	KeyPrefix string   // the service's fixed sandbox prefix

	RPM           int           // requests per rolling minute per key; 0 = no limit
	TurnsPerDay   int           // per key per UTC day; 0 = no limit
	IntakesPerDay int           // per key per UTC day; 0 = no limit
	SessionTTL    time.Duration // open intakes expire this long after creation

	FragmentDelay   time.Duration // pause between streamed fragments
	FirstTokenDelay time.Duration // pause before the first fragment
	// ReplyDuration, when positive, spreads each reply over a deterministic
	// duration between ReplyDuration and 2*ReplyDuration instead of using
	// FragmentDelay (the "realistic" profile: 20-40 s).
	ReplyDuration time.Duration

	Faults          bool          // enables POST /v1/sandbox/faults
	FaultRetryAfter time.Duration // Retry-After of an injected rate_limited
	SlowStart       time.Duration // delay of an injected slow_start

	Release string // reported in x-service-release, health and provenance
	Build   string // build part of x-service-release; "" = from build info

	Engine engine.Engine
	Now    func() time.Time // injectable clock; nil = time.Now
	Logger *slog.Logger     // nil = discard
}

// DefaultConfig returns the spec's limits and a fast streaming pace.
func DefaultConfig() Config {
	return Config{
		KeyPrefix:       "cis",
		RPM:             6,
		TurnsPerDay:     100,
		IntakesPerDay:   100,
		SessionTTL:      2 * time.Hour,
		FragmentDelay:   150 * time.Millisecond,
		FaultRetryAfter: 3 * time.Second,
		SlowStart:       5 * time.Second,
		Release:         "sandbox-2026.08",
	}
}

// ApplyProfile sets the streaming pace of a named profile: "fast" (the
// default pace) or "realistic" (a few seconds to the first token, 20-40 s a
// reply, as the spec describes).
func (c *Config) ApplyProfile(name string) error {
	switch name {
	case "", "fast":
		return nil
	case "realistic":
		c.FirstTokenDelay = 3 * time.Second
		c.ReplyDuration = 20 * time.Second
		return nil
	}
	return fmt.Errorf("unknown profile %q: use fast or realistic", name)
}

var prefixShape = regexp.MustCompile(`^[a-z][a-z0-9]{0,15}$`)

// CheckKey reports whether key has the sandbox shape <prefix>_sb_<hex>.
func CheckKey(prefix, key string) error {
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `_sb_[0-9a-f]{16,128}$`)
	if !re.MatchString(key) {
		// The key itself is never echoed: it may be a real secret pasted by mistake.
		return fmt.Errorf("an API key does not have the sandbox shape %s_sb_<16 to 128 lowercase hex digits>", prefix)
	}
	return nil
}

// GenerateKey returns a fresh random key of the sandbox shape.
func GenerateKey(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return prefix + "_sb_" + hex.EncodeToString(b)
}

func (c *Config) validate() error {
	var errs []error
	if !prefixShape.MatchString(c.KeyPrefix) {
		errs = append(errs, fmt.Errorf("key prefix %q must be 1 to 16 lowercase letters or digits, starting with a letter", c.KeyPrefix))
	}
	if len(c.Keys) == 0 {
		errs = append(errs, errors.New("at least one API key is required"))
	}
	for _, k := range c.Keys {
		if err := CheckKey(c.KeyPrefix, k); err != nil {
			errs = append(errs, err)
			break
		}
	}
	if c.Engine == nil {
		errs = append(errs, errors.New("an engine is required"))
	}
	if c.RPM < 0 || c.TurnsPerDay < 0 || c.IntakesPerDay < 0 {
		errs = append(errs, errors.New("limits must be zero (no limit) or positive"))
	}
	if c.SessionTTL <= 0 {
		errs = append(errs, errors.New("session TTL must be positive"))
	}
	if c.FragmentDelay < 0 || c.FirstTokenDelay < 0 || c.ReplyDuration < 0 || c.SlowStart < 0 || c.FaultRetryAfter < 0 {
		errs = append(errs, errors.New("delays must not be negative"))
	}
	if c.Release == "" {
		errs = append(errs, errors.New("release must not be empty"))
	}
	return errors.Join(errs...)
}
