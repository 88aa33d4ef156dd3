package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// The sessions pages: one's own signed-in sessions (sessionsPath), with
// "sign out everywhere else", and for an administrator everyone's
// (adminSessionsPath). Each session is named by its public id
// (bff.SessionID), never its token.
const adminSessionsPath = "/clinician/admin/sessions"

func (s *Server) showSessions(c *fiber.Ctx) error {
	acc := accountOf(c)
	list, err := s.accounts.Sessions(c.UserContext(), acc.Username, s.cfg.ClinicianIdle)
	if err != nil {
		return err
	}
	p := s.sessionsPage(c, "Your sessions", list, false)
	if len(list) > 1 {
		p.EndOthersAction = sessionsPath + "/end-others"
	}
	if mayOpen(acc, adminSessionsPath) {
		p.AdminURL = adminSessionsPath
	}
	return render(c, http.StatusOK, templates.SessionsPageView(p))
}

func (s *Server) showAdminSessions(c *fiber.Ctx) error {
	list, err := s.accounts.Sessions(c.UserContext(), "", s.cfg.ClinicianIdle)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.SessionsPageView(s.sessionsPage(c, "Every clinician's sessions", list, true)))
}

// sessionsPage lists sessions, each but this browser's with a button that
// ends it (on the administrator's page when everyone).
func (s *Server) sessionsPage(c *fiber.Ctx, heading string, list []*bff.ClinicianSession, everyone bool) templates.SessionsPage {
	p := templates.SessionsPage{Layout: s.clinicianLayout(c, heading), Heading: heading, Everyone: everyone,
		Lifetime: inWords(s.cfg.ClinicianLifetime), Idle: inWords(s.cfg.ClinicianIdle)}
	current := bff.SessionID(s.sessions.Token(c.UserContext()))
	for _, cs := range list {
		r := templates.SessionRow{Clinician: cs.Username, Device: cs.Device, Address: cs.Address,
			SignedInAt: clock(cs.SignedInAt), LastSeen: clock(cs.LastSeen), Current: cs.ID == current}
		if !r.Current {
			r.EndAction = sessionsPath + "/" + cs.ID + "/end"
			if everyone {
				r.EndAction = adminSessionsPath + "/" + cs.ID + "/end"
			}
			r.EndLabel = fmt.Sprintf("End the session of %s on %s, last seen %s", cs.Username, cs.Device, r.LastSeen)
		}
		p.Sessions = append(p.Sessions, r)
	}
	return p
}

// endSession ends one of one's own sessions.
func (s *Server) endSession(c *fiber.Ctx) error {
	acc := accountOf(c)
	if err := s.endOne(c, acc.Username); err != nil {
		return err
	}
	return c.Redirect(sessionsPath, http.StatusSeeOther)
}

// endAnySession ends anyone's session (administrators).
func (s *Server) endAnySession(c *fiber.Ctx) error {
	if err := s.endOne(c, ""); err != nil {
		return err
	}
	return c.Redirect(adminSessionsPath, http.StatusSeeOther)
}

// endOne ends the session named in the path, owner's only unless owner
// is "". This browser's own is signed out with the sign-out button, not
// here.
func (s *Server) endOne(c *fiber.Ctx, owner string) error {
	id := param(c, "id")
	if id == bff.SessionID(s.sessions.Token(c.UserContext())) {
		return bff.Invalid("session", "This is the session you are using: sign out with the Sign out button instead.")
	}
	cs, err := s.accounts.EndSession(c.UserContext(), clinicianOf(c), owner, id)
	if err != nil {
		return err
	}
	s.setFlash(c, "Session ended: "+cs.Username+" on "+cs.Device+" is signed out.")
	return nil
}

// endOtherSessions signs out every other session of the clinician's.
func (s *Server) endOtherSessions(c *fiber.Ctx) error {
	acc := accountOf(c)
	n, err := s.accounts.EndOtherSessions(c.UserContext(), acc.Username, bff.SessionID(s.sessions.Token(c.UserContext())))
	if err != nil {
		return err
	}
	s.setFlash(c, map[bool]string{true: "Every other session is signed out.", false: "There was no other session to sign out."}[n > 0])
	return c.Redirect(sessionsPath, http.StatusSeeOther)
}

// inWords is a duration as the sessions page says it: "12 hours",
// "30 minutes", "90 seconds".
func inWords(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	}
	return plural(int(d.Round(time.Second)/time.Second), "second")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
