package web

import (
	"encoding/base64"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// secondFactorPath is the clinician's own second factor: its set-up (a QR
// code and the secret in text, confirmed by a typed code), then the
// recovery codes, shown once.
const secondFactorPath = "/clinician/second-factor"

// sessTOTPPending holds the sealed secret of a set-up under way, so that a
// reload or a wrong code shows the same QR code again.
const sessTOTPPending = "totp_pending"

func (s *Server) showSecondFactor(c *fiber.Ctx) error {
	acc := accountOf(c)
	if acc.HasSecondFactor() {
		left, err := s.accounts.RecoveryCodesLeft(c.UserContext(), acc.Username)
		if err != nil {
			return err
		}
		p := templates.SecondFactorPage{Layout: s.clinicianLayout(c, "Second factor"), Enrolled: true, CodesLeft: left,
			ResetCommand: "intake-web clinician reset-totp " + acc.Username}
		return render(c, http.StatusOK, templates.SecondFactorPageView(p))
	}
	return s.renderEnrolment(c, acc, http.StatusOK, "")
}

// renderEnrolment shows the set-up of acc's second factor, with the
// pending secret (a new one when none is pending), and msg as the code
// field's error.
func (s *Server) renderEnrolment(c *fiber.Ctx, acc *bff.Clinician, status int, msg string) error {
	ctx := c.UserContext()
	e, err := s.accounts.BeginTOTP(ctx, acc.Username, s.sessions.GetBytes(ctx, sessTOTPPending))
	if err != nil {
		return err
	}
	s.sessions.Put(ctx, sessTOTPPending, e.Sealed)
	p := templates.SecondFactorPage{Layout: s.clinicianLayout(c, "Set up your second factor"), Action: secondFactorPath,
		Required: s.cfg.RequireTOTP, QRDataURL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(e.QRPNG),
		Secret: e.Secret, SecretWords: fours(e.Secret), Error: msg}
	return render(c, status, templates.SecondFactorPageView(p))
}

// enrolSecondFactor confirms the set-up with a code: the recovery codes
// are then shown, once (this page is the answer to the post; reloading it
// posts again, and is refused: the factor is on).
func (s *Server) enrolSecondFactor(c *fiber.Ctx) error {
	ctx := c.UserContext()
	acc := accountOf(c)
	codes, err := s.accounts.ConfirmTOTP(ctx, acc.Username, s.sessions.GetBytes(ctx, sessTOTPPending), c.FormValue("code"))
	if err != nil {
		if bff.ErrorCode(err) != bff.EINVALID {
			return err
		}
		if acc.HasSecondFactor() { // set up already (a reload of the codes page)
			s.setFlash(c, "Your second factor is on already.")
			return c.Redirect(secondFactorPath, http.StatusSeeOther)
		}
		return s.renderEnrolment(c, acc, http.StatusUnprocessableEntity, bff.ErrorMessage(err))
	}
	s.sessions.Remove(ctx, sessTOTPPending)
	p := templates.SecondFactorPage{Layout: s.clinicianLayout(c, "Your recovery codes"), RecoveryCodes: codes, ContinueURL: s.homeOf(acc)}
	c.Set(fiber.HeaderCacheControl, "no-store") // the codes are not kept anywhere, the browser's cache included
	return render(c, http.StatusOK, templates.SecondFactorPageView(p))
}

// fours is s in groups of four characters, for reading aloud or typing.
func fours(s string) []string {
	var out []string
	for len(s) > 4 {
		out = append(out, s[:4])
		s = s[4:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
