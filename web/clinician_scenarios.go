package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/templates"
)

// The clinician area's Scenarios section (routes.go lists its routes; they
// exist only when Deps.Scenarios is set).

const (
	scenariosPath  = "/clinician/scenarios"
	maxSuiteUpload = 1 << 20 // a suite file, read whole into memory (the server's body limit may be lower: uploadLimit)
	maxRunIDLen    = 80
	maxItemSeq     = 1_000_000 // far above vignettes × 10 repeats
)

func runPath(id string) string { return scenariosPath + "/runs/" + id }

func comparePath(base, head string) string {
	return scenariosPath + "/compare?base=" + url.QueryEscape(base) + "&head=" + url.QueryEscape(head)
}

// validRunID accepts what the service hands out ("sr_" and hex) and
// anything else made of the same safe characters, so a malformed id in a
// path or query is a 404 and never reaches a header or the service.
func validRunID(id string) bool {
	if id == "" || len(id) > maxRunIDLen {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// runParam is the :id of the path, or a 404.
func runParam(c *fiber.Ctx) (string, error) {
	id := param(c, "id")
	if !validRunID(id) {
		return "", fiber.ErrNotFound
	}
	return id, nil
}

// seqParam is the :seq of the path: digits only, small; else a 404.
func seqParam(c *fiber.Ctx) (int, error) {
	s := param(c, "seq")
	if s == "" || len(s) > 7 || strings.Trim(s, "0123456789") != "" {
		return 0, fiber.ErrNotFound
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxItemSeq {
		return 0, fiber.ErrNotFound
	}
	return n, nil
}

func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func runLabel(r *scenarios.Run) string {
	if r.Label != "" {
		return r.Label
	}
	return "Unlabelled run of " + suiteName(r)
}

func suiteName(r *scenarios.Run) string {
	if n := r.SuiteLabel(); n != "" {
		return n
	}
	return "an unnamed suite"
}

// startInput is what a start form carried, as typed.
type startInput struct {
	upload                bool
	suite, repeats, label string
	variations            []string
	urgentFirst           bool
}

// form turns the input into a RunForm; a repeats that is not a whole number
// is refused here (the service checks the range).
func (in startInput) form() (scenarios.RunForm, templates.FieldErrors) {
	f := scenarios.RunForm{Suite: in.suite, Label: in.label, Repeats: 1, Variations: in.variations, UrgentFirst: in.urgentFirst}
	if t := strings.TrimSpace(in.repeats); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil {
			return f, in.fieldErrors("repeats", "Repeats must be a whole number from 1 to 10.")
		}
		f.Repeats = n
	}
	return f, nil
}

// fieldErrors puts the message under the field's id in the form it came from.
func (in startInput) fieldErrors(field, msg string) templates.FieldErrors {
	if in.upload {
		switch field {
		case "repeats", "label":
			field = "upload-" + field
		case "suite", "upload":
			field = "upload"
		default:
			field = ""
		}
	} else if field != "suite" && field != "repeats" && field != "label" {
		field = ""
	}
	return templates.FieldErrors{field: msg}
}

// scenariosPage is the section's index, its forms filled with in.
func (s *Server) scenariosPage(c *fiber.Ctx, in startInput, base, head string) (templates.ScenariosPage, error) {
	ctx := c.UserContext()
	svc := s.deps.Scenarios
	p := templates.ScenariosPage{Layout: s.clinicianLayout(c, "Scenarios"),
		Start: templates.ScenarioStartForm{Action: scenariosPath + "/new"},
		Upload: templates.ScenarioUploadForm{Action: scenariosPath + "/runs", MaxSize: sizeText(int64(s.uploadLimit())),
			MaxBytes: s.uploadLimit(), TooLarge: uploadTooLarge(0, s.uploadLimit())},
		Compare: templates.ScenarioCompareForm{Action: scenariosPath + "/compare", Base: base, Head: head},
	}
	if in.upload {
		p.Upload.Repeats, p.Upload.Label, p.Upload.UrgentFirst = in.repeats, in.label, in.urgentFirst
		p.Upload.Variations, p.Start.Variations = variationOptions(in.variations), variationOptions(nil)
	} else {
		p.Start.Suite, p.Start.Repeats, p.Start.Label, p.Start.UrgentFirst = in.suite, in.repeats, in.label, in.urgentFirst
		p.Start.Variations, p.Upload.Variations = variationOptions(in.variations), variationOptions(nil)
	}
	for _, si := range svc.Suites() {
		p.Suites = append(p.Suites, templates.ScenarioSuite{Name: si.Name, Title: si.Title, Vignettes: si.Vignettes})
	}
	runs, err := svc.Runs(ctx)
	if err != nil {
		return p, err
	}
	for _, r := range runs {
		row := templates.ScenarioRunRow{ID: r.ID, URL: runPath(r.ID), Label: runLabel(r), Suite: suiteName(r), Target: r.Target,
			State: string(r.State), StartedBy: r.StartedBy, Started: compact(r.CreatedAt), Played: r.Played, Items: r.Items}
		if sum := r.Summary; sum != nil && sum.Scored > 0 {
			row.Scored, row.Accuracy, row.UnderTriage = true, percent(sum.Accuracy), percent(sum.UnderTriage)
		}
		p.Runs = append(p.Runs, row)
		p.Compare.Runs = append(p.Compare.Runs, templates.ScenarioRunOption{ID: r.ID, Label: runLabel(r)})
	}
	if p.Compare.Base == "" && len(runs) > 1 {
		// By default the two newest runs that played something (newest as
		// the head), else the two newest.
		var played []*scenarios.Run
		for _, r := range runs {
			if r.Played > 0 {
				played = append(played, r)
			}
		}
		if len(played) < 2 {
			played = runs
		}
		p.Compare.Base, p.Compare.Head = played[1].ID, played[0].ID
	}
	return p, nil
}

// showScenarios is the section's index; ?suite=&repeats=&label= refill the
// start form (the estimate page's "Change the run").
func (s *Server) showScenarios(c *fiber.Ctx) error {
	in := startInput{suite: utils.CopyString(c.Query("suite")), repeats: utils.CopyString(c.Query("repeats")), label: utils.CopyString(c.Query("label"))}.withVariations(c)
	p, err := s.scenariosPage(c, in, "", "")
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.ScenariosPageView(p))
}

// refuseStart shows the index again with the form as typed and the error
// beside its field; err must be EINVALID (else it is returned).
func (s *Server) refuseStart(c *fiber.Ctx, in startInput, status int, errs templates.FieldErrors) error {
	p, err := s.scenariosPage(c, in, "", "")
	if err != nil {
		return err
	}
	p.Errors = errs
	return render(c, status, templates.ScenariosPageView(p))
}

// invalidField is the field and message of an EINVALID error; ok is false
// for any other error.
func invalidField(err error) (field, msg string, ok bool) {
	var be *bff.Error
	if errors.As(err, &be) && be.Code == bff.EINVALID {
		return be.Field, be.Message, true
	}
	return "", "", false
}

// showScenarioEstimate says what a run of a built-in suite will cost, with
// the form that starts it. Nothing starts here.
func (s *Server) showScenarioEstimate(c *fiber.Ctx) error {
	in := startInput{suite: utils.CopyString(c.Query("suite")), repeats: utils.CopyString(c.Query("repeats")), label: utils.CopyString(c.Query("label"))}.withVariations(c)
	f, errs := in.form()
	if errs != nil {
		return s.refuseStart(c, in, http.StatusUnprocessableEntity, errs)
	}
	est, err := s.deps.Scenarios.Estimate(c.UserContext(), f)
	if field, msg, ok := invalidField(err); ok {
		return s.refuseStart(c, in, http.StatusUnprocessableEntity, in.fieldErrors(field, msg))
	} else if err != nil {
		return err
	}
	p := templates.ScenarioEstimatePage{Layout: s.clinicianLayout(c, "Start a scenario run"), Repeats: f.Repeats, Label: f.Label,
		Estimate: estimateView(est), Action: scenariosPath + "/runs",
		ChangeURL:  scenariosPath + "?" + changeValues(f).Encode(),
		Variations: chosenVariations(f.Variations), UrgentFirst: f.UrgentFirst}
	p.Suite.Name = f.Suite
	for _, si := range s.deps.Scenarios.Suites() {
		if si.Name == f.Suite {
			p.Suite = templates.ScenarioSuite{Name: si.Name, Title: si.Title, Vignettes: si.Vignettes}
		}
	}
	return render(c, http.StatusOK, templates.ScenarioEstimatePageView(p))
}

func estimateView(e *scenarios.RunEstimate) templates.ScenarioEstimate {
	v := templates.ScenarioEstimate{Intakes: e.Intakes, Turns: e.Turns, MaxTurns: e.MaxTurns, Parallel: e.Parallel, Unlimited: e.Unlimited,
		PerDay: e.PerDay, LeftToday: e.LeftToday, Days: e.Days, PerVariation: variationCosts(e)}
	if !e.Finish.IsZero() {
		v.Finish = e.Finish.UTC().Format("2 Jan 2006 15:04 UTC")
	}
	return v
}

// estimateSentence is the estimate in one sentence of ours (numbers only),
// for the flash after a start.
func estimateSentence(e *scenarios.RunEstimate) string {
	s := fmt.Sprintf("Run started: %d intakes, about %d turns (at most %d), up to %d at once.", e.Intakes, e.Turns, e.MaxTurns, max(e.Parallel, 1))
	if e.Unlimited {
		return s + " Limits off: embedded sandbox." + perVariationSentence(e)
	}
	s += fmt.Sprintf(" %d turns a day for runs, %d left today; %d day", e.PerDay, e.LeftToday, e.Days)
	if e.Days != 1 {
		s += "s"
	}
	if !e.Finish.IsZero() {
		s += ", expected to finish " + e.Finish.UTC().Format("2 Jan 2006 15:04 UTC")
	}
	return s + "." + perVariationSentence(e)
}

// startScenarioRun starts a run: of a built-in suite (the estimate page's
// form) or of a suite file (multipart, at most maxSuiteUpload). Refused
// forms come back on the index with the error beside the field.
func (s *Server) startScenarioRun(c *fiber.Ctx) error {
	in := startInput{suite: utils.CopyString(c.FormValue("suite")), repeats: utils.CopyString(c.FormValue("repeats")), label: utils.CopyString(c.FormValue("label"))}.withVariations(c)
	in.upload = strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderContentType)), fiber.MIMEMultipartForm)
	f, errs := in.form()
	if errs != nil {
		return s.refuseStart(c, in, http.StatusUnprocessableEntity, errs)
	}
	if in.upload {
		fh, err := c.FormFile("upload")
		if err != nil || fh.Filename == "" {
			return s.refuseStart(c, in, http.StatusUnprocessableEntity, in.fieldErrors("upload", "Choose a suite file to upload."))
		}
		if limit := s.uploadLimit(); fh.Size > int64(limit) {
			return s.refuseStart(c, in, http.StatusRequestEntityTooLarge,
				in.fieldErrors("upload", uploadTooLarge(fh.Size, limit)))
		}
		file, err := fh.Open()
		if err != nil {
			return fmt.Errorf("open uploaded suite: %w", err)
		}
		data, err := io.ReadAll(file) // fh.Size is what the parser read: at most maxSuiteUpload
		_ = file.Close()
		if err != nil {
			return fmt.Errorf("read uploaded suite: %w", err)
		}
		f.Upload, f.UploadName, f.Suite = data, filepath.Base(utils.CopyString(fh.Filename)), ""
	}
	run, est, err := s.deps.Scenarios.StartRun(c.UserContext(), clinicianOf(c), f)
	if field, msg, ok := invalidField(err); ok {
		return s.refuseStart(c, in, http.StatusUnprocessableEntity, in.fieldErrors(field, msg))
	} else if err != nil {
		return err
	}
	if est != nil {
		s.setFlash(c, estimateSentence(est))
	} else {
		s.setFlash(c, "Run started.")
	}
	return c.Redirect(runPath(run.ID), http.StatusSeeOther)
}

