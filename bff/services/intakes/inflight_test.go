package intakes_test

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/sandbox"
)

// Issue 40: a turn in flight reads its reply on a goroutine started once
// the turn was sent, not on the one that sent it: the sending (the SQLite
// writes, the request) grew that one's stack to 8 KiB, which a turn held
// for minutes would keep; the reading one holds a few frames.
func TestAReplyIsReadOnAGoroutineThatDidNotSendIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, func(c *sandbox.Config) { c.FirstTokenDelay = time.Hour })
		id := f.start()
		turn, err := f.svc.SendTurn(context.Background(), "owner-1", id, "my head hurts", "sub-inflight")
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // sent, answered, its first fragment held
		replay, sub, _ := f.hub.Subscribe(bff.TurnKey(id, turn.Index), 0)
		sub.Cancel()
		if !slices.ContainsFunc(replay, func(e bff.Event) bool { return e.Name == bff.EventStarted }) {
			t.Fatalf("the turn has not started: %v", replay)
		}
		buf := make([]byte, 1<<20)
		var readers []string
		for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "intakes.(*Runner).relay") {
				readers = append(readers, g)
			}
		}
		if len(readers) != 1 {
			t.Fatalf("%d goroutines reading the reply, want 1\n%s", len(readers), strings.Join(readers, "\n\n"))
		}
		for _, sent := range []string{"intakes.(*Runner).work", "intakes.(*Runner).run(", "intakes.(*Runner).markStreaming"} {
			if strings.Contains(readers[0], sent) {
				t.Fatalf("the reply is read on the goroutine that sent the turn (%s in its stack)\n%s", sent, readers[0])
			}
		}
	})
}
