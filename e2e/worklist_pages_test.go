package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	appconfig "github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app/apptest"
)

// TestClinicianWorklistPagesLive: 60 closed intakes make two pages. On the
// second page, a patient's new intake first appears in place (open intakes
// come after closed ones), then escalates to urgent, which belongs on the
// first page: the row leaves this page, a polite announcement says so and
// the "changes elsewhere" link, reached with the keyboard, shows the first
// page with the urgent intake on top. Nothing reloads the page meanwhile.
func TestClinicianWorklistPagesLive(t *testing.T) {
	t.Parallel()
	st := apptest.Start(t, apptest.Options{FragmentDelay: 40 * time.Millisecond, Clinicians: map[string]string{clinUser: clinPassword},
		App: func(c *appconfig.Config) {
			db, err := sqlite.Open(context.Background(), c.DatabasePath, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			now := time.Now()
			for i := range 60 {
				in := &bff.Intake{ID: fmt.Sprintf("wl_%02d", i), Owner: "o", CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(time.Hour),
					UpdatedAt: now.Add(-time.Duration(i+1) * time.Minute), Status: bff.StatusClosed, Terminal: true}
				if err := db.CreateIntake(context.Background(), in); err != nil {
					t.Fatal(err)
				}
			}
		}})
	a := &app{URL: st.URL, Key: st.Key, Sandbox: st.Sandbox, logs: st.Logs}
	clin := newPage(t)
	clinicianSignIn(t, clin, a)
	rows := clin.Locator("#worklist-rows tr[data-intake-id]")
	must(t, expect.Locator(rows).ToHaveCount(50), "50 rows on the first page")
	must(t, clin.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Next page"}).Click(), "follow Next page")
	must(t, expect.Locator(rows).ToHaveCount(10), "the other 10 on the second page")
	must(t, expect.Locator(clin.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Previous page"})).ToBeVisible(), "a Previous page link")
	_, err := clin.Evaluate(`() => { window.__sameDocument = true; }`)
	must(t, err, "mark the document")

	patient := newPage(t)
	startIntake(t, patient, a)
	id := intakeIDOf(t, patient)
	must(t, expect.Locator(worklistRow(clin, id)).ToBeVisible(), "the new open intake appears in place on the second page")
	send(t, patient, "I have crushing chest pain")
	waitReply(t, patient, urgentReplyPart)

	must(t, expect.Locator(worklistRow(clin, id)).ToHaveCount(0), "the escalated intake leaves the second page")
	changes := clin.Locator("#worklist-changes a")
	must(t, expect.Locator(changes).ToBeVisible(), "the changes link shows")
	must(t, expect.Locator(changes).ToHaveText("1 changes elsewhere in the list: show the latest"), "it counts the change")
	must(t, expect.Locator(statusRegion(clin)).ToContainText("Urgent: intake "+id+" escalated, on another page"), "the status region says where it went")
	must(t, expect.Locator(rows).ToHaveCount(10), "the second page keeps its rows")
	same, err := clin.Evaluate(`() => window.__sameDocument === true`)
	must(t, err, "read the marker")
	if same != true {
		t.Fatal("the page was reloaded")
	}
	must(t, changes.Focus(), "focus the changes link")
	must(t, clin.Keyboard().Press("Enter"), "press Enter on it")
	must(t, expect.Locator(rows.First()).ToHaveAttribute("data-intake-id", id), "the first page starts with the urgent intake")
	audit(t, clin, "worklist first page after a change elsewhere")
}
