package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestToolchain proves the browser, the driver and the axe audit work on
// their own, so a failure elsewhere is about the app: a page served with a
// strict Content-Security-Policy is found by role and label, its own inline
// script is blocked (the CSP is enforced, not bypassed), and axe-core
// passes the accessible page and reports the inaccessible one.
func TestToolchain(t *testing.T) {
	const csp = "default-src 'self'; script-src 'self'"
	mux := http.NewServeMux()
	mux.HandleFunc("/good", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		fmt.Fprint(w, `<!doctype html><html lang="en"><head><title>Good</title></head><body><main>
<h1>Good</h1><form><label for="a">Age</label><input id="a" name="age"><button>Start intake</button></form>
<script>document.title = "inline ran";</script></main></body></html>`)
	})
	mux.HandleFunc("/bad", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", csp)
		fmt.Fprint(w, `<!doctype html><html><body><input name="age"><img src="/x.png"><button></button></body></html>`)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()

	page := newPage(t)
	_, err := page.Goto(ts.URL + "/good")
	must(t, err, "goto /good")
	must(t, expect.Locator(page.GetByLabel("Age")).ToBeVisible(), "Age field")
	must(t, expect.Locator(page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Start intake"})).ToBeVisible(), "Start intake button")
	must(t, expect.Page(page).ToHaveTitle("Good"), "the page's CSP blocks its inline script")
	audit(t, page, "toolchain good page")

	_, err = page.Goto(ts.URL + "/bad")
	must(t, err, "goto /bad")
	vs, err := axeViolations(page)
	must(t, err, "axe on /bad")
	found := map[string]bool{}
	for _, v := range vs {
		found[v.ID] = true
	}
	for _, id := range []string{"label", "image-alt", "button-name"} {
		if !found[id] {
			t.Errorf("axe-core did not report %s on an inaccessible page; got %v", id, found)
		}
	}
}
