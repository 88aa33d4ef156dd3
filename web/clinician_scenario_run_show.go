package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/templates"
)

// progressView is a run's progress region; playing are the items in
// flight.
func progressView(r *bff.ScenarioRun, playing []*bff.ScenarioItem) templates.ScenarioProgress {
	p := templates.ScenarioProgress{RunURL: runPath(r.ID), State: string(r.State), Ended: r.State.Ended(),
		Played: r.Played, Items: r.Items, ProgressValues: r.Items > 0,
		PlayedText: fmt.Sprintf("%d of %d played", r.Played, r.Items),
		TurnsText:  fmt.Sprintf("Turns used: %d (estimate: %d)", r.TurnsUsed, r.Estimate),
		Note:       r.Note, Release: r.Release}
	p.StateLabel = map[bff.ScenarioRunState]string{bff.RunQueued: "Queued", bff.RunActive: "Playing",
		bff.RunWaiting: "Waiting for quota", bff.RunDone: "Done", bff.RunCancelled: "Cancelled"}[r.State]
	if p.StateLabel == "" {
		p.StateLabel = string(r.State)
	}
	if !p.Ended {
		p.PollURL = runPath(r.ID) + "/progress"
	}
	if r.State == bff.RunWaiting && !r.NotBefore.IsZero() {
		p.Note = strings.TrimSpace(p.Note + " It goes on at " + clock(r.NotBefore) + ".")
	}
	if len(playing) > 0 && !p.Ended {
		p.Current = "Playing 1 vignette:"
		if len(playing) > 1 {
			p.Current = fmt.Sprintf("Playing %d vignettes at once:", len(playing))
		}
		for _, it := range playing {
			title := it.Title
			if title == "" {
				title = it.VignetteID
			}
			if it.Variation != "" {
				title += ", " + variations.Label(it.Variation)
			}
			p.Playing = append(p.Playing, fmt.Sprintf("%s, repeat %d (exchanges so far: %d)", title, it.Repeat, len(it.Turns)))
		}
	}
	return p
}

// showScenarioRun is a run: progress, scores, confusion matrix, results.
func (s *Server) showScenarioRun(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	run, items, err := s.deps.Scenarios.Run(ctx, id)
	if err != nil {
		return err
	}
	show, err := showParam(c)
	if err != nil {
		return err
	}
	// The report from the items just read (the service's Report would
	// read them all again).
	results := bff.ScenarioResults(items)
	var playing []*bff.ScenarioItem
	for _, it := range items {
		if it.State == bff.ItemPlaying {
			playing = append(playing, it)
		}
	}
	rep := scenarios.NewReport(results)
	p := templates.ScenarioRunPage{Layout: s.clinicianLayout(c, "Scenario run "+runLabel(run)),
		ID: run.ID, Label: runLabel(run), Suite: suiteName(run), Target: run.Target, StartedBy: run.StartedBy,
		Repeats: run.Repeats, Created: clock(run.CreatedAt), Progress: progressView(run, playing),
		JSONURL: runPath(id) + "/report.json", CSVURL: runPath(id) + "/report.csv",
		JSONName: reportName(id, "json"), CSVName: reportName(id, "csv"), BackURL: scenariosPath}
	if !run.FinishedAt.IsZero() {
		p.Finished = clock(run.FinishedAt)
	}
	if !run.State.Ended() {
		p.CancelAction = runPath(id) + "/cancel"
	}
	if rep.Summary.Scored > 0 || rep.Summary.SimulatorLimited > 0 {
		sum := summaryView(rep.Summary)
		p.Summary = &sum
		p.ConfusionSVG = scenarios.ConfusionSVG(rep.Summary)
	}
	listed := listResults(items, rep.Flips)
	p.Filters, p.Filter, p.AllResults = filterLinks(id, listed, show), show.label, len(listed)
	for _, x := range show.keep(listed) {
		r, o := x.result, x.outcome
		row := templates.ScenarioResultRow{VignetteID: r.VignetteID, Title: r.Title, Repeat: r.Repeat, URL: itemURL(id, x.seq, show),
			Gold: r.Gold.Class.Label(), Final: r.Final.Label(), Triage: string(o.Triage), Under: o.Triage == scenarios.TriageUnder,
			Turns: r.Turns, Error: r.Error, SimulatorLimited: o.SimulatorLimited, Coverage: coverageText(r)}
		if r.Variation != "" {
			row.Variation = variations.Label(r.Variation)
		}
		p.Results = append(p.Results, row)
	}
	p.Flips = flipsView(id, rep.Flips)
	if run.ReplayOf != "" {
		p.Replay = &templates.ScenarioReplayLink{Of: run.ReplayOf, OfURL: runPath(run.ReplayOf), Question: run.ReplayQuestion,
			CompareURL: comparePath(run.ReplayOf, run.ID)}
	}
	if p.Corrected, err = s.correctedSince(c, run); err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.ScenarioRunPageView(p))
}

