package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app/apptest"
)

// The clinician area's moments (issue #14): the sandbox fault panel arms a
// fault that a patient's next turn then meets; one-time messages after a
// redirect; the worklist telling intakes apart by their opening message and
// protocol, and readable on a phone; error summaries that take the focus.

// startFaultsApp is startClinicApp with the fault panel on, as the binary
// runs with the embedded sandbox and SANDBOX_FAULTS=1.
func startFaultsApp(t *testing.T) *app {
	t.Helper()
	st := apptest.Start(t, apptest.Options{
		FragmentDelay: 40 * time.Millisecond,
		Clinicians:    map[string]string{clinUser: clinPassword},
		App:           func(c *appwire.Config) { c.SandboxFaults = true },
	})
	return &app{URL: st.URL, Key: st.Key, Sandbox: st.Sandbox, logs: st.Logs}
}

const headacheOpening = "I have had a headache since this morning and it keeps getting worse through the day, mostly behind my eyes"

func flash(page playwright.Page) playwright.Locator { return page.Locator("#flash[role=status]") }

func TestClinicianMoments(t *testing.T) {
	t.Parallel()
	a := startFaultsApp(t)

	// A patient opens with a long headache message.
	patient := newPage(t)
	startIntake(t, patient, a)
	id := intakeIDOf(t, patient)
	send(t, patient, headacheOpening)
	must(t, expect.Locator(patientMessages(patient)).ToHaveCount(1), "one exchange")
	must(t, expect.Locator(patient.Locator("#pending")).ToHaveCount(0), "the first reply completes")

	// The clinician arms a stream_error for this intake through the panel.
	clin := newPage(t)
	clinicianSignIn(t, clin, a)
	must(t, expect.Locator(clin.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Audit log", Exact: playwright.Bool(true)})).ToHaveCount(1), "Audit log is linked once")
	must(t, clin.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Sandbox faults"}).Click(), "open Sandbox faults")
	must(t, expect.Locator(role(clin, "heading", "Sandbox faults")).ToBeVisible(), "the fault panel")
	audit(t, clin, "fault panel")

	// Nothing chosen: the error summary takes the focus and links the field.
	must(t, role(clin, "button", "Arm fault").Click(), "arm without a kind")
	summary := clin.Locator("#error-summary")
	must(t, expect.Locator(summary).ToBeFocused(), "the error summary has the focus")
	must(t, expect.Locator(summary.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Choose a fault kind."})).ToHaveAttribute("href", "#kind"), "the error links its field")
	shot(t, clin, "moments-01-fault-form-error")
	audit(t, clin, "fault form with an error")

	must(t, byLabel(clin, "stream_error").Check(), "choose stream_error")
	must(t, byLabel(clin, "Intake id (optional)").Fill(id), "fill the intake id")
	must(t, role(clin, "button", "Arm fault").Click(), "arm the fault")
	must(t, expect.Locator(flash(clin)).ToHaveText("Fault armed: stream_error for the next turn of "+id+"."), "the panel says it is armed")
	shot(t, clin, "moments-02-fault-armed")
	_, err := clin.Reload()
	must(t, err, "reload the panel")
	must(t, expect.Locator(flash(clin)).ToHaveCount(0), "the message is shown once")
	if html, _ := clin.Content(); strings.Contains(html, a.Key) {
		t.Error("the sandbox key reached the clinician's page")
	}

	// The patient's next turn meets it: the reply fails and may be sent again.
	send(t, patient, "No")
	must(t, expect.Locator(conversation(patient)).ToContainText(cutOffMessage), "the armed fault struck the turn (a stream_error after part of the reply)")
	must(t, expect.Locator(role(patient, "button", "Send again")).ToBeVisible(), "Send again is offered")
	shot(t, patient, "moments-03-patient-meets-fault")

	// Reading the handoff records the protocol; the worklist shows it and
	// the opening message, shortened.
	_, err = clin.Goto(a.URL + "/clinician/intakes/" + id)
	must(t, err, "open the handoff")
	must(t, expect.Locator(clin.Locator("main")).ToContainText("headache.v1"), "the handoff names headache.v1")
	_, err = clin.Goto(a.URL + "/clinician")
	must(t, err, "open the worklist")
	row := worklistRow(clin, id)
	must(t, expect.Locator(worklistCell(t, clin, row, "Protocol")).ToHaveText("headache.v1"), "the worklist names the protocol of an open intake")
	opening := worklistCell(t, clin, row, "Opening message")
	must(t, expect.Locator(opening).ToContainText("I have had a headache since this morning"), "the opening message")
	must(t, expect.Locator(opening.Locator("[aria-hidden=true]")).ToHaveText("I have had a headache since this morning and it keeps getting worse through the…"), "shortened to 80 characters with an ellipsis")
	must(t, expect.Locator(opening.Locator(".visually-hidden")).ToHaveText(headacheOpening), "the full text for screen readers")
	shot(t, clin, "moments-04-worklist-desktop")
	audit(t, clin, "worklist with an opening message")

	// A review saved is said once.
	_, err = clin.Goto(a.URL + "/clinician/intakes/" + id)
	must(t, err, "open the handoff")
	must(t, byLabel(clin, "Review note (optional)").Fill("Seen in the moments test."), "type a note")
	must(t, role(clin, "button", "Mark as reviewed").Click(), "mark as reviewed")
	must(t, expect.Locator(flash(clin)).ToHaveText("Review saved."), "Review saved is said")
	audit(t, clin, "handoff after a review")
	_, err = clin.Reload()
	must(t, err, "reload the handoff")
	must(t, expect.Locator(flash(clin)).ToHaveCount(0), "Review saved is said once")

	// On a phone the worklist is a list of cards: nothing scrolls sideways,
	// Disposition and Urgent are on screen.
	phone := newPage(t, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 390, Height: 844}, IsMobile: playwright.Bool(true), HasTouch: playwright.Bool(true)})
	// A wrong password first: the error summary takes the focus and links
	// the Username field.
	_, err = phone.Goto(a.URL + "/clinician/signin")
	must(t, err, "open the sign-in page")
	submitSignIn(t, phone, clinUser, "not the password!")
	must(t, expect.Locator(phone.Locator("#error-summary")).ToBeFocused(), "the sign-in error summary has the focus")
	must(t, expect.Locator(phone.Locator("#error-summary a")).ToHaveAttribute("href", "#username"), "the error links the Username field")
	must(t, phone.Locator("#error-summary a").Click(), "follow the error's link")
	must(t, expect.Locator(byLabel(phone, "Username")).ToBeFocused(), "the link leads to the Username field")
	shot(t, phone, "moments-06-signin-error-phone")
	audit(t, phone, "sign-in error on a phone")
	clinicianSignIn(t, phone, a)
	prow := worklistRow(phone, id)
	must(t, expect.Locator(prow).ToBeVisible(), "the intake's row")
	for _, label := range []string{"Opening message", "Disposition", "Urgent", "Protocol"} {
		cell := prow.Locator(`td[data-label="` + label + `"]`)
		must(t, expect.Locator(cell).ToBeVisible(), "the %s cell is shown", label)
		box, err := cell.BoundingBox()
		must(t, err, "measure %s", label)
		if box.X < 0 || box.X+box.Width > 390 {
			t.Errorf("the %s cell runs off the screen: %+v", label, box)
		}
	}
	if w, err := evalString(phone, `() => String(document.documentElement.scrollWidth)`); err != nil || w != "390" {
		t.Errorf("the phone page is %s px wide (%v), want 390: it scrolls sideways", w, err)
	}
	// The header does not wrap into a jumble: the navigation has its own row.
	shot(t, phone, "moments-05-worklist-phone-390")
	audit(t, phone, "worklist on a phone")

	// Signing out is said on the sign-in page, once.
	must(t, role(phone, "button", "Sign out").Click(), "sign out")
	must(t, expect.Page(phone).ToHaveURL(signInPath), "the sign-in page")
	must(t, expect.Locator(flash(phone)).ToHaveText("You are signed out."), "signed out is said")
	_, err = phone.Reload()
	must(t, err, "reload the sign-in page")
	must(t, expect.Locator(flash(phone)).ToHaveCount(0), "signed out is said once")
}
