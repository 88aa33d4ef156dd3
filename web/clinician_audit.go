package web

import (
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/templates"
)

// showAudit is the audit log, newest first, a page at a time.
func (s *Server) showAudit(c *fiber.Ctx) error {
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	entries, err := s.reviews.AuditLog(c.UserContext(), before)
	if err != nil {
		return err
	}
	page := templates.AuditPage{Layout: s.clinicianLayout(c, "Audit log")}
	handoffs := mayOpen(accountOf(c), "/clinician/intakes") // an administrator without reviewer sees ids, no links
	for _, e := range entries {
		row := templates.AuditRow{At: clock(e.At), Actor: e.Actor, Action: e.Action, Detail: e.Detail, IntakeID: e.IntakeID}
		if e.IntakeID != "" && handoffs {
			row.IntakeURL = "/clinician/intakes/" + e.IntakeID
		}
		page.Entries = append(page.Entries, row)
	}
	if n := len(entries); n == 100 {
		page.OlderURL = "/clinician/audit?before=" + strconv.FormatInt(entries[n-1].ID, 10)
	}
	return render(c, http.StatusOK, templates.AuditPageView(page))
}
