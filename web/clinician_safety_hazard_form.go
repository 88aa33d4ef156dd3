package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
	"github.com/clinical-intake/intake-web/templates"
)

const hazardsPath = safetyPath + "/hazards"

// hazardFormURL is the form of the hazard id ("" for a new hazard's).
func hazardFormURL(id string) string {
	if id == "" {
		return safetyPath + "/hazard"
	}
	return safetyPath + "/hazard?" + url.Values{"id": {id}}.Encode()
}

// mayEditLog is the signed-in clinician as the safety case's rule reads
// them (safetycase.MayEditLog): an administrator or the clinical safety
// officer.
func (s *Server) mayEditLog(c *fiber.Ctx) (bool, error) {
	me, err := s.accounts.ActiveClinician(c.UserContext(), clinicianOf(c))
	if err != nil {
		return false, err
	}
	return s.deps.Safety.MayEditLog(me), nil
}

var errMayNotEditLog = bff.Errorf(bff.EFORBIDDEN, "Only an administrator or the clinical safety officer may change the hazard log.")

// showHazardForm is one hazard's form (/clinician/safety/hazard?id=H1), or
// a new hazard's (/clinician/safety/hazard).
func (s *Server) showHazardForm(c *fiber.Ctx) error {
	if ok, err := s.mayEditLog(c); err != nil {
		return err
	} else if !ok {
		return errMayNotEditLog
	}
	v, err := s.deps.Safety.HazardLog(c.UserContext(), 0)
	if err != nil {
		return err
	}
	id := utils.CopyString(c.Query("id"))
	p := s.hazardFormPage(c, v.Version, "")
	if id == "" {
		p.Status = string(safety.StatusOpen)
		return render(c, http.StatusOK, templates.HazardFormPageView(p))
	}
	i := -1
	for j, h := range v.Log.Hazards {
		if h.ID == id {
			i = j
		}
	}
	if i < 0 {
		return bff.Errorf(bff.ENOTFOUND, "The hazard log has no hazard %s.", id)
	}
	h := v.Log.Hazards[i]
	controls, err := safety.MarshalControls(h.Controls)
	if err != nil {
		return err
	}
	p = s.hazardFormPage(c, v.Version, h.ID)
	p.ID, p.Title, p.Description = h.ID, h.Title, h.Description
	p.Causes, p.Effects = strings.Join(h.Causes, "\n"), strings.Join(h.Effects, "\n")
	p.InitialSeverity, p.InitialLikelihood = h.Initial.Severity.String(), h.Initial.Likelihood.String()
	p.ResidualSeverity, p.ResidualLikelihood = h.Residual.Severity.String(), h.Residual.Likelihood.String()
	p.Controls, p.Owner, p.Status = controls, h.Owner, string(h.Status)
	return render(c, http.StatusOK, templates.HazardFormPageView(p))
}

func (s *Server) hazardFormPage(c *fiber.Ctx, base int, was string) templates.HazardFormPage {
	heading := "Add a hazard"
	if was != "" {
		heading = "Edit hazard " + was
	}
	p := templates.HazardFormPage{Layout: s.clinicianLayout(c, heading), Heading: heading, Action: hazardsPath, BackURL: safetyPath,
		Was: was, Base: base, Statuses: []string{string(safety.StatusOpen), string(safety.StatusClosed), string(safety.StatusTransferred)}}
	for _, x := range safety.Severities() {
		p.Severities = append(p.Severities, x.String())
	}
	for _, x := range safety.Likelihoods() {
		p.Likelihoods = append(p.Likelihoods, x.String())
	}
	return p
}

// saveHazard saves a hazard's form as the log's next version (PRG to the
// hazard on the safety page). Refused, the form comes back with every
// field as typed and the errors beside their fields.
func (s *Server) saveHazard(c *fiber.Ctx) error {
	me, err := s.accounts.ActiveClinician(c.UserContext(), clinicianOf(c))
	if err != nil {
		return err
	}
	base, _ := strconv.Atoi(c.FormValue("base"))
	f := bff.HazardForm{Was: utils.CopyString(c.FormValue("was")), Base: base,
		ID: utils.CopyString(c.FormValue("id")), Title: utils.CopyString(c.FormValue("title")),
		Description: utils.CopyString(c.FormValue("description")),
		Causes:      utils.CopyString(c.FormValue("causes")), Effects: utils.CopyString(c.FormValue("effects")),
		InitialSeverity: utils.CopyString(c.FormValue("initial_severity")), InitialLikelihood: utils.CopyString(c.FormValue("initial_likelihood")),
		ResidualSeverity: utils.CopyString(c.FormValue("residual_severity")), ResidualLikelihood: utils.CopyString(c.FormValue("residual_likelihood")),
		Controls: utils.CopyString(c.FormValue("controls")), Owner: utils.CopyString(c.FormValue("owner")),
		Status: utils.CopyString(c.FormValue("status")), Note: utils.CopyString(c.FormValue("note"))}
	v, err := s.deps.Safety.SaveHazard(c.UserContext(), me, f)
	if err == nil {
		id := strings.TrimSpace(f.ID)
		s.setFlash(c, "Hazard "+id+" saved: version "+strconv.Itoa(v.Version)+" of the hazard log.")
		return c.Redirect(safetyPath+"#hazard-"+url.PathEscape(id), http.StatusSeeOther)
	}
	var be *bff.Error
	if !errors.As(err, &be) || (be.Code != bff.EINVALID && be.Code != bff.ECONFLICT) {
		return err
	}
	p := s.hazardFormPage(c, f.Base, f.Was)
	p.ID, p.Title, p.Description, p.Causes, p.Effects = f.ID, f.Title, f.Description, f.Causes, f.Effects
	p.InitialSeverity, p.InitialLikelihood, p.ResidualSeverity, p.ResidualLikelihood = f.InitialSeverity, f.InitialLikelihood, f.ResidualSeverity, f.ResidualLikelihood
	p.Controls, p.Owner, p.Status, p.Note = f.Controls, f.Owner, f.Status, f.Note
	p.Errors = templates.FieldErrors{}
	for k, m := range be.Fields {
		p.Errors[k] = m
	}
	if len(be.Fields) == 0 {
		p.Errors[""] = be.Message
	}
	return render(c, refusal(c, err), templates.HazardFormPageView(p))
}
