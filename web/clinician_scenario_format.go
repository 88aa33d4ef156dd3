package web

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/concepts"
	"github.com/clinical-intake/intake-web/templates"
)

// formatPath is the suite format page: how to write a suite file, and the
// concept vocabulary a fact can name.
const formatPath = scenariosPath + "/format"

// conceptsAnchor is the vocabulary on the suite format page.
const conceptsAnchor = formatPath + "#concepts"

// showSuiteFormat is the suite format page, rendered from the format's own
// fields and example (bff/scenarios) and the vocabulary itself.
func (s *Server) showSuiteFormat(c *fiber.Ctx) error {
	vocab, err := scenarios.Vocabulary()
	if err != nil {
		return err
	}
	p := suiteFormatPage(vocab)
	p.Layout = s.clinicianLayout(c, "Suite files")
	p.MaxSize = sizeText(int64(s.uploadLimit()))
	return render(c, http.StatusOK, templates.SuiteFormatPageView(p))
}

// suiteFormatPage is the page's content: the fields and example of the
// format and the concepts of vocab, grouped in its order.
func suiteFormatPage(vocab []concepts.Concept) templates.SuiteFormatPage {
	p := templates.SuiteFormatPage{ScenariosURL: scenariosPath, MaxVignettes: scenarios.MaxVignettes, Example: scenarios.Example()}
	for _, f := range scenarios.Fields() {
		p.Fields = append(p.Fields, templates.SuiteField(f))
	}
	p.Concepts = conceptGroups(vocab)
	return p
}

// conceptGroups are the concepts of vocab in its groups, in its order.
func conceptGroups(vocab []concepts.Concept) []templates.ConceptGroup {
	var gs []templates.ConceptGroup
	for _, c := range vocab {
		if n := len(gs); n == 0 || gs[n-1].Title != groupTitle(c.Group) {
			gs = append(gs, templates.ConceptGroup{
				ID: "concepts-" + strings.Join(strings.FieldsFunc(strings.ToLower(c.Group), notAlnum), "-"), Title: groupTitle(c.Group)})
		}
		g := &gs[len(gs)-1]
		g.Concepts = append(g.Concepts, templates.ConceptHelp{ID: c.ID, Kind: c.Kind.Describe(), Means: c.Means, Yes: c.Yes})
	}
	return gs
}

// groupTitle is a vocabulary group as a heading: "About the person".
func groupTitle(group string) string {
	if group == "" {
		return "Concepts"
	}
	return strings.ToUpper(group[:1]) + group[1:]
}

func notAlnum(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }

// suiteProblems are a refused suite file's problems for the upload form;
// one naming a concept the vocabulary lacks links to the vocabulary.
func suiteProblems(err error) []templates.SuiteProblem {
	var out []templates.SuiteProblem
	for _, p := range scenarios.Problems(err) {
		sp := templates.SuiteProblem{Where: p.Where(), Rule: p.Rule}
		if p.Concept != "" {
			sp.HelpURL, sp.HelpLabel = conceptsAnchor, "See the concept vocabulary"
		}
		out = append(out, sp)
	}
	return out
}
