package web

import (
	"log/slog"
	"net/netip"
	"strings"
	"time"
)

// Config is the web layer's settings; cmd/intake-web/app reads them from
// the environment with the rest of the app's.
type Config struct {
	ListenAddr string // default 127.0.0.1:8080
	PublicURL  string // how browsers reach the app; https makes cookies Secure
	// CookieSecure forces the Secure cookie flag on or off; nil follows PublicURL.
	CookieSecure *bool
	Embedded     bool // the upstream is the embedded sandbox: the page says so
	// TrustedProxies are the proxies (load balancers) whose X-Forwarded-For
	// the app believes: behind one, a request's address for the limits per
	// address and the audit log is the one the proxy saw (clientAddress).
	// None: every request's address is its connection's.
	TrustedProxies []netip.Prefix
	// ClinicianIdle signs a clinician out after this long without a request
	// (default 30m).
	ClinicianIdle time.Duration
	// ClinicianLifetime signs a clinician out this long after signing in,
	// however busy (default 12h).
	ClinicianLifetime time.Duration
	// RequireTOTP: every account must have a second factor; one without is
	// sent to set it up before anything else in the clinician area opens.
	RequireTOTP bool
	Now         func() time.Time // the web layer's clock; nil = time.Now (tests move it)
	Logger      *slog.Logger

	Limits Limits
}

// DefaultClinicianLifetime is how long a clinician's sign-in lasts at most
// when CLINICIAN_SESSION_LIFETIME is unset.
const DefaultClinicianLifetime = 12 * time.Hour

// Limits are the HTTP server's limits and the caps per browser session
// (docs/operations.md says why each default). Zero means the default.
type Limits struct {
	// MaxConnections caps open connections; beyond it a connection gets 503.
	// It is lowered to the open-file limit less fileReserve at start.
	MaxConnections int           // HTTP_MAX_CONNECTIONS: default 4096
	MaxHeaderBytes int           // HTTP_MAX_HEADER_BYTES: request line and headers; 431 beyond; default 16 KiB
	MaxBodyBytes   int           // HTTP_MAX_BODY_BYTES: 413 beyond, on every route; default 256 KiB
	ReadTimeout    time.Duration // HTTP_READ_TIMEOUT: to receive a whole request; default 15s
	WriteTimeout   time.Duration // HTTP_WRITE_TIMEOUT: to send a response, per write on event streams; default 60s
	IdleTimeout    time.Duration // HTTP_IDLE_TIMEOUT: an idle keep-alive connection is closed; default 60s

	StreamsPerSession        int // STREAMS_PER_SESSION: open event streams; default 12
	IntakesPerHour           int // INTAKES_PER_HOUR: intakes started per session; default 10
	IntakesPerHourPerAddress int // INTAKES_PER_HOUR_PER_ADDRESS: per client address, any session; default 30
	TurnsPerMinute           int // TURNS_PER_MINUTE: messages sent per session; default 10

	// StreamRecheck is how often an open clinician stream checks that its
	// sign-in still holds (signed out, disabled, idle, expired); default 3s.
	StreamRecheck time.Duration
	// Heartbeat is how often an idle event stream sends a comment, which is
	// also how soon a closed browser is noticed and its slot freed; default 15s.
	Heartbeat time.Duration
}

// WithDefaults fills the zero fields (intake-web -h prints the result).
func (l Limits) WithDefaults() Limits {
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

// check fills the defaults.
func (c *Config) check() error {
	if c.ListenAddr == "" {
		c.ListenAddr = "127.0.0.1:8080"
	}
	if c.ClinicianIdle == 0 {
		c.ClinicianIdle = 30 * time.Minute
	}
	if c.ClinicianLifetime == 0 {
		c.ClinicianLifetime = DefaultClinicianLifetime
	}
	c.Limits = c.Limits.WithDefaults()
	return nil
}

// secureCookies reports whether cookies get the Secure flag.
func (c *Config) secureCookies() bool {
	if c.CookieSecure != nil {
		return *c.CookieSecure
	}
	return strings.HasPrefix(c.PublicURL, "https://")
}
