package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2/memstore"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/web"
)

// The Scenarios section against a fake bff.ScenarioService: web.New with
// fakes for everything the section does not use.

// fakeAccounts knows one clinician, dr.ada, with clinPassword.
type fakeAccounts struct{ bff.AccountService }

func (fakeAccounts) ActiveClinician(_ context.Context, name string) (*bff.Clinician, error) {
	if name == "dr.ada" {
		return &bff.Clinician{Username: name, Roles: bff.AllRoles()}, nil
	}
	return nil, bff.Errorf(bff.ENOTFOUND, "no such clinician")
}

func (fakeAccounts) SignIn(_ context.Context, name, password, _ string) (*bff.Clinician, error) {
	if name == "dr.ada" && password == clinPassword {
		return &bff.Clinician{Username: name, Roles: bff.AllRoles()}, nil
	}
	return nil, bff.Errorf(bff.EUNAUTHORIZED, "The username or password is wrong.")
}

func (fakeAccounts) SignOut(context.Context, string) {}

func (fakeAccounts) AccessRefused(context.Context, string, string) {}

func (fakeAccounts) StartSession(context.Context, string, *bff.ClinicianSession) error { return nil }

func (fakeAccounts) SessionActive(context.Context, string) (*bff.ClinicianSession, error) {
	return &bff.ClinicianSession{}, nil
}

func (fakeAccounts) SessionSeen(context.Context, string, time.Time) error { return nil }

func (fakeAccounts) SessionSignedOut(context.Context, string) {}

type startCall struct {
	clinician string
	form      bff.ScenarioRunForm
}

type adjCall struct {
	clinician, base, head, vignette, note string
	verdict                               scenarios.Verdict
}

// fakeScenarios is a bff.ScenarioService over fixed runs, recording calls.
type fakeScenarios struct {
	mu       sync.Mutex
	runs     []*bff.ScenarioRun // newest first
	items    map[string][]*bff.ScenarioItem
	results  map[string][]scenarios.Result
	estimate bff.ScenarioRunEstimate
	// Errors to return, when set.
	startErr, cancelErr, adjErr error

	asked     []string // run ids the service was asked about
	seqs      []int    // item seqs asked
	started   []startCall
	cancelled []string // clinician + " " + run id
	adjudged  []adjCall
}

func (f *fakeScenarios) Suites() []bff.ScenarioSuite {
	return []bff.ScenarioSuite{{Name: "builtin", Title: "Every built-in vignette", Vignettes: 12, AtOnce: 7}, {Name: "builtin/heart_lungs", Title: "Heart and lungs", Vignettes: 4, AtOnce: 4}}
}

func (f *fakeScenarios) Estimate(_ context.Context, rf bff.ScenarioRunForm) (*bff.ScenarioRunEstimate, error) {
	if rf.Suite != "builtin" && rf.Suite != "builtin/heart_lungs" {
		return nil, bff.Invalid("suite", "There is no suite named %q.", rf.Suite)
	}
	e := f.estimate
	return &e, nil
}

func (f *fakeScenarios) StartRun(_ context.Context, clinician string, rf bff.ScenarioRunForm) (*bff.ScenarioRun, *bff.ScenarioRunEstimate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, startCall{clinician, rf})
	if f.startErr != nil {
		return nil, nil, f.startErr
	}
	e := f.estimate
	return &bff.ScenarioRun{ID: "sr_new"}, &e, nil
}

// Runs lists the runs as the service does: with the scores so far and the
// suite's name, without the suite.
func (f *fakeScenarios) Runs(context.Context) ([]*bff.ScenarioRun, error) {
	var out []*bff.ScenarioRun
	for _, r := range f.runs {
		c := *r
		if r.Suite != nil {
			c.SuiteName, c.Suite = r.Suite.Name, nil
		}
		if res, ok := f.results[r.ID]; ok {
			sum := scenarios.Score(res)
			c.Summary = &sum
		}
		out = append(out, &c)
	}
	return out, nil
}

func (f *fakeScenarios) run(id string) (*bff.ScenarioRun, error) {
	f.mu.Lock()
	f.asked = append(f.asked, id)
	f.mu.Unlock()
	for _, r := range f.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return nil, bff.Errorf(bff.ENOTFOUND, "There is no such run.")
}

func (f *fakeScenarios) Run(_ context.Context, id string) (*bff.ScenarioRun, []*bff.ScenarioItem, error) {
	r, err := f.run(id)
	if err != nil {
		return nil, nil, err
	}
	return r, f.items[id], nil
}

func (f *fakeScenarios) Report(_ context.Context, id string) (*scenarios.Report, error) {
	if _, err := f.run(id); err != nil {
		return nil, err
	}
	return scenarios.NewReport(f.results[id]), nil
}

func (f *fakeScenarios) Item(_ context.Context, id string, seq int) (*bff.ScenarioRun, *bff.ScenarioItem, error) {
	f.mu.Lock()
	f.seqs = append(f.seqs, seq)
	f.mu.Unlock()
	r, err := f.run(id)
	if err != nil {
		return nil, nil, err
	}
	for _, it := range f.items[id] {
		if it.Seq == seq {
			return r, it, nil
		}
	}
	return nil, nil, bff.Errorf(bff.ENOTFOUND, "There is no such item.")
}

func (f *fakeScenarios) Compare(_ context.Context, base, head string) (*scenarios.Comparison, error) {
	if _, err := f.run(base); err != nil {
		return nil, err
	}
	if _, err := f.run(head); err != nil {
		return nil, err
	}
	if base == head {
		return nil, bff.Invalid("head", "Choose two different runs to compare.")
	}
	adj, _ := f.Adjudications(context.Background())
	c := scenarios.Compare(f.results[base], f.results[head], adj)
	return &c, nil
}

