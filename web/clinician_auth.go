package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// sessClinician holds the signed-in clinician's username. Only the sign-in
// handlers set it: a patient's session never gains clinician rights.
const (
	sessClinician = "clinician"
	sessSeen      = "clinician_seen"      // last request of the signed-in clinician
	sessSignedIn  = "clinician_signed_in" // when they signed in (the session's lifetime runs from it)
)

// requireClinician lets signed-in clinicians with an active account through.
// Pages redirect to sign-in; streams and downloads answer 401 (an
// EventSource must not follow a redirect to an HTML page). A sign-in ends
// when it has been idle too long, when its lifetime is over, when the
// account is disabled, and when the session was ended (from the sessions
// pages: its index row is gone). With RequireTOTP, an account without a
// second factor reaches only the page that sets one up, and sign-out.
func (s *Server) requireClinician(c *fiber.Ctx) error {
	ctx := c.UserContext()
	name := s.sessions.GetString(ctx, sessClinician)
	token := s.sessions.Token(ctx)
	// Unix seconds: scs's gob codec cannot hold a time.Time without a
	// process-wide gob.Register.
	seen := time.Unix(s.sessions.GetInt64(ctx, sessSeen), 0)
	if name != "" && (s.now().Sub(seen) > s.cfg.ClinicianIdle || s.lifetimeOver(ctx)) {
		s.accounts.SignOut(ctx, name) // idle too long, or its lifetime over: audited as a sign-out
		s.accounts.SessionSignedOut(ctx, token)
		s.sessions.Remove(ctx, sessClinician)
		name = ""
	}
	if name != "" {
		if _, err := s.accounts.SessionActive(ctx, token); bff.ErrorCode(err) == bff.ENOTFOUND {
			s.sessions.Remove(ctx, sessClinician) // ended from a sessions page
			name = ""
		} else if err != nil {
			return err
		}
	}
	if name != "" {
		if acc, err := s.accounts.ActiveClinician(ctx, name); err == nil {
			if s.now().Sub(seen) > time.Minute { // at most one session write a minute
				s.sessions.Put(ctx, sessSeen, s.now().Unix())
				if err := s.accounts.SessionSeen(ctx, token, s.now()); err != nil && bff.ErrorCode(err) != bff.ENOTFOUND {
					s.log.Warn("note a session's last request", "err", err)
				}
			}
			c.Locals(sessClinician, name)
			c.Locals(localAccount, acc)
			// A local account only: an SSO account (no password) has the
			// provider's own second factor.
			if s.cfg.RequireTOTP && len(acc.PasswordHash) > 0 && !acc.HasSecondFactor() {
				return s.requireEnrolment(c)
			}
			return c.Next()
		} else if bff.ErrorCode(err) != bff.ENOTFOUND {
			return err
		}
		s.sessions.Remove(ctx, sessClinician) // disabled or deleted
	}
	if c.Method() != fiber.MethodGet || strings.HasSuffix(c.Path(), "/events") || strings.HasSuffix(c.Path(), ".json") || wantsJSON(c) {
		return errSignInRequired
	}
	return c.Redirect("/clinician/signin?next="+url.QueryEscape(c.OriginalURL()), http.StatusSeeOther)
}

// lifetimeOver reports whether the signed-in session of ctx has lasted
// ClinicianLifetime.
func (s *Server) lifetimeOver(ctx context.Context) bool {
	return s.now().Sub(time.Unix(s.sessions.GetInt64(ctx, sessSignedIn), 0)) > s.cfg.ClinicianLifetime
}

// requireEnrolment lets an account without a second factor, when the app
// requires one, reach only its set-up page and sign-out: pages redirect
// there, anything else is refused saying why.
func (s *Server) requireEnrolment(c *fiber.Ctx) error {
	if seg, _ := routeSegment(c.Path()); seg == "second-factor" || seg == "signout" {
		return c.Next()
	}
	if c.Method() != fiber.MethodGet || strings.HasSuffix(c.Path(), "/events") || strings.HasSuffix(c.Path(), ".json") || wantsJSON(c) {
		return errEnrolFirst
	}
	return c.Redirect(secondFactorPath, http.StatusSeeOther)
}

var errEnrolFirst = &bff.Error{Code: bff.EFORBIDDEN, Message: "This app requires a second factor: set yours up at " + secondFactorPath + " first."}

var errSignInRequired = &bff.Error{Code: bff.EUNAUTHORIZED, Message: "Sign in as a clinician to see this."}

func clinicianOf(c *fiber.Ctx) string {
	name, _ := c.Locals(sessClinician).(string)
	return name
}

// localAccount holds the signed-in clinician's account, as requireClinician
// read it for this request (roles as they are now).
const localAccount = "clinician_account"

func accountOf(c *fiber.Ctx) *bff.Clinician {
	acc, _ := c.Locals(localAccount).(*bff.Clinician)
	return acc
}

// clinicianLayout is the frame of the clinician area's pages.
func (s *Server) clinicianLayout(c *fiber.Ctx, title string) templates.Layout {
	l := s.layout(c, title)
	path := c.Path()
	acc := accountOf(c)
	links := []templates.NavLink{
		{Label: "Worklist", URL: "/clinician", Current: path == "/clinician"},
		{Label: "Audit log", URL: "/clinician/audit", Current: path == "/clinician/audit"},
	}
	if s.deps.Scenarios != nil {
		links = append(links, templates.NavLink{Label: "Scenarios", URL: scenariosPath, Current: strings.HasPrefix(path, scenariosPath)})
	}
	if s.deps.Safety != nil {
		links = append(links, templates.NavLink{Label: "Safety case", URL: safetyPath, Current: strings.HasPrefix(path, safetyPath)})
	}
	if s.deps.Faults != nil {
		links = append(links, templates.NavLink{Label: "Sandbox faults", URL: faultsPath, Current: path == faultsPath})
	}
	links = append(links,
		templates.NavLink{Label: "Sessions", URL: sessionsPath, Current: path == sessionsPath || path == adminSessionsPath},
		templates.NavLink{Label: "Second factor", URL: secondFactorPath, Current: path == secondFactorPath})
	// Only what the signed-in clinician's roles open (roles.go).
	l.Nav = nil
	for _, link := range links {
		if mayOpen(acc, link.URL) {
			l.Nav = append(l.Nav, link)
		}
	}
	l.SignedInAs = clinicianOf(c)
	l.SignOutURL = "/clinician/signout"
	l.Flash = s.takeFlash(c)
	return l
}

