package web

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// The clinician area's Scenarios section (routes.go lists its routes; they
// exist only when Deps.Scenarios is set).

const (
	scenariosPath = "/clinician/scenarios"
	maxRunIDLen   = 80
	maxItemSeq    = 1_000_000 // far above vignettes × 10 repeats
)

func runPath(id string) string { return scenariosPath + "/runs/" + id }

func comparePath(base, head string) string {
	return scenariosPath + "/compare?base=" + url.QueryEscape(base) + "&head=" + url.QueryEscape(head)
}

// validRunID accepts what the service hands out ("sr_" and hex) and
// anything else made of the same safe characters, so a malformed id in a
// path or query is a 404 and never reaches a header or the service.
func validRunID(id string) bool {
	if id == "" || len(id) > maxRunIDLen {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// runParam is the :id of the path, or a 404.
func runParam(c *fiber.Ctx) (string, error) {
	id := param(c, "id")
	if !validRunID(id) {
		return "", fiber.ErrNotFound
	}
	return id, nil
}

// seqParam is the :seq of the path: digits only, small; else a 404.
func seqParam(c *fiber.Ctx) (int, error) {
	s := param(c, "seq")
	if s == "" || len(s) > 7 || strings.Trim(s, "0123456789") != "" {
		return 0, fiber.ErrNotFound
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxItemSeq {
		return 0, fiber.ErrNotFound
	}
	return n, nil
}

func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func runLabel(r *bff.ScenarioRun) string {
	if r.Label != "" {
		return r.Label
	}
	return "Unlabelled run of " + suiteName(r)
}

func suiteName(r *bff.ScenarioRun) string {
	if n := r.SuiteLabel(); n != "" {
		return n
	}
	return "an unnamed suite"
}

// startInput is what a start form carried, as typed.
type startInput struct {
	upload                bool
	suite, repeats, label string
	variations            []string
	urgentFirst           bool
}

// form turns the input into a RunForm; a repeats that is not a whole number
// is refused here (the service checks the range).
func (in startInput) form() (bff.ScenarioRunForm, templates.FieldErrors) {
	f := bff.ScenarioRunForm{Suite: in.suite, Label: in.label, Repeats: 1, Variations: in.variations, UrgentFirst: in.urgentFirst}
	if t := strings.TrimSpace(in.repeats); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil {
			return f, in.fieldErrors("repeats", "Repeats must be a whole number from 1 to 10.")
		}
		f.Repeats = n
	}
	return f, nil
}

// fieldErrors puts the message under the field's id in the form it came from.
func (in startInput) fieldErrors(field, msg string) templates.FieldErrors {
	if in.upload {
		switch field {
		case "repeats", "label":
			field = "upload-" + field
		case "suite", "upload":
			field = "upload"
		default:
			field = ""
		}
	} else if field != "suite" && field != "repeats" && field != "label" {
		field = ""
	}
	return templates.FieldErrors{field: msg}
}