func (f *fakeScenarios) Adjudicate(_ context.Context, clinician, base, head, vignette string, v scenarios.Verdict, note string) (*bff.ScenarioAdjudication, error) {
	f.mu.Lock()
	f.adjudged = append(f.adjudged, adjCall{clinician, base, head, vignette, note, v})
	f.mu.Unlock()
	if f.adjErr != nil {
		return nil, f.adjErr
	}
	for _, id := range []string{base, head} {
		if _, err := f.run(id); err != nil {
			return nil, err
		}
	}
	return &bff.ScenarioAdjudication{ID: 1, BaseRun: base, HeadRun: head,
		Adjudication: scenarios.Adjudication{VignetteID: vignette, Verdict: v, Note: note, By: clinician}}, nil
}

func (f *fakeScenarios) Adjudications(context.Context) (map[string]scenarios.Adjudication, error) {
	return map[string]scenarios.Adjudication{"chest_pain": {VignetteID: "chest_pain", Verdict: scenarios.EngineWrong, Note: "Sent home with chest pain.", By: "dr.bob"}}, nil
}

func (f *fakeScenarios) CancelRun(_ context.Context, clinician, id string) error {
	f.mu.Lock()
	f.cancelled = append(f.cancelled, clinician+" "+id)
	f.mu.Unlock()
	if f.cancelErr != nil {
		return f.cancelErr
	}
	_, err := f.run(id)
	return err
}

func (f *fakeScenarios) Progress(_ context.Context, id string) (*bff.ScenarioRunProgress, error) {
	r, err := f.run(id)
	if err != nil {
		return nil, err
	}
	p := &bff.ScenarioRunProgress{Run: r}
	for _, it := range f.items[id] {
		if it.State == bff.ItemPlaying {
			p.Playing = append(p.Playing, it)
		}
	}
	return p, nil
}

func result(id string, repeat int, gold, final scenarios.Class) scenarios.Result {
	r := scenarios.Result{VignetteID: id, Title: strings.ReplaceAll(id, "_", " "), Repeat: repeat, Gold: scenarios.Gold{Class: gold},
		Final: final, Turns: 4, Terminal: true, Provenance: scenarios.Provenance{Release: "engine-2.4"}}
	switch final {
	case scenarios.Emergency:
		r.Urgent = true
	case scenarios.Urgent:
		r.Disposition = "urgent_escalation"
	case scenarios.Routine:
		r.Disposition = "clinician_review"
	case scenarios.SelfCare:
		r.Disposition = "self_care"
	}
	return r
}

const itemHandoff = `{"encounter_id":"enc_1","captured_at":"2026-11-23T09:00:00Z","terminal":true,"urgent":true,
"intake_status":"closed","safety_status":"cannot_miss_positive","safety_notes":["Chest pain radiating to the left arm: positive"],
"disposition":"urgent_escalation","disposition_label":"Call emergency services","soap":{"subjective":"Crushing chest pain for 20 minutes.",
"objective":"","assessment":"Possible acute coronary syndrome.","plan":"Emergency services now."},"captured_facts":{"age":"58","sex":"male","pregnancy":null},
"active_protocol":"chest_pain.v2","candidate_protocols":[],"scores":[{"key":"heart_score","total":"7","band":"strong","components":"H2 E1 A2 R1 T1"}],
"conversation":[],"provenance":{"release":"engine-2.4","server_model":"m-1","prompt_hash":"ph1","source_commit":null,"directory_hash":"dh1",
"runtime_profile":null,"prompt_profile":null,"voice_profile":null,"audit_ref":"ar-77","latency_ms":12,"protocol_count":40}}`

// itemDecoded is itemHandoff as the service decodes it for Item.
func itemDecoded() *bff.Handoff {
	str := func(s string) *string { return &s }
	num := func(f float64) *float64 { return &f }
	return &bff.Handoff{IntakeID: "enc_1", CapturedAt: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), Terminal: true, Urgent: true,
		IntakeStatus: str("closed"), SafetyStatus: str("cannot_miss_positive"), SafetyNotes: []string{"Chest pain radiating to the left arm: positive"},
		Disposition: str("urgent_escalation"), DispositionLabel: str("Call emergency services"),
		SOAP:  bff.SOAP{Subjective: "Crushing chest pain for 20 minutes.", Assessment: "Possible acute coronary syndrome.", Plan: "Emergency services now."},
		Facts: bff.Facts{Age: str("58"), Sex: str("male")}, ActiveProtocol: str("chest_pain.v2"),
		Scores:     []bff.Score{{Key: "heart_score", Total: "7", Band: "strong", Components: "H2 E1 A2 R1 T1"}},
		Provenance: bff.Provenance{Release: str("engine-2.4"), ServerModel: str("m-1"), PromptHash: str("ph1"), DirectoryHash: str("dh1"), AuditRef: str("ar-77"), LatencyMS: num(12), ProtocolCount: num(40)},
	}
}

