package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// render writes a component as the HTML response. On a render error nothing
// partial is sent: the error handler answers instead.
func render(c *fiber.Ctx, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.UserContext(), &buf); err != nil {
		return err
	}
	c.Status(status)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(buf.Bytes()) // buf is ours, not pooled: Send may keep it
}

// fragment renders a component to a string, for stream events.
func fragment(ctx context.Context, comp templ.Component) (string, error) {
	var b strings.Builder
	err := comp.Render(ctx, &b)
	return b.String(), err
}

func wantsJSON(c *fiber.Ctx) bool {
	return strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON)
}

// statusOf maps an error to its HTTP status.
func statusOf(err error) int {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	switch bff.ErrorCode(err) {
	case bff.EINVALID:
		return http.StatusUnprocessableEntity
	case bff.ENOTFOUND:
		return http.StatusNotFound
	case bff.ECONFLICT:
		return http.StatusConflict
	case bff.EGONE:
		return http.StatusGone
	case bff.ERATELIMIT, bff.EQUOTA:
		return http.StatusTooManyRequests
	case bff.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	case bff.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case bff.EFORBIDDEN:
		return http.StatusForbidden
	case bff.EMALFORMED:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// handleError answers every error a handler returns, and every error the
// HTTP server raises before any handler ran (a garbage request line, headers
// or a body over the limits, a read timeout). Those arrive with no session
// loaded and no request id, so the page it renders needs neither: it never
// creates a CSRF token and never reads the session. It runs outside the
// recover middleware (Fiber and fasthttp call it directly), so it recovers
// its own panics and then answers in plain text. Messages shown are fixed
// per status or an *bff.Error's own; the text of server errors (which can
// quote raw request bytes) is neither shown nor logged.
func (s *Server) handleError(c *fiber.Ctx, err error) (rerr error) {
	err = s.unsaved(err)
	status := refusal(c, err) // with its Retry-After, when it has one
	msg := publicMessage(err, status)
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("error handler panic", "panic", v, "status", status, "stack", string(debug.Stack()))
			c.Response().ResetBody()
			c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
			rerr = c.Status(status).SendString(msg)
		}
	}()
	rid := bff.RequestID(c.UserContext())
	attrs := []any{"request_id", rid, "method", logMethod(c), "path", logPath(c), "status", status}
	var fe *fiber.Error
	if !errors.As(err, &fe) { // a server error's text may quote the request: not logged
		attrs = append(attrs, "err", err)
	}
	if err == errCannotSave {
		// Said once a minute by whoever noted it (Deps.CannotSave).
	} else if status >= 500 {
		s.log.Error("request failed", attrs...)
	} else {
		s.log.Info("request refused", attrs...)
	}
	if wantsJSON(c) {
		return c.Status(status).JSON(fiber.Map{"error": fiber.Map{"code": errorCode(err, status), "message": msg, "field": fieldOf(err)}})
	}
	heading := http.StatusText(status)
	switch status {
	case http.StatusNotFound:
		heading = "Not found"
	case http.StatusRequestEntityTooLarge:
		heading = "Too large to accept"
	}
	if status == http.StatusRequestEntityTooLarge && errors.As(err, &fe) { // the server's own: say its limit
		msg = fmt.Sprintf("What you sent is too large: at most %s is accepted.", sizeText(int64(s.cfg.Limits.MaxBodyBytes)))
		if c.Path() == scenariosPath+"/runs" && s.deps.Scenarios != nil { // a suite file: its own limit, as the form says
			msg = uploadTooLarge(0, s.uploadLimit())
		}
	}
	page := templates.ErrorPage{Layout: s.errorLayout(c, heading), Status: status, Heading: heading, Message: msg}
	page.BackURL, page.BackLabel = backTo(c.Path())
	if rerr := render(c, status, templates.ErrorPageView(page)); rerr != nil {
		s.log.Error("render error page", "err", rerr)
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		return c.Status(status).SendString(msg)
	}
	return nil
}

// errCannotSave answers a request the database could not write.
var errCannotSave = bff.Errorf(bff.EUNAVAILABLE, bff.MsgCannotSave)

// unsaved is errCannotSave when err is the database refusing writes, else
// err.
func (s *Server) unsaved(err error) error {
	if err != nil && err != errCannotSave && s.deps.CannotSave != nil && s.deps.CannotSave(err) {
		return errCannotSave
	}
	return err
}

// publicMessage is what the person sees for err: a *bff.Error's own
// message, else a fixed sentence for the status.
func publicMessage(err error, status int) string {
	var be *bff.Error
	if errors.As(err, &be) {
		return be.Message
	}
	switch status {
	case http.StatusBadRequest:
		return "The request could not be read. Reload the page and try again."
	case http.StatusNotFound:
		return "There is nothing at this address."
	case http.StatusMethodNotAllowed:
		return "This address does not accept that kind of request."
	case http.StatusRequestTimeout:
		return "The request took too long to arrive. Try again."
	case http.StatusRequestEntityTooLarge:
		return "What you sent is too large."
	case http.StatusRequestHeaderFieldsTooLarge:
		return "The request's headers are too large. Clearing this site's cookies may help."
	case http.StatusServiceUnavailable:
		return "The app is too busy right now. Try again in a moment."
	}
	if status >= 500 {
		return bff.ErrorMessage(err) // the generic sentence: internals are logged, never shown
	}
	return http.StatusText(status)
}

// backTo is an error page's way back into the area the request came from.
// The path is the client's: only fixed addresses come out.
func backTo(path string) (url, label string) {
	switch {
	case path == scenariosPath || strings.HasPrefix(path, scenariosPath+"/"):
		return scenariosPath, "Back to Scenarios"
	case path == "/clinician" || strings.HasPrefix(path, "/clinician/"):
		return "/clinician/", "Back to the worklist"
	}
	return "/", "Go to the start page"
}

// refusal is the status of a page that answers err in place (the form the
// person was on, with the message): it also sends err's RetryAfter, in whole
// seconds rounded up, as Retry-After.
func refusal(c *fiber.Ctx, err error) int {
	var be *bff.Error
	if errors.As(err, &be) && be.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int((be.RetryAfter+time.Second-1)/time.Second)))
	}
	return statusOf(err)
}

// errorCode is err's code in a JSON answer: a *bff.Error's, or the status
// in words for an error the HTTP server raised.
func errorCode(err error, status int) string {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
	}
	return bff.ErrorCode(err)
}

func fieldOf(err error) string {
	var e *bff.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// errorLayout is the frame of an error page: it works without a session
// (errors raised before one was loaded) and never creates a CSRF token.
func (s *Server) errorLayout(c *fiber.Ctx, title string) templates.Layout {
	l := templates.Layout{Title: title, Embedded: s.cfg.Embedded, Release: s.deps.Release(),
		Nav: []templates.NavLink{{Label: "New intake", URL: "/"}}}
	if sessionLoaded(c) {
		l.CSRF = s.sessions.GetString(c.UserContext(), sessCSRF)
	}
	return l
}

// layout is the frame of every page.
func (s *Server) layout(c *fiber.Ctx, title string) templates.Layout {
	return templates.Layout{
		Title:    title,
		CSRF:     s.csrfToken(c),
		Embedded: s.cfg.Embedded,
		Release:  s.deps.Release(),
		Nav:      []templates.NavLink{{Label: "New intake", URL: "/", Current: c.Path() == "/"}},
	}
}
