package templates

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// checkSemantics checks what axe-core checks and a parser can: ids are
// unique and every id reference (label for, aria-labelledby,
// aria-describedby, in-page links) resolves; every visible form control
// has a label; headings start at h1 and never skip a level; every table
// has a caption and its header cells a scope.
func checkSemantics(t *testing.T, d *doc) {
	t.Helper()
	ids := map[string]int{}
	for _, n := range d.all(func(n *html.Node) bool { _, ok := attr(n, "id"); return ok }) {
		ids[attrOr(n, "id")]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q is used %d times", id, n)
		}
	}
	ref := func(what, id string) {
		if ids[id] == 0 {
			t.Errorf("%s refers to missing #%s", what, id)
		}
	}
	for _, n := range d.all(func(*html.Node) bool { return true }) {
		for _, key := range []string{"aria-labelledby", "aria-describedby"} {
			for _, id := range strings.Fields(attrOr(n, key)) {
				ref("<"+n.Data+" "+key+">", id)
			}
		}
		if n.Data == "label" {
			ref("<label for>", attrOr(n, "for"))
		}
		if h := attrOr(n, "href"); n.Data == "a" && strings.HasPrefix(h, "#") && len(h) > 1 {
			ref("<a href>", h[1:])
		}
	}
	labelled := map[string]bool{}
	for _, l := range d.all(tag("label")) {
		labelled[attrOr(l, "for")] = true
	}
	for _, c := range d.all(func(n *html.Node) bool { return n.Data == "input" || n.Data == "select" || n.Data == "textarea" }) {
		if typ := attrOr(c, "type"); typ == "hidden" {
			continue
		}
		if id := attrOr(c, "id"); id == "" || !labelled[id] {
			t.Errorf("<%s name=%q> has no label", c.Data, attrOr(c, "name"))
		}
	}
	level := 0
	for _, h := range d.all(func(n *html.Node) bool {
		return len(n.Data) == 2 && n.Data[0] == 'h' && n.Data[1] >= '1' && n.Data[1] <= '6'
	}) {
		l, _ := strconv.Atoi(h.Data[1:])
		if l > level+1 {
			t.Errorf("heading <%s> %q skips a level after h%d", h.Data, norm(text(h)), level)
		}
		level = l
	}
	if got := len(d.all(tag("h1"))); got != 1 {
		t.Errorf("%d h1 headings, want 1", got)
	}
	for _, tb := range d.all(tag("table")) {
		if len(all(tb, tag("caption"))) != 1 {
			t.Errorf("a table without a caption")
		}
		for _, th := range all(tb, tag("th")) {
			if s := attrOr(th, "scope"); s != "col" && s != "row" {
				t.Errorf("<th> %q without scope", norm(text(th)))
			}
		}
	}
}

func sampleScenariosPage() ScenariosPage {
	return ScenariosPage{
		Layout:  clinLayout("Scenarios"),
		Suites:  []ScenarioSuite{{Name: "builtin", Title: "Every vignette", Vignettes: 12}},
		Start:   ScenarioStartForm{Action: "/clinician/scenarios/new", Suite: "builtin", Repeats: "2", Label: "nightly"},
		Upload:  ScenarioUploadForm{Action: "/clinician/scenarios/runs", MaxSize: "1 MiB"},
		Runs:    []ScenarioRunRow{{ID: "sr_1", URL: "/clinician/scenarios/runs/sr_1", Label: "nightly", State: "done", Played: 3, Items: 3, Scored: true, Accuracy: "66.7%", UnderTriage: "0.0%"}},
		Compare: ScenarioCompareForm{Action: "/clinician/scenarios/compare", Runs: []ScenarioRunOption{{ID: "sr_1", Label: "a"}, {ID: "sr_2", Label: "b"}}, Base: "sr_2", Head: "sr_1"},
		Errors:  FieldErrors{"upload-label": "The label is at most 100 characters.", "head": "Choose two different runs."},
	}
}