// newFakeScenarios has two runs: sr_base (done) and sr_head (active, 12 of
// 61 played), where chest_pain regressed to under-triage.
func newFakeScenarios() *fakeScenarios {
	suite := &scenarios.Suite{Name: "builtin"}
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	base := &bff.ScenarioRun{ID: "sr_base", Suite: suite, Repeats: 1, Label: "release 2.3", Target: "sandbox", StartedBy: "dr.bob",
		State: bff.RunDone, Items: 3, Played: 3, CreatedAt: now.Add(-time.Hour), FinishedAt: now.Add(-30 * time.Minute)}
	head := &bff.ScenarioRun{ID: "sr_head", Suite: suite, Repeats: 1, Label: "release 2.4 candidate", Target: "service", StartedBy: "dr.ada",
		State: bff.RunWaiting, Items: 61, Played: 12, TurnsUsed: 40, Estimate: 80, Note: "Today's turns for runs are spent.",
		NotBefore: now.Add(15 * time.Hour), CreatedAt: now}
	head2 := &bff.ScenarioRun{ID: "sr_empty", Suite: suite, Repeats: 1, Label: "", Target: "sandbox", StartedBy: "dr.ada", State: bff.RunQueued, Items: 3, CreatedAt: now}
	hr := []scenarios.Result{result("chest_pain", 1, scenarios.Emergency, scenarios.Routine), result("sore_throat", 1, scenarios.SelfCare, scenarios.SelfCare),
		result("ankle", 1, scenarios.Routine, scenarios.Urgent)}
	hr[0].Protocol, hr[0].SafetyStatus = "chest_pain.v2", "cannot_miss_positive"
	return &fakeScenarios{
		runs: []*bff.ScenarioRun{head2, head, base},
		results: map[string][]scenarios.Result{
			"sr_base": {result("chest_pain", 1, scenarios.Emergency, scenarios.Emergency), result("sore_throat", 1, scenarios.SelfCare, scenarios.SelfCare),
				result("ankle", 1, scenarios.Routine, scenarios.Urgent)},
			"sr_head": hr,
		},
		items: map[string][]*bff.ScenarioItem{
			"sr_head": {
				{RunID: "sr_head", Seq: 0, VignetteID: "chest_pain", Title: "chest pain", Repeat: 1, State: bff.ItemDone, Result: &hr[0],
					Turns: []scenarios.Exchange{
						{Message: "I have a crushing pain in my chest.", Reply: "How long has it lasted?", Choices: []string{"Minutes", "Hours"}},
						{Message: "Twenty minutes.", Reply: "Please see a clinician today.", Terminal: true, Disposition: "clinician_review", SafetyStatus: "cannot_miss_positive"},
					},
					Handoff: []byte(itemHandoff), Decoded: itemDecoded()},
				{RunID: "sr_head", Seq: 1, VignetteID: "sore_throat", Title: "sore throat", Repeat: 1, State: bff.ItemDone, Result: &hr[1]},
				{RunID: "sr_head", Seq: 2, VignetteID: "ankle", Title: "ankle", Repeat: 1, State: bff.ItemDone, Result: &hr[2]},
				{RunID: "sr_head", Seq: 3, VignetteID: "headache", Title: "headache", Repeat: 1, State: bff.ItemPlaying,
					Turns: []scenarios.Exchange{{Message: "My head hurts.", Reply: "Since when?"}}},
				{RunID: "sr_head", Seq: 4, VignetteID: "cough", Title: "cough", Repeat: 1, State: bff.ItemPlaying},
			},
		},
		estimate: bff.ScenarioRunEstimate{Intakes: 12, Turns: 80, MaxTurns: 150, Parallel: 3, PerDay: 400, LeftToday: 60, Days: 2,
			Finish: time.Date(2026, 11, 24, 3, 30, 0, 0, time.UTC)},
	}
}

// startScenarioApp serves the web layer with svc as its Scenarios (nil: none).
func startScenarioApp(t *testing.T, svc bff.ScenarioService, mutate ...func(*web.Config)) *app {
	t.Helper()
	cfg := web.Config{ListenAddr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, m := range mutate {
		m(&cfg)
	}
	key := func(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }
	d := web.Deps{Accounts: fakeAccounts{}, Patients: struct{ bff.PatientService }{}, Reviews: struct{ bff.ReviewService }{},
		Sessions: memstore.New(), CSRFKey: key(1), FlashHashKey: key(2), FlashBlockKey: key(3),
		Ready:   func(context.Context) (map[string]string, bool) { return nil, true },
		Metrics: prometheus.NewRegistry(), MetricsHandler: http.NotFoundHandler()}
	if svc != nil {
		d.Scenarios = svc
	}
	srv, err := web.New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = srv.Shutdown(ctx)
	})
	return &app{t: t, web: &appwire.App{Server: srv}}
}

// signedIn is a browser signed in as dr.ada, and its CSRF token.
func signedIn(t *testing.T, a *app) (*browser, string) {
	t.Helper()
	b := a.browser()
	if p := b.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	m := csrfMeta.FindStringSubmatch(b.get("/clinician/scenarios").body)
	if m == nil {
		t.Fatal("no csrf token on the scenarios page")
	}
	return b, m[1]
}