func (s *Server) showSignIn(c *fiber.Ctx) error {
	if name := s.sessions.GetString(c.UserContext(), sessClinician); name != "" {
		return c.Redirect("/clinician", http.StatusSeeOther)
	}
	page := templates.SignInPage{Layout: s.layout(c, "Clinician sign-in"), Action: "/clinician/signin", Next: localNext(c.Query("next"))}
	page.Flash = s.takeFlash(c)
	page.SSO = s.ssoView()
	page.SSO.EndSessionURL = s.ssoEndSession(c)
	return render(c, http.StatusOK, templates.SignInPageView(page))
}

// signIn checks the password. An account with a second factor goes on to
// the code (signInCode); any other is signed in.
func (s *Server) signIn(c *fiber.Ctx) error {
	username := utils.CopyString(c.FormValue("username"))
	next := localNext(c.FormValue("next"))
	if s.localPasswordsOff() {
		return s.renderSignInError(c, next, errLocalPasswordsOff)
	}
	acc, err := s.accounts.SignIn(c.UserContext(), username, c.FormValue("password"), s.clientAddress(c))
	if err != nil {
		code := bff.ErrorCode(err)
		if code != bff.EUNAUTHORIZED && code != bff.ERATELIMIT && code != bff.EINVALID {
			return err
		}
		if len(username) > bff.MaxUsernameChars {
			username = "" // a refused over-long name is not sent back
		}
		page := templates.SignInPage{Layout: s.layout(c, "Clinician sign-in"), Action: "/clinician/signin", Next: next, Username: username, Error: bff.ErrorMessage(err), SSO: s.ssoView()}
		if code != bff.ERATELIMIT {
			page.ErrorField = "username"
		}
		return render(c, refusal(c, err), templates.SignInPageView(page))
	}
	if acc.HasSecondFactor() {
		ctx := c.UserContext()
		if err := s.sessions.RenewToken(ctx); err != nil {
			return err
		}
		s.sessions.Remove(ctx, sessClinician)
		s.sessions.Put(ctx, sessPending, acc.Username)
		s.sessions.Put(ctx, sessPendingAt, s.now().Unix())
		s.sessions.Put(ctx, sessPendingNext, next)
		s.sessions.Put(ctx, sessCSRF, randomHex(32))
		return c.Redirect(signInCodePath, http.StatusSeeOther)
	}
	return s.startClinicianSession(c, acc, next)
}

// startClinicianSession signs acc in: the session token is renewed (no
// fixation), the CSRF token rotated, the session recorded for the sessions
// pages, and the browser sent to next, or to the first page its roles open.
func (s *Server) startClinicianSession(c *fiber.Ctx, acc *bff.Clinician, next string) error {
	ctx := c.UserContext()
	if err := s.sessions.RenewToken(ctx); err != nil {
		return err
	}
	now := s.now()
	s.sessions.Remove(ctx, sessPending)
	s.sessions.Remove(ctx, sessPendingAt)
	s.sessions.Remove(ctx, sessPendingNext)
	s.sessions.Put(ctx, sessClinician, acc.Username)
	s.sessions.Put(ctx, sessSeen, now.Unix())
	s.sessions.Put(ctx, sessSignedIn, now.Unix())
	s.sessions.Put(ctx, sessCSRF, randomHex(32))
	expires := now.Add(s.cfg.ClinicianLifetime)
	if d := s.sessions.Deadline(ctx); d.Before(expires) {
		expires = d
	}
	if err := s.accounts.StartSession(ctx, s.sessions.Token(ctx), &bff.ClinicianSession{Username: acc.Username,
		Device: deviceOf(c.Get(fiber.HeaderUserAgent)), Address: s.clientAddress(c), SignedInAt: now, LastSeen: now, ExpiresAt: expires}); err != nil {
		return err
	}
	if !mayOpen(acc, next) {
		next = s.homeOf(acc) // the worklist, unless their roles do not open it
	}
	return c.Redirect(next, http.StatusSeeOther)
}

func (s *Server) signOut(c *fiber.Ctx) error {
	ctx := c.UserContext()
	s.accounts.SignOut(ctx, clinicianOf(c))
	endSession := s.ssoSignedOut(c)
	s.accounts.SessionSignedOut(ctx, s.sessions.Token(ctx))
	if err := s.sessions.RenewToken(ctx); err != nil {
		return err
	}
	s.sessions.Remove(ctx, sessClinician)
	s.sessions.Put(ctx, sessCSRF, randomHex(32))
	if endSession != "" {
		s.sessions.Put(ctx, sessSSOEnd, endSession)
	}
	s.setFlash(c, "You are signed out.")
	return c.Redirect("/clinician/signin", http.StatusSeeOther)
}

// localNext keeps a post-sign-in redirect inside the clinician area.
func localNext(next string) string {
	if !strings.HasPrefix(next, "/clinician") || strings.HasPrefix(next, "/clinician/signin") || strings.ContainsAny(next, "\\\r\n") {
		return "/clinician"
	}
	return next
}
