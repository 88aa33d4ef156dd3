package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// The clinician pages a newcomer opens first fit a laptop (1280×800) and a
// phone (390×844) without sideways scrolling of the page: the worklist
// (Review and the downloads on screen), a scenario run's results (every
// column reachable on a phone) with its confusion matrix's labels at 12 px
// or more, and the audit log. Where a table's rows become labelled cards
// (the worklist below 1,200 px, the audit log, a run's results, scores by
// class and flips on a phone), no label is drawn over another or out of
// its card. Screenshots: e2e/artifacts/fit-*.png.
func TestClinicianPagesFit(t *testing.T) {
	t.Parallel()
	_, ids := suiteYAML(t)
	a := startScenarioApp(t)

	// Two intakes for the worklist: a self-care one in progress with a
	// one-line opening message (shorter than its two-line label) and an
	// urgent one (the longest cells: a disposition label and an opening
	// message).
	patient := newPage(t)
	startIntake(t, patient, a)
	send(t, patient, "sore throat")
	waitReply(t, patient, soreThroatNo[0])
	startIntake(t, patient, a)
	send(t, patient, "I have crushing chest pain that spreads down my left arm and into my jaw, and I feel sick and sweaty")
	waitReply(t, patient, urgentReplyPart)

	page := newPage(t)
	clinicianSignIn(t, page, a)
	openScenarios(t, page, a)
	// With a variation, so the run's page has its flip table too.
	must(t, inForm(startForm(page), "Typing errors").Check(), "check Typing errors")
	estimateRun(t, page, smallSuite, 1, "fit")
	must(t, role(page, "button", "Start the run").Click(), "click Start the run")
	runURL := a.URL + "/clinician/scenarios/runs/" + runIDOf(t, page)
	waitRunDone(t, page, 2*len(ids))

	sizes := []playwright.Size{{Width: 1280, Height: 800}, {Width: 390, Height: 844}}
	pages := []struct {
		name, url string
		// views are parts worth a look: a screenshot of each element.
		views []string
	}{
		{"worklist", a.URL + "/clinician", []string{".worklist-table tbody tr"}},
		{"run", runURL, []string{"figure.confusion", ".results-table tbody tr", ".perclass-table tbody tr", ".flips-table tbody tr", "nav.result-filter"}},
		{"audit", a.URL + "/clinician/audit", []string{".audit-table tbody tr"}},
	}
	// Every layout that turns a table's rows into labelled cards on a
	// phone, and where it is: each must have been seen as cards at 390 px.
	cardTables := map[string]string{"worklist-table": "worklist", "audit-table": "audit", "results-table": "run",
		"perclass-table": "run", "flips-table": "run"}
	seen := map[string]int{}
	for _, size := range sizes {
		must(t, page.SetViewportSize(size.Width, size.Height), "set the viewport to %dx%d", size.Width, size.Height)
		for _, p := range pages {
			_, err := page.Goto(p.url)
			must(t, err, "open the %s", p.name)
			name := fmt.Sprintf("fit-%s-%d", p.name, size.Width)
			shot(t, page, name)
			audit(t, page, name)
			v, err := page.Evaluate(`() => [document.documentElement.scrollWidth, window.innerWidth]`)
			must(t, err, "measure the page's width")
			w := v.([]any)
			t.Logf("%s: the page is %v px wide in a %v px window", name, w[0], w[1])
			if toInt(w[0]) > toInt(w[1]) {
				t.Errorf("%s at %dx%d scrolls sideways: the page is %v px wide in a %v px window", p.name, size.Width, size.Height, w[0], w[1])
			}
			// Every table cell on screen: none pushed out of view, not
			// even inside a table's own scroll region.
			off, err := evalString(page, `() => {
				const out = [];
				for (const c of document.querySelectorAll('table th, table td')) {
					const r = c.getBoundingClientRect();
					if (r.width === 0 || c.closest('thead') && getComputedStyle(c.closest('thead')).position === 'absolute') continue;
					if (r.right > window.innerWidth + 0.5 || r.left < -0.5) {
						out.push((c.closest('table').className) + ': ' + (c.dataset.label || c.textContent.trim().slice(0, 20)) + ' at ' + Math.round(r.left) + '-' + Math.round(r.right));
					}
				}
				return out.slice(0, 10).join('; ');
			}`)
			must(t, err, "find cells out of view")
			if off != "" {
				t.Errorf("%s at %dx%d has table cells out of view: %s", p.name, size.Width, size.Height, off)
			}
			// No card's label drawn over another, nor out of its card.
			var fit cardFit
			v, err = page.Evaluate(cardLabelsJS)
			must(t, err, "measure the cards' labels")
			b, _ := json.Marshal(v)
			must(t, json.Unmarshal(b, &fit), "read the cards' labels")
			for table, n := range fit.Labels {
				seen[table] += n
				if size.Width == 1280 && table == "worklist-table" {
					t.Errorf("the worklist is cards at 1280 px (%d labels)", n)
				}
			}
			for _, problem := range fit.Problems {
				t.Errorf("%s at %dx%d: %s", p.name, size.Width, size.Height, problem)
			}
			for i, sel := range p.views {
				if _, err := page.Locator(sel).First().Screenshot(playwright.LocatorScreenshotOptions{
					Path: playwright.String(filepath.Join(artifactsDir, fmt.Sprintf("%s-part%d.png", name, i+1))),
				}); err != nil {
					t.Errorf("screenshot of %s: %v", sel, err)
				}
			}
			if p.name != "run" {
				continue
			}
			if size.Width == 390 {
				for i, sel := range []string{".results-table tbody tr", ".flips-table tbody tr"} {
					rows := page.Locator(sel)
					n, err := rows.Count()
					must(t, err, "count %s", sel)
					_, err = rows.Nth(n - 1).Screenshot(playwright.LocatorScreenshotOptions{
						Path: playwright.String(filepath.Join(artifactsDir, fmt.Sprintf("%s-last%d.png", name, i+1)))})
					must(t, err, "screenshot the last of %s", sel)
				}
			}
			// The matrix's words: 12 px or more as drawn (font size times
			// the SVG's scale on screen).
			small, err := evalString(page, `() => {
				const out = [];
				for (const el of document.querySelectorAll('figure.confusion svg text')) {
					const px = parseFloat(getComputedStyle(el).fontSize) * el.getScreenCTM().a;
					if (px < 12 - 0.01) out.push(JSON.stringify(el.textContent.slice(0, 20)) + ' ' + px.toFixed(1) + ' px');
				}
				return out.length + ' of ' + document.querySelectorAll('figure.confusion svg text').length + (out.length ? ': ' + out.slice(0, 5).join(', ') : '');
			}`)
			must(t, err, "measure the matrix's words")
			if !strings.HasPrefix(small, "0 of ") || strings.HasPrefix(small, "0 of 0") {
				t.Errorf("the confusion matrix at %dx%d has words under 12 px: %s", size.Width, size.Height, small)
			}
		}
	}
	for table, where := range cardTables {
		if seen[table] == 0 {
			t.Errorf("no label of %s's %s was measured as a card", where, table)
		}
	}
}