func (b *browser) postMultipart(path string, fields map[string]string, fileName string, file []byte) page {
	b.a.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, _ := w.CreateFormFile("upload", fileName)
	_, _ = fw.Write(file)
	_ = w.Close()
	req, _ := http.NewRequest("POST", b.a.web.URL+path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return b.do(req)
}

func wantAll(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

var scenarioPages = []string{
	"/clinician/scenarios",
	"/clinician/scenarios/new?suite=builtin&repeats=2&label=x",
	"/clinician/scenarios/runs/sr_head",
	"/clinician/scenarios/runs/sr_head/progress",
	"/clinician/scenarios/runs/sr_head/items/0",
	"/clinician/scenarios/compare?base=sr_base&head=sr_head",
	"/clinician/scenarios/runs/sr_head/report.csv",
}

func TestScenarioPagesNeedASignedInClinician(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	a := startScenarioApp(t, svc)
	b := a.browser()
	for _, path := range scenarioPages {
		if p := b.get(path); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/clinician/signin?next=") {
			t.Errorf("GET %s without sign-in: %d %s", path, p.status, p.header.Get("Location"))
		}
	}
	if p := b.get("/clinician/scenarios/runs/sr_head/report.json"); p.status != http.StatusUnauthorized {
		t.Errorf("report.json without sign-in: %d", p.status)
	}
	// With a valid anonymous CSRF token: refused for want of a sign-in.
	token := csrfMeta.FindStringSubmatch(b.get("/clinician/signin").body)[1]
	for _, path := range []string{"/clinician/scenarios/runs", "/clinician/scenarios/runs/sr_head/cancel", "/clinician/scenarios/compare/adjudicate"} {
		p := b.post(path, url.Values{"_csrf": {token}, "suite": {"builtin"}, "base": {"sr_base"}, "head": {"sr_head"},
			"vignette": {"chest_pain"}, "verdict": {"gold_wrong"}, "note": {"n"}})
		if p.status != http.StatusUnauthorized {
			t.Errorf("POST %s without sign-in: %d", path, p.status)
		}
	}
	if len(svc.started)+len(svc.cancelled)+len(svc.adjudged) != 0 {
		t.Fatalf("the service was called without a sign-in: %d %d %d", len(svc.started), len(svc.cancelled), len(svc.adjudged))
	}
}

func TestScenarioPagesRender(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	a := startScenarioApp(t, svc)
	b, _ := signedIn(t, a)
	for _, path := range scenarioPages {
		if p := b.get(path); p.status != http.StatusOK {
			t.Errorf("GET %s: %d", path, p.status)
		}
	}
	idx := b.get("/clinician/scenarios").body
	wantAll(t, "the index", idx, `href="/clinician/scenarios" aria-current="page">Scenarios</a>`, "builtin/heart_lungs", "Heart and lungs",
		`<label for="suite">Suite</label>`, `enctype="multipart/form-data"`, `<label for="upload">Suite file</label>`,
		`<label for="upload-repeats">Repeats</label>`, "release 2.4 candidate", "12 of 61", "Unlabelled run of builtin",
		`<label for="base">`, `<label for="head">`, "<caption", `scope="col"`)
	// How many vignettes play at once, as the service says for each suite.
	wantAll(t, "the index", idx, "many at the same time", `<th scope="col" class="num">At once</th>`, `<td class="num">12</td><td class="num">7</td>`)
	if strings.Contains(idx, "one after another") {
		t.Error("the index says vignettes play one after another")
	}
	// Scores only for runs that played something: the head's accuracy is 1 of 3.
	wantAll(t, "the index", idx, "33.3%")
	// The comparison form starts at the two newest runs that played something.
	wantAll(t, "the index", idx, `<option value="sr_base" selected>`, `<option value="sr_head" selected>`)

	est := b.get("/clinician/scenarios/new?suite=builtin&repeats=2&label=nightly").body
	wantAll(t, "the estimate page", est, ">12<", ">80<", ">150<", ">400<", ">60<", "24 Nov 2026 03:30 UTC", "Played at once", "3 vignettes at once",
		`method="post" action="/clinician/scenarios/runs"`, `name="repeats" value="2"`, `name="label" value="nightly"`, `name="_csrf"`)

	run := b.get("/clinician/scenarios/runs/sr_head").body
	wantAll(t, "the run page", run, "<progress", `max="61"`, `value="12"`, "12 of 61 played", "Waiting for quota",
		"Today&#39;s turns for runs are spent. It goes on at 24 Nov 2026 00:00:00 UTC.", `aria-live="polite"`,
		`data-progress-url="/clinician/scenarios/runs/sr_head/progress"`, `class="nojs-only" href="/clinician/scenarios/runs/sr_head">Refresh`,
		`/static/js/scenarios.`, `action="/clinician/scenarios/runs/sr_head/cancel"`,
		`href="/clinician/scenarios/runs/sr_head/report.json"`, `href="/clinician/scenarios/runs/sr_head/report.csv"`,
		"Under-triage", "Accuracy", "Scores by gold class", `role="img"`, "Confusion matrix",
		`href="/clinician/scenarios/runs/sr_head/items/0"`, "Playing 2 vignettes at once:", `aria-labelledby="run-playing-label"`,
		"<li>headache, repeat 1 (exchanges so far: 1)</li>", "<li>cough, repeat 1 (exchanges so far: 0)</li>", "none: no gold red flags")
	if strings.Index(run, "Under-triage") > strings.Index(run, "Accuracy") {
		t.Error("under-triage is not the first figure")
	}
	if strings.Contains(run, "style=") || regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]`).MatchString(run) {
		t.Error("the run page has an inline style or script")
	}

	frag := b.get("/clinician/scenarios/runs/sr_head/progress")
	if strings.Contains(frag.body, "<html") || !strings.Contains(frag.body, `data-ended="false"`) || !strings.Contains(frag.body, "12 of 61 played") {
		t.Errorf("progress fragment: %s", frag.body)
	}

	item := b.get("/clinician/scenarios/runs/sr_head/items/0").body
	wantAll(t, "the item page", item, "I have a crushing pain in my chest.", "How long has it lasted?", "Minutes; Hours", "Terminal",
		"Crushing chest pain for 20 minutes.", "Chest pain radiating to the left arm: positive", "chest_pain.v2", "heart_score",
		"engine-2.4", "ar-77", "Under-triage", `href="/clinician/scenarios/runs/sr_head"`)

	// A handoff that does not decode is said so; the page still renders.
	svc.items["sr_head"][1].Handoff, svc.items["sr_head"][1].Decoded = []byte("{not json"), nil
	if p := b.get("/clinician/scenarios/runs/sr_head/items/1"); p.status != http.StatusOK || !strings.Contains(p.body, "could not be read") {
		t.Errorf("an item whose handoff does not decode: %d", p.status)
	}
	// Without limits (the embedded sandbox) the estimate says so.
	svc.estimate = bff.ScenarioRunEstimate{Intakes: 3, Turns: 20, MaxTurns: 45, Unlimited: true}
	if p := b.get("/clinician/scenarios/new?suite=builtin").body; !strings.Contains(p, "Limits off: embedded sandbox") || strings.Contains(p, "Left today") {
		t.Error("an unlimited estimate does not say the limits are off")
	}
	// A key without a daily quota still has a pace: the finish is said.
	svc.estimate = bff.ScenarioRunEstimate{Intakes: 3, Turns: 20, MaxTurns: 45, NoQuota: true, Days: 1, Finish: time.Date(2026, 11, 24, 3, 30, 0, 0, time.UTC)}
	if p := b.get("/clinician/scenarios/new?suite=builtin").body; !strings.Contains(p, "No daily quota") || !strings.Contains(p, "24 Nov 2026 03:30 UTC") ||
		strings.Contains(p, "Left today") || strings.Contains(p, "Limits off") {
		t.Error("an estimate without a daily quota does not say so with its finish")
	}

	cmp := b.get("/clinician/scenarios/compare?base=sr_base&head=sr_head").body
	wantAll(t, "the comparison", cmp, "Regressions (1)", "Newly under-triaged", "chest_pain", "The gold label is wrong", "The engine is wrong",
		`value="gold_wrong"`, `value="engine_wrong"`, "Sent home with chest pain.", "dr.bob", "p = <span class=\"mono\">1</span>",
		`action="/clinician/scenarios/compare/adjudicate"`)
	if strings.Index(cmp, "Newly under-triaged") > strings.Index(cmp, "Improvements") {
		t.Error("the regression is not listed first")
	}
}

func TestScenarioRunEndedOffersNoCancelAndNoPolling(t *testing.T) {
	t.Parallel()
	a := startScenarioApp(t, newFakeScenarios())
	b, _ := signedIn(t, a)
	p := b.get("/clinician/scenarios/runs/sr_base").body
	for _, unwanted := range []string{"/cancel", "data-progress-url", "scenarios.js", ">Refresh<"} {
		if strings.Contains(p, unwanted) {
			t.Errorf("an ended run's page has %q", unwanted)
		}
	}
	if f := b.get("/clinician/scenarios/runs/sr_base/progress").body; !strings.Contains(f, `data-ended="true"`) {
		t.Error("the progress of an ended run does not say it ended")
	}
}

func TestScenariosAbsentWithoutTheService(t *testing.T) {
	t.Parallel()
	a := startScenarioApp(t, nil)
	b := a.browser()
	b.signIn("dr.ada", clinPassword)
	if p := b.get("/clinician/scenarios"); p.status != http.StatusNotFound {
		t.Errorf("scenarios without the service: %d", p.status)
	}
	if p := b.get("/clinician/scenarios/runs/sr_head"); p.status != http.StatusNotFound {
		t.Errorf("a run without the service: %d", p.status)
	}
}

func TestScenarioPostsNeedTheCSRFToken(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	a := startScenarioApp(t, svc)
	b, _ := signedIn(t, a)
	for _, tok := range []string{"", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"} {
		form := url.Values{"suite": {"builtin"}, "base": {"sr_base"}, "head": {"sr_head"}, "vignette": {"chest_pain"}, "verdict": {"gold_wrong"}, "note": {"n"}}
		if tok != "" {
			form.Set("_csrf", tok)
		}
		for _, path := range []string{"/clinician/scenarios/runs", "/clinician/scenarios/runs/sr_head/cancel", "/clinician/scenarios/compare/adjudicate"} {
			if p := b.post(path, form); p.status != http.StatusForbidden {
				t.Errorf("POST %s with token %q: %d", path, tok, p.status)
			}
		}
		if p := b.postMultipart("/clinician/scenarios/runs", map[string]string{"_csrf": tok}, "s.yaml", []byte("suite: x")); p.status != http.StatusForbidden {
			t.Errorf("upload with token %q: %d", tok, p.status)
		}
	}
	if len(svc.started)+len(svc.cancelled)+len(svc.adjudged) != 0 {
		t.Fatal("a POST without the CSRF token reached the service")
	}
}

func TestStartScenarioRun(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	a := startScenarioApp(t, svc)
	b, token := signedIn(t, a)
	p := b.post("/clinician/scenarios/runs", url.Values{"_csrf": {token}, "suite": {"builtin"}, "repeats": {"3"}, "label": {"nightly"}, "clinician": {"mallory"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/clinician/scenarios/runs/sr_new" {
		t.Fatalf("start: %d %s", p.status, p.header.Get("Location"))
	}
	want := startCall{"dr.ada", bff.ScenarioRunForm{Suite: "builtin", Repeats: 3, Label: "nightly"}}
	if len(svc.started) != 1 || svc.started[0].clinician != want.clinician || svc.started[0].form.Suite != "builtin" ||
		svc.started[0].form.Repeats != 3 || svc.started[0].form.Label != "nightly" || svc.started[0].form.Upload != nil {
		t.Fatalf("StartRun got %+v, want %+v", svc.started, want)
	}
	svc.runs = append(svc.runs, &bff.ScenarioRun{ID: "sr_new", State: bff.RunQueued, Items: 24})
	run := b.get("/clinician/scenarios/runs/sr_new").body
	wantAll(t, "the new run's page", run, "Run started: 12 intakes, about 80 turns (at most 150), up to 3 at once. 400 turns a day for runs, 60 left today; 2 days, expected to finish 24 Nov 2026 03:30 UTC.")
	if again := b.get("/clinician/scenarios/runs/sr_new").body; strings.Contains(again, "Run started") {
		t.Error("the flash was shown twice")
	}

	// Refused: the index again, 422, the message beside the field, what was typed kept.
	svc.startErr = bff.Invalid("label", "The label is at most 100 characters.")
	p = b.post("/clinician/scenarios/runs", url.Values{"_csrf": {token}, "suite": {"builtin"}, "repeats": {"2"}, "label": {"my <label>"}})
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("refused start: %d", p.status)
	}
	wantAll(t, "the refused form", p.body, `id="label-error"`, "The label is at most 100 characters.", `value="my &lt;label&gt;"`,
		`href="#label"`, `aria-invalid="true"`, `<option value="builtin" selected>`)

	// A repeats that is not a number is refused before the service.
	calls := len(svc.started)
	p = b.post("/clinician/scenarios/runs", url.Values{"_csrf": {token}, "suite": {"builtin"}, "repeats": {"many"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `id="repeats-error"`) || len(svc.started) != calls {
		t.Fatalf("repeats=many: %d, %d calls", p.status, len(svc.started)-calls)
	}
	// The estimate page refuses an unknown suite the same way.
	p = b.get("/clinician/scenarios/new?suite=nope&repeats=1&label=kept")
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `id="suite-error"`) || !strings.Contains(p.body, `value="kept"`) {
		t.Fatalf("estimate of an unknown suite: %d", p.status)
	}
}

func TestStartScenarioRunFromAnUpload(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	// Above the server's default body limit, so the handler's own cap is what refuses.
	a := startScenarioApp(t, svc, func(c *web.Config) { c.Limits.MaxBodyBytes = 4 << 20 })
	b, token := signedIn(t, a)
	suite := []byte("suite: mine\nvignettes: []\n")
	p := b.postMultipart("/clinician/scenarios/runs", map[string]string{"_csrf": token, "repeats": "2", "label": "upload"}, "dir/mine.yaml", suite)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/clinician/scenarios/runs/sr_new" {
		t.Fatalf("upload: %d %s", p.status, p.body)
	}
	got := svc.started[0]
	if got.clinician != "dr.ada" || !bytes.Equal(got.form.Upload, suite) || got.form.UploadName != "mine.yaml" || got.form.Repeats != 2 || got.form.Label != "upload" {
		t.Fatalf("StartRun got %+v", got)
	}

	big := bytes.Repeat([]byte("#"), 1<<20+1)
	p = b.postMultipart("/clinician/scenarios/runs", map[string]string{"_csrf": token, "label": "too big"}, "big.yaml", big)
	if p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, "The suite file is 1.0 MiB: at most 200 KiB is accepted.") ||
		!strings.Contains(p.body, `id="upload-error"`) || !strings.Contains(p.body, `value="too big"`) {
		t.Fatalf("a file over 200 KiB: %d", p.status)
	}
	if len(svc.started) != 1 {
		t.Fatal("a file over 200 KiB reached the service")
	}
	if idx := b.get("/clinician/scenarios").body; !strings.Contains(idx, "at most 200 KiB") {
		t.Error("the form does not say the limit")
	}

	svc.startErr = bff.Invalid("upload", "mine.yaml: vignette chest_pain: gold.class is required.")
	p = b.postMultipart("/clinician/scenarios/runs", map[string]string{"_csrf": token, "repeats": "1"}, "mine.yaml", suite)
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "gold.class is required") || !strings.Contains(p.body, `href="#upload"`) {
		t.Fatalf("a suite that does not load: %d", p.status)
	}
}

// The upload's limit is the suite file's (scenarios.MaxFileBytes, 200 KiB,
// the command line's too), said from that one constant: by the form, by
// the handler refusing a file over it under the server's body limit, and
// by the server's own 413 for a body over its limit (256 KiB by default),
// which arrives whole and leads back to Scenarios. A server body limit
// that leaves less room lowers it, and then the form says the lower one.
func TestScenarioUploadLimitIsTheSuiteFilesLimit(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	a := startScenarioApp(t, svc)
	b, token := signedIn(t, a)
	if idx := b.get("/clinician/scenarios").body; !strings.Contains(idx, "at most 200 KiB") || !strings.Contains(idx, `data-max-bytes="204800"`) ||
		!strings.Contains(idx, `data-too-large="The suite file is too large: at most 200 KiB is accepted.`) {
		t.Error("the form does not say the suite file's limit")
	}
	p := b.postMultipart("/clinician/scenarios/runs", map[string]string{"_csrf": token}, "s.yaml", bytes.Repeat([]byte("#"), 201<<10))
	if p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, "The suite file is 201 KiB: at most 200 KiB is accepted.") {
		t.Fatalf("a 201 KiB file: %d", p.status)
	}
	// Over the server's limit: its own 413, which says the same limit and
	// leads back to Scenarios. The answer arrives whole, not as a reset
	// (the listener's lingering close), however large the body.
	for _, size := range []int{300 << 10, 2 << 20} {
		p := b.postMultipart("/clinician/scenarios/runs", map[string]string{"_csrf": token}, "s.yaml", bytes.Repeat([]byte("#"), size))
		if p.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.body, "The suite file is too large: at most 200 KiB is accepted.") ||
			!strings.Contains(p.body, `href="/clinician/scenarios"`) || !strings.Contains(p.body, "Back to Scenarios") {
			t.Fatalf("a %d-byte file: %d", size, p.status)
		}
	}
	if len(svc.started) != 0 {
		t.Fatal("a file over the limit reached the service")
	}
	// A server body limit of 100 KiB leaves 96 KiB for the file.
	small := startScenarioApp(t, svc, func(c *web.Config) { c.Limits.MaxBodyBytes = 100 << 10 })
	sb, _ := signedIn(t, small)
	if idx := sb.get("/clinician/scenarios").body; !strings.Contains(idx, "at most 96 KiB") || !strings.Contains(idx, `data-max-bytes="98304"`) {
		t.Error("the form does not say the server's lower limit")
	}
}

