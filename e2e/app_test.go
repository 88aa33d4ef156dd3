package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	appconfig "github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app/apptest"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// app is one running intake-web with its own sandbox upstream and database
// (apptest: the harness the web tests share).
type app struct {
	URL     string
	Key     string // the upstream API key: must never reach a browser
	Sandbox *sandbox.Server
	logs    *apptest.Logs
	stack   *apptest.Stack
}

type appOptions struct {
	// FragmentDelay is the sandbox's pause between streamed fragments of
	// up to three words; 0 means 40 ms (a reply streams in about a second).
	FragmentDelay time.Duration
	// Clinicians are accounts written to the database before the app starts.
	Clinicians map[string]string
	// PacerPerMinute, when positive, paces the app's upstream calls to that
	// many a minute (a queued wait to look at); 0 means no pacing.
	PacerPerMinute int
	// ScenarioSandbox makes scenario runs play on a limitless sandbox of
	// their own (SCENARIO_TARGET=sandbox), not through the app's upstream
	// and its budget.
	ScenarioSandbox bool
	// ScenarioParallel is the most items of a run played at once
	// (SCENARIO_PARALLEL); 0 means the app's default.
	ScenarioParallel int
	// Engine is the sandbox's engine; nil means the rules engine.
	Engine engine.Engine
	// Now is the app's clock; nil means time.Now.
	Now func() time.Time
}

// startApp serves a fresh app on a loopback port for the test: the real
// rules engine behind a sandbox with no rate limit and fault injection on,
// a SQLite file in the test's temp dir, no pacing and no daily quotas. The
// app's log is printed when the test fails.
func startApp(t *testing.T, opts ...appOptions) *app {
	t.Helper()
	var o appOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.FragmentDelay == 0 {
		o.FragmentDelay = 40 * time.Millisecond
	}
	ao := apptest.Options{FragmentDelay: o.FragmentDelay, Clinicians: o.Clinicians, Engine: o.Engine}
	ao.App = func(c *appconfig.Config) {
		if o.PacerPerMinute > 0 {
			c.PacerPerMinute = o.PacerPerMinute
		}
		if o.ScenarioSandbox {
			c.ScenarioTarget = "sandbox"
		}
		if o.ScenarioParallel > 0 {
			c.ScenarioParallel = o.ScenarioParallel
		}
		if o.Now != nil {
			c.Now = o.Now
		}
	}
	st := apptest.Start(t, ao)
	return &app{URL: st.URL, Key: st.Key, Sandbox: st.Sandbox, logs: st.Logs, stack: st}
}

// The sore-throat conversation of the rules engine for a 30-year-old woman
// who answers "No" to everything: each entry is a part of the assistant's
// reply to the message before it.
var soreThroatNo = []string{
	"Are you drooling, or unable to swallow your own saliva?",
	"Is your breathing noisy or difficult",
	"Are you unable to open your mouth fully",
	"Have you had a fever",
	"Do you have a cough?",
	"Are the glands at the front of your neck swollen or tender?",
	"Are your tonsils swollen",
	"that is all my questions",
}

const (
	soreThroatOpening = "I have had a sore throat for 3 days"
	firstReply        = "Thank you. I will ask a few questions about your sore throat. Are you drooling, or unable to swallow your own saliva?"
	selfCareLabel     = "Self-care advice"
	urgentLabel       = "Urgent: seek emergency care now"
	urgentReplyPart   = "Please call emergency services now"
)

var intakePath = regexp.MustCompile(`/intakes/[^/?#]+(#[^/]*)?$`)

func role(page playwright.Page, r, name string) playwright.Locator {
	return page.GetByRole(playwright.AriaRole(r), playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
}

func conversation(page playwright.Page) playwright.Locator { return role(page, "log", "Conversation") }
func messageBox(page playwright.Page) playwright.Locator {
	return page.GetByLabel("Your message", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
}
func sendButton(page playwright.Page) playwright.Locator { return role(page, "button", "Send") }
func quickReplies(page playwright.Page) playwright.Locator {
	return role(page, "group", "Suggested replies")
}

// patientMessages are the "You" labels of the conversation, one per exchange
// (counted by what a user reads, not by the transcript's markup).
func patientMessages(page playwright.Page) playwright.Locator {
	return conversation(page).GetByText("You", playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)})
}

func statusRegion(page playwright.Page) playwright.Locator { return page.GetByRole("status") }

func quickReply(page playwright.Page, name string) playwright.Locator {
	return quickReplies(page).GetByRole("button", playwright.LocatorGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
}

// fillStartForm fills the start page's fields as a user would.
func fillStartForm(t *testing.T, page playwright.Page, age, sex, history string) {
	t.Helper()
	must(t, page.GetByLabel("Age", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(age), "fill Age")
	_, err := page.GetByLabel("Sex", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).SelectOption(playwright.SelectOptionValues{Values: &[]string{sex}})
	must(t, err, "select Sex %s", sex)
	must(t, page.GetByLabel("Medical history").Fill(history), "fill Medical history")
	must(t, page.GetByLabel("This is a synthetic scenario").Check(), "check the synthetic scenario box")
}

// startIntake opens the start page, fills it for a 30-year-old woman and
// starts an intake; it returns when the intake page shows its message box.
func startIntake(t *testing.T, page playwright.Page, a *app) {
	t.Helper()
	_, err := page.Goto(a.URL + "/")
	must(t, err, "open the start page")
	fillStartForm(t, page, "30", "female", "No known allergies. No regular medicines.")
	must(t, role(page, "button", "Start intake").Click(), "click Start intake")
	must(t, expect.Page(page).ToHaveURL(intakePath), "Start intake leads to /intakes/{id}")
	must(t, expect.Locator(conversation(page)).ToBeAttached(), "the Conversation log is on the intake page")
	must(t, expect.Locator(messageBox(page)).ToBeVisible(), "the message box is on a new intake")
}

// send types a message into the message box and presses Send.
func send(t *testing.T, page playwright.Page, text string) {
	t.Helper()
	must(t, messageBox(page).Fill(text), "type %q into Your message", text)
	must(t, sendButton(page).Click(), "click Send")
}

// waitReply waits until the conversation shows the reply containing want
// and no reply is pending any more.
func waitReply(t *testing.T, page playwright.Page, want string) {
	t.Helper()
	must(t, expect.Locator(conversation(page)).ToContainText(want), "the conversation shows the reply %q", want)
	must(t, expect.Locator(page.Locator("#pending")).ToHaveCount(0), "the reply %q completes", want)
}

// answerNo clicks the "No" quick reply and waits for the reply containing next.
func answerNo(t *testing.T, page playwright.Page, next string) {
	t.Helper()
	no := quickReply(page, "No")
	must(t, expect.Locator(no).ToBeEnabled(), "the No quick reply is enabled")
	must(t, no.Click(), "click the No quick reply")
	waitReply(t, page, next)
}

// countIn counts the non-overlapping occurrences of sub in the locator's text.
func countIn(t *testing.T, l playwright.Locator, sub string) int {
	t.Helper()
	text, err := l.TextContent()
	must(t, err, "read text")
	return strings.Count(text, sub)
}
