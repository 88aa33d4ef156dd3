package web

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/templates"
)

// The safety case's pages (/clinician/safety): the view types they share,
// made from the core's.

const safetyPath = "/clinician/safety"

// maxFailingShown is the most failing plays a check lists on a page or in
// the report; the run's page lists every one.
const maxFailingShown = 10

// subjectQuery is a release's query string: release and, when set, voice.
func subjectQuery(s safety.Subject) string {
	q := url.Values{"release": {s.Release}}
	if s.Voice != "" {
		q.Set("voice", s.Voice)
	}
	return q.Encode()
}

func safetyReleaseURL(s safety.Subject) string { return safetyPath + "/release?" + subjectQuery(s) }

func safetyReportURL(s safety.Subject) string { return safetyPath + "/report?" + subjectQuery(s) }

func dateTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func riskMatrixView() templates.RiskMatrix {
	var m templates.RiskMatrix
	for _, s := range safety.Severities() {
		m.Severities = append(m.Severities, s.String())
	}
	for _, l := range safety.Likelihoods() {
		row := templates.RiskMatrixRow{Likelihood: l.String()}
		for _, s := range safety.Severities() {
			row.Ratings = append(row.Ratings, int(safety.RiskOf(s, l)))
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

func riskCell(a safety.Assessment) templates.RiskCell {
	return templates.RiskCell{Severity: a.Severity.String(), Likelihood: a.Likelihood.String(), Rating: int(a.Risk()), Meaning: a.Risk().String()}
}

// hazardRow is a hazard as written (no evaluation).
func hazardRow(h safety.Hazard) templates.HazardRow {
	r := templates.HazardRow{ID: h.ID, Title: h.Title, Description: h.Description, Causes: h.Causes, Effects: h.Effects,
		Initial: riskCell(h.Initial), Residual: riskCell(h.Residual), Owner: h.Owner, Status: string(h.Status)}
	for _, c := range h.Controls {
		cr := templates.ControlRow{ID: c.ID, Title: c.Title, Description: c.Description}
		for _, e := range c.Evidence {
			cr.Checks = append(cr.Checks, templates.CheckRow{Description: e.Describe()})
		}
		r.Controls = append(r.Controls, cr)
	}
	return r
}

// evaluationView is an evaluation with links to its runs and failing items.
func evaluationView(e *safety.Evaluation) templates.EvaluationView {
	v := templates.EvaluationView{LogVersion: e.LogVersion, Hash: e.Hash, Controls: e.Controls, Met: e.Met, Unmet: e.Unmet,
		NoEvidence: e.NoEvidence, Recorded: e.Recorded}
	for _, r := range e.Runs {
		v.Runs = append(v.Runs, templates.SafetyRunRow{ID: r.ID, URL: runPath(r.ID), Label: r.Label, Suite: r.Suite,
			Finished: dateTime(r.Finished), Items: r.Items})
	}
	for _, h := range e.Hazards {
		hr := hazardRow(h.Hazard)
		hr.State, hr.StateLabel = string(h.State), h.State.Label()
		hr.Controls = nil
		for _, c := range h.Controls {
			cr := templates.ControlRow{ID: c.ID, Title: c.Title, Description: c.Description, State: string(c.State), StateLabel: c.State.Label()}
			for _, ch := range c.Checks {
				row := templates.CheckRow{Description: ch.Description, State: string(ch.State), StateLabel: ch.State.Label(), Figure: ch.Figure, Run: ch.Run}
				if ch.Run != "" {
					row.RunURL = runPath(ch.Run)
				}
				for i, f := range ch.Failing {
					if i == maxFailingShown {
						row.MoreFailing = len(ch.Failing) - i
						break
					}
					label := f.VignetteID
					if f.Variation != "" {
						label += " (" + f.Variation + ")"
					}
					label += ", play " + strconv.Itoa(f.Repeat)
					row.Failing = append(row.Failing, templates.FailingRow{Label: label, Why: f.Why, URL: itemURL(f.Run, f.Seq, resultFilter{})})
				}
				cr.Checks = append(cr.Checks, row)
			}
			hr.Controls = append(hr.Controls, cr)
		}
		v.Hazards = append(v.Hazards, hr)
	}
	return v
}

func decisionView(d *bff.SafetyDecision) templates.DecisionView {
	return templates.DecisionView{Verdict: string(d.Verdict), VerdictLabel: d.Verdict.Label(), Conditions: d.Conditions,
		Reasoning: d.Reasoning, By: d.By, At: dateTime(d.At), Hash: d.Hash, LogVersion: d.LogVersion}
}

func comparisonView(v *bff.SafetyReleaseView) *templates.SafetyComparison {
	c := v.Comparison
	if c == nil || v.Previous == nil {
		return nil
	}
	out := &templates.SafetyComparison{Previous: v.Previous.String(), BaseRun: v.BaseRun, BaseURL: runPath(v.BaseRun),
		HeadRun: v.HeadRun, HeadURL: runPath(v.HeadRun), Paired: c.Paired, Improvements: len(c.Improvements),
		CompareURL: scenariosPath + "/compare?" + url.Values{"base": {v.BaseRun}, "head": {v.HeadRun}}.Encode()}
	if c.Clustered != nil {
		out.Test = fmt.Sprintf("%s: p = %.3f", c.Clustered.Method, c.Clustered.PValue)
	} else {
		out.Test = fmt.Sprintf("McNemar's exact test: p = %.3f", c.PValue)
	}
	word := func(cl scenarios.Class) string {
		if cl == scenarios.NoClass {
			return "undecided"
		}
		return string(cl)
	}
	for _, r := range c.Regressions {
		out.Regressions = append(out.Regressions, templates.SafetyRegressionRow{VignetteID: r.VignetteID, Title: r.Title,
			Gold: word(r.Gold), Base: word(r.Base.Final), Head: word(r.Head.Final), UnderTriage: r.UnderTriage})
	}
	return out
}

// subjectOf reads a release's query (or form) values.
func subjectOf(release, voice string) safety.Subject {
	return safety.Subject{Release: release, Voice: voice}
}
