package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/intakeapi"
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
	var form *bff.FormError
	switch {
	case errors.As(err, &fe):
		return fe.Code
	case errors.As(err, &form):
		return http.StatusUnprocessableEntity
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
	}
	return http.StatusInternalServerError
}

// handleError answers every error a handler returns: a page, or JSON for
// scripts. Internal errors are logged with the request id and shown only as
// a generic sentence.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	status := statusOf(err)
	msg := bff.ErrorMessage(err)
	var fe *fiber.Error
	if errors.As(err, &fe) {
		msg = fe.Message
		switch fe.Code {
		case http.StatusNotFound:
			msg = "There is nothing at this address."
		case http.StatusRequestEntityTooLarge:
			msg = "What you sent is too large."
		case http.StatusMethodNotAllowed:
			msg = "This address does not accept that kind of request."
		}
	}
	rid := intakeapi.RequestID(c.UserContext())
	if status >= 500 {
		s.log.Error("request failed", "request_id", rid, "method", c.Method(), "path", c.Path(), "status", status, "err", err)
	} else {
		s.log.Info("request refused", "request_id", rid, "method", c.Method(), "path", c.Path(), "status", status, "err", err)
	}
	if wantsJSON(c) {
		return c.Status(status).JSON(fiber.Map{"error": fiber.Map{"code": bff.ErrorCode(err), "message": msg, "field": fieldOf(err)}})
	}
	heading := http.StatusText(status)
	if status == http.StatusNotFound {
		heading = "Not found"
	}
	page := templates.ErrorPage{Layout: s.layout(c, heading), Status: status, Heading: heading, Message: msg}
	if rerr := render(c, status, templates.ErrorPageView(page)); rerr != nil {
		s.log.Error("render error page", "err", rerr)
		return c.Status(status).SendString(msg)
	}
	return nil
}

func fieldOf(err error) string {
	var e *bff.Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// layout is the frame of every page.
func (s *Server) layout(c *fiber.Ctx, title string) templates.Layout {
	return templates.Layout{
		Title:    title,
		CSRF:     s.csrfToken(c),
		Embedded: s.cfg.Embedded,
		Release:  s.client.Release(),
		Nav:      []templates.NavLink{{Label: "New intake", URL: "/", Current: c.Path() == "/"}},
	}
}
