package intakeapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Timeouts. The gateway holds a turn up to 240 s before failing it, so a turn
// attempt may not give up earlier.
const (
	MinTurnTimeout     = 240 * time.Second
	DefaultReadTimeout = 15 * time.Second
)

// Config configures a Client. The zero value of every optional field picks a
// sensible default.
type Config struct {
	// BaseURL is the service's base address, e.g. "https://host" or
	// "https://host/prefix"; the client appends "/v1/...".
	BaseURL string
	// APIKey is the bearer key. It is never logged, printed or put in an error.
	APIKey string
	// HTTPClient sends the requests; nil means a client with its own
	// transport. Its Timeout must be 0 or at least TurnTimeout (per-call
	// timeouts are applied through the request context).
	HTTPClient *http.Client
	// UnencryptedHTTP2 says the service at an http:// BaseURL speaks
	// HTTP/2 without TLS (the embedded sandbox does): the client's own
	// transport then carries every call, streaming turns included, as
	// streams of one connection instead of a connection each. Over https
	// the transport offers HTTP/2 anyway. Ignored with HTTPClient.
	UnencryptedHTTP2 bool
	// Gate paces every attempt (see Gate); nil means no pacing, but
	// Retry-After is still honoured.
	Gate Gate
	// Logger receives one line per attempt; nil discards.
	Logger *slog.Logger
	// TurnTimeout bounds one turn attempt (a whole stream, for streaming
	// turns). 0 means MinTurnTimeout; less than MinTurnTimeout is refused.
	TurnTimeout time.Duration
	// ReadTimeout bounds one attempt of every other call. 0 means
	// DefaultReadTimeout.
	ReadTimeout time.Duration
	// BackoffBase and BackoffMax shape the exponential backoff (with jitter)
	// of 503 retries; 0 means 1 s and 30 s.
	BackoffBase, BackoffMax time.Duration
	// MaxUnavailableRetries caps 503 retries (0 means 4, negative none); they
	// also stop when the next try would pass the context's deadline.
	MaxUnavailableRetries int
	// MaxRateLimitRetries caps rate_limited retries (0 means 3, negative none).
	MaxRateLimitRetries int
	// Observer, when set, is told about every HTTP attempt (for metrics);
	// it must be quick and safe for concurrent use.
	Observer func(Observation)
	// UserAgent is sent as User-Agent; "" means "intake-web-intakeapi".
	UserAgent string
}

// RedactKey returns the key's shape without its secret: "cis_sb_…(redacted)".
func RedactKey(key string) string {
	if key == "" {
		return "(none)"
	}
	if i := strings.Index(key, "_sb_"); i >= 0 && i < 32 {
		return key[:i+4] + "…(redacted)"
	}
	return "…(redacted)"
}

func (c Config) String() string {
	return fmt.Sprintf("intakeapi.Config{BaseURL: %q, APIKey: %s, TurnTimeout: %s, ReadTimeout: %s}",
		c.BaseURL, RedactKey(c.APIKey), c.TurnTimeout, c.ReadTimeout)
}

// GoString keeps %#v from printing the key.
func (c Config) GoString() string { return c.String() }

// LogValue keeps slog from printing the key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.String("api_key", RedactKey(c.APIKey)),
		slog.Duration("turn_timeout", c.TurnTimeout),
		slog.Duration("read_timeout", c.ReadTimeout),
	)
}

// connBuffer is the size of each of a connection's read and write buffers
// in the client's own transport.
const connBuffer = 1 << 10

func (c Config) withDefaults() (Config, error) {
	if c.TurnTimeout == 0 {
		c.TurnTimeout = MinTurnTimeout
	}
	if c.TurnTimeout < MinTurnTimeout {
		return c, fmt.Errorf("intakeapi: TurnTimeout %s is below the gateway's turn hold time %s", c.TurnTimeout, MinTurnTimeout)
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.ReadTimeout < 0 {
		return c, errors.New("intakeapi: ReadTimeout is negative")
	}
	if c.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Many turns stream at once to one host: keep their connections
		// for reuse (the default keeps 2 and redials the rest).
		t.MaxIdleConnsPerHost = 64
		// A turn holds its HTTP/1.1 connection's two buffers while the
		// engine thinks (thousands at once when patients wait): 1 KiB
		// each, not 4. The requests are a message's JSON and the replies
		// short SSE lines, read through the decoder's own buffer.
		t.ReadBufferSize, t.WriteBufferSize = connBuffer, connBuffer
		if c.UnencryptedHTTP2 && strings.HasPrefix(c.BaseURL, "http://") {
			t.Protocols = new(http.Protocols)
			t.Protocols.SetUnencryptedHTTP2(true)
		}
		c.HTTPClient = &http.Client{Transport: t}
	} else if c.HTTPClient.Timeout != 0 && c.HTTPClient.Timeout < c.TurnTimeout {
		return c, fmt.Errorf("intakeapi: HTTPClient.Timeout %s would cut turns before TurnTimeout %s; set it to 0", c.HTTPClient.Timeout, c.TurnTimeout)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = time.Second
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 30 * time.Second
	}
	if c.MaxUnavailableRetries == 0 {
		c.MaxUnavailableRetries = 4
	}
	if c.MaxRateLimitRetries == 0 {
		c.MaxRateLimitRetries = 3
	}
	if c.UserAgent == "" {
		c.UserAgent = "intake-web-intakeapi"
	}
	if c.APIKey == "" {
		return c, errors.New("intakeapi: APIKey is required")
	}
	for _, r := range c.APIKey {
		if r <= ' ' || r >= 0x7f {
			// Say nothing about the key itself beyond its shape.
			return c, fmt.Errorf("intakeapi: APIKey %s contains a space, control or non-ASCII character", RedactKey(c.APIKey))
		}
	}
	return c, nil
}

// parseBase checks the base URL and returns it without a trailing slash.
func parseBase(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("intakeapi: BaseURL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("intakeapi: BaseURL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("intakeapi: BaseURL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("intakeapi: BaseURL %q has no host", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("intakeapi: BaseURL %q: no credentials, query or fragment allowed", u.Redacted())
	}
	return strings.TrimRight(u.String(), "/"), nil
}
