package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/concepts"
	"github.com/clinical-intake/intake-web/templates"
)

const readingsPath = scenariosPath + "/readings"

// readingsURL is the review page of release with the keys on the question
// at position at.
func readingsURL(release string, at int) string {
	q := url.Values{}
	q.Set("release", release)
	if at > 0 {
		q.Set("at", strconv.Itoa(at))
	}
	return readingsPath + "?" + q.Encode() + "#q-" + strconv.Itoa(at)
}

// showReadings is the review page of one release's readings
// (?release=, the newest by default; ?at= the question the keys act on).
func (s *Server) showReadings(c *fiber.Ctx) error {
	release := utils.CopyString(c.Query("release"))
	at, _ := strconv.Atoi(c.Query("at"))
	p, err := s.readingsPage(c, release, max(at, 0))
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.ReadingsPageView(p))
}

// readingsPage builds the page; a release with no readings yet (none at
// all) is an empty page, an unknown one not found.
func (s *Server) readingsPage(c *fiber.Ctx, release string, at int) (templates.ReadingsPage, error) {
	p := templates.ReadingsPage{Layout: s.clinicianLayout(c, "Readings to review"), ReviewAction: readingsPath + "/review", BackURL: scenariosPath}
	page, err := s.deps.Readings.Readings(c.UserContext(), release)
	if err != nil {
		return p, err
	}
	p.Release, p.Previous, p.Reviewed, p.Total = page.Release, page.Previous, page.Reviewed, len(page.Questions)
	if p.Concepts, err = offeredConcepts(page.Concepts); err != nil {
		return p, err
	}
	for _, r := range page.Releases {
		p.Releases = append(p.Releases, templates.ReadingReleaseLink{Release: r.Release, URL: readingsURL(r.Release, 0), Current: r.Release == page.Release})
	}
	at = min(at, max(len(page.Questions)-1, 0))
	from := at / readingsPerPage * readingsPerPage // the page that holds at
	to := min(from+readingsPerPage, len(page.Questions))
	p.From, p.To = min(from+1, to), to
	if from > 0 {
		p.Pages.FirstURL, p.Pages.PrevURL = readingsURL(page.Release, 0), readingsURL(page.Release, from-readingsPerPage)
	}
	if to < len(page.Questions) {
		p.Pages.NextURL = readingsURL(page.Release, to)
	}
	for i, q := range page.Questions[from:to] {
		i += from
		row := templates.ReadingRow{Anchor: "q-" + strconv.Itoa(i), At: i, Question: q.Question, Example: q.Example, Answer: q.Answer,
			Reading: readingText(q.QuestionRead), Kind: string(q.Kind), Plays: q.Plays,
			Vignettes: strings.Join(q.Vignettes, ", "), Voices: strings.Join(q.Voices, ", "), Current: i == at}
		if i+1 < len(page.Questions) {
			row.NextURL = readingsURL(page.Release, i+1)
		}
		if q.Review != nil {
			row.Review = reviewText(q.Review)
			row.Concept, row.Inverse = q.Review.Concept, q.Review.Inverse
			if q.Review.Decision != scenarios.ReviewConfirmed && len(q.Runs) > 0 {
				last := q.Runs[len(q.Runs)-1] // the newest run that asked it
				row.Replay = &templates.ReadingReplayOffer{Action: readingsPath + "/replay", Run: last, RunURL: runPath(last)}
			}
		}
		if q.Suggestion != nil {
			row.Suggestion = "release " + q.Suggestion.Release + ": " + reviewText(q.Suggestion)
			row.Concept, row.Inverse = q.Suggestion.Concept, q.Suggestion.Inverse
		}
		p.Questions = append(p.Questions, row)
	}
	return p, nil
}

// readingsPerPage is how many questions the review page shows at once,
// each with its form; the others are a page link away.
const readingsPerPage = 25

// offeredConcepts are the concepts a reviewer may choose (ids, as the
// reading service offers them) in the vocabulary's groups, each with what
// it means, so a long list can be found by its section.
func offeredConcepts(ids []string) ([]templates.ConceptGroup, error) {
	vocab, err := scenarios.Vocabulary()
	if err != nil {
		return nil, err
	}
	var offered []concepts.Concept
	for _, c := range vocab {
		if slices.Contains(ids, c.ID) {
			offered = append(offered, c)
		}
	}
	return conceptGroups(offered), nil
}

// readingText is how the patient read a question, in words.
func readingText(q scenarios.QuestionRead) string {
	names := map[scenarios.ReadingKind]string{
		scenarios.ReadingConcept: "concept", scenarios.ReadingOpen: "open question", scenarios.ReadingQuickReply: "quick reply",
		scenarios.ReadingNotUnderstood: "not understood", scenarios.ReadingLowMargin: "low margin",
	}
	s := names[q.Kind]
	if len(q.Concepts) > 0 {
		s += ": " + strings.Join(q.Concepts, " + ")
	}
	if q.Cue != "" {
		s += " (cue: " + q.Cue + ")"
	}
	if len(q.Concepts) > 0 {
		s += ", margin " + strconv.Itoa(q.Margin)
	}
	if q.ReviewedBy != "" {
		s += "; answered on the reading reviewed by " + q.ReviewedBy + " on " + q.ReviewedOn
	}
	return s
}

// reviewText is a decision in words: "confirmed by dr.ada on 2026-11-28:
// the note".
func reviewText(rv *bff.ReadingReview) string {
	var s string
	switch rv.Decision {
	case scenarios.ReviewCorrected:
		s = "corrected to " + rv.Concept
		if rv.Inverse {
			s += " (the opposite)"
		}
	case scenarios.ReviewUnanswerable:
		s = "not a question the vignettes can answer"
	default:
		s = "confirmed"
	}
	s += " by " + rv.By + " on " + rv.At.UTC().Format("2006-01-02")
	if rv.Note != "" {
		s += ": " + rv.Note
	}
	return s
}
