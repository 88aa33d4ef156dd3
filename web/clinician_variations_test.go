package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// TestScenarioVariationsStartAndEstimate: the chosen variations and the
// urgent-first box go through the estimate page to StartRun, and the
// estimate shows each variation's cost.
func TestScenarioVariationsStartAndEstimate(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	svc.estimate.PerVariation = []bff.ScenarioVariationCost{{Variation: "", Intakes: 12, Turns: 40}, {Variation: "typos", Intakes: 12, Turns: 40}}
	a := startScenarioApp(t, svc)
	b, token := signedIn(t, a)

	index := b.get("/clinician/scenarios").body
	wantAll(t, "the start form", index, `name="variations" value="typos" id="variation-typos"`, `<label for="variation-typos">Typing errors</label>`,
		`id="upload-variation-typos"`, `name="urgent_first"`, "<legend>Variations of how the patient speaks (optional)</legend>")

	p := b.get("/clinician/scenarios/new?suite=builtin&repeats=1&variations=typos&variations=lay&urgent_first=1")
	if p.status != http.StatusOK {
		t.Fatalf("estimate: %d", p.status)
	}
	wantAll(t, "the estimate page", p.body, `<input type="hidden" name="variations" value="typos">`, `<input type="hidden" name="variations" value="lay">`,
		`<input type="hidden" name="urgent_first" value="1">`, "Cost of each variation", "<th scope=\"row\">Typing errors</th>", "As written",
		"variations=typos&amp;variations=lay")

	r := b.post("/clinician/scenarios/runs", url.Values{"_csrf": {token}, "suite": {"builtin"}, "repeats": {"1"},
		"variations": {"typos", "lay"}, "urgent_first": {"1"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	wantAll(t, "the flash", b.get("/clinician/scenarios").body, "Per variation: As written 12 intakes, about 40 turns; Typing errors 12 intakes, about 40 turns.")
	got := svc.started[len(svc.started)-1].form
	if !slices.Equal(got.Variations, []string{"typos", "lay"}) || !got.UrgentFirst {
		t.Errorf("StartRun got variations %v, urgent first %v", got.Variations, got.UrgentFirst)
	}
	// The upload form's (multipart) too.
	r = b.postMultipart("/clinician/scenarios/runs", map[string]string{"_csrf": token, "repeats": "1", "variations": "terse"}, "s.yaml", []byte("suite: x"))
	if r.status != http.StatusSeeOther {
		t.Fatalf("upload start: %d", r.status)
	}
	if got := svc.started[len(svc.started)-1].form; !slices.Equal(got.Variations, []string{"terse"}) || got.UrgentFirst {
		t.Errorf("upload: StartRun got variations %v, urgent first %v", got.Variations, got.UrgentFirst)
	}
}

// TestScenarioRunShowsFlips: a run with variations has the flip table and
// each flip links to both plays side by side.
func TestScenarioRunShowsFlips(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	base := result("chest_pain", 1, scenarios.Emergency, scenarios.Emergency)
	typo := result("chest_pain", 1, scenarios.Emergency, scenarios.Urgent)
	typo.Variation = "typos"
	lay := result("chest_pain", 1, scenarios.Emergency, scenarios.Emergency)
	lay.Variation = "lay"
	svc.runs = append(svc.runs, &bff.ScenarioRun{ID: "sr_vary", Suite: &scenarios.Suite{Name: "builtin"}, Repeats: 1, State: bff.RunDone,
		Items: 3, Played: 3, CreatedAt: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)})
	svc.items["sr_vary"] = []*bff.ScenarioItem{
		{RunID: "sr_vary", Seq: 0, VignetteID: "chest_pain", Title: "chest pain", Repeat: 1, State: bff.ItemDone, Result: &base,
			Turns: []scenarios.Exchange{{Message: "I have a crushing pain in my chest.", Reply: "Call 999 now.", Terminal: true, Urgent: true}}},
		{RunID: "sr_vary", Seq: 1, VignetteID: "chest_pain", Title: "chest pain", Repeat: 1, Variation: "typos", State: bff.ItemDone, Result: &typo,
			Turns: []scenarios.Exchange{{Message: "I have a crushng pain in my chset.", Reply: "Be seen today.", Terminal: true, Disposition: "urgent_escalation"}}},
		{RunID: "sr_vary", Seq: 2, VignetteID: "chest_pain", Title: "chest pain", Repeat: 1, Variation: "lay", State: bff.ItemDone, Result: &lay},
	}
	a := startScenarioApp(t, svc)
	b, _ := signedIn(t, a)
	run := b.get("/clinician/scenarios/runs/sr_vary")
	if run.status != http.StatusOK {
		t.Fatalf("run page: %d", run.status)
	}
	wantAll(t, "the flip table", run.body, `<h2 id="flips-heading">Flips under variations</h2>`, "<th scope=\"row\">Typing errors</th>",
		"1 down, 0 up of 1", "0 down, 0 up of 1", `<span class="badge">Typing errors</span>`,
		`href="/clinician/scenarios/runs/sr_vary/items/1"`)
	m := regexp.MustCompile(`<a href="([^"]+/flips\?[^"]+)">chest pain under Typing errors</a>`).FindStringSubmatch(run.body)
	if m == nil {
		t.Fatalf("no link to the flip:\n%s", run.body)
	}
	side := b.get(html.UnescapeString(m[1]))
	if side.status != http.StatusOK {
		t.Fatalf("side page: %d", side.status)
	}
	wantAll(t, "the side-by-side page", side.body, "As written (repeat 1): Emergency", "Typing errors (repeat 1): Urgent",
		"I have a crushing pain in my chest.", "I have a crushng pain in my chset.", "Flipped down",
		`href="/clinician/scenarios/runs/sr_vary/items/0"`, `href="/clinician/scenarios/runs/sr_vary/items/1"`)
	if i, j := strings.Index(side.body, "crushing"), strings.Index(side.body, "crushng"); i > j {
		t.Error("the varied play is shown before the one as written")
	}
	// Each item's page says how the patient spoke when it was varied.
	heading := func(path string) string {
		body := b.get(path).body
		i := strings.Index(body, `id="item-heading"`)
		return body[i : i+strings.Index(body[i:], "</h1>")]
	}
	if h := heading("/clinician/scenarios/runs/sr_vary/items/1"); !strings.Contains(h, "Typing errors") {
		t.Errorf("the varied item's heading does not say its variation: %s", h)
	}
	if h := heading("/clinician/scenarios/runs/sr_vary/items/0"); strings.Contains(h, "Typing errors") {
		t.Errorf("the item as written is headed as varied: %s", h)
	}
	// No flip there, or no such variation: not found / refused.
	if p := b.get("/clinician/scenarios/runs/sr_vary/flips?vignette=chest_pain&variation=lay"); p.status != http.StatusNotFound {
		t.Errorf("a variation that did not flip: %d", p.status)
	}
	if p := b.get("/clinician/scenarios/runs/sr_vary/flips?vignette=chest_pain&variation=shouting"); p.status < 400 || p.status >= 500 {
		t.Errorf("an unknown variation: %d", p.status)
	}
	// A run without variations has no flip table.
	if strings.Contains(b.get("/clinician/scenarios/runs/sr_head").body, "flips-heading") {
		t.Error("a run without variations shows a flip table")
	}
}