// correctedSince are the questions an ended run asked whose reading a
// reviewer has since corrected or found unanswerable: the run page offers
// to replay each (issue 35 item 5). A release with no readings has none.
func (s *Server) correctedSince(c *fiber.Ctx, run *bff.ScenarioRun) ([]templates.RunCorrectedReading, error) {
	if !run.State.Ended() || run.Release == "" {
		return nil, nil
	}
	page, err := s.deps.Readings.Readings(c.UserContext(), run.Release)
	if bff.ErrorCode(err) == bff.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []templates.RunCorrectedReading
	for i, q := range page.Questions {
		if q.Review == nil || q.Review.Decision == scenarios.ReviewConfirmed || !slices.Contains(q.Runs, run.ID) {
			continue
		}
		out = append(out, templates.RunCorrectedReading{Question: q.Question, Review: reviewText(q.Review),
			Action: readingsPath + "/replay", Release: page.Release, Run: run.ID,
			ReadingsURL: readingsURL(page.Release, i), ID: "replay-" + strconv.Itoa(i)})
	}
	return out, nil
}

// rateOf is "75.0% of 4 <what>" and more, or "none: no <what>" when n is 0
// (a rate over nothing is not a score).
func rateOf(f float64, n int, what, more string) string {
	if n == 0 {
		return "none: no " + what
	}
	return percent(f) + " of " + strconv.Itoa(n) + " " + what + more
}

// coverageText is a result's simulator coverage for people.
func coverageText(r scenarios.Result) string {
	if r.Questions == 0 {
		return "no question asked"
	}
	return fmt.Sprintf("%d of %d questions understood", r.Understood, r.Questions)
}

func summaryView(s scenarios.Summary) templates.ScenarioSummary {
	v := templates.ScenarioSummary{Vignettes: s.Vignettes, Runs: s.Runs, Scored: s.Scored, Errors: s.Errors,
		Accuracy: percent(s.Accuracy), UnderTriage: percent(s.UnderTriage), OverTriage: percent(s.OverTriage),
		WrongDisposition:   s.WrongDisposition,
		RedFlagRecall:      rateOf(s.RedFlagRecall, s.RedFlagsExpected, "gold red flags", fmt.Sprintf(" (%d missed)", s.RedFlagsMissed)),
		FalseAlarms:        s.FalseAlarms,
		ProtocolMatch:      rateOf(s.ProtocolMatch, s.ProtocolsChecked, "protocols checked", ""),
		ScoreBandAgreement: rateOf(s.ScoreBandAgreement, s.BandsChecked, "score bands expected", ""),
		MeanTurns:          strconv.FormatFloat(s.MeanTurns, 'f', 1, 64),
		MixedProvenance:    s.MixedProvenance, Provisional: s.Provisional,
		SimulatorLimited: s.SimulatorLimited,
		Coverage:         rateOf(s.Coverage, s.Questions, "questions understood", ""),
		Readings:         s.Readings.String(),
		Basis:            s.Basis.String(),
		Provenance: []templates.Fact{
			{Name: "release", Label: "Engine release", Value: s.Provenance.Release},
			{Name: "prompt_hash", Label: "Prompt hash", Value: s.Provenance.PromptHash},
			{Name: "directory_hash", Label: "Protocol library hash", Value: s.Provenance.DirectoryHash},
			{Name: "server_model", Label: "Model run", Value: s.Provenance.ServerModel},
			{Name: "voice_profile", Label: "Voice profile", Value: s.Provenance.VoiceProfile},
		}}
	for _, cl := range scenarios.Classes {
		x := s.PerClass[cl]
		row := templates.ScenarioClassRow{Class: cl.Label(), N: x.N, Correct: x.Correct, Under: x.Under, Over: x.Over, SimulatorLimited: x.SimulatorLimited,
			Accuracy: "—", UnderTriage: "—", OverTriage: "—"}
		if x.N > 0 {
			row.Accuracy, row.UnderTriage, row.OverTriage = percent(x.Accuracy), percent(x.UnderTriage), percent(x.OverTriage)
		}
		v.PerClass = append(v.PerClass, row)
	}
	return v
}
