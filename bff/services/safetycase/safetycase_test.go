package safetycase_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/safety"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/services/safetycase"
)

// runs is a ScenarioService of finished runs held in memory: what the
// safety case reads of scenario runs.
type runs struct {
	bff.ScenarioService
	list  []*bff.ScenarioRun
	items map[string][]*bff.ScenarioItem
}

// Runs is the Scenarios page's list: the newest 200, as the real service's.
func (r *runs) Runs(ctx context.Context) ([]*bff.ScenarioRun, error) { return r.ScenarioRuns(ctx, 200) }

// ScenarioRuns is the store's list: at most limit, 0 every one.
func (r *runs) ScenarioRuns(_ context.Context, limit int) ([]*bff.ScenarioRun, error) {
	if limit > 0 && len(r.list) > limit {
		return r.list[:limit], nil
	}
	return r.list, nil
}

func (r *runs) Run(_ context.Context, id string) (*bff.ScenarioRun, []*bff.ScenarioItem, error) {
	for _, x := range r.list {
		if x.ID == id {
			return x, r.items[id], nil
		}
	}
	return nil, nil, bff.Errorf(bff.ENOTFOUND, "no run")
}

func (r *runs) Compare(_ context.Context, base, head string) (*scenarios.Comparison, error) {
	c := scenarios.Compare(bff.ScenarioResults(r.items[base]), bff.ScenarioResults(r.items[head]), nil)
	return &c, nil
}

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

const (
	release = "sandbox-2026.08"
	plain   = "plain-short-en/1"
	chatty  = "conversational-en/1"
)

// add finishes a run of voice at finished: emergencies vignettes, the
// first misses of them under-triaged.
func (r *runs) add(id, voice string, finished time.Time, emergencies, misses int) {
	var items []*bff.ScenarioItem
	var results []scenarios.Result
	for i := range emergencies {
		res := scenarios.Result{VignetteID: "e" + string(rune('a'+i)), Title: "emergency", Repeat: 1, Terminal: true,
			Gold: scenarios.Gold{Class: scenarios.Emergency}, Final: scenarios.Emergency,
			Provenance: scenarios.Provenance{Release: release, VoiceProfile: voice}}
		if i < misses {
			res.Final = scenarios.Routine
		}
		results = append(results, res)
		items = append(items, &bff.ScenarioItem{RunID: id, Seq: i, VignetteID: res.VignetteID, State: bff.ItemDone, Result: &res})
	}
	sum := scenarios.Score(results)
	r.list = append([]*bff.ScenarioRun{{ID: id, SuiteName: "builtin", State: bff.RunDone, Release: release, Summary: &sum,
		FinishedAt: finished}}, r.list...)
	if r.items == nil {
		r.items = map[string][]*bff.ScenarioItem{}
	}
	r.items[id] = items
}

