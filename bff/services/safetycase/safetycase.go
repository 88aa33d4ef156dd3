// Package safetycase is the clinical safety case service (bff.SafetyService):
// the hazard log's versions, each engine release's evidence evaluated
// against its finished scenario runs, the clinical safety officer's
// decisions with the evidence they freeze, and the report.
package safetycase

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
)

var _ bff.SafetyService = (*Service)(nil)

// Store is what the service keeps its log and decisions in.
type Store interface {
	bff.SafetyStore
	bff.AuditStore
}

// RunLister lists scenario runs newest first, at most limit (0: every
// one), without their suites: the store's ScenarioRuns.
type RunLister interface {
	ScenarioRuns(ctx context.Context, limit int) ([]*bff.ScenarioRun, error)
}

// Deps are what the service is built from.
type Deps struct {
	Store Store
	// Runs lists every run (the Scenarios page's list stops at its newest
	// 200; evidence is never cut off there).
	Runs RunLister
	// Scenarios gives a run's items and the comparison of two runs (with
	// the adjudications applied).
	Scenarios bff.ScenarioService
	Now       func() time.Time
	Logger    *slog.Logger
}

// MayDecide is the one rule of who may record a release decision: an
// enabled account with the clinical safety officer's role.
func MayDecide(c *bff.Clinician) bool {
	return c != nil && !c.Disabled && c.HasRole(bff.RoleSafetyOfficer)
}

// MaxReasoning is the most characters of a decision's reasoning or
// conditions.
const MaxReasoning = 4000

// Service implements bff.SafetyService.
type Service struct {
	d     Deps
	log   *slog.Logger
	adopt sync.Mutex // one adoption of the starter log at a time in this process
}

