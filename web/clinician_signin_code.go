package web

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// The second step of signing in to an account with a second factor: the
// password was right (signIn), and the session holds whose sign-in it is,
// for pendingFor, until the code is given.
const (
	signInCodePath  = "/clinician/signin/code"
	sessPending     = "clinician_pending"      // the username whose password was right
	sessPendingAt   = "clinician_pending_at"   // when (unix seconds)
	sessPendingNext = "clinician_pending_next" // where to go after
	pendingFor      = 5 * time.Minute
)

// pendingSignIn is the username whose password was right within
// pendingFor, "" for none.
func (s *Server) pendingSignIn(c *fiber.Ctx) string {
	ctx := c.UserContext()
	name := s.sessions.GetString(ctx, sessPending)
	if name == "" || s.now().Sub(time.Unix(s.sessions.GetInt64(ctx, sessPendingAt), 0)) > pendingFor {
		return ""
	}
	return name
}

func (s *Server) showSignInCode(c *fiber.Ctx) error {
	name := s.pendingSignIn(c)
	if name == "" {
		s.setFlash(c, "Sign in again: the second step waits 5 minutes at most.")
		return c.Redirect("/clinician/signin", http.StatusSeeOther)
	}
	p := templates.SignInCodePage{Layout: s.layout(c, "Second factor"), Action: signInCodePath, Username: name}
	return render(c, http.StatusOK, templates.SignInCodePageView(p))
}

// signInCode checks the code; a failure counts against the sign-in limits
// (bff.AccountService.SignInSecondFactor) and shows the form again.
func (s *Server) signInCode(c *fiber.Ctx) error {
	name := s.pendingSignIn(c)
	if name == "" {
		s.setFlash(c, "Sign in again: the second step waits 5 minutes at most.")
		return c.Redirect("/clinician/signin", http.StatusSeeOther)
	}
	acc, err := s.accounts.SignInSecondFactor(c.UserContext(), name, c.FormValue("code"), s.clientAddress(c))
	if err != nil {
		code := bff.ErrorCode(err)
		if code != bff.EUNAUTHORIZED && code != bff.ERATELIMIT && code != bff.EINVALID {
			return err
		}
		p := templates.SignInCodePage{Layout: s.layout(c, "Second factor"), Action: signInCodePath, Username: name,
			Error: bff.ErrorMessage(err), Locked: code == bff.ERATELIMIT}
		return render(c, refusal(c, err), templates.SignInCodePageView(p))
	}
	return s.startClinicianSession(c, acc, localNext(s.sessions.GetString(c.UserContext(), sessPendingNext)))
}
