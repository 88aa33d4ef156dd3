package web_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// manyResultsRun is a finished run whose under-triaged results are spread
// through it (seqs 1, 4 and 6), with an over-triage, a simulator-limited
// play and a vignette typing errors flipped down.
func manyResultsRun(svc *fakeScenarios) {
	E, U, R, S := scenarios.Emergency, scenarios.Urgent, scenarios.Routine, scenarios.SelfCare
	rs := []scenarios.Result{result("a", 1, R, R), result("b", 1, E, R), result("c", 1, R, U), result("d", 1, U, U),
		result("e", 1, E, U), result("f", 1, E, E), result("f", 1, E, S)}
	rs[3].SimulatorLimited, rs[3].Questions, rs[3].Understood = true, 3, 2
	rs[6].Variation = "typos"
	svc.runs = append(svc.runs, &bff.ScenarioRun{ID: "sr_many", Suite: &scenarios.Suite{Name: "builtin"}, Repeats: 1, State: bff.RunDone,
		Items: len(rs), Played: len(rs), CreatedAt: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)})
	for i := range rs {
		svc.items["sr_many"] = append(svc.items["sr_many"], &bff.ScenarioItem{RunID: "sr_many", Seq: i, VignetteID: rs[i].VignetteID,
			Title: rs[i].Title, Repeat: 1, Variation: rs[i].Variation, State: bff.ItemDone, Result: &rs[i]})
	}
}

var itemLink = regexp.MustCompile(`<a href="/clinician/scenarios/runs/sr_many/items/(\d+)([^"]*)"`)

// itemLinks are the seqs the results table links to, in its order, and
// the query each link carries.
func itemLinks(t *testing.T, body string) ([]string, []string) {
	t.Helper()
	i := strings.Index(body, `id="results-caption"`)
	if i < 0 {
		t.Fatalf("no results table:\n%s", body)
	}
	var seqs, queries []string
	for _, m := range itemLink.FindAllStringSubmatch(body[i:], -1) {
		seqs, queries = append(seqs, m[1]), append(queries, m[2])
	}
	return seqs, queries
}

// TestScenarioRunResultsFilter: a run's results list the under-triaged
// ones first wherever they fell in the run; links (no script) keep only
// the under-triaged, over-triaged, wrong, simulator-limited or flipped
// ones, each with its count; an item page steps to the previous and next
// result of the same list.
func TestScenarioRunResultsFilter(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	manyResultsRun(svc)
	a := startScenarioApp(t, svc)
	b, _ := signedIn(t, a)

	all := b.get("/clinician/scenarios/runs/sr_many")
	if all.status != http.StatusOK {
		t.Fatalf("run page: %d", all.status)
	}
	// Under-triaged first (b, e, f under typos), then simulator-limited (d), then the rest.
	if seqs, _ := itemLinks(t, all.body); !slices.Equal(seqs, []string{"1", "4", "6", "3", "0", "2", "5"}) {
		t.Errorf("default order %v, want the under-triaged first", seqs)
	}
	wantAll(t, "the filter", all.body, `<nav class="result-filter" aria-label="Which results">`,
		`href="/clinician/scenarios/runs/sr_many#results-heading" aria-current="page">All (7)</a>`,
		`href="/clinician/scenarios/runs/sr_many?show=under#results-heading">Under-triaged (3)</a>`,
		`href="/clinician/scenarios/runs/sr_many?show=over#results-heading">Over-triaged (1)</a>`,
		`href="/clinician/scenarios/runs/sr_many?show=wrong#results-heading">Wrong (4)</a>`,
		`href="/clinician/scenarios/runs/sr_many?show=limited#results-heading">Simulator-limited (1)</a>`,
		`href="/clinician/scenarios/runs/sr_many?show=flipped#results-heading">Flipped (2)</a>`)

	for show, want := range map[string][]string{"under": {"1", "4", "6"}, "over": {"2"}, "wrong": {"1", "4", "6", "2"}, "limited": {"3"}, "flipped": {"6", "5"}} {
		p := b.get("/clinician/scenarios/runs/sr_many?show=" + show)
		if p.status != http.StatusOK {
			t.Fatalf("?show=%s: %d", show, p.status)
		}
		seqs, queries := itemLinks(t, p.body)
		if !slices.Equal(seqs, want) {
			t.Errorf("?show=%s lists %v, want %v", show, seqs, want)
		}
		for _, q := range queries {
			if q != "?show="+show {
				t.Errorf("?show=%s: an item link carries %q, not the filter", show, q)
			}
		}
		if !strings.Contains(p.body, `?show=`+show+`#results-heading" aria-current="page">`) {
			t.Errorf("?show=%s: the current filter is not marked", show)
		}
	}
	if p := b.get("/clinician/scenarios/runs/sr_head?show=flipped"); !strings.Contains(p.body, "No result is flipped.") {
		t.Error("an empty filter does not say so")
	}

	// Previous and next within the under-triaged: 1, 4, 6.
	nav := func(path string) string {
		body := b.get(path).body
		i := strings.Index(body, `<nav class="item-nav"`)
		if i < 0 {
			t.Fatalf("%s has no previous/next:\n%s", path, body)
		}
		return body[i : i+strings.Index(body[i:], "</nav>")]
	}
	first := nav("/clinician/scenarios/runs/sr_many/items/1?show=under")
	wantAll(t, "the first under-triaged item", first, "Result 1 of 3 listed (Under-triaged).",
		`href="/clinician/scenarios/runs/sr_many/items/4?show=under" rel="next"`, `href="/clinician/scenarios/runs/sr_many?show=under#results-heading"`)
	if strings.Contains(first, `rel="prev"`) {
		t.Error("the first item has a previous one")
	}
	wantAll(t, "the second under-triaged item", nav("/clinician/scenarios/runs/sr_many/items/4?show=under"), "Result 2 of 3 listed (Under-triaged).",
		`href="/clinician/scenarios/runs/sr_many/items/1?show=under" rel="prev"`, `href="/clinician/scenarios/runs/sr_many/items/6?show=under" rel="next"`)
	last := nav("/clinician/scenarios/runs/sr_many/items/6?show=under")
	if !strings.Contains(last, "Result 3 of 3 listed") || strings.Contains(last, `rel="next"`) {
		t.Errorf("the last under-triaged item: %s", last)
	}
	// Without a filter, the page's default order: 6 is followed by the simulator-limited 3.
	wantAll(t, "an item of every result", nav("/clinician/scenarios/runs/sr_many/items/6"), "Result 3 of 7 listed (All).",
		`href="/clinician/scenarios/runs/sr_many/items/3" rel="next"`)
	wantAll(t, "an item outside the filter", nav("/clinician/scenarios/runs/sr_many/items/0?show=under"), "Not among the results listed (Under-triaged).")

	for _, path := range []string{"/clinician/scenarios/runs/sr_many?show=everything", "/clinician/scenarios/runs/sr_many/items/1?show=%3Cscript%3E"} {
		if p := b.get(path); p.status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, p.status)
		}
	}
}
