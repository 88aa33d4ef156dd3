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
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/pacer"
	"github.com/clinical-intake/intake-web/bff/relay"
	"github.com/clinical-intake/intake-web/bff/store"
)

// Server is the running app.
type Server struct {
	URL string // base URL of the listener

	cfg      Config
	log      *slog.Logger
	app      *fiber.App
	db       *store.DB
	sessions *scs.SessionManager
	sstore   *store.SessionStore
	svc      *bff.Service
	client   *intakeapi.Client
	pacer    *pacer.Pacer
	ops      *ops
	ln       net.Listener
	served   chan error
	// done is closed when shutdown starts: open browser streams end with a
	// retry hint instead of holding the shutdown up.
	done chan struct{}
}

// Open wires the app from cfg and starts serving on cfg.ListenAddr.
func Open(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	db, err := store.Open(ctx, cfg.DatabasePath, log)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", cfg.DatabasePath, err)
	}
	s := &Server{cfg: cfg, log: log, db: db, served: make(chan error, 1), done: make(chan struct{})}
	if err := s.wire(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.pacer.Restore(ctx); err != nil { // before Recover sends anything
		s.closeStores()
		return nil, err
	}
	if n, err := s.svc.Recover(ctx); err != nil {
		s.closeStores()
		return nil, fmt.Errorf("settle turns left pending: %w", err)
	} else if n > 0 {
		log.Warn("settling turns the last run left pending", "turns", n)
	}
	if cfg.DemoClinician {
		if err := s.demoClinician(ctx); err != nil {
			s.closeStores()
			return nil, err
		}
	}
	var lc net.ListenConfig
	s.ln, err = lc.Listen(ctx, "tcp", cfg.ListenAddr)
	if err != nil {
		s.closeStores()
		return nil, fmt.Errorf("listen on %s: %w", cfg.ListenAddr, err)
	}
	s.URL = "http://" + s.ln.Addr().String()
	go func() { s.served <- s.app.Listener(s.ln) }()
	log.Info("intake-web listening", "url", s.URL, "public_url", cfg.PublicURL, "upstream", cfg.UpstreamURL, "embedded_sandbox", cfg.Embedded)
	return s, nil
}

func (s *Server) wire() error {
	cfg := s.cfg
	s.pacer = pacer.New(pacer.Config{
		PerMinute: cfg.PacerPerMinute, TurnsPerDay: cfg.TurnsPerDay, IntakesPerDay: cfg.IntakesPerDay,
		Logger: s.log.With("component", "pacer"), Journal: s.db.PacerJournal(),
	})
	s.ops = newOps()
	client, err := intakeapi.New(intakeapi.Config{
		BaseURL: cfg.UpstreamURL, APIKey: cfg.APIKey, Gate: timedGate{Gate: s.pacer, wait: s.ops.gateWait},
		Logger: s.log.With("component", "intakeapi"), Observer: s.ops.observe,
	})
	if err != nil {
		return fmt.Errorf("intake service client: %w", err)
	}
	s.client = client
	s.svc = bff.NewService(bff.Deps{
		Client: client, Intakes: s.db, Turns: s.db, Handoffs: s.db,
		Clinicians: s.db, Reviews: s.db, Audit: s.db, SignInFailures: s.db, BcryptCost: cfg.BcryptCost, Now: cfg.Now,
		Hub:    relay.NewHub(10*time.Minute, nil),
		Logger: s.log.With("component", "turns"),
	})
	s.sstore = store.NewSessionStoreWithCleanup(s.db, 10*time.Minute)
	s.sessions = scs.New()
	s.sessions.Store = s.sstore
	// No scs IdleTimeout: it makes every request write the session (scs marks
	// each loaded session modified). Clinician sessions get their own idle
	// limit instead (requireClinician), recorded at most once a minute.
	s.sessions.Lifetime = 12 * time.Hour
	s.sessions.Cookie.Name = "intake_session"
	s.sessions.Cookie.HttpOnly = true
	s.sessions.Cookie.SameSite = http.SameSiteLaxMode
	s.sessions.Cookie.Secure = cfg.secureCookies()
	s.registerMetrics()
	s.app = s.routes()
	return nil
}

// Close stops the server at once.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.Shutdown(ctx)
}

// Shutdown stops taking requests, ends browser streams with a retry hint,
// lets running turns finish within the grace period, and closes the stores.
func (s *Server) Shutdown(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	default:
	}
	close(s.done)
	var errs []error
	if err := s.app.ShutdownWithContext(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stop http: %w", err))
	}
	if err := s.svc.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	s.closeStores()
	if err := <-s.served; err != nil && !errors.Is(err, net.ErrClosed) {
		errs = append(errs, err)
	}
	s.log.Info("intake-web stopped")
	return errors.Join(errs...)
}

func (s *Server) closeStores() {
	if s.sstore != nil {
		s.sstore.StopCleanup()
	}
	_ = s.db.Close()
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

func itoa(n int) string { return strconv.Itoa(n) }

// demoClinician creates the demo account on a database with no clinicians,
// and logs its password this once: it is never stored in clear.
func (s *Server) demoClinician(ctx context.Context) error {
	if !s.cfg.Embedded {
		return errors.New("a demo clinician is only created with the embedded sandbox")
	}
	has, err := s.svc.HasClinicians(ctx)
	if err != nil || has {
		return err
	}
	password := randomHex(12)
	if _, err := s.svc.AddClinician(ctx, "demo", password); err != nil {
		return fmt.Errorf("create the demo clinician: %w", err)
	}
	s.log.Warn("created a demo clinician for the embedded sandbox; the password is shown only now",
		"username", "demo", "password", password, "sign_in", "/clinician/signin")
	return nil
}