// cardFit is what cardLabelsJS found: per table class, the labels drawn
// as cards, and each label that overlaps another or leaves its card.
type cardFit struct {
	Labels   map[string]int `json:"labels"`
	Problems []string       `json:"problems"`
}

// cardLabelsJS measures the labels of every table row shown as a card
// (display block): each cell's data-label is drawn by its ::before, whose
// box is not in the DOM, so it is computed from the pseudo-element's used
// offsets and size in its cell (the containing block when positioned, the
// cell's content box when in flow). A label must not intersect another
// label's box, and must lie inside its card's border box.
const cardLabelsJS = `() => {
	const out = {labels: {}, problems: []};
	const px = (v) => parseFloat(v) || 0;
	for (const card of document.querySelectorAll('table tr')) {
		if (getComputedStyle(card).display !== 'block') continue;
		const table = [...card.closest('table').classList].find((c) => c.endsWith('-table')) || 'table';
		const cr = card.getBoundingClientRect();
		const boxes = [];
		for (const cell of card.querySelectorAll(':scope > [data-label]')) {
			const b = getComputedStyle(cell, '::before');
			if (b.content === 'none' || b.content === 'normal' || b.display === 'none') continue;
			const r = cell.getBoundingClientRect(), c = getComputedStyle(cell);
			let left, top;
			if (b.position === 'absolute') {
				left = r.left + px(c.borderLeftWidth) + px(b.left);
				top = r.top + px(c.borderTopWidth) + px(b.top);
			} else {
				left = r.left + px(c.borderLeftWidth) + px(c.paddingLeft) + px(b.marginLeft);
				top = r.top + px(c.borderTopWidth) + px(c.paddingTop) + px(b.marginTop);
			}
			const w = px(b.width) + px(b.paddingLeft) + px(b.paddingRight), h = px(b.height) + px(b.paddingTop) + px(b.paddingBottom);
			boxes.push({name: cell.dataset.label, left, top, right: left + w, bottom: top + h});
		}
		out.labels[table] = (out.labels[table] || 0) + boxes.length;
		const row = card.querySelector('th, td');
		const what = table + ' card "' + (row ? row.textContent.trim().replace(/\s+/g, ' ').slice(0, 30) : '') + '": label ';
		const f = (x) => Math.round(x);
		for (const [i, x] of boxes.entries()) {
			if (x.left < cr.left - 0.5 || x.right > cr.right + 0.5 || x.top < cr.top - 0.5 || x.bottom > cr.bottom + 0.5) {
				out.problems.push(what + JSON.stringify(x.name) + ' (' + f(x.left) + ',' + f(x.top) + ')-(' + f(x.right) + ',' + f(x.bottom) +
					') leaves its card (' + f(cr.left) + ',' + f(cr.top) + ')-(' + f(cr.right) + ',' + f(cr.bottom) + ')');
			}
			for (const y of boxes.slice(i + 1)) {
				const dx = Math.min(x.right, y.right) - Math.max(x.left, y.left), dy = Math.min(x.bottom, y.bottom) - Math.max(x.top, y.top);
				if (dx > 0.5 && dy > 0.5) {
					out.problems.push(what + JSON.stringify(x.name) + ' is drawn over ' + JSON.stringify(y.name) + ' by ' + f(dy) + ' px');
				}
			}
		}
	}
	return out;
}`

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	i, _ := strconv.Atoi(fmt.Sprint(v))
	return i
}
