package pacer_test

// The client and the pacer together against the sandbox, in a synctest
// bubble: the sandbox is reached in memory (sandboxtest), and the pacer, the
// client and the sandbox all read the bubble's clock, so limits and pauses
// are exercised at their real durations without waiting for them.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
	"github.com/clinical-intake/intake-web/sandbox/sandboxtest"
)

const key = "cis_sb_0123456789abcdef"

// observed wraps a Gate and records every outcome reported to it.
type observed struct {
	intakeapi.Gate
	mu       sync.Mutex
	outcomes []intakeapi.Outcome
}

func (o *observed) Wait(ctx context.Context, c intakeapi.Call) (func(intakeapi.Outcome), error) {
	rel, err := o.Gate.Wait(ctx, c)
	if err != nil {
		return nil, err
	}
	return func(out intakeapi.Outcome) {
		o.mu.Lock()
		o.outcomes = append(o.outcomes, out)
		o.mu.Unlock()
		rel(out)
	}, nil
}

func (o *observed) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.outcomes)
}

func (o *observed) statuses() map[int]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := map[int]int{}
	for _, out := range o.outcomes {
		m[out.Status]++
	}
	return m
}

type rig struct {
	clk    *clock
	pacer  *pacer.Pacer
	gate   *observed
	client *intakeapi.Client
	srv    *sandboxtest.Server
}

// newRig builds the rig; call it inside the test's bubble (inBubble).
func newRig(t *testing.T, pcfg pacer.Config, smod func(*sandbox.Config)) *rig {
	t.Helper()
	scfg := sandbox.DefaultConfig()
	scfg.Keys = []string{key}
	scfg.Engine = enginetest.Scripted{}
	scfg.FragmentDelay = time.Millisecond
	scfg.Faults = true
	scfg.FaultRetryAfter = 7 * time.Second
	if smod != nil {
		smod(&scfg)
	}
	srv := sandboxtest.Start(t, scfg)
	clk := &clock{}
	pcfg.Clock = clk
	p := pacer.New(pcfg)
	g := &observed{Gate: p}
	c, err := intakeapi.New(intakeapi.Config{BaseURL: srv.URL, APIKey: key, Gate: g, HTTPClient: srv.Client})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{clk: clk, pacer: p, gate: g, client: c, srv: srv}
}

func TestClientThroughPacerNeverHitsTheRateLimit(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(t, pacer.Config{Rules: pacing.Rules{PerMinute: 6}}, nil) // sandbox: 6 a minute too
		in, _, err := r.client.CreateIntake(t.Context(), intakeapi.NewIntake{})
		if err != nil {
			t.Fatal(err)
		}
		const readers = 12
		var wg sync.WaitGroup
		for range readers {
			wg.Go(func() {
				if _, _, err := r.client.Summary(t.Context(), in.EncounterID); err != nil {
					errorUnlessEnded(t, err)
				}
			})
		}
		// 5 reads fit beside the create in the first minute, 6 in the second,
		// 1 in the third; with the margin each slot frees 61 s after its grant.
		// The sandbox shares the bubble's clock and stamps requests on arrival.
		for k, waiting := range []int{7, 1, 0} {
			sleepUntil(at(time.Duration(k) * (time.Minute + pacing.DefaultMargin)))
			settled(t, fmt.Sprintf("minute %d's reads answered, %d queued", k, waiting), func() bool {
				return r.pacer.Stats().Waiting == waiting && r.gate.count() == 1+readers-waiting
			})
		}
		wg.Wait()
		if s := r.gate.statuses(); s[429] != 0 || s[200] != readers {
			t.Fatalf("outcomes by status %v: the pacer let a request hit the limit", s)
		}
		if got := r.srv.Service.Stats().Requests["summary"]; got != readers {
			t.Fatalf("sandbox served %d summaries", got)
		}
	})
}

func TestRateLimitedPausesThePacerUntilRetryAfter(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(t, pacer.Config{Rules: pacing.Rules{PerMinute: 6}}, func(c *sandbox.Config) { c.RPM = 0 })
		ctx := t.Context()
		in, _, err := r.client.CreateIntake(ctx, intakeapi.NewIntake{})
		if err != nil {
			t.Fatal(err)
		}
		arm(t, r, in.EncounterID, "rate_limited")
		type result struct {
			meta intakeapi.Meta
			err  error
		}
		res := make(chan result, 1)
		go func() {
			_, meta, err := r.client.Turn(ctx, in.EncounterID, "hello", "sub-1")
			res <- result{meta, err}
		}()
		settled(t, "the retry waits in the pacer", func() bool {
			s := r.pacer.Stats()
			return s.Waiting == 1 && s.PausedUntil.Equal(t0.Add(7*time.Second)) && r.clk.pending() == 1
		})
		// Everyone waits during the pause, reads included.
		readDone := make(chan error, 1)
		go func() {
			_, _, err := r.client.Handoff(ctx, in.EncounterID)
			readDone <- err
		}()
		settled(t, "the read queued behind the turn", func() bool { return r.pacer.Stats().Waiting == 2 })
		sleepUntil(at(7*time.Second - time.Millisecond))
		settled(t, "both still queued just before the pause ends", func() bool { return r.pacer.Stats().Waiting == 2 })
		got := <-res
		if got.err != nil || got.meta.Attempts != 2 {
			t.Fatalf("turn: %+v %v", got.meta, got.err)
		}
		if err := <-readDone; err != nil {
			t.Fatal(err)
		}
		if done := time.Now(); done.After(at(8 * time.Second)) {
			t.Fatalf("the turn and the read done at %s, want just after the 7 s pause", done.Sub(t0))
		}
	})
}

