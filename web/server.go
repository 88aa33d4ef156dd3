// Package web is the Fiber front of the app: routes, middleware, handlers
// (one small file per action) and the browser's event streams. It maps the
// bff core to templates' view types and bff errors to statuses.
package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinical-intake/intake-web/bff"
)

// Server is the web front of the app: the Fiber app, its sessions and its
// listener. It is built from the core's services (Deps) by the composition
// root (cmd/intake-web/app), and knows none of the adapters behind them.
type Server struct {
	URL string // base URL of the listener, once Listen returned

	cfg      Config
	log      *slog.Logger
	app      *fiber.App
	sessions *scs.SessionManager
	patients bff.PatientService
	reviews  bff.ReviewService
	accounts bff.AccountService
	deps     Deps
	csrfKey  csrfSigner
	flash    *sessions.CookieStore // one-time messages (flash.go)
	caps     *sessionCaps
	settled  *settledRenders
	maxConns int // connection cap after the open-file limit
	ln       *retryListener
	served   chan error
	// done is closed when shutdown starts: open browser streams end with a
	// retry hint instead of holding the shutdown up.
	done chan struct{}
	// stopping ends when shutdown starts, as done closes: a browser stream
	// with no goroutine of its own watches it (context.AfterFunc).
	stopping context.Context
	stop     context.CancelFunc
	// streams counts event streams running on hijacked connections.
	streams sync.WaitGroup
}

// Deps are what the web layer is given.
type Deps struct {
	Patients bff.PatientService
	Reviews  bff.ReviewService
	Accounts bff.AccountService
	Sessions scs.Store // where sessions are kept
	CSRFKey  []byte    // signs the CSRF cookie of visitors without a stored session
	// FlashHashKey (32 bytes) authenticates and FlashBlockKey (32 bytes,
	// AES-256) encrypts the flash-message cookie; keep both in the database
	// so every replica and restart reads the same cookies.
	FlashHashKey, FlashBlockKey []byte
	Release                     func() string
	// Ready reports the checks of /readyz beyond the web layer's own
	// (database, upstream) and whether they all pass.
	Ready func(ctx context.Context) (checks map[string]string, ready bool)
	// Metrics is where the web layer registers its own collectors;
	// MetricsHandler serves /metrics (all of the app's collectors).
	Metrics        prometheus.Registerer
	MetricsHandler http.Handler
	// Faults arms the embedded sandbox's faults; nil (a real upstream, or
	// faults off) shows no fault panel.
	Faults bff.FaultArmer
	// Scenarios runs scenario suites against the engine and scores them
	// (the clinician area's Scenarios section); nil shows no section and
	// its routes answer 404.
	Scenarios bff.ScenarioService
	// SSO signs clinicians in through an OpenID Provider; nil: local
	// accounts only, and its routes answer 404.
	SSO bff.SSOService
	// Readings is the review of the simulated patient's readings
	// (/clinician/scenarios/readings); nil: no such page.
	Readings bff.ReadingService
	// Safety is the clinical safety case (/clinician/safety); nil: no
	// such section.
	Safety bff.SafetyService
	// CannotSave reports whether err is the database refusing writes (its
	// disk full, read-only): the person then gets a 503 saying nothing was
	// sent, with what they typed kept, and the error is not logged per
	// request (the caller notes it, for /readyz and a log line a minute).
	// nil: never.
	CannotSave func(err error) bool
}