func TestScenarioMalformedParamsAre404(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	a := startScenarioApp(t, svc)
	b, _ := signedIn(t, a)
	for _, path := range []string{
		"/clinician/scenarios/runs/sr_head/items/abc", "/clinician/scenarios/runs/sr_head/items/-1", "/clinician/scenarios/runs/sr_head/items/1e3",
		"/clinician/scenarios/runs/sr_head/items/99999999999999999999", "/clinician/scenarios/runs/sr_head/items/99",
		"/clinician/scenarios/runs/sr_nope", "/clinician/scenarios/runs/sr%22x", "/clinician/scenarios/runs/" + strings.Repeat("a", 81),
		"/clinician/scenarios/runs/sr%0d%0aX/report.json", "/clinician/scenarios/runs/sr_nope/report.csv",
		"/clinician/scenarios/compare?base=sr_base&head=sr_nope", "/clinician/scenarios/compare?base=%3Cx%3E&head=sr_head",
		"/clinician/scenarios/compare",
	} {
		if p := b.get(path); p.status != http.StatusNotFound {
			t.Errorf("GET %s: %d", path, p.status)
		}
	}
	// Malformed ids and seqs never reach the service.
	for _, id := range svc.asked {
		if id != "sr_head" && id != "sr_base" && id != "sr_nope" {
			t.Errorf("the service was asked about run %q", id)
		}
	}
	if len(svc.seqs) != 1 || svc.seqs[0] != 99 {
		t.Errorf("the service was asked about items %v, want only 99", svc.seqs)
	}
	// The same run twice: the index, with the message beside the head select.
	p := b.get("/clinician/scenarios/compare?base=sr_head&head=sr_head")
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "Choose two different runs to compare.") || !strings.Contains(p.body, `id="head-error"`) {
		t.Fatalf("the same run twice: %d", p.status)
	}
}