func TestReplaysAndRefusalsDoNotSpendTheQuota(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(t, pacer.Config{Rules: pacing.Rules{PerMinute: -1, TurnsPerDay: 2}}, func(c *sandbox.Config) { c.RPM = 0 })
		ctx := t.Context()
		in, _, err := r.client.CreateIntake(ctx, intakeapi.NewIntake{})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 { // one turn, two replays
			if _, _, err := r.client.Turn(ctx, in.EncounterID, "hello", "sub-1"); err != nil {
				t.Fatal(err)
			}
		}
		arm(t, r, in.EncounterID, "upstream_error")
		arm(t, r, in.EncounterID, "upstream_error")
		if _, _, err := r.client.Turn(ctx, in.EncounterID, "again", "sub-2"); !intakeapi.IsCode(err, intakeapi.CodeUpstreamError) {
			t.Fatalf("err %v", err)
		}
		if s := r.pacer.Stats(); s.TurnsUsed != 1 || s.IntakesUsed != 1 {
			t.Fatalf("stats %+v: replays and refused turns spend nothing", s)
		}
		if _, _, err := r.client.Turn(ctx, in.EncounterID, "second", "sub-3"); err != nil {
			t.Fatal(err)
		}
		before := r.srv.Service.Stats().Requests["turn"]
		_, _, err = r.client.Turn(ctx, in.EncounterID, "third", "sub-4")
		var qe *pacer.QuotaError
		if !errors.As(err, &qe) || !errors.Is(err, pacer.ErrQuotaSpent) || !intakeapi.IsCode(err, intakeapi.CodeQuotaExceeded) {
			t.Fatalf("third turn: %v, want an early quota refusal", err)
		}
		if _, err := r.client.StreamTurn(ctx, in.EncounterID, "third"); !errors.Is(err, pacer.ErrQuotaSpent) {
			t.Fatalf("streaming third turn: %v", err)
		}
		if after := r.srv.Service.Stats().Requests["turn"]; after != before {
			t.Fatalf("a refused turn reached the service (%d -> %d)", before, after)
		}
		// Reads still go.
		if _, _, err := r.client.Handoff(ctx, in.EncounterID); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPriorityAndProgressTravelWithTheContext(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		r := newRig(t, pacer.Config{Rules: pacing.Rules{PerMinute: 1}}, func(c *sandbox.Config) { c.RPM = 0 })
		ctx := t.Context()
		in, _, err := r.client.CreateIntake(ctx, intakeapi.NewIntake{}) // spends the minute
		if err != nil {
			t.Fatal(err)
		}
		var (
			mu    sync.Mutex
			order []string
			wg    sync.WaitGroup
		)
		record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
		wg.Go(func() {
			bg := intakeapi.WithPriority(ctx, intakeapi.PriorityBackground)
			if _, _, err := r.client.Summary(bg, in.EncounterID); err != nil {
				errorUnlessEnded(t, err)
			}
			record("background")
		})
		settled(t, "background queued", func() bool { return r.pacer.Stats().Waiting == 1 })
		wg.Go(func() {
			rc := intakeapi.WithPriority(ctx, intakeapi.PriorityReconciliation)
			if _, _, err := r.client.Handoff(rc, in.EncounterID); err != nil {
				errorUnlessEnded(t, err)
			}
			record("reconciliation")
		})
		settled(t, "reconciliation queued", func() bool { return r.pacer.Stats().Waiting == 2 })
		prog := &progressRecorder{}
		wg.Go(func() {
			pc := intakeapi.WithProgress(ctx, prog.record)
			if _, _, err := r.client.Turn(pc, in.EncounterID, "hello", ""); err != nil {
				errorUnlessEnded(t, err)
			}
			record("turn")
		})
		settled(t, "the turn told it goes first", func() bool {
			return prog.get() == pacer.Progress{Position: 1, Wait: time.Minute + pacing.DefaultMargin}
		})
		// One slot every 61 s (a minute and the margin) after the create's.
		for i := range 3 {
			slot := at(time.Duration(i+1) * (time.Minute + pacing.DefaultMargin))
			sleepUntil(slot.Add(-time.Millisecond))
			settled(t, fmt.Sprintf("call %d not done before its slot", i+1), func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == i })
			// Done within a second of its slot (the sandbox takes a few of
			// the bubble's milliseconds to answer a turn).
			sleepUntil(slot.Add(time.Second))
			settled(t, fmt.Sprintf("call %d done", i+1), func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == i+1 })
		}
		wg.Wait()
		if want := []string{"turn", "reconciliation", "background"}; !equalStrings(order, want) {
			t.Fatalf("order %v, want %v", order, want)
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func arm(t *testing.T, r *rig, encounterID, kind string) {
	t.Helper()
	req, _ := newFaultRequest(r.srv.URL, encounterID, kind)
	resp, err := r.srv.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("arm %s: %s", kind, resp.Status)
	}
}
