package web

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/templates"
)

// formValues are every value of a repeated field, from the query (GET), a
// urlencoded body or a multipart one, copied (Fiber reuses its buffers).
func formValues(c *fiber.Ctx, name string) []string {
	var out []string
	if c.Method() == fiber.MethodGet {
		for _, v := range c.Context().QueryArgs().PeekMulti(name) {
			out = append(out, string(v))
		}
		return out
	}
	if strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEMultipartForm) {
		if f, err := c.MultipartForm(); err == nil {
			return slices.Clone(f.Value[name])
		}
		return nil
	}
	for _, v := range c.Context().PostArgs().PeekMulti(name) {
		out = append(out, string(v))
	}
	return out
}

// withVariations reads the start form's variations and urgent-first box.
func (in startInput) withVariations(c *fiber.Ctx) startInput {
	in.variations = formValues(c, "variations")
	v := formValues(c, "urgent_first")
	in.urgentFirst = len(v) > 0 && v[0] != ""
	return in
}

// variationOptions are every variation as a checkbox, those chosen checked.
func variationOptions(chosen []string) []templates.ScenarioVariationOption {
	var out []templates.ScenarioVariationOption
	for _, n := range variations.Names() {
		out = append(out, templates.ScenarioVariationOption{Name: n, Label: variations.Label(n), Checked: slices.Contains(chosen, n)})
	}
	return out
}

// chosenVariations are the chosen ones only, for the estimate page.
func chosenVariations(chosen []string) []templates.ScenarioVariationOption {
	var out []templates.ScenarioVariationOption
	for _, o := range variationOptions(chosen) {
		if o.Checked {
			out = append(out, o)
		}
	}
	return out
}

func variationCosts(e *bff.ScenarioRunEstimate) []templates.ScenarioVariationCost {
	var out []templates.ScenarioVariationCost
	for _, c := range e.PerVariation {
		out = append(out, templates.ScenarioVariationCost{Label: variations.Label(c.Variation), Intakes: c.Intakes, Turns: c.Turns})
	}
	return out
}

// changeValues are the start form's values for "Change the run".
func changeValues(f bff.ScenarioRunForm) url.Values {
	v := url.Values{"suite": {f.Suite}, "repeats": {strconv.Itoa(f.Repeats)}, "label": {f.Label}}
	if len(f.Variations) > 0 {
		v["variations"] = f.Variations
	}
	if f.UrgentFirst {
		v.Set("urgent_first", "1")
	}
	return v
}

// itemKey finds a run's item by what it played.
func itemKey(vignette, variation string, repeat int) string {
	return vignette + "\x00" + variation + "\x00" + strconv.Itoa(repeat)
}

func sidePath(runID, vignette, variation string) string {
	return runPath(runID) + "/flips?" + url.Values{"vignette": {vignette}, "variation": {variation}}.Encode()
}

// flipsView is the run page's flip table.
func flipsView(runID string, f *scenarios.FlipReport) *templates.ScenarioFlips {
	if f == nil {
		return nil
	}
	v := &templates.ScenarioFlips{Classes: []string{"All"}, NotCompared: f.NotCompared}
	for _, c := range scenarios.Classes {
		v.Classes = append(v.Classes, c.Label())
	}
	for _, name := range f.Variations {
		row := templates.ScenarioFlipRow{Variation: variations.Label(name), Cells: make([]templates.ScenarioFlipCell, len(v.Classes))}
		for _, r := range f.Rows {
			if r.Variation != name {
				continue
			}
			i := 0
			if r.Class != "" {
				i = 1 + r.Class.Rank()
			}
			if i < len(row.Cells) {
				row.Cells[i] = templates.ScenarioFlipCell{Compared: r.Compared, Down: r.Down, Up: r.Up}
			}
		}
		v.Rows = append(v.Rows, row)
	}
	for _, x := range f.Flips {
		v.Flips = append(v.Flips, templates.ScenarioFlip{VignetteID: x.VignetteID, Title: x.Title, Variation: variations.Label(x.Variation),
			Gold: x.Gold.Label(), Base: x.Base.Label(), Varied: x.Varied.Label(), Down: x.Direction == scenarios.FlipDown,
			URL: sidePath(runID, x.VignetteID, x.Variation)})
	}
	return v
}

// perVariationSentence is " Per variation: As written 13 intakes, about 40
// turns; …" for the flash after a start ("" without variations).
func perVariationSentence(e *bff.ScenarioRunEstimate) string {
	if len(e.PerVariation) == 0 {
		return ""
	}
	parts := make([]string, len(e.PerVariation))
	for i, c := range e.PerVariation {
		parts[i] = variations.Label(c.Variation) + " " + strconv.Itoa(c.Intakes) + " intakes, about " + strconv.Itoa(c.Turns) + " turns"
	}
	return " Per variation: " + strings.Join(parts, "; ") + "."
}
