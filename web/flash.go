package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gorilla/sessions"
)

// One-time messages across a post-redirect-get ("Review saved", "Signed
// out", "Fault armed") travel in a gorilla/sessions cookie: authenticated
// (HMAC-SHA256) and encrypted (AES-256) with keys kept in the database, so
// any replica can read it and showing a message costs no server write. scs
// keeps the identity sessions (server-side, revocable, renewed at sign-in);
// this cookie holds only a short fixed sentence of ours, never patient text,
// and lives a minute. docs/architecture.md, "Sessions".

const (
	flashCookie = "intake_flash"
	flashKey    = "msg"
)

// newFlashStore is the cookie store of the flash messages.
func newFlashStore(hashKey, blockKey []byte, secure bool) *sessions.CookieStore {
	st := sessions.NewCookieStore(hashKey, blockKey)
	st.Options = &sessions.Options{Path: "/", MaxAge: 60, HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
	st.MaxAge(60) // the codecs refuse a cookie older than this, whatever its Expires
	return st
}

// cookieRequest is the little of a Fiber request gorilla/sessions reads:
// its Cookie header. gorilla works on net/http types (notes: gorilla
// needs *http.Request); copying one header is cheaper than converting the
// whole request with the adaptor.
func cookieRequest(c *fiber.Ctx) *http.Request {
	r, _ := http.NewRequestWithContext(c.UserContext(), http.MethodGet, "/", nil)
	if ck := c.Get(fiber.HeaderCookie); ck != "" {
		r.Header.Set("Cookie", ck)
	}
	return r
}

// headerWriter collects the Set-Cookie headers gorilla writes, for Fiber.
type headerWriter struct{ h http.Header }

func (w headerWriter) Header() http.Header         { return w.h }
func (w headerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w headerWriter) WriteHeader(int)             {}

func (s *Server) saveFlash(c *fiber.Ctx, r *http.Request, sess *sessions.Session) {
	w := headerWriter{h: http.Header{}}
	if err := sess.Save(r, w); err != nil {
		s.log.Error("flash cookie not written", "err", err)
		return
	}
	for _, v := range w.h.Values("Set-Cookie") {
		c.Response().Header.Add(fiber.HeaderSetCookie, v)
	}
}

// setFlash shows msg once, on the next page this browser loads.
func (s *Server) setFlash(c *fiber.Ctx, msg string) {
	r := cookieRequest(c)
	sess, _ := s.flash.New(r, flashCookie) // a fresh one when the old cookie does not decode
	sess.AddFlash(msg, flashKey)
	s.saveFlash(c, r, sess)
}

// takeFlash returns the pending message, "" when none, and clears it. A
// cookie that does not decode (tampered, expired, another key) is dropped
// unread.
func (s *Server) takeFlash(c *fiber.Ctx) string {
	if c.Cookies(flashCookie) == "" {
		return ""
	}
	r := cookieRequest(c)
	sess, err := s.flash.Get(r, flashCookie)
	var msg string
	if err == nil {
		for _, v := range sess.Flashes(flashKey) {
			if m, ok := v.(string); ok {
				msg = m
			}
		}
	}
	sess.Options.MaxAge = -1 // delete the cookie: the message is shown once
	s.saveFlash(c, r, sess)
	return msg
}
