package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/templates"
)

// showScenarioItem is one item: outcome, transcript, handoff.
func (s *Server) showScenarioItem(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	seq, err := seqParam(c)
	if err != nil {
		return err
	}
	show, err := showParam(c)
	if err != nil {
		return err
	}
	run, it, err := s.deps.Scenarios.Item(c.UserContext(), id, seq)
	if err != nil {
		return err
	}
	p := templates.ScenarioItemPage{Layout: s.clinicianLayout(c, "Scenario item "+it.VignetteID),
		RunURL: runPath(run.ID), RunLabel: runLabel(run), Seq: it.Seq, VignetteID: it.VignetteID, Title: it.Title,
		Repeat: it.Repeat, State: string(it.State)}
	if it.Variation != "" {
		p.Variation = variations.Label(it.Variation)
	}
	if res := it.Result; res != nil {
		o := scenarios.Assess(*res)
		p.Outcome = &templates.ScenarioOutcome{Gold: res.Gold.Class.Label(), Final: res.Final.Label(), Triage: string(o.Triage),
			Correct: o.Correct(), Under: o.Triage == scenarios.TriageUnder, Disposition: res.Disposition, Urgent: res.Urgent,
			SafetyStatus: res.SafetyStatus, Protocol: res.Protocol, GoldProtocol: res.Gold.Protocol,
			RedFlagsHit: o.RedFlagsHit, RedFlagsMissed: o.RedFlagsMissed, FalseAlarms: o.FalseAlarms,
			SimulatorLimited: o.SimulatorLimited, Coverage: coverageText(*res), Readings: res.Readings.String(),
			Basis: res.Basis.String(), Provisional: res.Provisional}
		p.Error = res.Error
		if p.Nav, err = s.itemNav(c, run.ID, seq, show); err != nil {
			return err
		}
	}
	p.Turns = scenarioExchanges(it.Turns)
	if it.Decoded != nil {
		p.Handoff = handoffSubset(it.Decoded)
	} else if len(it.Handoff) > 0 {
		p.HandoffError = "The handoff the service sent could not be read."
	}
	return render(c, http.StatusOK, templates.ScenarioItemPageView(p))
}

// itemNav places item seq among the results its run's page lists with
// filter show, for the previous and next links.
func (s *Server) itemNav(c *fiber.Ctx, runID string, seq int, show resultFilter) (*templates.ScenarioItemNav, error) {
	_, items, err := s.deps.Scenarios.Run(c.UserContext(), runID)
	if err != nil {
		return nil, err
	}
	listed := show.keep(listResults(items, scenarios.Flips(bff.ScenarioResults(items))))
	n := &templates.ScenarioItemNav{Filter: show.label, Total: len(listed), ListURL: runPath(runID) + show.query() + "#results-heading"}
	for i, x := range listed {
		if x.seq != seq {
			continue
		}
		n.Position = i + 1
		if i > 0 {
			n.PrevURL = itemURL(runID, listed[i-1].seq, show)
		}
		if i+1 < len(listed) {
			n.NextURL = itemURL(runID, listed[i+1].seq, show)
		}
	}
	return n, nil
}

// scenarioExchanges are an item's exchanges as its transcript shows them.
func scenarioExchanges(turns []scenarios.Exchange) []templates.ScenarioExchange {
	out := make([]templates.ScenarioExchange, len(turns))
	for i, x := range turns {
		out[i] = templates.ScenarioExchange{N: i + 1, Message: x.Message, Reply: x.Reply, Choices: x.Choices,
			Urgent: x.Urgent, Terminal: x.Terminal, Replayed: x.Replayed, Disposition: x.Disposition, SafetyStatus: x.SafetyStatus}
		if x.Why != nil {
			out[i].Why, out[i].NotUnderstood = x.Why.String(), !x.Why.Understood()
		}
	}
	return out
}

// handoffSubset is the read-only part of a handoff an item page shows.
func handoffSubset(h *bff.Handoff) *templates.ScenarioHandoff {
	v := &templates.ScenarioHandoff{SafetyStatus: val(h.SafetyStatus), Disposition: val(h.Disposition), DispositionLabel: val(h.DispositionLabel),
		SOAP:           templates.SOAPView{Subjective: h.SOAP.Subjective, Objective: h.SOAP.Objective, Assessment: h.SOAP.Assessment, Plan: h.SOAP.Plan},
		SafetyNotes:    h.SafetyNotes,
		Facts:          capturedFacts(h.Facts),
		ActiveProtocol: val(h.ActiveProtocol), Provenance: provenanceFacts(h.Provenance)}
	for _, sc := range h.Scores {
		v.Scores = append(v.Scores, templates.ScoreView{Key: sc.Key, Total: sc.Total, Band: sc.Band, Components: sc.Components})
	}
	return v
}
