package scenarios

import (
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"strings"
)

// classLabels names the classes for people, in Classes order.
var classLabels = [...]string{"Emergency", "Urgent", "Routine", "Self-care"}

// Label names the class for people: "Emergency", "Urgent", "Routine",
// "Self-care", or "No decision" for NoClass (and any unknown class).
func (c Class) Label() string {
	if r := c.Rank(); r < len(classLabels) {
		return classLabels[r]
	}
	return "No decision"
}

// Geometry of the matrix, in SVG user units.
const (
	svgCell   = 110 // a cell's width
	svgCellH  = 56  // a cell's height
	svgLeft   = 150 // the row labels' column
	svgTop    = 64  // the title and column labels above the cells
	svgFooter = 64  // the key and the undecided count below
)

// ConfusionSVG draws s.Confusion as a standalone, accessible SVG: rows the
// gold class, columns the engine's final class. It has role="img" with a
// <title> and a <desc> (which states every count in words), each cell's
// count as text, and the kind of each cell said in words as well as drawn:
// the diagonal ("correct") with a heavy border, under-triage cells
// ("under", final less urgent than gold) hatched, over-triage ("over")
// plain. No scripts, styles or external references; all text is escaped.
// The ids it defines are derived from the counts, so two different
// matrices on one page do not clash.
func ConfusionSVG(s Summary) string {
	h := fnv.New32a()
	fmt.Fprint(h, s.Confusion, s.Undecided)
	id := fmt.Sprintf("cm%08x", h.Sum32())
	width := svgLeft + len(Classes)*svgCell + 10
	height := svgTop + len(Classes)*svgCellH + svgFooter

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="%[1]s-title %[1]s-desc" viewBox="0 0 %[2]d %[3]d" width="%[2]d" height="%[3]d" font-family="sans-serif">`, id, width, height)
	fmt.Fprintf(&b, `<title id="%s-title">Confusion matrix: gold urgency class (rows) against the engine's final class (columns)</title>`, id)
	fmt.Fprintf(&b, `<desc id="%s-desc">%s</desc>`, id, esc(confusionDesc(s)))
	// The hatch of under-triage cells: a pattern, so they differ without colour.
	fmt.Fprintf(&b, `<defs><pattern id="%s-hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">`+
		`<rect width="8" height="8" fill="#fde2e1"/><line x1="0" y1="0" x2="0" y2="8" stroke="#b42318" stroke-width="2"/></pattern></defs>`, id)

	fmt.Fprintf(&b, `<text x="%d" y="20" text-anchor="middle" font-size="14" font-weight="bold">Engine's final class</text>`, svgLeft+len(Classes)*svgCell/2)
	fmt.Fprintf(&b, `<text x="10" y="%d" font-size="14" font-weight="bold">Gold class</text>`, svgTop-10)
	for i, l := range classLabels {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-size="13">%s</text>`, svgLeft+i*svgCell+svgCell/2, svgTop-10, esc(l))
		fmt.Fprintf(&b, `<text x="10" y="%d" font-size="13">%s</text>`, svgTop+i*svgCellH+svgCellH/2+5, esc(l))
	}
	for g := range Classes {
		for f := range Classes {
			kind, fill, stroke, sw := cellKind(g, f), "#fff7e0", "#8a6d1f", 1
			switch kind {
			case "correct":
				fill, stroke, sw = "#e3f4e6", "#1e6b34", 4
			case "under":
				fill, stroke, sw = "url(#"+id+"-hatch)", "#b42318", 2
			}
			x, y := svgLeft+f*svgCell, svgTop+g*svgCellH
			n := s.Confusion[g][f]
			fmt.Fprintf(&b, `<g class="cell %s"><title>%s</title>`, kind,
				esc(fmt.Sprintf("Gold %s, final %s: %d (%s)", classLabels[g], classLabels[f], n, kindWords(kind))))
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="%s" stroke-width="%d"/>`, x+2, y+2, svgCell-4, svgCellH-4, fill, stroke, sw)
			// A white backing keeps the count readable over the hatch.
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#ffffff" opacity="0.85"/>`, x+svgCell/2-30, y+10, 60, 38)
			fmt.Fprintf(&b, `<text class="count" x="%d" y="%d" text-anchor="middle" font-size="18" font-weight="bold">%d</text>`, x+svgCell/2, y+30, n)
			fmt.Fprintf(&b, `<text class="kind" x="%d" y="%d" text-anchor="middle" font-size="11">%s</text>`, x+svgCell/2, y+44, kind)
			b.WriteString(`</g>`)
		}
	}
	foot := svgTop + len(Classes)*svgCellH
	fmt.Fprintf(&b, `<text x="10" y="%d" font-size="12">Key: correct = heavy border; under = hatched, final less urgent than gold (unsafe); over = plain, more urgent.</text>`, foot+22)
	fmt.Fprintf(&b, `<text x="10" y="%d" font-size="12">%s</text>`, foot+44, esc(undecidedWords(s)))
	b.WriteString(`</svg>`)
	return b.String()
}

// cellKind names the cell of gold row g, final column f.
func cellKind(g, f int) string {
	switch {
	case g == f:
		return "correct"
	case f > g:
		return "under"
	}
	return "over"
}

func kindWords(kind string) string {
	switch kind {
	case "correct":
		return "correct"
	case "under":
		return "under-triage"
	}
	return "over-triage"
}

func undecidedWords(s Summary) string {
	n := 0
	for _, u := range s.Undecided {
		n += u
	}
	return fmt.Sprintf("Ended without a decision (not in the matrix): %d.", n)
}

// confusionDesc says the whole matrix in words, row by row.
func confusionDesc(s Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d scored runs of %d vignettes; accuracy %.0f%%, under-triage %.0f%%, over-triage %.0f%%.",
		s.Scored, s.Vignettes, 100*s.Accuracy, 100*s.UnderTriage, 100*s.OverTriage)
	for g := range Classes {
		fmt.Fprintf(&b, " Gold %s:", classLabels[g])
		for f := range Classes {
			sep := ","
			if f == len(Classes)-1 {
				sep = "."
			}
			fmt.Fprintf(&b, " final %s %d (%s)%s", classLabels[f], s.Confusion[g][f], kindWords(cellKind(g, f)), sep)
		}
	}
	b.WriteString(" " + undecidedWords(s))
	if r := s.Provenance.Release; r != "" {
		fmt.Fprintf(&b, " Engine release %s.", r)
	}
	return b.String()
}

// esc escapes text for XML character data and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