func TestScenarioReportDownloads(t *testing.T) {
	t.Parallel()
	a := startScenarioApp(t, newFakeScenarios())
	b, _ := signedIn(t, a)
	j := b.get("/clinician/scenarios/runs/sr_head/report.json")
	if j.status != http.StatusOK || j.header.Get("Content-Disposition") != `attachment; filename="scenario-run-sr_head-report.json"` ||
		!strings.HasPrefix(j.header.Get("Content-Type"), "application/json") {
		t.Fatalf("report.json: %d %v", j.status, j.header)
	}
	var rep scenarios.Report
	if err := json.Unmarshal([]byte(j.body), &rep); err != nil || rep.Summary.Scored != 3 || len(rep.Results) != 3 || rep.Results[0].Outcome == nil {
		t.Fatalf("report.json body: %v %+v", err, rep.Summary)
	}
	c := b.get("/clinician/scenarios/runs/sr_head/report.csv")
	if c.status != http.StatusOK || c.header.Get("Content-Disposition") != `attachment; filename="scenario-run-sr_head-report.csv"` ||
		!strings.HasPrefix(c.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("report.csv: %d %v", c.status, c.header)
	}
	lines := strings.Split(strings.TrimSpace(c.body), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "vignette_id,title,repeat,gold,final,triage") || !strings.HasPrefix(lines[1], "chest_pain,chest pain,1,emergency,routine,under") {
		t.Fatalf("report.csv body: %q", c.body)
	}
}

