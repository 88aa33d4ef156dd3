package scenarios

import (
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// svgCellInfo is what the test reads back from one cell's group.
type svgCellInfo struct {
	class, title, count, kind, fill string
}

// parseSVG decodes the whole document (so it must be well-formed XML) and
// returns its root attributes, title, desc, the cells in document order and
// every element name seen.
func parseSVG(t *testing.T, doc string) (root map[string]string, title, desc string, cells []svgCellInfo, names map[string]bool) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	root, names = map[string]string{}, map[string]bool{}
	var stack []string
	var cur *svgCellInfo
	var textClass string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, doc)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			names[e.Name.Local] = true
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			if len(stack) == 0 {
				root = attr
			}
			stack = append(stack, e.Name.Local)
			switch {
			case e.Name.Local == "g" && strings.HasPrefix(attr["class"], "cell "):
				cells = append(cells, svgCellInfo{class: strings.TrimPrefix(attr["class"], "cell ")})
				cur = &cells[len(cells)-1]
			case e.Name.Local == "rect" && cur != nil && cur.fill == "":
				cur.fill = attr["fill"]
			case e.Name.Local == "text":
				textClass = attr["class"]
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if e.Name.Local == "g" {
				cur = nil
			}
		case xml.CharData:
			s := string(e)
			switch top := stack[len(stack)-1]; {
			case top == "title" && len(stack) == 2:
				title += s
			case top == "desc" && len(stack) == 2:
				desc += s
			case top == "title" && cur != nil:
				cur.title += s
			case top == "text" && cur != nil && textClass == "count":
				cur.count += s
			case top == "text" && cur != nil && textClass == "kind":
				cur.kind += s
			}
		}
	}
	return root, title, desc, cells, names
}

func TestConfusionSVG(t *testing.T) {
	s := Score(matrixResults())
	s.Provenance.Release = `<script>alert("x")</script> & co`
	doc := ConfusionSVG(s)
	root, title, desc, cells, names := parseSVG(t, doc)
	if root["role"] != "img" || title == "" || desc == "" {
		t.Errorf("role %q title %q desc %q", root["role"], title, desc)
	}
	if ids := strings.Fields(root["aria-labelledby"]); len(ids) != 2 || !strings.Contains(doc, `id="`+ids[0]+`"`) || !strings.Contains(doc, `id="`+ids[1]+`"`) {
		t.Errorf("aria-labelledby %q does not name the title and desc", root["aria-labelledby"])
	}
	if len(cells) != 16 {
		t.Fatalf("%d cells, want 16", len(cells))
	}
	for i, c := range cells {
		g, f := i/4, i%4
		want := s.Confusion[g][f]
		if n, err := strconv.Atoi(c.count); err != nil || n != want {
			t.Errorf("cell %d,%d count %q, want %d", g, f, c.count, want)
		}
		if !strings.Contains(c.title, strconv.Itoa(want)) || !strings.Contains(desc, "final "+classLabels[f]+" "+strconv.Itoa(want)) {
			t.Errorf("cell %d,%d: count not in its title %q or the desc", g, f, c.title)
		}
		wantKind := map[bool]string{true: "under", false: "over"}[f > g]
		if f == g {
			wantKind = "correct"
		}
		if c.kind != wantKind || c.class != wantKind {
			t.Errorf("cell %d,%d kind %q class %q, want %q", g, f, c.kind, c.class, wantKind)
		}
		// Under-triage is hatched (a pattern, not only a colour).
		if hatched := strings.HasPrefix(c.fill, "url(#"); hatched != (wantKind == "under") {
			t.Errorf("cell %d,%d fill %q", g, f, c.fill)
		}
	}
	// The released name is text, escaped: no element it spells exists.
	if names["script"] || !strings.Contains(desc, `<script>alert("x")</script> & co`) {
		t.Errorf("release not escaped as text: names %v desc %q", names, desc)
	}
	for _, bad := range []string{"href", "<style", "<image", "<foreignObject", "http://", "https://"} {
		if strings.Contains(strings.Replace(doc, `xmlns="http://www.w3.org/2000/svg"`, "", 1), bad) {
			t.Errorf("SVG holds %q", bad)
		}
	}
	if !strings.Contains(doc, "Ended without a decision (not in the matrix): 3.") {
		t.Error("undecided count missing")
	}
}

func TestClassLabel(t *testing.T) {
	for c, want := range map[Class]string{Emergency: "Emergency", SelfCare: "Self-care", NoClass: "No decision", "bogus": "No decision"} {
		if got := c.Label(); got != want {
			t.Errorf("%q.Label() = %q, want %q", c, got, want)
		}
	}
}
