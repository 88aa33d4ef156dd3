package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/sandbox/enginetest"
)

// compareSuite is two built-in vignettes (bff/scenarios/builtin's
// abdomen_urinary): the rules engine ends the food poisoning look-alike
// in self-care, and the toddler's poisoning in an emergency as written
// and in self-care under typing errors. gold is the look-alike's gold
// class.
// toddlerOpening is compareSuite's emergency, as written.
const toddlerOpening = "my son has swallowed some of my iron tablets, I don't know how many"

func compareSuite(gold string) []byte {
	return []byte(`suite: compare_check
vignettes:
  - id: food-poisoning-not-poisoning
    title: "Look-alike: food poisoning, stomach cramps after a takeaway"
    age_years: 27
    sex: male
    opening: "think I've got food poisoning, stomach cramps since last night's takeaway"
    complaint: "stomach cramps since a takeaway last night"
    facts:
      - concept: gi_bleeding
        answer: "no, nothing like that"
      - concept: peritonism
        answer: "no, it comes and goes"
      - concept: fainting
        answer: "no"
      - concept: location
        choose: "All over"
        answer: "all over really"
      - concept: vomiting
        answer: "no, just the runs"
    default: "no"
    gold:
      class: ` + gold + `
  - id: toddler-swallowed-tablets
    title: Toddler got into a packet of tablets
    age_years: 2
    sex: male
    opening: "` + toddlerOpening + `"
    default: "no"
    gold:
      class: emergency
`)
}

var runLocation = regexp.MustCompile(`^/clinician/scenarios/runs/([A-Za-z0-9_-]+)$`)

// playSuite uploads suite as a run (with the variations, when given) and
// waits for its progress to say it ended; it returns the run's id.
func playSuite(t *testing.T, b *browser, token string, suite []byte, variation string) string {
	t.Helper()
	fields := map[string]string{"_csrf": token, "repeats": "1"}
	if variation != "" {
		fields["variations"] = variation
	}
	p := b.postMultipart("/clinician/scenarios/runs", fields, "compare.yaml", suite)
	m := runLocation.FindStringSubmatch(p.header.Get("Location"))
	if p.status != http.StatusSeeOther || m == nil {
		t.Fatalf("start the run: %d %s %s", p.status, p.header.Get("Location"), p.body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(b.get("/clinician/scenarios/runs/"+m[1]+"/progress").body, `data-ended="true"`) {
		if time.Now().After(deadline) {
			t.Fatalf("run %s has not ended after 30 s", m[1])
		}
		time.Sleep(20 * time.Millisecond)
	}
	return m[1]
}

// TestCompareTellsTheEngineFromTheLabel: through the whole app, two runs
// of a suite whose only difference is a vignette's gold label (the engine
// answered self-care both times) are not a regression: the page lists the
// label change apart. A run with a variation compared with one without
// says what was compared and what was left out, and surfaces the varied
// run's downward flip.
func TestCompareTellsTheEngineFromTheLabel(t *testing.T) {
	t.Parallel()
	// The runs play on an engine that escalates only on the toddler's exact
	// words, so the varied run's downward flip does not depend on what the
	// rules engine of the day misreads.
	a := startAppOn(t, enginetest.ExactWords{Words: toddlerOpening}, withClinician(t, "dr.ada"))
	b := a.browser()
	if p := b.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	token := csrfMeta.FindStringSubmatch(b.get("/clinician/scenarios").body)[1]
	before := playSuite(t, b, token, compareSuite("self_care"), "")
	relabelled := playSuite(t, b, token, compareSuite("emergency"), "")
	varied := playSuite(t, b, token, compareSuite("self_care"), "typos")

	p := b.get("/clinician/scenarios/compare?base=" + before + "&head=" + relabelled)
	if p.status != http.StatusOK {
		t.Fatalf("compare: %d", p.status)
	}
	if strings.Contains(p.body, "Newly under-triaged") || strings.Contains(p.body, "1 vignette regressed") {
		t.Error("a gold label's change is shown as the engine's regression")
	}
	wantAll(t, "the comparison of a relabelled run", p.body, "Regressions (0)", "Gold label changed (1)",
		"gold Self-care in the base, Emergency in the head.", "Engine: Self-care in the base, Self-care in the head", "(the same answer).",
		"1 gold label changed (listed below): a change of the suite, not of the engine.")

	p = b.get("/clinician/scenarios/compare?base=" + before + "&head=" + varied)
	if p.status != http.StatusOK {
		t.Fatalf("compare: %d", p.status)
	}
	wantAll(t, "the comparison with a varied run", p.body, "What was compared",
		"Base: 2 plays as written, 2 scored and compared; no varied plays.",
		"Head: 2 plays as written, 2 scored and compared; 2 varied plays (Typing errors) left out: against this run&#39;s plays as written, 1 flipped down and 0 up",
		"The head&#39;s 2 varied plays are not compared, and 1 flipped down against its own plays as written",
		"Flips under variations (not compared above)", "In the head: 1 flipped down, 0 up",
		"Toddler got into a packet of tablets under Typing errors</a>", "/clinician/scenarios/runs/"+varied+"/flips?")
	if !regexp.MustCompile(`(?s)<li class="flip--down"><a href="[^"]+">Toddler got into a packet of tablets under Typing errors</a>:\s*down, Emergency as written, Self-care varied`).MatchString(p.body) {
		t.Error("the varied run's downward flip is not on the comparison")
	}
}