// New builds the web front; Listen starts serving.
func New(cfg Config, d Deps) (*Server, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if d.Patients == nil || d.Reviews == nil || d.Accounts == nil || d.Sessions == nil || len(d.CSRFKey) < 16 ||
		len(d.FlashHashKey) != 32 || len(d.FlashBlockKey) != 32 ||
		d.Ready == nil || d.Metrics == nil || d.MetricsHandler == nil {
		return nil, errors.New("web: Patients, Reviews, Accounts, Sessions, CSRFKey (16 bytes or more), FlashHashKey and FlashBlockKey (32 bytes each), Ready, Metrics and MetricsHandler are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if d.Release == nil {
		d.Release = func() string { return "" }
	}
	s := &Server{cfg: cfg, log: log, patients: d.Patients, reviews: d.Reviews, accounts: d.Accounts, deps: d, csrfKey: csrfSigner{key: d.CSRFKey},
		served: make(chan error, 1), done: make(chan struct{})}
	s.stopping, s.stop = context.WithCancel(context.Background())
	var files uint64
	s.maxConns, files = connectionCap(cfg.Limits.MaxConnections)
	if s.maxConns < cfg.Limits.MaxConnections {
		log.Warn("connection cap lowered to fit the open-file limit", "max_connections", s.maxConns, "open_file_limit", files)
	}
	s.sessions = scs.New()
	s.sessions.Store = d.Sessions
	// No scs IdleTimeout: it makes every request write the session (scs marks
	// each loaded session modified). Clinician sessions get their own idle
	// limit instead (requireClinician), recorded at most once a minute.
	s.sessions.Lifetime = max(12*time.Hour, cfg.ClinicianLifetime) // a clinician's sign-in ends by its own limit
	s.sessions.Cookie.Name = "intake_session"
	s.sessions.Cookie.HttpOnly = true
	s.sessions.Cookie.SameSite = http.SameSiteLaxMode
	s.sessions.Cookie.Secure = cfg.secureCookies()
	s.flash = newFlashStore(d.FlashHashKey, d.FlashBlockKey, cfg.secureCookies())
	s.caps = newSessionCaps(cfg.Limits)
	s.settled = newSettledRenders()
	if err := s.registerMetrics(d.Metrics); err != nil {
		return nil, err
	}
	s.app = s.routes()
	// fasthttp's own log lines (it logs few) go to slog, shortened: some
	// quote what a client sent.
	s.app.Server().Logger = fasthttpLogger{log: s.log.With("component", "http")}
	return s, nil
}

// Listen starts serving on the configured address.
func (s *Server) Listen(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.ListenAddr, err)
	}
	s.ln = newRetryListener(ln, s.maxConns, s.log.With("component", "listener"))
	s.URL = "http://" + s.ln.Addr().String()
	go func() { s.served <- s.app.Listener(s.ln) }()
	return nil
}

// MaxConnections is the connection cap in force.
func (s *Server) MaxConnections() int { return s.maxConns }

// Shutdown stops taking requests and ends browser streams with a retry
// hint. stopped is false when it had already run.
func (s *Server) Shutdown(ctx context.Context) (stopped bool, err error) {
	select {
	case <-s.done:
		return false, nil
	default:
	}
	close(s.done)
	s.stop()
	var errs []error
	if err := s.app.ShutdownWithContext(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stop http: %w", err))
	}
	// Hijacked event streams are not the HTTP server's any more: wait for
	// them to tell their browsers to reconnect elsewhere (s.done ends them).
	streamsDone := make(chan struct{})
	go func() { s.streams.Wait(); close(streamsDone) }()
	select {
	case <-streamsDone:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("event streams still open at the end of the grace period: %w", ctx.Err()))
	}
	if s.ln != nil {
		if err := <-s.served; err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return true, errors.Join(errs...)
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

func itoa(n int) string { return strconv.Itoa(n) }

// fileReserve is the file descriptors kept back from the connection cap for
// the database, the upstream client's connections and the embedded sandbox.
const fileReserve = 256

// connectionCap is want, lowered to the process's open-file limit (which
// cmd/intake-web raises to the hard limit at start) less fileReserve, so the
// app refuses connections with a 503 before accept runs out of descriptors.
func connectionCap(want int) (int, uint64) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return want, 0
	}
	if avail := int(min(rl.Cur, 1<<30)) - fileReserve; avail < want {
		want = max(avail, 16)
	}
	return want, rl.Cur
}

// fasthttpLogger takes fasthttp's own log lines (a connection that failed:
// a client's fault, already answered) at debug level, and keeps only the
// fixed words of the format: its arguments can quote a client's raw bytes.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, _ ...any) {
	words, _, _ := strings.Cut(format, "%")
	l.log.Debug("http server: " + strings.TrimSpace(words))
}