func sampleRunPage() ScenarioRunPage {
	return ScenarioRunPage{
		Layout: clinLayout("Run"), ID: "sr_1", Label: "nightly", Suite: "builtin", Repeats: 1, Created: "now",
		Progress:     ScenarioProgress{RunURL: "/r", PollURL: "/r/progress", State: "active", StateLabel: "Playing", Played: 12, Items: 61, PlayedText: "12 of 61 played", ProgressValues: true, Note: "n"},
		CancelAction: "/r/cancel", JSONURL: "/r/report.json", CSVURL: "/r/report.csv",
		Summary: &ScenarioSummary{Accuracy: "50.0%", UnderTriage: "25.0%", OverTriage: "25.0%", PerClass: []ScenarioClassRow{{Class: "Emergency"}},
			Provenance: []Fact{{Name: "release", Label: "Engine release", Value: "2.4"}}},
		ConfusionSVG: `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="cm1-title"><title id="cm1-title">Confusion matrix</title></svg>`,
		Results:      []ScenarioResultRow{{URL: "/r/items/0", VignetteID: "v1", Repeat: 1, Gold: "Emergency", Final: "Routine", Triage: "under", Under: true}},
	}
}

func sampleComparePage() ScenarioComparePage {
	ch := func(id string, under bool) ScenarioChange {
		return ScenarioChange{Key: "chg-" + id, VignetteID: id, Gold: "Emergency", UnderTriage: under}
	}
	refused := ch("b", false)
	refused.Verdict, refused.Note, refused.Errors = "engine_wrong", "typed", FieldErrors{"chg-b-note": "Say why."}
	return ScenarioComparePage{
		Layout: clinLayout("Compare"), Base: ScenarioRunOption{ID: "sr_1", Label: "a", URL: "/a"}, Head: ScenarioRunOption{ID: "sr_2", Label: "b", URL: "/b"},
		Regressions: []ScenarioChange{ch("a", true), refused}, Improvements: []ScenarioChange{ch("c", false)},
		AdjudicateAction: "/adj", PValue: "0.5",
	}
}

func TestScenarioPagesAreSemantic(t *testing.T) {
	for name, d := range map[string]*doc{
		"index":    render(t, ScenariosPageView(sampleScenariosPage())),
		"estimate": render(t, ScenarioEstimatePageView(ScenarioEstimatePage{Layout: clinLayout("Estimate"), Suite: ScenarioSuite{Name: "builtin"}, Repeats: 1, Action: "/runs", ChangeURL: "/s"})),
		"run":      render(t, ScenarioRunPageView(sampleRunPage())),
		"item": render(t, ScenarioItemPageView(ScenarioItemPage{Layout: clinLayout("Item"), RunURL: "/r", VignetteID: "v1", Repeat: 1,
			Outcome: &ScenarioOutcome{Triage: "under"}, Turns: []ScenarioExchange{{N: 1, Message: "m", Reply: "r"}},
			Handoff: &ScenarioHandoff{Scores: []ScoreView{{Key: "k", Band: "strong"}}, Facts: []Fact{{Label: "Age"}}}})),
		"compare": render(t, ScenarioComparePageView(sampleComparePage())),
	} {
		t.Run(name, func(t *testing.T) {
			checkClinicianPage(t, d)
			checkSemantics(t, d)
		})
	}
}

// The refused form's errors sit beside their own fields, in the form they
// came from, with what was typed kept.
func TestScenarioFormErrors(t *testing.T) {
	d := render(t, ScenariosPageView(sampleScenariosPage()))
	if e := d.mustID("upload-label-error"); !strings.Contains(text(e), "at most 100") {
		t.Errorf("upload-label error: %q", text(e))
	}
	if !strings.Contains(attrOr(d.mustID("upload-label"), "aria-describedby"), "upload-label-error") {
		t.Error("the upload label field is not described by its error")
	}
	if d.byID("label-error") != nil {
		t.Error("the upload form's error shows on the suite form")
	}
	if attrOr(d.mustID("label"), "value") != "nightly" || attrOr(d.mustID("repeats"), "value") != "2" {
		t.Error("the suite form lost what was typed")
	}
	c := render(t, ScenarioComparePageView(sampleComparePage()))
	note := c.mustID("chg-b-note")
	if !strings.Contains(text(note), "typed") || attrOr(note, "aria-invalid") != "true" {
		t.Errorf("refused note: %q", text(note))
	}
	if _, ok := attr(c.mustID("chg-b-verdict-engine"), "checked"); !ok {
		t.Error("the verdict chosen was not kept")
	}
	if c.byID("chg-a-note-error") != nil {
		t.Error("another change shows the error")
	}
}

