package web

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// Single sign-on's session values: the flow while the browser is at the
// provider (one use), the ID token of a signed-in SSO session (the hint for
// the provider's end-session endpoint), and, just after a sign-out, that
// endpoint's URL for the sign-in page to offer once.
const (
	sessSSOFlow    = "sso_flow"
	sessSSOIDToken = "sso_id_token"
	sessSSOEnd     = "sso_end_session"
)

const (
	ssoStartPath    = "/clinician/sso/start"
	ssoCallbackPath = "/clinician/sso/callback"
)

// ssoView is single sign-on's part of the sign-in page.
func (s *Server) ssoView() templates.SignInSSO {
	if s.deps.SSO == nil {
		return templates.SignInSSO{}
	}
	return templates.SignInSSO{Provider: s.deps.SSO.ProviderName(), Action: ssoStartPath, LocalOff: !s.deps.SSO.LocalPasswords()}
}

// localPasswordsOff reports whether only single sign-on signs in.
func (s *Server) localPasswordsOff() bool {
	return s.deps.SSO != nil && !s.deps.SSO.LocalPasswords()
}

var errLocalPasswordsOff = &bff.Error{Code: bff.EFORBIDDEN, Message: "Local passwords are turned off here: sign in with your organisation's account."}

// startSSO begins a single sign-on: the flow is kept in the session, and
// the browser goes to the provider. A GET (the sign-in page's link): the
// page's CSP (form-action 'self') stops a form from being redirected to
// the provider, and starting a sign-in changes nothing another site could
// use: a flow only signs in the browser that comes back with its state, a
// new one replaces the last.
func (s *Server) startSSO(c *fiber.Ctx) error {
	ctx := c.UserContext()
	authURL, flow, err := s.deps.SSO.Start(ctx, localNext(utils.CopyString(c.Query("next"))))
	if err != nil {
		if bff.ErrorCode(err) == bff.EINTERNAL {
			return err
		}
		return s.renderSignInError(c, "", err)
	}
	b, err := json.Marshal(flow)
	if err != nil {
		return err
	}
	s.sessions.Put(ctx, sessSSOFlow, string(b))
	return c.Redirect(authURL, http.StatusSeeOther)
}

// ssoCallback is where the provider sends the browser back. The flow is
// taken from the session whatever happens next: a state, a code, a flow
// are each good once.
func (s *Server) ssoCallback(c *fiber.Ctx) error {
	ctx := c.UserContext()
	var flow *bff.SSOFlow
	if raw := s.sessions.PopString(ctx, sessSSOFlow); raw != "" {
		flow = new(bff.SSOFlow)
		if json.Unmarshal([]byte(raw), flow) != nil {
			flow = nil
		}
	}
	cb := bff.SSOCallback{
		State: utils.CopyString(c.Query("state")), Code: utils.CopyString(c.Query("code")),
		Error: utils.CopyString(c.Query("error")), ErrorDescription: utils.CopyString(c.Query("error_description")),
	}
	in, err := s.deps.SSO.Finish(ctx, flow, cb, s.clientAddress(c))
	if err != nil {
		if code := bff.ErrorCode(err); code != bff.EUNAUTHORIZED && code != bff.EFORBIDDEN && code != bff.EUNAVAILABLE {
			return err
		}
		next := "/clinician"
		if flow != nil {
			next = flow.Next
		}
		return s.renderSignInError(c, next, err)
	}
	// Kept for the provider's end-session link at sign-out; the session's
	// data outlives the token's renewal.
	s.sessions.Put(ctx, sessSSOIDToken, in.IDToken)
	return s.startClinicianSession(c, in.Clinician, localNext(flow.Next))
}

// renderSignInError shows the sign-in page with a refusal.
func (s *Server) renderSignInError(c *fiber.Ctx, next string, err error) error {
	page := templates.SignInPage{Layout: s.layout(c, "Clinician sign-in"), Action: "/clinician/signin", Next: localNext(next),
		Error: bff.ErrorMessage(err), SSO: s.ssoView()}
	return render(c, refusal(c, err), templates.SignInPageView(page))
}

// ssoSignedOut is called by the sign-out before the session is renewed:
// the provider's end-session URL for an SSO session, "" otherwise.
func (s *Server) ssoSignedOut(c *fiber.Ctx) string {
	if s.deps.SSO == nil {
		return ""
	}
	idToken := s.sessions.PopString(c.UserContext(), sessSSOIDToken)
	if idToken == "" {
		return ""
	}
	return s.deps.SSO.EndSessionURL(c.UserContext(), idToken)
}

// ssoEndSession is the end-session URL a sign-out left for the sign-in
// page, shown once; only an http(s) URL is offered.
func (s *Server) ssoEndSession(c *fiber.Ctx) string {
	if s.deps.SSO == nil {
		return ""
	}
	u := s.sessions.PopString(c.UserContext(), sessSSOEnd)
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return ""
	}
	return u
}
