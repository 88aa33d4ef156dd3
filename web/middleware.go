package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
)

// localSession marks a request whose scs session is loaded: errors raised
// before (by the HTTP server, or by middleware in front of loadSession) are
// handled without one, since scs panics on a context without session data.
const localSession = "session_loaded"

func sessionLoaded(c *fiber.Ctx) bool {
	loaded, _ := c.Locals(localSession).(bool)
	return loaded
}

// Session keys.
const (
	sessOwner = "owner" // a patient's owner id: the intakes this browser created
	sessCSRF  = "csrf"  // the synchronizer token of this session
)

// contentSecurityPolicy allows only the app's own script and style files:
// no inline script, no inline style, no framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func (s *Server) securityHeaders(c *fiber.Ctx) error {
	h := &c.Response().Header
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// Not no-referrer: same-origin POSTs keep their Referer, which CSRF
	// checks behind a proxy may need; no-referrer would drop it.
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if s.cfg.secureCookies() {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	return c.Next()
}

// logPath is the request path as logged: at most 128 bytes of valid UTF-8
// (slog quotes control characters), so a hostile URL cannot flood the log.
func logPath(c *fiber.Ctx) string {
	p := c.Path()
	if len(p) > 128 {
		p = p[:128] + "…"
	}
	return strings.ToValidUTF8(p, "?")
}

// logMethod is the request method as logged: a known one, or OTHER.
func logMethod(c *fiber.Ctx) string {
	switch m := c.Method(); m {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch,
		fiber.MethodDelete, fiber.MethodOptions, fiber.MethodConnect, fiber.MethodTrace:
		return m
	}
	return "OTHER"
}

// requestID gives each request an id, carried into its upstream calls (as
// X-Request-Id) and its log lines, and logs the request when it is done.
// Only the status and timing are logged: never a body, never a cookie.
func (s *Server) requestID(c *fiber.Ctx) error {
	id := randomHex(8)
	c.SetUserContext(bff.WithRequestID(c.UserContext(), id))
	c.Set("X-Request-Id", id)
	start := time.Now()
	err := c.Next()
	status := c.Response().StatusCode()
	if err != nil {
		status = statusOf(err)
	}
	s.log.LogAttrs(c.UserContext(), slog.LevelInfo, "request",
		slog.String("request_id", id), slog.String("method", logMethod(c)), slog.String("path", logPath(c)),
		slog.Int("status", status), slog.Duration("elapsed", time.Since(start)))
	return err
}

func (s *Server) recoverPanics(c *fiber.Ctx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("handler panic", "panic", v, "path", logPath(c), "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return c.Next()
}

// loadSession loads the scs session for the request and commits it (writing
// the cookie) when the handler changed it. For event streams the commit
// happens before the stream runs, so streams never write to the session.
func (s *Server) loadSession(c *fiber.Ctx) error {
	// Copy: Fiber reuses the cookie's buffer for the next request on the
	// connection, and scs keeps the token: without the copy one user's
	// session was replaced by another's on a shared keep-alive connection.
	token := utils.CopyString(c.Cookies(s.sessions.Cookie.Name))
	ctx, err := s.sessions.Load(c.UserContext(), token)
	if err != nil {
		s.log.Warn("session load failed; starting a new one", "err", err)
		ctx, err = s.sessions.Load(c.UserContext(), "")
		if err != nil {
			return fmt.Errorf("load session: %w", err)
		}
	}
	c.SetUserContext(ctx)
	c.Locals(localSession, true)
	herr := c.Next()
	switch s.sessions.Status(ctx) {
	case scs.Modified:
		tok, expiry, err := s.sessions.Commit(ctx)
		if err != nil {
			err = s.unsaved(fmt.Errorf("commit session: %w", err))
			if err == errCannotSave && c.Response().StatusCode() == http.StatusServiceUnavailable {
				return herr // the handler already said it could not save, with the form kept
			}
			return err
		}
		s.setSessionCookie(c, tok, expiry)
	case scs.Destroyed:
		s.setSessionCookie(c, "", time.Unix(1, 0))
	}
	return herr
}

func (s *Server) setSessionCookie(c *fiber.Ctx, token string, expiry time.Time) {
	ck := s.sessions.Cookie
	cookie := &fiber.Cookie{
		Name: ck.Name, Value: token, Path: "/", HTTPOnly: true, Secure: ck.Secure,
		SameSite: fiber.CookieSameSiteLaxMode, Expires: expiry,
	}
	if token == "" {
		cookie.MaxAge = -1
	}
	c.Cookie(cookie)
}

// csrfToken returns the token the page's forms carry. A stored session keeps
// its own; a visitor with nothing stored gets a signed token in a cookie
// (signed double submit), so viewing a page never writes a session row.
func (s *Server) csrfToken(c *fiber.Ctx) string {
	if tok := s.sessions.GetString(c.UserContext(), sessCSRF); tok != "" {
		return tok
	}
	if tok := c.Cookies(csrfCookie); s.csrfKey.valid(tok) {
		return utils.CopyString(tok)
	}
	tok := s.csrfKey.issue()
	c.Cookie(&fiber.Cookie{
		Name: csrfCookie, Value: tok, Path: "/", HTTPOnly: true, Secure: s.sessions.Cookie.Secure,
		SameSite: fiber.CookieSameSiteLaxMode, SessionOnly: true,
	})
	return tok
}

// owner returns the patient owner id of the session, creating it if asked.
func (s *Server) owner(c *fiber.Ctx, create bool) string {
	ctx := c.UserContext()
	o := s.sessions.GetString(ctx, sessOwner)
	if o == "" && create {
		o = "own_" + randomHex(16)
		s.sessions.Put(ctx, sessOwner, o)
		s.adoptCSRF(c)
	}
	return o
}

// adoptCSRF keeps the visitor's pre-session token when a session is first
// stored, so forms already open in other tabs stay valid.
func (s *Server) adoptCSRF(c *fiber.Ctx) {
	ctx := c.UserContext()
	if s.sessions.GetString(ctx, sessCSRF) != "" {
		return
	}
	tok := c.Cookies(csrfCookie)
	if !s.csrfKey.valid(tok) {
		tok = randomHex(32)
	}
	s.sessions.Put(ctx, sessCSRF, utils.CopyString(tok))
}

// csrf refuses every unsafe request whose token (form field _csrf or header
// X-CSRF-Token) does not match the session's, compared in constant time.
func (s *Server) csrf(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	want := s.sessions.GetString(c.UserContext(), sessCSRF)
	if want == "" {
		// No stored session: the signed cookie must hold the same token.
		if tok := c.Cookies(csrfCookie); s.csrfKey.valid(tok) {
			want = tok
		}
	}
	got := c.Get("X-CSRF-Token")
	if got == "" {
		got = c.FormValue("_csrf")
	}
	if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
		return errForbidden
	}
	return c.Next()
}

var errForbidden = &bff.Error{Code: bff.EFORBIDDEN, Message: "This form has expired or did not come from this site. Reload the page and try again."}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