// Newly under-triaged regressions come first and are marked in words.
func TestScenarioCompareOrder(t *testing.T) {
	d := render(t, ScenarioComparePageView(sampleComparePage()))
	a, b, c := d.mustID("chg-a"), d.mustID("chg-b"), d.mustID("chg-c")
	if !precedes(d.root, a, b) || !precedes(d.root, b, c) {
		t.Error("changes out of order")
	}
	if !strings.Contains(text(a), "Newly under-triaged") || strings.Contains(text(b), "Newly under-triaged") {
		t.Error("the under-triage mark is wrong")
	}
	if !strings.Contains(d.src, "2 vignettes regressed, 1 newly under-triaged (listed first).") {
		t.Error("no regression headline")
	}
}

// The progress region carries what scenarios.js needs: the poll URL while
// running, data-ended, data-field texts, an aria-live region, a labelled
// <progress>.
func TestScenarioProgressRegion(t *testing.T) {
	p := sampleRunPage().Progress
	d := renderFragment(t, ScenarioProgressView(p))
	r := d.mustID("run-progress")
	if attrOr(r, "data-progress-url") != "/r/progress" || attrOr(r, "data-ended") != "false" || attrOr(r, "aria-live") != "polite" {
		t.Errorf("region attributes: %v", r.Attr)
	}
	bar := d.all(tag("progress"))
	if len(bar) != 1 || attrOr(bar[0], "value") != "12" || attrOr(bar[0], "max") != "61" || attrOr(bar[0], "aria-labelledby") != "run-progress-text" {
		t.Fatalf("progress bar: %v", bar)
	}
	if got := norm(text(d.mustID("run-progress-text"))); got != "12 of 61 played" {
		t.Errorf("progress text %q", got)
	}
	if cur := d.all(withAttr("data-field", "current")); len(cur) != 1 || !hiddenAttr(cur[0]) {
		t.Error("an empty current item is not hidden")
	}
	p.Ended, p.PollURL = true, ""
	e := renderFragment(t, ScenarioProgressView(p)).mustID("run-progress")
	if _, ok := attr(e, "data-progress-url"); ok || attrOr(e, "data-ended") != "true" {
		t.Errorf("ended region attributes: %v", e.Attr)
	}
}

// The item page puts a space between the protocol and its gold.
func TestScenarioItemProtocolAndGold(t *testing.T) {
	d := render(t, ScenarioItemPageView(ScenarioItemPage{Layout: clinLayout("Item"), RunURL: "/r", VignetteID: "v1", Repeat: 1,
		Outcome: &ScenarioOutcome{Triage: "correct", Protocol: "abdominal_pain.v1", GoldProtocol: "chest_pain.v2"}}))
	if !strings.Contains(norm(text(d.root)), "abdominal_pain.v1 (gold: chest_pain.v2)") {
		t.Errorf("protocol and gold: %q", norm(text(d.root)))
	}
}

// A comparison with nothing to adjudicate says so, and where the form is
// found; one with changes does not.
func TestScenarioCompareNothingToAdjudicate(t *testing.T) {
	p := sampleComparePage()
	if d := render(t, ScenarioComparePageView(p)); d.byID("nothing-to-adjudicate") != nil {
		t.Error("a comparison with changes says there is nothing to adjudicate")
	}
	p.Regressions, p.SetAside, p.Others, p.Improvements = nil, nil, nil, nil
	d := render(t, ScenarioComparePageView(p))
	hint := d.byID("nothing-to-adjudicate")
	if hint == nil || !strings.Contains(text(hint), "Nothing to adjudicate") || !strings.Contains(text(hint), "compare two runs that differ") {
		t.Fatalf("no hint when nothing changed: %s", d.src)
	}
	if !precedes(d.root, hint, d.mustID("regressions-heading")) {
		t.Error("the hint is not above the lists")
	}
}
