package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/templates"
)

// compareIDs are the base and head of a comparison, or a 404.
func compareIDs(base, head string) (string, string, error) {
	if !validRunID(base) || !validRunID(head) {
		return "", "", fiber.ErrNotFound
	}
	return base, head, nil
}

// showScenarioCompare compares two runs; the same run twice comes back on
// the index with the message beside the head select.
func (s *Server) showScenarioCompare(c *fiber.Ctx) error {
	base, head, err := compareIDs(utils.CopyString(c.Query("base")), utils.CopyString(c.Query("head")))
	if err != nil {
		return err
	}
	p, err := s.comparePage(c, base, head)
	if field, msg, ok := invalidField(err); ok {
		ip, err := s.scenariosPage(c, startInput{}, base, head)
		if err != nil {
			return err
		}
		if field != "base" {
			field = "head"
		}
		ip.Errors = templates.FieldErrors{field: msg}
		return render(c, http.StatusUnprocessableEntity, templates.ScenariosPageView(ip))
	} else if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.ScenarioComparePageView(p))
}

// changeKey is a change's element id: the vignette id (suites allow
// [a-z0-9_-]) with anything else dropped.
func changeKey(vignette string) string {
	var b strings.Builder
	b.WriteString("chg-")
	for _, r := range vignette {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (s *Server) comparePage(c *fiber.Ctx, base, head string) (templates.ScenarioComparePage, error) {
	ctx := c.UserContext()
	svc := s.deps.Scenarios
	var p templates.ScenarioComparePage
	cmp, err := svc.Compare(ctx, base, head)
	if err != nil {
		return p, err
	}
	side := func(id string) (templates.ScenarioRunOption, error) {
		pr, err := svc.Progress(ctx, id)
		if err != nil {
			return templates.ScenarioRunOption{}, err
		}
		return templates.ScenarioRunOption{ID: id, Label: runLabel(pr.Run), URL: runPath(id)}, nil
	}
	p = templates.ScenarioComparePage{Layout: s.clinicianLayout(c, "Compare scenario runs"),
		AdjudicateAction: scenariosPath + "/compare/adjudicate", BackURL: scenariosPath,
		Paired: cmp.Paired, BothCorrect: cmp.BothCorrect, BaseOnlyCorrect: cmp.BaseOnlyCorrect, HeadOnlyCorrect: cmp.HeadOnlyCorrect,
		BothWrong: cmp.BothWrong, PValue: strconv.FormatFloat(cmp.PValue, 'g', 3, 64),
		OnlyInBase: cmp.OnlyInBase, OnlyInHead: cmp.OnlyInHead}
	if t := cmp.Clustered; t != nil {
		p.Clustered = &templates.ScenarioClusteredTest{Method: t.Method, Clusters: t.Clusters,
			BaseCorrect: percent(t.BaseCorrect), HeadCorrect: percent(t.HeadCorrect), PValue: strconv.FormatFloat(t.PValue, 'g', 3, 64)}
	}
	if p.Base, err = side(base); err != nil {
		return p, err
	}
	if p.Head, err = side(head); err != nil {
		return p, err
	}
	p.BaseScope, p.HeadScope = scopeView(base, cmp.BaseScope), scopeView(head, cmp.HeadScope)
	for _, ch := range cmp.GoldChanges {
		p.GoldChanges = append(p.GoldChanges, changeView(ch))
	}
	for _, ch := range cmp.Regressions {
		p.Regressions = append(p.Regressions, changeView(ch))
	}
	for _, ch := range cmp.SetAside {
		p.SetAside = append(p.SetAside, changeView(ch))
	}
	for _, ch := range cmp.Improvements {
		p.Improvements = append(p.Improvements, changeView(ch))
	}
	for _, ch := range cmp.Changes {
		if ch.Changed && !ch.Regression && !ch.Improvement && !ch.SetAside {
			p.Others = append(p.Others, changeView(ch))
		}
	}
	return p, nil
}

func changeView(ch scenarios.Change) templates.ScenarioChange {
	scored := func(sd scenarios.Side) string { return fmt.Sprintf("%d of %d scored", sd.Scored, sd.Repeats) }
	v := templates.ScenarioChange{Key: changeKey(ch.VignetteID), VignetteID: ch.VignetteID, Title: ch.Title, Gold: ch.Gold.Label(),
		BaseFinal: ch.Base.Final.Label(), HeadFinal: ch.Head.Final.Label(), BaseCorrect: ch.Base.Correct, HeadCorrect: ch.Head.Correct,
		BaseScored: scored(ch.Base), HeadScored: scored(ch.Head), UnderTriage: ch.UnderTriage,
		GoldChanged: ch.GoldChanged, BaseGold: ch.BaseGold.Label(), EngineChanged: ch.Changed}
	if a := ch.Adjudication; a != nil {
		v.Adjudication = &templates.ScenarioAdjudication{Verdict: verdictLabel(a.Verdict), Note: a.Note, By: a.By}
		if !a.At.IsZero() {
			v.Adjudication.At = clock(a.At)
		}
	}
	return v
}

// scopeView is what the comparison took of run id, with its flips.
func scopeView(id string, sc scenarios.Scope) templates.ScenarioCompareScope {
	v := templates.ScenarioCompareScope{Plays: sc.Plays, Scored: sc.Scored, NotScored: sc.NotScored(), Varied: sc.Varied,
		Flips: flipsView(id, sc.Flips), FlipsDown: sc.FlippedDown()}
	labels := make([]string, len(sc.Variations))
	for i, n := range sc.Variations {
		labels[i] = variations.Label(n)
	}
	v.Variations = strings.Join(labels, ", ")
	if sc.Flips != nil {
		v.FlipsUp = len(sc.Flips.Flips) - v.FlipsDown
	}
	return v
}

func verdictLabel(v scenarios.Verdict) string {
	switch v {
	case scenarios.GoldWrong:
		return "The gold label is wrong"
	case scenarios.EngineWrong:
		return "The engine is wrong"
	}
	return string(v)
}
