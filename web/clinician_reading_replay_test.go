package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

var (
	readingRowRe  = regexp.MustCompile(`(?s)<li id="q-\d+".*?</li>`)
	rowQuestionRe = regexp.MustCompile(`name="question" value="([^"]*)"`)
	rowAskedInRe  = regexp.MustCompile(`(?s)<dt>Asked in</dt><dd>[^:]*: ([^<]*)</dd>`)
	rowReleaseRe  = regexp.MustCompile(`name="release" value="([^"]*)"`)
)

// onlyAskedBy is a question of the readings page asked by vignette alone,
// and the page's release.
func onlyAskedBy(t *testing.T, body, vignette string) (question, release string) {
	t.Helper()
	for _, row := range readingRowRe.FindAllString(body, -1) {
		q, in, rel := rowQuestionRe.FindStringSubmatch(row), rowAskedInRe.FindStringSubmatch(row), rowReleaseRe.FindStringSubmatch(row)
		if q != nil && in != nil && rel != nil && strings.TrimSpace(in[1]) == vignette {
			return html.UnescapeString(q[1]), html.UnescapeString(rel[1])
		}
	}
	t.Fatalf("no question asked by %s alone on the readings page: %.3000s", vignette, body)
	return "", ""
}

// After a decision, the readings page offers to replay the items of the
// run that asked the question; the replay is a signed-in clinician's
// only (a patient's session and no session are refused, and start
// nothing), needs the CSRF token, and, started, is a new run (PRG) that
// says which run it replays and links to the comparison of the two,
// which the scenarios list shows beside the others.
func TestReplayAfterAReadingDecision(t *testing.T) {
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) { c.ScenarioTarget = "sandbox" })
	b := a.browser()
	if p := b.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	token := csrfMeta.FindStringSubmatch(b.get("/clinician/scenarios").body)[1]
	before := playSuite(t, b, token, compareSuite("self_care"), "")

	page := b.get("/clinician/scenarios/readings").body
	question, release := onlyAskedBy(t, page, "food-poisoning-not-poisoning")
	if strings.Contains(page, "Replay the items that asked it") {
		t.Fatal("a replay is offered before any decision")
	}
	if strings.Contains(b.get("/clinician/scenarios/runs/"+before).body, "Readings corrected since this run") {
		t.Fatal("the run page offers a replay before any decision")
	}
	review := url.Values{"_csrf": {token}, "release": {release}, "question": {question}, "decision": {"unanswerable"}}
	if p := b.post("/clinician/scenarios/readings/review", review); p.status != http.StatusSeeOther {
		t.Fatalf("review: %d %.300s", p.status, p.body)
	}
	page = b.get("/clinician/scenarios/readings?release=" + url.QueryEscape(release)).body
	if !strings.Contains(page, `name="run" value="`+before+`"`) {
		t.Fatalf("no replay of run %s offered after the decision: %.3000s", before, page)
	}

	// The run's page offers it too, for that question.
	runPage := b.get("/clinician/scenarios/runs/" + before).body
	if !strings.Contains(runPage, "Readings corrected since this run") || !strings.Contains(runPage, `name="question" value="`+html.EscapeString(question)+`"`) {
		t.Fatalf("the run page offers no replay of %q after the decision: %.4000s", question, runPage)
	}

	replay := url.Values{"release": {release}, "question": {question}, "run": {before}}
	patient := a.browser()
	ptoken := csrfMeta.FindStringSubmatch(patient.get("/").body)
	if ptoken == nil {
		t.Fatal("no csrf token on the start page")
	}
	replay.Set("_csrf", ptoken[1])
	if p := patient.post("/clinician/scenarios/readings/replay", replay); p.status != http.StatusUnauthorized {
		t.Fatalf("a patient's replay: %d %.200s", p.status, p.body)
	}
	if p := a.browser().post("/clinician/scenarios/readings/replay", replay); p.status < 400 || p.status >= 500 {
		t.Fatalf("a replay without a session: %d %.200s", p.status, p.body)
	}
	replay.Del("_csrf")
	if p := b.post("/clinician/scenarios/readings/replay", replay); p.status != http.StatusForbidden {
		t.Fatalf("a clinician's replay without the CSRF token: %d", p.status)
	}
	if n := strings.Count(b.get("/clinician/scenarios").body, `href="/clinician/scenarios/runs/sr_`); n != 1 {
		t.Fatalf("%d runs listed after the refused replays; want only the first", n)
	}

	replay.Set("_csrf", token)
	p := b.post("/clinician/scenarios/readings/replay", replay)
	m := runLocation.FindStringSubmatch(p.header.Get("Location"))
	if p.status != http.StatusSeeOther || m == nil || m[1] == before {
		t.Fatalf("replay: %d %s %.300s", p.status, p.header.Get("Location"), p.body)
	}
	run := b.get(p.header.Get("Location")).body
	for _, want := range []string{"Replay of run " + before + ": Run started: 1 intakes", "replay of run", `href="/clinician/scenarios/runs/` + before + `"`,
		`href="/clinician/scenarios/compare?base=` + before + `&amp;head=` + m[1] + `"`} {
		if !strings.Contains(run, want) {
			t.Fatalf("the replay's page lacks %q: %.4000s", want, run)
		}
	}

	// A run that never asked the question: refused beside it, nothing started.
	replay.Set("question", "is the moon made of cheese?")
	if p := b.post("/clinician/scenarios/readings/replay", replay); p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "nothing to replay") {
		t.Fatalf("replay of a question not asked: %d %.300s", p.status, p.body)
	}
	// Refused from the run's page: back on the run's page, saying why.
	replay.Set("back", "run")
	if p := b.post("/clinician/scenarios/readings/replay", replay); p.status != http.StatusSeeOther || p.header.Get("Location") != "/clinician/scenarios/runs/"+before {
		t.Fatalf("replay from the run page of a question not asked: %d %s", p.status, p.header.Get("Location"))
	}
	if got := b.get("/clinician/scenarios/runs/" + before).body; !strings.Contains(got, "No replay started:") || !strings.Contains(got, "nothing to replay") {
		t.Fatalf("the run page does not say why no replay started: %.3000s", got)
	}
}
