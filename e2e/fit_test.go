package e2e

import (
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
// or more, and the audit log. Screenshots: e2e/artifacts/fit-*.png.
func TestClinicianPagesFit(t *testing.T) {
	t.Parallel()
	_, ids := suiteYAML(t)
	a := startScenarioApp(t)

	// Two intakes for the worklist: a self-care one in progress and an
	// urgent one (the longest cells: a disposition label and an opening
	// message).
	patient := newPage(t)
	startIntake(t, patient, a)
	send(t, patient, soreThroatOpening)
	waitReply(t, patient, soreThroatNo[0])
	startIntake(t, patient, a)
	send(t, patient, "I have crushing chest pain that spreads down my left arm and into my jaw, and I feel sick and sweaty")
	waitReply(t, patient, urgentReplyPart)

	page := newPage(t)
	clinicianSignIn(t, page, a)
	openScenarios(t, page, a)
	estimateRun(t, page, smallSuite, 1, "fit")
	must(t, role(page, "button", "Start the run").Click(), "click Start the run")
	runURL := a.URL + "/clinician/scenarios/runs/" + runIDOf(t, page)
	waitRunDone(t, page, len(ids))

	sizes := []playwright.Size{{Width: 1280, Height: 800}, {Width: 390, Height: 844}}
	pages := []struct {
		name, url string
		// views are parts worth a look: a screenshot of each element.
		views []string
	}{
		{"worklist", a.URL + "/clinician", []string{".worklist-table tbody tr"}},
		{"run", runURL, []string{"figure.confusion", ".results-table tbody tr", ".perclass-table tbody tr"}},
		{"audit", a.URL + "/clinician/audit", []string{".audit-table tbody tr"}},
	}
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
}

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