type fixture struct {
	svc  *safetycase.Service
	db   *sqlite.DB
	runs *runs
	now  time.Time
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{db: sqlitetest.MustOpenDB(t), runs: &runs{}, now: t0}
	svc, err := safetycase.New(safetycase.Deps{Store: f.db, Runs: f.runs, Scenarios: f.runs, Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

var (
	officer  = &bff.Clinician{Username: "dr.cso", Roles: []bff.Role{bff.RoleSafetyOfficer}}
	reviewer = &bff.Clinician{Username: "dr.rev", Roles: []bff.Role{bff.RoleReviewer, bff.RoleScenarioRunner, bff.RoleAdministrator}}
)

func audited(t *testing.T, db *sqlite.DB, action string) []*bff.AuditEntry {
	t.Helper()
	all, err := db.Audit(t.Context(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []*bff.AuditEntry
	for _, e := range all {
		if e.Action == action {
			out = append(out, e)
		}
	}
	return out
}

func TestTheStarterLogIsAdoptedOnceAndImportsAreVersioned(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	v, err := f.svc.HazardLog(ctx, 0)
	if err != nil || v.Version != 1 || v.By != "system" || len(v.Log.Hazards) != 6 {
		t.Fatalf("first read: %+v, %v", v, err)
	}
	if again, _ := f.svc.HazardLog(ctx, 0); again.Version != 1 {
		t.Fatalf("adopted twice: version %d", again.Version)
	}
	file, err := f.svc.ExportLog(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(file), "min: 0.95", "min: 95", 1)
	_, err = f.svc.ImportLog(ctx, "dr.cso", []byte(bad), "")
	if bff.ErrorCode(err) != bff.EINVALID || !strings.Contains(bff.ErrorMessage(err), "line ") ||
		!strings.Contains(bff.ErrorMessage(err), "evidence[0].min") {
		t.Fatalf("a bad threshold: %v (%s)", err, bff.ErrorMessage(err))
	}
	if latest, _ := f.svc.HazardLog(ctx, 0); latest.Version != 1 {
		t.Fatal("a faulty file was stored")
	}
	edited := strings.Replace(string(file), "likelihood: very low\n", "likelihood: low\n", 1) // H1's residual
	v2, err := f.svc.ImportLog(ctx, "cli:ada", []byte(edited), "H1's residual likelihood raised")
	if err != nil || v2.Version != 2 || v2.Log.Hazards[0].Residual.Likelihood != safety.Low {
		t.Fatalf("import: %+v, %v", v2, err)
	}
	if a := audited(t, f.db, bff.AuditHazardLog); len(a) != 2 || a[0].Actor != "cli:ada" || !strings.Contains(a[0].Detail, "version 2") {
		t.Fatalf("log changes audited: %+v", a)
	}
}

func TestOnlyTheSafetyOfficerDecides(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.runs.add("sr_1", chatty, t0, 20, 3)
	sub := safety.Subject{Release: release, Voice: chatty}
	view, err := f.svc.Release(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	form := bff.SafetyDecisionForm{Subject: sub, Verdict: safety.Reject, Reasoning: "C1.1 not met", Hash: view.Live.Hash}
	// Every other role, no account, the officer's account disabled, and
	// the officer's username without the role: refused.
	for _, c := range []*bff.Clinician{reviewer, nil, {Username: "dr.cso", Disabled: true, Roles: officer.Roles}, {Username: "dr.cso"}} {
		if f.svc.MayDecide(c) {
			t.Errorf("%+v may decide", c)
		}
		_, err = f.svc.Decide(ctx, c, form)
		if bff.ErrorCode(err) != bff.EFORBIDDEN {
			t.Fatalf("%+v decided: %v", c, err)
		}
	}
	if ds, _ := f.db.SafetyDecisions(ctx, sub); len(ds) != 0 {
		t.Fatal("a refused decision was stored")
	}
	if !f.svc.MayDecide(officer) {
		t.Error("the officer may not decide")
	}
	if a := audited(t, f.db, bff.AuditSafetyRefused); len(a) != 4 || a[3].Actor != "dr.rev" {
		t.Fatalf("refusals audited: %+v", a)
	}
	d, err := f.svc.Decide(ctx, officer, form)
	if err != nil || d.By != "dr.cso" || d.Verdict != safety.Reject {
		t.Fatalf("the officer's decision: %+v, %v", d, err)
	}
	if a := audited(t, f.db, bff.AuditSafetyDecision); len(a) != 1 || !strings.Contains(a[0].Detail, view.Live.Hash) {
		t.Fatalf("decision audited: %+v", a)
	}
}

func TestDecisionFormErrorsNameTheField(t *testing.T) {
	f := newFixture(t)
	f.runs.add("sr_1", chatty, t0, 5, 0)
	sub := safety.Subject{Release: release, Voice: chatty}
	view, _ := f.svc.Release(t.Context(), sub)
	for _, tc := range []struct {
		form  bff.SafetyDecisionForm
		field string
	}{
		{bff.SafetyDecisionForm{Subject: sub, Verdict: "maybe", Reasoning: "r", Hash: view.Live.Hash}, "verdict"},
		{bff.SafetyDecisionForm{Subject: sub, Verdict: safety.Approve, Reasoning: "  ", Hash: view.Live.Hash}, "reasoning"},
		{bff.SafetyDecisionForm{Subject: sub, Verdict: safety.ApproveWithConditions, Reasoning: "r", Hash: view.Live.Hash}, "conditions"},
	} {
		_, err := f.svc.Decide(t.Context(), officer, tc.form)
		var e *bff.Error
		if bff.ErrorCode(err) != bff.EINVALID || !errorsAs(err, &e) || e.Fields[tc.field] == "" {
			t.Errorf("%+v: %v, want a message on %s", tc.form, err, tc.field)
		}
	}
}

func errorsAs(err error, e **bff.Error) bool {
	x, ok := err.(*bff.Error)
	*e = x
	return ok
}

// A decision freezes the evidence it was made on: a run that finishes
// later changes the live evaluation, never the signed snapshot or the
// report made from it.
func TestALaterRunCannotChangeASignedSnapshot(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	sub := safety.Subject{Release: release, Voice: plain}
	f.runs.add("sr_good", plain, t0, 20, 0)
	before, err := f.svc.Release(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if before.Live.Unmet != 0 {
		t.Fatalf("the first run should meet every emergency control: %d unmet", before.Live.Unmet)
	}
	f.now = t0.Add(time.Hour)
	d, err := f.svc.Decide(ctx, officer, bff.SafetyDecisionForm{Subject: sub, Verdict: safety.Approve, Reasoning: "all met", Hash: before.Live.Hash})
	if err != nil {
		t.Fatal(err)
	}
	// A later run of the same release and voice, much worse.
	f.runs.add("sr_bad", plain, t0.Add(2*time.Hour), 20, 10)
	after, err := f.svc.Release(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if after.Live.Hash == before.Live.Hash || after.Live.Unmet == 0 {
		t.Fatal("the later run did not change the live evidence: the test proves nothing")
	}
	if !after.Changed {
		t.Error("the view does not say the evidence changed since the decision")
	}
	signed := after.Decision
	if signed == nil || signed.ID != d.ID || signed.Hash != before.Live.Hash || signed.Snapshot.Hash != before.Live.Hash ||
		signed.Snapshot.Unmet != 0 || len(signed.Snapshot.Runs) != 1 || signed.Snapshot.Runs[0].ID != "sr_good" {
		t.Fatalf("the signed snapshot changed: %+v", signed)
	}
	rep, err := f.svc.Report(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Draft || rep.Evaluation.Hash != before.Live.Hash || rep.Evaluation.Unmet != 0 {
		t.Fatalf("the report does not rest on the signed snapshot: hash %s, %d unmet", rep.Evaluation.Hash, rep.Evaluation.Unmet)
	}
	// Deciding on what the page showed before the run is refused.
	_, err = f.svc.Decide(ctx, officer, bff.SafetyDecisionForm{Subject: sub, Verdict: safety.Approve, Reasoning: "r", Hash: before.Live.Hash})
	if bff.ErrorCode(err) != bff.ECONFLICT {
		t.Fatalf("a decision on stale evidence: %v", err)
	}
}

func TestReleasesAndTheComparisonWithThePreviousOne(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.runs.add("sr_plain", plain, t0, 10, 0)
	f.runs.add("sr_chatty", chatty, t0.Add(time.Hour), 10, 2)
	rels, err := f.svc.Releases(ctx)
	if err != nil || len(rels) != 2 || rels[0].Subject.Voice != chatty || rels[1].Subject.Voice != plain {
		t.Fatalf("releases: %+v, %v", rels, err)
	}
	view, err := f.svc.Release(ctx, rels[0].Subject)
	if err != nil {
		t.Fatal(err)
	}
	if view.Previous == nil || view.Previous.Voice != plain || view.BaseRun != "sr_plain" || view.HeadRun != "sr_chatty" ||
		len(view.Comparison.Regressions) != 2 || !view.Comparison.Regressions[0].UnderTriage {
		t.Fatalf("comparison: %+v", view)
	}
	_, err = f.svc.Release(ctx, safety.Subject{Release: "other"})
	if bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Fatalf("a release with no run: %v", err)
	}
}

// A release's evidence is every one of its runs, not the Scenarios page's
// newest 200: a release with 201 runs counts them all, and a control only
// its oldest run evidences is still evaluated on it.
func TestEveryRunIsEvidencePastThePagesList(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.runs.add("sr_oldest", chatty, t0, 20, 3) // the only run with emergency under-triage
	for i := range 200 {
		f.runs.add(fmt.Sprintf("sr_%03d", i), plain, t0.Add(time.Duration(i+1)*time.Minute), 1, 0)
	}
	rels, err := f.svc.Releases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != 2 || rels[1].Subject.Voice != chatty || rels[1].Runs != 1 || rels[0].Runs != 200 {
		t.Fatalf("releases: %+v", rels)
	}
	view, err := f.svc.Release(ctx, safety.Subject{Release: release, Voice: chatty})
	if err != nil || len(view.Live.Runs) != 1 || view.Live.Unmet == 0 {
		t.Fatalf("the oldest run's release: %+v, %v", view, err)
	}
}

// hazardForm is H1 of the starter log as its form shows it, with why.
func hazardForm(t *testing.T, f *fixture) bff.HazardForm {
	t.Helper()
	v, err := f.svc.HazardLog(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	h := v.Log.Hazards[0]
	controls, err := safety.MarshalControls(h.Controls)
	if err != nil {
		t.Fatal(err)
	}
	return bff.HazardForm{Was: h.ID, Base: v.Version, ID: h.ID, Title: h.Title, Description: h.Description,
		Causes: strings.Join(h.Causes, "\n"), Effects: strings.Join(h.Effects, "\n"),
		InitialSeverity: h.Initial.Severity.String(), InitialLikelihood: h.Initial.Likelihood.String(),
		ResidualSeverity: h.Residual.Severity.String(), ResidualLikelihood: h.Residual.Likelihood.String(),
		Controls: controls, Owner: h.Owner, Status: string(h.Status), Note: "why"}
}

// A hazard saved from its form is the log's next version, under who saved
// it and why, audited as an import is; a new hazard is added after the
// others; only an administrator or the officer may; a form read from an
// older version is refused.
func TestSavingAHazardIsANewVersion(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	admin := &bff.Clinician{Username: "dr.admin", Roles: []bff.Role{bff.RoleAdministrator}}
	form := hazardForm(t, f)
	form.Title, form.ResidualLikelihood, form.Note = "An emergency is not escalated at once", "low", "the conversational voice's finding"
	form.Causes += "\nthe patient's words match only one voice's question"

	rev := &bff.Clinician{Username: "dr.rev", Roles: []bff.Role{bff.RoleReviewer, bff.RoleScenarioRunner}}
	for _, c := range []*bff.Clinician{rev, nil, {Username: "dr.x", Disabled: true, Roles: officer.Roles}} {
		if f.svc.MayEditLog(c) {
			t.Errorf("%+v may edit the log", c)
		}
		if _, err := f.svc.SaveHazard(ctx, c, form); bff.ErrorCode(err) != bff.EFORBIDDEN {
			t.Fatalf("%+v saved a hazard: %v", c, err)
		}
	}
	if a := audited(t, f.db, bff.AuditAccessRefused); len(a) != 3 {
		t.Fatalf("refusals audited: %+v", a)
	}
	v2, err := f.svc.SaveHazard(ctx, officer, form)
	if err != nil || v2.Version != 2 || v2.By != "dr.cso" || v2.Note != "H1: the conversational voice's finding" {
		t.Fatalf("the officer's save: %+v, %v", v2, err)
	}
	h := v2.Log.Hazards[0]
	if h.Title != form.Title || h.Residual.Likelihood != safety.Low || len(h.Causes) != 4 || len(h.Controls) != 3 || len(v2.Log.Hazards) != 6 {
		t.Fatalf("the saved hazard: %+v", h)
	}
	if a := audited(t, f.db, bff.AuditHazardLog); len(a) != 2 || a[0].Actor != "dr.cso" || a[0].Detail != "version 2: H1: the conversational voice's finding" {
		t.Fatalf("the save audited: %+v", a)
	}

	// The same form again, read from version 1: refused, nothing saved.
	if _, err := f.svc.SaveHazard(ctx, officer, form); bff.ErrorCode(err) != bff.ECONFLICT {
		t.Fatalf("a form of an older version: %v", err)
	}
	// A new hazard, by an administrator.
	add := bff.HazardForm{Base: 2, ID: "H7", Title: "A voice the patient cannot follow", Causes: "a question worded unlike any fact",
		InitialSeverity: "major", InitialLikelihood: "medium", ResidualSeverity: "major", ResidualLikelihood: "low",
		Owner: "clinical safety officer", Status: "open", Note: "seen in the two voices' runs"}
	v3, err := f.svc.SaveHazard(ctx, admin, add)
	if err != nil || v3.Version != 3 || len(v3.Log.Hazards) != 7 || v3.Log.Hazards[6].ID != "H7" || v3.Log.Hazards[6].Controls != nil {
		t.Fatalf("a new hazard: %+v, %v", v3, err)
	}
	if latest, _ := f.svc.HazardLog(ctx, 0); latest.Version != 3 {
		t.Fatalf("latest: version %d", latest.Version)
	}
}

// A form with faults names each field and its rule, and saves nothing.
func TestHazardFormErrorsNameTheField(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	for _, tc := range []struct {
		change func(*bff.HazardForm)
		field  string
		says   string
	}{
		{func(h *bff.HazardForm) { h.InitialSeverity = "dreadful" }, "initial_severity", "not a severity"},
		{func(h *bff.HazardForm) { h.ResidualLikelihood = "" }, "residual_likelihood", "not a likelihood"},
		{func(h *bff.HazardForm) { h.Note = " " }, "note", "Say why"},
		{func(h *bff.HazardForm) { h.ID = "H 1" }, "id", "letters, digits"},
		{func(h *bff.HazardForm) { h.ID = "H2" }, "id", "H2 is the id of another hazard"},
		{func(h *bff.HazardForm) { h.Title = "" }, "title", "a title of at most 200 characters"},
		{func(h *bff.HazardForm) { h.Status = "done" }, "status", "open, closed or transferred"},
		{func(h *bff.HazardForm) { h.Owner = "" }, "owner", "who owns the hazard"},
		{func(h *bff.HazardForm) { h.Controls = strings.Replace(h.Controls, "min: 0.95", "min: 95", 1) }, "controls", "controls[0].evidence[0].min: accuracy needs min"},
		{func(h *bff.HazardForm) { h.Controls = "- id: C9\n  title: x\n  evidnce: []\n" }, "controls", "line 3: field evidnce not found"},
		{func(h *bff.HazardForm) { h.Controls = "id: C9" }, "controls", "a list of controls"},
		{func(h *bff.HazardForm) { h.Controls = "- id: C2.1\n  title: a control of H2's id\n" }, "controls", "C2.1 is the id of another control"},
	} {
		form := hazardForm(t, f)
		tc.change(&form)
		_, err := f.svc.SaveHazard(ctx, officer, form)
		var e *bff.Error
		if bff.ErrorCode(err) != bff.EINVALID || !errorsAs(err, &e) || !strings.Contains(e.Fields[tc.field], tc.says) {
			t.Errorf("%s: %v %+v, want on %s %q", tc.field, err, e, tc.field, tc.says)
		}
	}
	if latest, _ := f.svc.HazardLog(ctx, 0); latest.Version != 1 {
		t.Fatalf("a faulty form saved version %d", latest.Version)
	}
	form := hazardForm(t, f)
	form.Was = "H99"
	if _, err := f.svc.SaveHazard(ctx, officer, form); bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Fatalf("a hazard that is not there: %v", err)
	}
}
