package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// withReadings records, before the app opens, a run of release rel-1 that
// asked one question read as vomiting.
func withReadings(t *testing.T) func(*appwire.Config) {
	return func(c *appwire.Config) {
		db, err := sqlite.Open(context.Background(), c.DatabasePath, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		now := time.Now().UTC()
		run := &bff.ScenarioRun{ID: "sr_seen", Suite: &scenarios.Suite{Name: "small"}, SuiteName: "small", Repeats: 1, Target: "sandbox",
			StartedBy: "dr.ada", State: bff.RunDone, CreatedAt: now, UpdatedAt: now}
		if err := db.CreateScenarioRun(ctx, run, nil); err != nil {
			t.Fatal(err)
		}
		if err := db.PutScenarioReadings(ctx, run.ID, []*bff.ScenarioReading{{SeenAt: now, QuestionRead: scenarios.QuestionRead{
			Release: "rel-1", Question: "have you been vomiting?", Example: "Have you been vomiting?", Answer: "no, just the runs",
			Kind: scenarios.ReadingConcept, Concepts: []string{"vomiting"}, Cue: "vomit*", Margin: 2, Plays: 3, Vignettes: []string{"gastro"}}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// The readings page and its form are the signed-in clinician's only: a
// patient's session (with its own CSRF token) and no session at all are
// sent to sign in, and their decisions recorded nowhere.
func TestReadingsNeedAClinician(t *testing.T) {
	a := startApp(t, withClinician(t, "dr.ada"), withReadings(t))
	patient := a.browser()
	token := csrfMeta.FindStringSubmatch(patient.get("/").body)
	if token == nil {
		t.Fatal("no csrf token on the start page")
	}
	if p := patient.get("/clinician/scenarios/readings"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/clinician/signin") {
		t.Fatalf("readings page for a patient: %d %s", p.status, p.header.Get("Location"))
	}
	form := url.Values{"_csrf": {token[1]}, "release": {"rel-1"}, "question": {"have you been vomiting?"}, "decision": {"unanswerable"}}
	if p := patient.post("/clinician/scenarios/readings/review", form); p.status != http.StatusUnauthorized {
		t.Fatalf("a patient's review: %d %.200s", p.status, p.body)
	}
	if p := a.browser().get("/clinician/scenarios/readings?release=rel-1"); p.status != http.StatusSeeOther {
		t.Fatalf("readings page without a session: %d", p.status)
	}
	clin := a.browser()
	if p := clin.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	if p := clin.get("/clinician/scenarios/readings"); strings.Contains(p.body, "confirmed by") || !strings.Contains(p.body, "Not reviewed") {
		t.Fatalf("a patient's decision was recorded: %.2000s", p.body)
	}
}

// A clinician confirms with the focused button (one key), the page comes
// back (PRG) with the decision shown; the decision is in the audit log; a
// post without the CSRF token is refused; a bad concept comes back beside
// the question with the note as typed.
func TestReadingsReview(t *testing.T) {
	a := startApp(t, withClinician(t, "dr.ada"), withReadings(t))
	b := a.browser()
	if p := b.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	p := b.get("/clinician/scenarios/readings")
	if p.status != http.StatusOK {
		t.Fatalf("readings page: %d", p.status)
	}
	wantAll(t, "readings page", p.body, "Have you been vomiting?", "no, just the runs", "concept: vomiting (cue: vomit*), margin 2",
		"Asked in</dt><dd>3 plays: gastro", "Not reviewed", `autofocus`, `accesskey="c"`, "0 of 1")
	m := csrfMeta.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatal("no csrf token")
	}
	form := url.Values{"release": {"rel-1"}, "question": {"have you been vomiting?"}, "at": {"0"}, "decision": {"confirmed"}}
	if r := b.post("/clinician/scenarios/readings/review", form); r.status != http.StatusForbidden {
		t.Fatalf("a review without the CSRF token: %d", r.status)
	}
	bad := url.Values{"_csrf": {m[1]}, "release": {"rel-1"}, "question": {"have you been vomiting?"}, "decision": {"corrected"}, "concept": {"nonsense"}, "note": {"typed note"}}
	r := b.post("/clinician/scenarios/readings/review", bad)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad concept: %d", r.status)
	}
	wantAll(t, "the refused review", r.body, "Choose a concept of the vocabulary.", `value="typed note"`)
	form.Set("_csrf", m[1])
	r = b.post("/clinician/scenarios/readings/review", form)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/clinician/scenarios/readings?release=rel-1") {
		t.Fatalf("confirm: %d %s", r.status, r.header.Get("Location"))
	}
	p = b.get(r.header.Get("Location"))
	wantAll(t, "the page after confirming", p.body, "confirmed by dr.ada on ", "1 of 1", "Decision recorded.")
	audit := b.get("/clinician/audit")
	wantAll(t, "the audit log", audit.body, "scenario_reading_review", "before automatic: concept vomiting", "after confirmed by dr.ada")
}

// withManyReadings records, before the app opens, a run of release rel-m
// that asked n questions, "question number 00?" asked in the most plays.
func withManyReadings(t *testing.T, n int) func(*appwire.Config) {
	return func(c *appwire.Config) {
		db, err := sqlite.Open(context.Background(), c.DatabasePath, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		now := time.Now().UTC()
		run := &bff.ScenarioRun{ID: "sr_many", Suite: &scenarios.Suite{Name: "small"}, SuiteName: "small", Repeats: 1, Target: "sandbox",
			StartedBy: "dr.ada", State: bff.RunDone, CreatedAt: now, UpdatedAt: now}
		if err := db.CreateScenarioRun(ctx, run, nil); err != nil {
			t.Fatal(err)
		}
		var rs []*bff.ScenarioReading
		for i := range n {
			q := fmt.Sprintf("question number %02d?", i)
			rs = append(rs, &bff.ScenarioReading{SeenAt: now, QuestionRead: scenarios.QuestionRead{
				Release: "rel-m", Question: q, Example: q, Answer: "no", Kind: scenarios.ReadingNotUnderstood, Plays: n - i, Vignettes: []string{"v"}}})
		}
		if err := db.PutScenarioReadings(ctx, run.ID, rs); err != nil {
			t.Fatal(err)
		}
	}
}

// A release of 30 questions is shown 25 at a time: the first page with a
// Next page link, the page holding ?at= with the others and that question
// highlighted; the concepts to choose from come in the vocabulary's groups,
// each saying what it means.
func TestReadingsPaged(t *testing.T) {
	a := startApp(t, withClinician(t, "dr.ada"), withManyReadings(t, 30))
	b := a.browser()
	if p := b.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	first := b.get("/clinician/scenarios/readings?release=rel-m")
	if first.status != http.StatusOK {
		t.Fatalf("readings page: %d", first.status)
	}
	wantAll(t, "the first page", first.body, "question number 00?", "question number 24?", "questions 1 to 25.",
		`aria-label="Pages of questions"`, `<a rel="next" href="/clinician/scenarios/readings?at=25&amp;release=rel-m#q-25">Next page</a>`,
		`<optgroup label="Throat">`, `<option value="drooling">drooling — drooling, unable to swallow saliva</option>`)
	if strings.Contains(first.body, "question number 25?") || strings.Contains(first.body, "Previous page") {
		t.Errorf("the first page shows more than its 25 questions, or a page before it")
	}
	last := b.get("/clinician/scenarios/readings?release=rel-m&at=27")
	wantAll(t, "the last page", last.body, "question number 25?", "question number 29?", "questions 26 to 30.",
		`<a href="/clinician/scenarios/readings?release=rel-m#q-0">First page</a>`,
		`<a rel="prev" href="/clinician/scenarios/readings?release=rel-m#q-0">Previous page</a>`,
		`<li id="q-27" class="readings__item readings__item--current" aria-current`)
	if strings.Contains(last.body, "question number 24?") || strings.Contains(last.body, "Next page") {
		t.Errorf("the last page shows a question of the first, or a page after it")
	}
}
