package web

import (
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
// handler sets it: a patient's session never gains clinician rights.
const (
	sessClinician = "clinician"
	sessSeen      = "clinician_seen" // last request of the signed-in clinician
)

// requireClinician lets signed-in clinicians with an active account through.
// Pages redirect to sign-in; streams and downloads answer 401 (an
// EventSource must not follow a redirect to an HTML page).
func (s *Server) requireClinician(c *fiber.Ctx) error {
	ctx := c.UserContext()
	name := s.sessions.GetString(ctx, sessClinician)
	// Unix seconds: scs's gob codec cannot hold a time.Time without a
	// process-wide gob.Register.
	seen := time.Unix(s.sessions.GetInt64(ctx, sessSeen), 0)
	if name != "" && s.now().Sub(seen) > s.cfg.ClinicianIdle {
		s.accounts.SignOut(ctx, name) // idle too long: audited as a sign-out
		s.sessions.Remove(ctx, sessClinician)
		name = ""
	}
	if name != "" {
		if _, err := s.accounts.ActiveClinician(ctx, name); err == nil {
			if s.now().Sub(seen) > time.Minute {
				s.sessions.Put(ctx, sessSeen, s.now().Unix()) // at most one session write a minute
			}
			c.Locals(sessClinician, name)
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

var errSignInRequired = &bff.Error{Code: bff.EUNAUTHORIZED, Message: "Sign in as a clinician to see this."}

func clinicianOf(c *fiber.Ctx) string {
	name, _ := c.Locals(sessClinician).(string)
	return name
}

// clinicianLayout is the frame of the clinician area's pages.
func (s *Server) clinicianLayout(c *fiber.Ctx, title string) templates.Layout {
	l := s.layout(c, title)
	path := c.Path()
	l.Nav = []templates.NavLink{
		{Label: "Worklist", URL: "/clinician", Current: path == "/clinician"},
		{Label: "Audit log", URL: "/clinician/audit", Current: path == "/clinician/audit"},
	}
	if s.deps.Scenarios != nil {
		l.Nav = append(l.Nav, templates.NavLink{Label: "Scenarios", URL: scenariosPath, Current: strings.HasPrefix(path, scenariosPath)})
	}
	if s.deps.Safety != nil {
		l.Nav = append(l.Nav, templates.NavLink{Label: "Safety case", URL: safetyPath, Current: strings.HasPrefix(path, safetyPath)})
	}
	if s.deps.Faults != nil {
		l.Nav = append(l.Nav, templates.NavLink{Label: "Sandbox faults", URL: faultsPath, Current: path == faultsPath})
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
	return render(c, http.StatusOK, templates.SignInPageView(page))
}

// signIn checks the credentials; on success the session token is renewed
// (no fixation) and the CSRF token rotated.
func (s *Server) signIn(c *fiber.Ctx) error {
	username := utils.CopyString(c.FormValue("username"))
	next := localNext(c.FormValue("next"))
	_, err := s.accounts.SignIn(c.UserContext(), username, c.FormValue("password"), s.clientAddress(c))
	if err != nil {
		code := bff.ErrorCode(err)
		if code != bff.EUNAUTHORIZED && code != bff.ERATELIMIT && code != bff.EINVALID {
			return err
		}
		if len(username) > bff.MaxUsernameChars {
			username = "" // a refused over-long name is not sent back
		}
		page := templates.SignInPage{Layout: s.layout(c, "Clinician sign-in"), Action: "/clinician/signin", Next: next, Username: username, Error: bff.ErrorMessage(err)}
		if code != bff.ERATELIMIT {
			page.ErrorField = "username"
		}
		return render(c, refusal(c, err), templates.SignInPageView(page))
	}
	ctx := c.UserContext()
	if err := s.sessions.RenewToken(ctx); err != nil {
		return err
	}
	s.sessions.Put(ctx, sessClinician, strings.ToLower(strings.TrimSpace(username)))
	s.sessions.Put(ctx, sessSeen, s.now().Unix())
	s.sessions.Put(ctx, sessCSRF, randomHex(32))
	return c.Redirect(next, http.StatusSeeOther)
}

func (s *Server) signOut(c *fiber.Ctx) error {
	ctx := c.UserContext()
	s.accounts.SignOut(ctx, clinicianOf(c))
	if err := s.sessions.RenewToken(ctx); err != nil {
		return err
	}
	s.sessions.Remove(ctx, sessClinician)
	s.sessions.Put(ctx, sessCSRF, randomHex(32))
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