// New builds the service.
func New(d Deps) (*Service, error) {
	if d.Store == nil || d.Runs == nil || d.Scenarios == nil {
		return nil, errors.New("safetycase: Store, Runs and Scenarios are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	lg := d.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Service{d: d, log: lg}, nil
}

// HazardLog implements bff.SafetyService.
func (s *Service) HazardLog(ctx context.Context, version int) (*bff.HazardLogVersion, error) {
	v, err := s.d.Store.HazardLog(ctx, version)
	if version != 0 || bff.ErrorCode(err) != bff.ENOTFOUND {
		return v, err
	}
	s.adopt.Lock()
	defer s.adopt.Unlock()
	if v, err := s.d.Store.HazardLog(ctx, 0); bff.ErrorCode(err) != bff.ENOTFOUND {
		return v, err
	}
	v = &bff.HazardLogVersion{Version: 1, Log: safety.Starter(), By: "system", At: s.d.Now().UTC(),
		Note: "the starter log: the sandbox's hazards"}
	if err := s.d.Store.AddHazardLog(ctx, v); bff.ErrorCode(err) == bff.ECONFLICT {
		return s.d.Store.HazardLog(ctx, 0) // another replica adopted it first
	} else if err != nil {
		return nil, err
	}
	s.audit(ctx, "system", bff.AuditHazardLog, fmt.Sprintf("version 1: %s", v.Note))
	return v, nil
}

// HazardLogVersions implements bff.SafetyService.
func (s *Service) HazardLogVersions(ctx context.Context) ([]*bff.HazardLogVersion, error) {
	if _, err := s.HazardLog(ctx, 0); err != nil {
		return nil, err
	}
	return s.d.Store.HazardLogVersions(ctx)
}

// ExportLog implements bff.SafetyService.
func (s *Service) ExportLog(ctx context.Context, version int) ([]byte, error) {
	v, err := s.HazardLog(ctx, version)
	if err != nil {
		return nil, err
	}
	return v.Log.Marshal(v.Version)
}

// ImportLog implements bff.SafetyService.
func (s *Service) ImportLog(ctx context.Context, actor string, data []byte, note string) (*bff.HazardLogVersion, error) {
	l, err := safety.ParseLog(data)
	if err != nil {
		return nil, &bff.Error{Code: bff.EINVALID, Field: "file", Message: "The hazard log has a fault: " + err.Error() + ".", Cause: err}
	}
	note = strings.TrimSpace(note)
	if utf8.RuneCountInString(note) > MaxReasoning {
		return nil, bff.Invalid("note", "The note is at most %d characters.", MaxReasoning)
	}
	if _, err := s.HazardLog(ctx, 0); err != nil { // the starter first, so an import is never version 1 by accident
		return nil, err
	}
	return s.addVersion(ctx, actor, l, 0, cmp.Or(note, "imported"))
}

// addVersion is the one way a changed log is kept: the next version (when
// version is set, that number or ECONFLICT), under actor with note,
// audited. The starter log is adopted by HazardLog, before any.
func (s *Service) addVersion(ctx context.Context, actor string, l *safety.Log, version int, note string) (*bff.HazardLogVersion, error) {
	v := &bff.HazardLogVersion{Version: version, Log: l, By: actor, At: s.d.Now().UTC(), Note: note}
	if err := s.d.Store.AddHazardLog(ctx, v); bff.ErrorCode(err) == bff.ECONFLICT {
		return nil, bff.Errorf(bff.ECONFLICT, "The hazard log changed since this form was opened (another version was saved): nothing was saved. Read the log again, then make your change.")
	} else if err != nil {
		return nil, err
	}
	s.audit(ctx, actor, bff.AuditHazardLog, fmt.Sprintf("version %d: %s", v.Version, v.Note))
	return v, nil
}

// MayEditLog is the one rule of who may change the hazard log: an enabled
// account with the administrator's or the clinical safety officer's role.
func MayEditLog(c *bff.Clinician) bool {
	return c != nil && !c.Disabled && (c.HasRole(bff.RoleAdministrator) || c.HasRole(bff.RoleSafetyOfficer))
}

// MayEditLog implements bff.SafetyService.
func (s *Service) MayEditLog(c *bff.Clinician) bool { return MayEditLog(c) }

// SaveHazard implements bff.SafetyService.
func (s *Service) SaveHazard(ctx context.Context, c *bff.Clinician, f bff.HazardForm) (*bff.HazardLogVersion, error) {
	if !MayEditLog(c) {
		name := "?"
		if c != nil {
			name = c.Username
		}
		s.audit(ctx, name, bff.AuditAccessRefused, "POST /clinician/safety/hazards needs administrator or clinical safety officer")
		return nil, bff.Errorf(bff.EFORBIDDEN, "Only an administrator or the clinical safety officer may change the hazard log.")
	}
	h, fields := hazardOf(f)
	note := strings.TrimSpace(f.Note)
	if note == "" || utf8.RuneCountInString(note) > MaxReasoning {
		fields["note"] = fmt.Sprintf("Say why the hazard changed (kept with the version and in the audit log), at most %d characters.", MaxReasoning)
	}
	if len(fields) > 0 {
		return nil, &bff.Error{Code: bff.EINVALID, Message: "The hazard was not saved: see the fields marked.", Fields: fields}
	}
	latest, err := s.HazardLog(ctx, 0)
	if err != nil {
		return nil, err
	}
	if f.Base != latest.Version {
		return nil, bff.Errorf(bff.ECONFLICT, "The hazard log changed since this form was opened (version %d, saved by %s): nothing was saved. Read the log again, then make your change.", latest.Version, latest.By)
	}
	l, found, err := latest.Log.WithHazard(f.Was, h)
	if !found {
		return nil, bff.Errorf(bff.ENOTFOUND, "The hazard log has no hazard %s.", f.Was)
	}
	var p *safety.Problem
	if errors.As(err, &p) {
		return nil, &bff.Error{Code: bff.EINVALID, Message: "The hazard was not saved: see the fields marked.", Fields: map[string]string{problemField(p): p.Error() + "."}}
	} else if err != nil {
		return nil, err
	}
	what := h.ID
	if f.Was == "" {
		what += " added"
	} else if f.Was != h.ID {
		what = f.Was + " (now " + h.ID + ")"
	}
	return s.addVersion(ctx, c.Username, l, latest.Version+1, what+": "+note)
}

// hazardOf reads the form's texts into a hazard, and the fields whose
// words are not the log's (severities, likelihoods, the controls' YAML).
func hazardOf(f bff.HazardForm) (safety.Hazard, map[string]string) {
	fields := map[string]string{}
	h := safety.Hazard{ID: strings.TrimSpace(f.ID), Title: strings.TrimSpace(f.Title), Description: strings.TrimSpace(f.Description),
		Causes: lines(f.Causes), Effects: lines(f.Effects), Owner: strings.TrimSpace(f.Owner), Status: safety.Status(strings.TrimSpace(f.Status))}
	var err error
	for _, x := range []struct {
		field string
		text  string
		sev   *safety.Severity
		like  *safety.Likelihood
	}{
		{"initial_severity", f.InitialSeverity, &h.Initial.Severity, nil},
		{"initial_likelihood", f.InitialLikelihood, nil, &h.Initial.Likelihood},
		{"residual_severity", f.ResidualSeverity, &h.Residual.Severity, nil},
		{"residual_likelihood", f.ResidualLikelihood, nil, &h.Residual.Likelihood},
	} {
		if x.sev != nil {
			*x.sev, err = safety.ParseSeverity(x.text)
		} else {
			*x.like, err = safety.ParseLikelihood(x.text)
		}
		if err != nil {
			fields[x.field] = "Choose one: " + err.Error() + "."
		}
	}
	if h.Controls, err = safety.ParseControls(f.Controls); err != nil {
		fields["controls"] = "The controls have a fault: " + err.Error() + "."
	}
	return h, fields
}

// lines is text's non-blank lines, trimmed.
func lines(text string) []string {
	var out []string
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// problemField is the form's field a fault of the hazard belongs to.
func problemField(p *safety.Problem) string {
	switch {
	case strings.HasPrefix(p.Path, "controls"):
		return "controls"
	case p.Field == "initial" || p.Field == "residual":
		return p.Field + "_severity"
	case slices.Contains([]string{"id", "title", "description", "owner", "status", "controls"}, p.Field):
		return p.Field
	}
	return "id"
}

// runs is every subject's finished runs, newest first: all of them, not
// the Scenarios page's newest 200, so no evidence is dropped.
func (s *Service) runs(ctx context.Context) ([]*bff.ScenarioRun, error) {
	all, err := s.d.Runs.ScenarioRuns(ctx, 0)
	if err != nil {
		return nil, err
	}
	var out []*bff.ScenarioRun
	for _, r := range all {
		if r.State == bff.RunDone && r.Release != "" {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b *bff.ScenarioRun) int { return b.FinishedAt.Compare(a.FinishedAt) })
	return out, nil
}

// subjectOf is the release and voice a run played.
func subjectOf(r *bff.ScenarioRun) safety.Subject {
	s := safety.Subject{Release: r.Release}
	if r.Summary != nil {
		s.Voice = r.Summary.Provenance.VoiceProfile
	}
	return s
}

// Releases implements bff.SafetyService.
func (s *Service) Releases(ctx context.Context) ([]bff.SafetyRelease, error) {
	runs, err := s.runs(ctx)
	if err != nil {
		return nil, err
	}
	var out []bff.SafetyRelease
	at := map[safety.Subject]int{}
	for _, r := range runs {
		sub := subjectOf(r)
		i, ok := at[sub]
		if !ok {
			i = len(out)
			at[sub] = i
			out = append(out, bff.SafetyRelease{Subject: sub, LastRun: r.FinishedAt})
		}
		out[i].Runs++
	}
	for i := range out {
		ds, err := s.d.Store.SafetyDecisions(ctx, out[i].Subject)
		if err != nil {
			return nil, err
		}
		if len(ds) > 0 {
			out[i].Decision = ds[len(ds)-1]
		}
	}
	return out, nil
}

// evidence is the subject's finished runs with their items, and the
// evaluation of log v against them.
func (s *Service) evaluate(ctx context.Context, sub safety.Subject, v *bff.HazardLogVersion) (*safety.Evaluation, []*bff.ScenarioRun, error) {
	all, err := s.runs(ctx)
	if err != nil {
		return nil, nil, err
	}
	var (
		mine []*bff.ScenarioRun
		runs []safety.Run
	)
	for _, r := range all {
		if subjectOf(r) != sub {
			continue
		}
		_, items, err := s.d.Scenarios.Run(ctx, r.ID)
		if err != nil {
			return nil, nil, err
		}
		sr := safety.Run{ID: r.ID, Label: r.Label, Suite: r.SuiteLabel(), Finished: r.FinishedAt}
		for _, it := range items {
			if it.Result != nil {
				sr.Items = append(sr.Items, safety.Item{Seq: it.Seq, Result: *it.Result})
			}
		}
		mine, runs = append(mine, r), append(runs, sr)
	}
	if len(runs) == 0 {
		return nil, nil, bff.Errorf(bff.ENOTFOUND, "No finished scenario run of %s.", sub)
	}
	return safety.Evaluate(v.Log, v.Version, sub, runs), mine, nil
}

// Release implements bff.SafetyService.
func (s *Service) Release(ctx context.Context, sub safety.Subject) (*bff.SafetyReleaseView, error) {
	v, err := s.HazardLog(ctx, 0)
	if err != nil {
		return nil, err
	}
	live, mine, err := s.evaluate(ctx, sub, v)
	if err != nil {
		return nil, err
	}
	view := &bff.SafetyReleaseView{Subject: sub, Live: live}
	if view.Decisions, err = s.d.Store.SafetyDecisions(ctx, sub); err != nil {
		return nil, err
	}
	if n := len(view.Decisions); n > 0 {
		view.Decision = view.Decisions[n-1]
		view.Changed = view.Decision.Hash != live.Hash
	}
	// The previous release: the subject whose newest run finished before
	// this one's newest, compared newest run with newest run.
	rels, err := s.Releases(ctx)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(rels, func(r bff.SafetyRelease) bool { return r.Subject == sub }); i >= 0 && i+1 < len(rels) {
		prev := rels[i+1].Subject
		all, err := s.runs(ctx)
		if err != nil {
			return nil, err
		}
		if j := slices.IndexFunc(all, func(r *bff.ScenarioRun) bool { return subjectOf(r) == prev }); j >= 0 {
			view.Previous, view.BaseRun, view.HeadRun = &prev, all[j].ID, mine[0].ID
			if view.Comparison, err = s.d.Scenarios.Compare(ctx, view.BaseRun, view.HeadRun); err != nil {
				return nil, err
			}
		}
	}
	return view, nil
}

// MayDecide implements bff.SafetyService.
func (s *Service) MayDecide(c *bff.Clinician) bool { return MayDecide(c) }

// Decide implements bff.SafetyService.
func (s *Service) Decide(ctx context.Context, c *bff.Clinician, f bff.SafetyDecisionForm) (*bff.SafetyDecision, error) {
	if !s.MayDecide(c) {
		name := "?"
		if c != nil {
			name = c.Username
		}
		s.audit(ctx, name, bff.AuditSafetyRefused, f.Subject.String())
		return nil, bff.Errorf(bff.EFORBIDDEN, "Only an account with the clinical safety officer role (%s) may record a release decision.", bff.RoleSafetyOfficer)
	}
	f.Reasoning, f.Conditions = strings.TrimSpace(f.Reasoning), strings.TrimSpace(f.Conditions)
	fields := map[string]string{}
	switch {
	case !f.Verdict.Valid():
		fields["verdict"] = "Choose approve, approve with conditions or reject."
	case f.Verdict == safety.ApproveWithConditions && f.Conditions == "":
		fields["conditions"] = "An approval with conditions states the conditions."
	}
	if f.Reasoning == "" || utf8.RuneCountInString(f.Reasoning) > MaxReasoning {
		fields["reasoning"] = fmt.Sprintf("Give your reasoning, at most %d characters.", MaxReasoning)
	}
	if utf8.RuneCountInString(f.Conditions) > MaxReasoning {
		fields["conditions"] = fmt.Sprintf("The conditions are at most %d characters.", MaxReasoning)
	}
	if len(fields) > 0 {
		return nil, &bff.Error{Code: bff.EINVALID, Message: "The decision was not recorded: see the fields marked.", Fields: fields}
	}
	v, err := s.HazardLog(ctx, 0)
	if err != nil {
		return nil, err
	}
	ev, _, err := s.evaluate(ctx, f.Subject, v)
	if err != nil {
		return nil, err
	}
	if f.Hash != ev.Hash {
		return nil, bff.Errorf(bff.ECONFLICT, "The evidence changed since the page was loaded (a run finished or the log changed): read it again before deciding.")
	}
	if f.Verdict != safety.ApproveWithConditions {
		f.Conditions = ""
	}
	d := &bff.SafetyDecision{Subject: f.Subject, Verdict: f.Verdict, Conditions: f.Conditions, Reasoning: f.Reasoning,
		By: c.Username, At: s.d.Now().UTC(), LogVersion: v.Version, Hash: ev.Hash, Snapshot: ev}
	if err := s.d.Store.AddSafetyDecision(ctx, d); err != nil {
		return nil, err
	}
	s.audit(ctx, c.Username, bff.AuditSafetyDecision, fmt.Sprintf("%s: %s (%s)", f.Subject, f.Verdict, ev.Hash))
	return d, nil
}

// Report implements bff.SafetyService.
func (s *Service) Report(ctx context.Context, sub safety.Subject) (*bff.SafetyReport, error) {
	view, err := s.Release(ctx, sub)
	if err != nil {
		return nil, err
	}
	r := &bff.SafetyReport{Subject: sub, Generated: s.d.Now().UTC()}
	if view.Decision != nil {
		r.Decision, r.Evaluation = view.Decision, view.Decision.Snapshot
	} else {
		r.Draft, r.Evaluation = true, view.Live
	}
	if r.Log, err = s.HazardLog(ctx, r.Evaluation.LogVersion); err != nil {
		return nil, err
	}
	return r, nil
}

// audit records an action; a failure is logged, never shown (the action
// itself is done).
func (s *Service) audit(ctx context.Context, actor, action, detail string) {
	if err := s.d.Store.AddAudit(ctx, &bff.AuditEntry{At: s.d.Now().UTC(), Actor: actor, Action: action, Detail: detail}); err != nil {
		s.log.Error("audit a safety case action", "action", action, "err", err)
	}
}
