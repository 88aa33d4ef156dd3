package web_test

import (
	"context"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// goroutinesIn counts the goroutines whose stack runs a function whose
// name holds any of fns.
func goroutinesIn(fns ...string) int {
	buf := make([]byte, 8<<20)
	n := 0
	for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		for _, fn := range fns {
			if strings.Contains(g, fn) {
				n++
				break
			}
		}
	}
	return n
}

// Issue 40: a patient whose first message waits in the key's queue, with
// its turn's stream open, holds no goroutine: neither the turn (it waits in
// the pacer as a record, intakeapi.Client.Queue) nor the browser's stream
// (the relay wakes it when an event comes, a timer when a heartbeat is
// due). The stream still gets its queue places and heartbeats, and the
// app's shutdown still ends it with the retry hint.
func TestAQueuedPatientsStreamHoldsNoGoroutine(t *testing.T) {
	a := startApp(t, func(c *appwire.Config) {
		c.PacerPerMinute = 2
		c.Limits.Heartbeat = 100 * time.Millisecond
	})
	b := a.browser()
	b.say(b.start(), "hello") // the intake's creation and its turn: the key's 2 requests for the minute
	in := b.start()
	j := b.post(in+"/turns", url.Values{"message": {"my head hurts"}, "submission_id": {"queued-1"}}, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
	if j.status != http.StatusAccepted {
		t.Fatalf("send: %d %s", j.status, j.body)
	}
	status, lines, stop := b.openStream(jsonOf(t, j.body)["events_url"].(string))
	defer stop()
	if status != http.StatusOK {
		t.Fatalf("events: %d", status)
	}
	// Its place, then each heartbeat and the place told again (the pacer
	// re-tells it every 2 s): every write comes from a goroutine started
	// for it, which ends when it has written.
	deadline := time.After(10 * time.Second)
	queued, beats := 0, 0
	for queued < 2 || beats < 3 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended while queued (%d places, %d heartbeats)", queued, beats)
			}
			switch {
			case l == "event: queued":
				queued++
			case l == ": heartbeat":
				beats++
			case l == "event: started":
				t.Fatal("the turn started: the minute was not spent")
			}
		case <-deadline:
			t.Fatalf("after 10 s: %d places, %d heartbeats", queued, beats)
		}
	}
	// Between two writes (a heartbeat every 100 ms) nothing of the turn
	// runs: a goroutine parked on the turn or on its stream would be seen
	// at every look.
	idle := false
	for range 200 {
		if goroutinesIn("web.(*turnStream)", "intakes.(*Runner).work", "intakes.(*Runner).launch", "intakes.(*Runner).body") == 0 {
			idle = true
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !idle {
		buf := make([]byte, 8<<20)
		t.Fatalf("goroutines of the turn or its stream at every look in 200 ms while it waits in the queue, want none\n%s", buf[:runtime.Stack(buf, true)])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := a.web.Shutdown(ctx); err != nil {
		t.Logf("shutdown: %v (the queued turn is abandoned, to be settled at the next start)", err)
	}
	var tail []string
	for l := range lines {
		tail = append(tail, l)
	}
	if !strings.Contains(strings.Join(tail, "\n"), "retry: 1000") {
		t.Fatalf("the stream ended at shutdown without the retry hint: %q", tail)
	}
}