func TestCancelScenarioRun(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	a := startScenarioApp(t, svc)
	b, token := signedIn(t, a)
	p := b.post("/clinician/scenarios/runs/sr_head/cancel", url.Values{"_csrf": {token}, "clinician": {"mallory"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/clinician/scenarios/runs/sr_head" {
		t.Fatalf("cancel: %d %s", p.status, p.header.Get("Location"))
	}
	if len(svc.cancelled) != 1 || svc.cancelled[0] != "dr.ada sr_head" {
		t.Fatalf("CancelRun got %v", svc.cancelled)
	}
	if page := b.get("/clinician/scenarios/runs/sr_head").body; !strings.Contains(page, "Run cancelled.") {
		t.Error("no flash after cancelling")
	}
	svc.cancelErr = bff.Errorf(bff.ECONFLICT, "The run has ended.")
	if p := b.post("/clinician/scenarios/runs/sr_head/cancel", url.Values{"_csrf": {token}}); p.status != http.StatusSeeOther {
		t.Fatalf("cancel of an ended run: %d", p.status)
	}
	if page := b.get("/clinician/scenarios/runs/sr_head").body; !strings.Contains(page, "The run had already ended") {
		t.Error("no flash after cancelling an ended run")
	}
	svc.cancelErr = nil
	if p := b.post("/clinician/scenarios/runs/sr_nope/cancel", url.Values{"_csrf": {token}}); p.status != http.StatusNotFound {
		t.Fatalf("cancel of no run: %d", p.status)
	}
}

func TestAdjudicateScenario(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	a := startScenarioApp(t, svc)
	b, token := signedIn(t, a)
	form := url.Values{"_csrf": {token}, "base": {"sr_base"}, "head": {"sr_head"}, "vignette": {"chest_pain"}, "verdict": {"gold_wrong"},
		"note": {"The vignette describes reflux."}, "clinician": {"mallory"}, "by": {"mallory"}}
	p := b.post("/clinician/scenarios/compare/adjudicate", form)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/clinician/scenarios/compare?base=sr_base&head=sr_head#chg-chest_pain" {
		t.Fatalf("adjudicate: %d %s", p.status, p.header.Get("Location"))
	}
	want := adjCall{"dr.ada", "sr_base", "sr_head", "chest_pain", "The vignette describes reflux.", scenarios.GoldWrong}
	if len(svc.adjudged) != 1 || svc.adjudged[0] != want {
		t.Fatalf("Adjudicate got %+v, want %+v", svc.adjudged, want)
	}
	if page := b.get("/clinician/scenarios/compare?base=sr_base&head=sr_head").body; !strings.Contains(page, "Verdict recorded.") {
		t.Error("no flash after adjudicating")
	}

	svc.adjErr = bff.Invalid("note", "Say why, in a note.")
	form.Set("note", "  kept <text>")
	p = b.post("/clinician/scenarios/compare/adjudicate", form)
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("refused verdict: %d", p.status)
	}
	wantAll(t, "the refused verdict", p.body, `id="chg-chest_pain-note-error"`, "Say why, in a note.", "  kept &lt;text&gt;</textarea>",
		`value="gold_wrong" id="chg-chest_pain-verdict" checked`, `href="#chg-chest_pain-note"`)

	svc.adjErr = nil
	form.Set("head", "sr_nope")
	if p := b.post("/clinician/scenarios/compare/adjudicate", form); p.status != http.StatusNotFound {
		t.Fatalf("adjudicate against no run: %d", p.status)
	}
}

