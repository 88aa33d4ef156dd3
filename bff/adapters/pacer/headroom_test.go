package pacer_test

import (
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
)

// runCall is a scenario run's call: background, leaving headroom free slots.
func runCall(headroom int) intakeapi.Call {
	c := read(pacer.Background)
	c.Headroom = headroom
	return c
}

// waitIn starts c's Wait on a goroutine of the test; the returned channel is
// closed when c is granted (and settled).
func waitIn(t *testing.T, p *pacer.Pacer, c intakeapi.Call) <-chan struct{} {
	granted := make(chan struct{})
	go func() {
		mustWait(t, p, c)(intakeapi.Outcome{Status: 200})
		close(granted)
	}()
	return granted
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// fiveOfSix is a 6-a-minute pacer whose window holds one grant made at 0 s
// and four at 10 s; the clock reads 10 s.
func fiveOfSix(t *testing.T) *pacer.Pacer {
	p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 6}})
	fill(t, p, 1)
	sleepUntil(at(10 * time.Second))
	fill(t, p, 4)
	return p
}

// TestHeadroomWaitsUntilAGrantLeaves: with five grants in a six-a-minute
// window, a call with headroom 1 waits, and is told it is not next, until
// the grant of 0 s leaves the window at 60 s.
func TestHeadroomWaitsUntilAGrantLeaves(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := fiveOfSix(t)
		log := &progressLog{}
		c := runCall(1)
		c.Progress = log.record
		granted := waitIn(t, p, c)
		settled(t, "the run's call held back", func() bool { return p.Stats().Waiting == 1 && !isClosed(granted) })
		// Not "next to go": one request may go before it; at 60 s it will.
		settled(t, "told second, 50 s", func() bool { return log.last() == pacer.Progress{Position: 2, Wait: 50 * time.Second} })
		sleepUntil(at(time.Minute - time.Millisecond))
		settled(t, "still held just before 60 s", func() bool { return !isClosed(granted) })
		sleepUntil(at(time.Minute))
		settled(t, "granted at 60 s", func() bool { return isClosed(granted) })
		for _, pr := range log.all {
			if pr.Position < 2 {
				t.Errorf("told %+v while its headroom held it back", pr)
			}
		}
	})
}

// TestPatientGoesPastAHeldRunCall: a patient's turn that arrives while a
// run's call is held back by its headroom takes the free slot at once.
func TestPatientGoesPastAHeldRunCall(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := fiveOfSix(t)
		run := waitIn(t, p, runCall(1))
		settled(t, "the run's call held back", func() bool { return p.Stats().Waiting == 1 })
		arrived := time.Now()
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
		if d := time.Since(arrived); d != 0 {
			t.Fatalf("the patient waited %s behind a run's call", d)
		}
		// Six in the window now: the run's call waits for two to leave
		// (at 60 s one, at 70 s the rest).
		sleepUntil(at(time.Minute))
		settled(t, "the run's call still held at 60 s", func() bool { return !isClosed(run) })
		sleepUntil(at(70 * time.Second))
		settled(t, "the run's call granted at 70 s", func() bool { return isClosed(run) })
	})
}
