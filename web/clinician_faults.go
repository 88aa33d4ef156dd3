package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

const faultsPath = "/clinician/faults"

func (s *Server) faultsPage(c *fiber.Ctx) templates.FaultsPage {
	p := templates.FaultsPage{Layout: s.clinicianLayout(c, "Sandbox faults"), Action: faultsPath}
	for _, k := range bff.FaultKinds {
		p.Kinds = append(p.Kinds, templates.FaultKindOption{Kind: k.Kind, Effect: k.Effect})
	}
	return p
}

// showFaults is the fault panel of the embedded sandbox.
func (s *Server) showFaults(c *fiber.Ctx) error {
	return render(c, http.StatusOK, templates.FaultsPageView(s.faultsPage(c)))
}

// armFault arms a fault and shows the panel again (post-redirect-get); a
// refused form comes back with its errors and what was typed.
func (s *Server) armFault(c *fiber.Ctx) error {
	kind := utils.CopyString(c.FormValue("kind"))
	intake := strings.TrimSpace(utils.CopyString(c.FormValue("intake")))
	countText := strings.TrimSpace(utils.CopyString(c.FormValue("count")))
	f := bff.Fault{Kind: kind, IntakeID: intake, Count: 1}
	errs := templates.FieldErrors{}
	if !bff.IsFaultKind(kind) {
		errs["kind"] = "Choose a fault kind."
	}
	if countText != "" {
		n, err := strconv.Atoi(countText)
		if err != nil || n < 1 || n > bff.MaxFaultCount {
			errs["count"] = "The count must be a whole number from 1 to " + itoa(bff.MaxFaultCount) + "."
		}
		f.Count = n
	}
	if len(errs) == 0 {
		err := s.deps.Faults.ArmFault(c.UserContext(), clinicianOf(c), f)
		var be *bff.Error
		switch {
		case err == nil:
			target := "every intake"
			if f.IntakeID != "" {
				target = f.IntakeID
			}
			s.setFlash(c, "Fault armed: "+kind+" for the next "+turnsText(f.Count)+" of "+target+".")
			return c.Redirect(faultsPath, http.StatusSeeOther)
		case errors.As(err, &be) && be.Field != "":
			errs[be.Field] = be.Message
		default:
			return err
		}
	}
	p := s.faultsPage(c)
	p.Kind, p.IntakeID, p.Count, p.Errors = kind, intake, countText, errs
	if len(p.IntakeID) > 64 {
		p.IntakeID = p.IntakeID[:64]
	}
	return render(c, http.StatusUnprocessableEntity, templates.FaultsPageView(p))
}

func turnsText(n int) string {
	if n == 1 {
		return "turn"
	}
	return itoa(n) + " turns"
}
