package web_test

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// The suite format page and a refused upload's problems, on the whole app
// (apptest): the real loader behind the real service.

// uploadProblems are the items of the upload field's problem list, as text
// without tags, and the list's markup.
func uploadProblems(t *testing.T, body string) ([]string, string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<ul class="suite-problems" id="upload-problems">(.*?)</ul>`).FindStringSubmatch(body)
	if m == nil {
		return nil, ""
	}
	var items []string
	for _, li := range regexp.MustCompile(`(?s)<li[^>]*>(.*?)</li>`).FindAllStringSubmatch(m[1], -1) {
		text := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(li[1], "")
		items = append(items, html.UnescapeString(strings.Join(strings.Fields(text), " ")))
	}
	return items, m[0]
}

// TestSuiteUploadListsEveryProblem: a suite file that does not load comes
// back on the form with one sentence beside the field and every problem
// listed under it, one an item, each naming its line, vignette and field
// and the rule in words; an unknown field hides none of the others; a PNG
// or a text file is said to be one; a concept the vocabulary lacks links
// to the vocabulary. What was typed stays, and nothing is started.
func TestSuiteUploadListsEveryProblem(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	b := a.browser()
	if p := b.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	token := csrfMeta.FindStringSubmatch(b.get("/clinician/scenarios").body)[1]
	upload := func(name, data string) page {
		t.Helper()
		p := b.postMultipart("/clinician/scenarios/runs", map[string]string{"_csrf": token, "repeats": "2", "label": "my suite"}, name, []byte(data))
		if p.status != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d, want 422", name, p.status)
		}
		wantAll(t, name, p.body, `value="my suite"`, `id="upload-error"`, `href="#upload"`,
			`aria-describedby="upload-hint upload-error upload-problems"`, `href="/clinician/scenarios/format"`)
		for _, goWords := range []string{"octet", "unmarshal", "!!", "scenarios.Suite", "scenarios.Vignette", "docs/scenarios.md"} {
			if strings.Contains(p.body, goWords) {
				t.Errorf("%s: the page says %q", name, goWords)
			}
		}
		return p
	}
	cases := []struct {
		name, data, head string
		want             []string
	}{
		{"photo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06", "photo.png does not load: 1 problem.",
			[]string{"this is not a YAML suite file: it looks like a PNG image"}},
		{"notes.txt", "Chest pain cases to try\nA man of 58 with crushing chest pain\n", "notes.txt does not load: 1 problem.",
			[]string{"line 1: the file must be a mapping with `vignettes:` (a list of vignettes) at its top; this file starts with plain text"}},
		{"mixed.yaml", `vignettes:
  - id: chest-pain
    opening: "I have a pain in my chest"
    urgency: high
    facts:
      - {concept: chest_pian, answer: "yes"}
      - {asks: [arm]}
    gold: {class: ambulance}
  - id: Second One
    gold: {class: routine}
`, "mixed.yaml does not load: 6 problems.", []string{
			`line 4: vignette "chest-pain" (1): urgency: not a field of a vignette; its fields are id, title, age_years, sex, history, neutral, opening, complaint, facts, default, unknown, max_turns, gold`,
			`line 6: vignette "chest-pain" (1): facts[1].concept: "chest_pian" is not in the concept vocabulary See the concept vocabulary`,
			`line 7: vignette "chest-pain" (1): facts[2]: needs answer or choose`,
			`line 8: vignette "chest-pain" (1): gold.class: must be one of emergency, urgent, routine, self_care`,
			`line 9: vignette "Second One" (2): id: must be 1 to 64 of a-z, 0-9, _ and -`,
			`line 9: vignette "Second One" (2): opening: required`,
		}},
	}
	for _, c := range cases {
		p := upload(c.name, c.data)
		wantAll(t, c.name, p.body, c.head+" Correct the file and upload it again.")
		items, list := uploadProblems(t, p.body)
		if strings.Join(items, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: the problems listed\n%s\nwant\n%s", c.name, strings.Join(items, "\n"), strings.Join(c.want, "\n"))
		}
		if c.name == "mixed.yaml" && !strings.Contains(list, `<a href="/clinician/scenarios/format#concepts">See the concept vocabulary</a>`) {
			t.Errorf("the unknown concept does not link to the vocabulary: %s", list)
		}
	}
	// Nothing was started.
	if runs := b.get("/clinician/scenarios").body; !strings.Contains(runs, "No runs yet.") {
		t.Error("a suite that does not load started a run")
	}
}

// TestSuiteFormatPage: signed-in clinicians read how to write a suite file
// (the example, every field with its rule) and every concept of the
// vocabulary with its kind and what a "yes" means, grouped as the
// vocabulary groups them, from the vocabulary itself; the Scenarios page
// and the upload field link to it.
func TestSuiteFormatPage(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	b := a.browser()
	if p := b.get("/clinician/scenarios/format"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/clinician/signin?next=") {
		t.Fatalf("the format page without sign-in: %d %s", p.status, p.header.Get("Location"))
	}
	b.signIn("dr.ada", clinPassword)
	if idx := b.get("/clinician/scenarios").body; !strings.Contains(idx, `<a href="/clinician/scenarios/format">How to write a suite file: its fields and the concept vocabulary</a>`) {
		t.Error("the Scenarios page does not link to the suite format")
	}
	p := b.get("/clinician/scenarios/format")
	if p.status != http.StatusOK {
		t.Fatalf("the format page: %d", p.status)
	}
	body := p.body
	wantAll(t, "the format page", body, "<h1>Suite files</h1>", `<h2 id="example">An example</h2>`, `<h2 id="fields">The fields</h2>`,
		`<h2 id="concepts">The concept vocabulary</h2>`, "at most 200 KiB and 500 vignettes", `aria-current="page">Scenarios</a>`,
		`<pre><code>`+html.EscapeString(scenarios.Example())+`</code></pre>`, `tabindex="0"`)
	for _, f := range scenarios.Fields() {
		wantAll(t, "the format page", body, `<dt id="field-`+f.Name+`"><code>`+f.Name+`</code> <span class="suite-fields__type">`+f.Type+`</span></dt>`)
	}
	vocab, err := scenarios.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	last, group := -1, ""
	for _, c := range vocab {
		item := `<dt id="concept-` + c.ID + `"><code>` + c.ID + `</code></dt><dd class="concepts__kind">Kind: ` + html.EscapeString(c.Kind.Describe()) +
			`</dd><dd>About: ` + html.EscapeString(c.Means) + `</dd>`
		if c.Yes != "" {
			item += `<dd class="concepts__yes"><strong>“Yes” means:</strong> ` + html.EscapeString(c.Yes) + `</dd>`
		}
		at := strings.Index(body, item)
		if at < 0 {
			t.Errorf("the format page does not list concept %s: %s", c.ID, item)
			continue
		}
		if c.Group != group { // a group's heading comes before its concepts, in the vocabulary's order
			group = c.Group
			h := strings.Index(body, ">"+html.EscapeString(strings.ToUpper(group[:1])+group[1:])+"</h3>")
			if h < last || h > at {
				t.Errorf("group %q is not headed before %s, after the concepts before it", group, c.ID)
			}
		}
		if at < last {
			t.Errorf("concept %s is out of the vocabulary's order", c.ID)
		}
		last = at
	}
	if strings.Contains(body, "style=") || regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]`).MatchString(body) {
		t.Error("the format page has an inline style or script")
	}
}
