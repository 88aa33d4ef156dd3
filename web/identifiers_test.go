package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A message or a history holding a real-looking identifier is refused
// before it leaves: nothing reaches the service, nothing is stored or
// logged, the text stays in the form, and the reason says what looked real.
func TestRealIdentifiersAreRefused(t *testing.T) {
	t.Parallel()
	const nhs = "943 476 5919" // a valid check digit
	a := startApp(t)
	b := a.browser()

	p := b.post("/intakes", url.Values{"_csrf": {b.csrf()}, "synthetic": {"on"}, "submission_id": {"s1"},
		"history": {"asthma; NHS number " + nhs}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "NHS number with a valid check digit") ||
		!strings.Contains(p.body, "start with 999") {
		t.Fatalf("a history with a real NHS number: %d %.500s", p.status, p.body)
	}
	if !strings.Contains(p.body, "asthma; NHS number "+nhs) {
		t.Error("the refused history is not kept in the form")
	}
	// Nothing recorded, so nothing for a first turn to take upstream.
	if n := len(a.stack.Intakes(t)); n != 0 {
		t.Errorf("the refused history was recorded: %d intakes", n)
	}

	in := b.start()
	turns := a.upstreamTurns()
	p = b.say(in, "my email is jane.doe@gmail.com and my throat hurts")
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "an email address") ||
		!strings.Contains(p.body, "j•••••••@gmail.com") {
		t.Fatalf("a message with an email address: %d %.500s", p.status, p.body)
	}
	if a.upstreamTurns() != turns || strings.Contains(b.get(in).body, "jane.doe@gmail.com") {
		t.Error("the refused message reached the service or was stored as a turn")
	}
	if p := b.say(in, "my email is jane.doe@example.com and my throat hurts"); p.status != http.StatusOK {
		t.Fatalf("an example.com address is a stand-in: %d", p.status)
	}
	for _, secret := range []string{nhs, "jane.doe@gmail.com"} {
		if strings.Contains(a.stack.Logs.String(), secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}