// uploadLimit is the largest suite file taken: maxSuiteUpload, or less
// when the server's body limit (HTTP_MAX_BODY_BYTES, 256 KiB by default)
// is lower, less room for the form's other fields. A body over the server's
// limit is refused by the server itself (413) before any handler runs.
func (s *Server) uploadLimit() int {
	return max(min(maxSuiteUpload, s.cfg.Limits.MaxBodyBytes-4<<10), 0)
}

// uploadTooLarge is the upload field's error for a file of size bytes (0:
// not known, as in the sentence the page's script shows before sending).
func uploadTooLarge(size int64, limit int) string {
	is := "too large"
	if size > 0 {
		is = sizeText(size)
	}
	return fmt.Sprintf("The suite file is %s: at most %s is accepted. Split the suite into smaller files.", is, sizeText(int64(limit)))
}

// sizeText is a size for people: "1 MiB", "252 KiB", "1.3 MiB".
func sizeText(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n < 1<<20:
		return strconv.FormatInt((n+1023)>>10, 10) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// progressView is a run's progress region; playing are the items in
// flight.
func progressView(r *scenarios.Run, playing []*scenarios.Item) templates.ScenarioProgress {
	p := templates.ScenarioProgress{RunURL: runPath(r.ID), State: string(r.State), Ended: r.State.Ended(),
		Played: r.Played, Items: r.Items, ProgressValues: r.Items > 0,
		PlayedText: fmt.Sprintf("%d of %d played", r.Played, r.Items),
		TurnsText:  fmt.Sprintf("Turns used: %d (estimate: %d)", r.TurnsUsed, r.Estimate),
		Note:       r.Note, Release: r.Release}
	p.StateLabel = map[scenarios.RunState]string{scenarios.RunQueued: "Queued", scenarios.RunActive: "Playing",
		scenarios.RunWaiting: "Waiting for quota", scenarios.RunDone: "Done", scenarios.RunCancelled: "Cancelled"}[r.State]
	if p.StateLabel == "" {
		p.StateLabel = string(r.State)
	}
	if !p.Ended {
		p.PollURL = runPath(r.ID) + "/progress"
	}
	if r.State == scenarios.RunWaiting && !r.NotBefore.IsZero() {
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
	// The report from the items just read (the service's Report would
	// read them all again).
	var results []scenarios.Result
	var playing []*scenarios.Item
	seqOf := map[string]int{} // vignette, variation and repeat -> item
	for _, it := range items {
		if it.Result != nil {
			results = append(results, *it.Result)
		}
		seqOf[itemKey(it.VignetteID, it.Variation, it.Repeat)] = it.Seq
		if it.State == scenarios.ItemPlaying {
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
	var limited []templates.ScenarioResultRow
	for _, r := range rep.Results {
		o := scenarios.Assess(r)
		row := templates.ScenarioResultRow{VignetteID: r.VignetteID, Title: r.Title, Repeat: r.Repeat,
			Gold: r.Gold.Class.Label(), Final: r.Final.Label(), Triage: string(o.Triage), Under: o.Triage == scenarios.TriageUnder,
			Turns: r.Turns, Error: r.Error, SimulatorLimited: o.SimulatorLimited, Coverage: coverageText(r)}
		if r.Variation != "" {
			row.Variation = variations.Label(r.Variation)
		}
		if seq, ok := seqOf[itemKey(r.VignetteID, r.Variation, r.Repeat)]; ok {
			row.URL = runPath(id) + "/items/" + strconv.Itoa(seq)
		}
		if row.SimulatorLimited {
			limited = append(limited, row)
		} else {
			p.Results = append(p.Results, row)
		}
	}
	// Simulator-limited results first: they are not the engine's, and the
	// reader should see them before trusting the rest.
	p.Results = append(limited, p.Results...)
	p.Flips = flipsView(id, rep.Flips)
	return render(c, http.StatusOK, templates.ScenarioRunPageView(p))
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

func reportName(id, ext string) string { return "scenario-run-" + id + "-report." + ext }

func summaryView(s scenarios.Summary) templates.ScenarioSummary {
	v := templates.ScenarioSummary{Vignettes: s.Vignettes, Runs: s.Runs, Scored: s.Scored, Errors: s.Errors,
		Accuracy: percent(s.Accuracy), UnderTriage: percent(s.UnderTriage), OverTriage: percent(s.OverTriage),
		WrongDisposition:   s.WrongDisposition,
		RedFlagRecall:      rateOf(s.RedFlagRecall, s.RedFlagsExpected, "gold red flags", fmt.Sprintf(" (%d missed)", s.RedFlagsMissed)),
		FalseAlarms:        s.FalseAlarms,
		ProtocolMatch:      rateOf(s.ProtocolMatch, s.ProtocolsChecked, "protocols checked", ""),
		ScoreBandAgreement: rateOf(s.ScoreBandAgreement, s.BandsChecked, "score bands expected", ""),
		MeanTurns:          strconv.FormatFloat(s.MeanTurns, 'f', 1, 64),
		MixedProvenance:    s.MixedProvenance,
		SimulatorLimited:   s.SimulatorLimited,
		Coverage:           rateOf(s.Coverage, s.Questions, "questions understood", ""),
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

// showScenarioProgress is the progress region alone, for scenarios.js.
func (s *Server) showScenarioProgress(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	pr, err := s.deps.Scenarios.Progress(c.UserContext(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.ScenarioProgressView(progressView(pr.Run, pr.Playing)))
}

// downloadScenarioJSON is the run's report (scenarios.Report) as JSON.
func (s *Server) downloadScenarioJSON(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	rep, err := s.deps.Scenarios.Report(c.UserContext(), id)
	if err != nil {
		return err
	}
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode scenario report: %w", err)
	}
	return sendDownload(c, fiber.MIMEApplicationJSONCharsetUTF8, reportName(id, "json"), body)
}

// downloadScenarioCSV is the run's results, one row each (Report.WriteCSV).
func (s *Server) downloadScenarioCSV(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	rep, err := s.deps.Scenarios.Report(c.UserContext(), id)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		return err
	}
	return sendDownload(c, "text/csv; charset=utf-8", reportName(id, "csv"), buf.Bytes())
}

// sendDownload sends body as an attachment; name is built from a checked
// run id, so it needs no quoting beyond the quotes.
func sendDownload(c *fiber.Ctx, contentType, name string, body []byte) error {
	c.Set(fiber.HeaderContentType, contentType)
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(body) // ours, not pooled
}

// cancelScenarioRun stops a run (its played items stay), then shows it.
func (s *Server) cancelScenarioRun(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	err = s.deps.Scenarios.CancelRun(c.UserContext(), clinicianOf(c), id)
	switch {
	case err == nil:
		s.setFlash(c, "Run cancelled. The items already played stay in its results.")
	case bff.ErrorCode(err) == bff.ECONFLICT:
		s.setFlash(c, "The run had already ended: there was nothing to cancel.")
	default:
		return err
	}
	return c.Redirect(runPath(id), http.StatusSeeOther)
}

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
	run, it, err := s.deps.Scenarios.Item(c.UserContext(), id, seq)
	if err != nil {
		return err
	}
	p := templates.ScenarioItemPage{Layout: s.clinicianLayout(c, "Scenario item "+it.VignetteID),
		RunURL: runPath(run.ID), RunLabel: runLabel(run), Seq: it.Seq, VignetteID: it.VignetteID, Title: it.Title,
		Repeat: it.Repeat, State: string(it.State)}
	if res := it.Result; res != nil {
		o := scenarios.Assess(*res)
		p.Outcome = &templates.ScenarioOutcome{Gold: res.Gold.Class.Label(), Final: res.Final.Label(), Triage: string(o.Triage),
			Correct: o.Correct(), Under: o.Triage == scenarios.TriageUnder, Disposition: res.Disposition, Urgent: res.Urgent,
			SafetyStatus: res.SafetyStatus, Protocol: res.Protocol, GoldProtocol: res.Gold.Protocol,
			RedFlagsHit: o.RedFlagsHit, RedFlagsMissed: o.RedFlagsMissed, FalseAlarms: o.FalseAlarms,
			SimulatorLimited: o.SimulatorLimited, Coverage: coverageText(*res)}
		p.Error = res.Error
	}
	for i, x := range it.Turns {
		p.Turns = append(p.Turns, templates.ScenarioExchange{N: i + 1, Message: x.Message, Reply: x.Reply, Choices: x.Choices,
			Urgent: x.Urgent, Terminal: x.Terminal, Replayed: x.Replayed, Disposition: x.Disposition, SafetyStatus: x.SafetyStatus})
		if x.Why != nil {
			p.Turns[i].Why, p.Turns[i].NotUnderstood = x.Why.String(), !x.Why.Understood()
		}
	}
	if it.Decoded != nil {
		p.Handoff = handoffSubset(it.Decoded)
	} else if len(it.Handoff) > 0 {
		p.HandoffError = "The handoff the service sent could not be read."
	}
	return render(c, http.StatusOK, templates.ScenarioItemPageView(p))
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
	if p.Base, err = side(base); err != nil {
		return p, err
	}
	if p.Head, err = side(head); err != nil {
		return p, err
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
		BaseScored: scored(ch.Base), HeadScored: scored(ch.Head), UnderTriage: ch.UnderTriage}
	if a := ch.Adjudication; a != nil {
		v.Adjudication = &templates.ScenarioAdjudication{Verdict: verdictLabel(a.Verdict), Note: a.Note, By: a.By}
		if !a.At.IsZero() {
			v.Adjudication.At = clock(a.At)
		}
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

// adjudicateScenario records a clinician's verdict on a vignette of a
// comparison, under the signed-in clinician's name, then shows the
// comparison again (PRG); a refused verdict comes back on the comparison
// beside its change, with the note as typed.
func (s *Server) adjudicateScenario(c *fiber.Ctx) error {
	base, head, err := compareIDs(utils.CopyString(c.FormValue("base")), utils.CopyString(c.FormValue("head")))
	if err != nil {
		return err
	}
	vignette := utils.CopyString(c.FormValue("vignette"))
	verdict := utils.CopyString(c.FormValue("verdict"))
	note := utils.CopyString(c.FormValue("note"))
	_, err = s.deps.Scenarios.Adjudicate(c.UserContext(), clinicianOf(c), base, head, vignette, scenarios.Verdict(verdict), note)
	field, msg, invalid := invalidField(err)
	if err != nil && !invalid {
		return err
	}
	if !invalid {
		s.setFlash(c, "Verdict recorded. It applies to this vignette in every later comparison.")
		return c.Redirect(comparePath(base, head)+"#"+changeKey(vignette), http.StatusSeeOther)
	}
	p, err := s.comparePage(c, base, head)
	if err != nil {
		return err
	}
	key := changeKey(vignette)
	errs := templates.FieldErrors{}
	switch field {
	case "verdict", "note":
		errs[key+"-"+field] = msg
	default:
		errs[""] = msg
	}
	found := false
	for _, list := range [][]templates.ScenarioChange{p.Regressions, p.SetAside, p.Others, p.Improvements} {
		for i := range list {
			if list[i].VignetteID == vignette {
				list[i].Verdict, list[i].Note, list[i].Errors, found = verdict, note, errs, true
			}
		}
	}
	if !found { // not a change of this comparison: say so at the top
		p.Layout.Flash = msg
	}
	return render(c, http.StatusUnprocessableEntity, templates.ScenarioComparePageView(p))
}
