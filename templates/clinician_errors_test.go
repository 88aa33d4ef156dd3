package templates

import (
	"strings"
	"testing"
)

// Every clinician form that comes back with errors starts with an error
// summary: focusable (clinician.js focuses it), each error a link to its
// field, the field described by it.
func TestClinicianErrorSummaries(t *testing.T) {
	check := func(t *testing.T, d *doc, href, msg string) {
		t.Helper()
		s := d.byID("error-summary")
		if s == nil || attrOr(s, "tabindex") != "-1" || attrOr(s, "role") != "alert" {
			t.Fatalf("no focusable error summary: %s", d.src)
		}
		if _, ok := attr(s, "data-error-summary"); !ok {
			t.Errorf("the summary lacks data-error-summary (clinician.js focuses it by that)")
		}
		links := all(s, tag("a"))
		if href == "" {
			if len(links) != 0 || !strings.Contains(text(s), msg) {
				t.Errorf("a form-level error: %d links, %q", len(links), text(s))
			}
			return
		}
		if len(links) != 1 || attrOr(links[0], "href") != href || !strings.Contains(text(links[0]), msg) {
			t.Errorf("summary links: %v", links)
		}
		if d.byID(strings.TrimPrefix(href, "#")) == nil {
			t.Errorf("the summary links %s, which is not on the page", href)
		}
	}
	t.Run("sign-in", func(t *testing.T) {
		p := SignInPage{Layout: clinLayout("Sign in"), Error: "The username or password is wrong.", ErrorField: "username", Username: "dr.x"}
		d := render(t, SignInPageView(p))
		check(t, d, "#username", "The username or password is wrong.")
		if u := d.byID("username"); attrOr(u, "aria-invalid") != "true" || attrOr(u, "aria-describedby") != "error-summary" {
			t.Errorf("the username field is not marked")
		}
		p.ErrorField = ""
		p.Error = "Too many attempts."
		check(t, render(t, SignInPageView(p)), "", "Too many attempts.")
	})
	t.Run("review", func(t *testing.T) {
		p := HandoffPage{Layout: clinLayout("Handoff"), ID: "enc_1", ReviewAction: "/clinician/intakes/enc_1/review", ReviewError: "The note is too long.", ReviewNote: "kept"}
		check(t, render(t, HandoffPageView(p)), "#review-note", "The note is too long.")
		p.ReviewError = ""
		if render(t, HandoffPageView(p)).byID("error-summary") != nil {
			t.Error("an error summary without an error")
		}
	})
	t.Run("faults", func(t *testing.T) {
		p := FaultsPage{Layout: clinLayout("Sandbox faults"), Action: "/clinician/faults",
			Kinds: []FaultKindOption{{"upstream_error", "502"}}, Errors: FieldErrors{"count": "The count must be a whole number from 1 to 20."}}
		d := render(t, FaultsPageView(p))
		check(t, d, "#count", "The count must be a whole number")
		if c := d.byID("count"); attrOr(c, "aria-invalid") != "true" || attrOr(c, "aria-describedby") != "count-error" {
			t.Errorf("the count field is not marked")
		}
		if d.byID("kind") == nil {
			t.Error("the first kind has no id=kind for the summary to link")
		}
	})
}
