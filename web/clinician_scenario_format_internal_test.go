package web

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/concepts"
	"github.com/clinical-intake/intake-web/templates"
)

// TestSuiteFormatPageFollowsTheVocabulary: the page is rendered from the
// vocabulary it is given, never a copy: a concept added to it appears with
// its kind and what a "yes" means, under its own group's heading after the
// groups before it, and one taken out disappears.
func TestSuiteFormatPageFollowsTheVocabulary(t *testing.T) {
	t.Parallel()
	vocab, err := scenarios.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	render := func(vocab []concepts.Concept) string {
		t.Helper()
		var b bytes.Buffer
		if err := templates.SuiteFormatPageView(suiteFormatPage(vocab)).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	added := concepts.Concept{ID: "red_eye", Kind: concepts.YesNo, Means: "a red or sore eye", Yes: "an eye is red or sore", Group: "eyes"}
	page := render(append(vocab, added))
	item := `<dt id="concept-red_eye"><code>red_eye</code></dt><dd class="concepts__kind">Kind: yes or no</dd>` +
		`<dd>About: a red or sore eye</dd><dd class="concepts__yes"><strong>“Yes” means:</strong> an eye is red or sore</dd>`
	heading := `<h3 id="concepts-eyes">Eyes</h3>`
	last := `<dt id="concept-` + vocab[len(vocab)-1].ID + `">`
	if !strings.Contains(page, item) || !strings.Contains(page, heading) ||
		strings.Index(page, last) > strings.Index(page, heading) || strings.Index(page, heading) > strings.Index(page, item) {
		t.Errorf("the added concept is not listed under its own group after the others:\n%s", page[strings.Index(page, `<h2 id="concepts"`):])
	}
	if page := render(vocab[1:]); strings.Contains(page, `id="concept-`+vocab[0].ID+`"`) {
		t.Errorf("concept %s is listed without being in the vocabulary", vocab[0].ID)
	}
}