// A simulator-limited result is listed on its run's page after the
// under-triaged ones and before the rest, and counted apart in the scores;
// the item page says why the patient said each message, a question it did
// not understand marked.
func TestScenarioRunShowsSimulatorLimitedFirst(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	hr := svc.results["sr_head"]
	hr[2].SimulatorLimited, hr[2].Questions, hr[2].Understood = true, 4, 3
	hr[2].Readings = scenarios.Readings{scenarios.ReadingConcept: 2, scenarios.ReadingQuickReply: 1, scenarios.ReadingLowMargin: 1}
	hr[0].Questions, hr[0].Understood = 1, 1
	hr[0].Readings = scenarios.Readings{scenarios.ReadingConcept: 1}
	it := svc.items["sr_head"][0]
	it.Turns[0].Why = &scenarios.Why{Kind: scenarios.WhyOpening}
	it.Turns[1].Why = &scenarios.Why{Kind: scenarios.WhyNotUnderstood}
	a := startScenarioApp(t, svc)
	b, _ := signedIn(t, a)
	page := b.get("/clinician/scenarios/runs/sr_head").body
	limited, chest, throat := strings.Index(page, `>ankle</span>`), strings.Index(page, `>chest_pain</span>`), strings.Index(page, `>sore_throat</span>`)
	if limited < 0 || chest < 0 || throat < 0 || !(chest < limited && limited < throat) {
		t.Fatalf("not under-triaged, then simulator-limited, then the rest (chest_pain at %d, ankle at %d, sore_throat at %d)", chest, limited, throat)
	}
	// The readings by kind stand beside the coverage, on the run's page
	// (the run's sum) and on each item's.
	wantAll(t, "the run page", page, "Simulator-limited", "1 not scored: the simulated patient did not understand a question",
		"3 of 4 questions understood", "80.0% of 5 questions understood",
		"<dt>Questions by how they were read</dt><dd>3 concept, 1 quick reply, 1 low margin</dd>")
	item := b.get("/clinician/scenarios/runs/sr_head/items/0").body
	wantAll(t, "the item page", item, "Why: the vignette&#39;s opening", "msg__why--not-understood",
		"Why: not understood: the vignette&#39;s answer for unknown questions", "1 of 1 questions understood",
		"<dt>Questions by how they were read</dt><dd>1 concept</dd>")
	item = b.get("/clinician/scenarios/runs/sr_head/items/2").body
	wantAll(t, "the limited item's page", item, "3 of 4 questions understood", "<dd>2 concept, 1 quick reply, 1 low margin</dd>")
}

// Runs with repeats: the page gives the clustered test beside McNemar's
// on majorities, which is for single plays.
func TestScenarioCompareWithRepeatsGivesTheClusteredTest(t *testing.T) {
	t.Parallel()
	svc := newFakeScenarios()
	for _, id := range []string{"sr_base", "sr_head"} {
		var rs []scenarios.Result
		for repeat := 1; repeat <= 3; repeat++ {
			rs = append(rs, result("chest_pain", repeat, scenarios.Emergency, scenarios.Emergency),
				result("ankle", repeat, scenarios.Routine, scenarios.Routine))
		}
		svc.results[id] = rs
	}
	a := startScenarioApp(t, svc)
	b, _ := signedIn(t, a)
	wantAll(t, "the comparison of runs with repeats", b.get("/clinician/scenarios/compare?base=sr_base&head=sr_head").body,
		"The runs have repeats", "on 2 vignettes (correct 100.0% in the base, 100.0% in the head)")
}
