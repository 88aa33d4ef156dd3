package pacer

import (
	"context"
	"fmt"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
)

var _ intakeapi.AsyncGate = (*Pacer)(nil)

// Await is Wait without a goroutine waiting for the caller: it returns at
// once, and granted is called exactly once, on a goroutine of its own
// (never before Await returns), with what Wait would have returned. The
// caller takes its place in the same queue as Wait's callers, under the
// same rules, and its Call.Progress is told its place and wait as Wait
// tells it (at each change of the queue, and at least every
// Config.ProgressEvery while it waits). One goroutine serves every caller
// of Await, and only while any waits: a thousand patients queued behind the
// key cost a thousand small records, not a thousand goroutine stacks.
func (p *Pacer) Await(ctx context.Context, call intakeapi.Call, granted func(func(intakeapi.Outcome), error)) {
	if err := context.Cause(ctx); err != nil {
		go granted(nil, fmt.Errorf("pacer: not waiting: %w", err))
		return
	}
	kind := pacing.QuotaOf(call.Op)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.quotaErr(kind, p.clk.Now()); err != nil {
		go granted(nil, err)
		return
	}
	a := &awaiting{ctx: ctx, call: call, kind: kind, granted: granted, last: Progress{Position: -1}}
	a.stop = context.AfterFunc(ctx, p.wake)
	p.enqueue(call, a)
	if !p.driving {
		p.driving = true
		go p.drive()
	}
}

// wake has drive look at its callers again: one's context has ended.
func (p *Pacer) wake() {
	p.mu.Lock()
	p.broadcast()
	p.mu.Unlock()
}

// drive serves the callers of Await until none is left. It does for each
// what Wait's loop does for its own caller: a caller whose context ended
// or whose quota is spent leaves with the error, one at the head of the
// queue goes when the window allows; then each is told its place. It
// sleeps until the queue changes, the next slot frees or the progress is
// due again.
func (p *Pacer) drive() {
	var out []func() // run once mu is released
	for {
		p.mu.Lock()
		now := p.clk.Now()
		p.prune(now)
		for p.settleAwaiting(now, &out) {
		}
		if p.awaiting == 0 {
			p.driving = false
			p.mu.Unlock()
			for _, f := range out {
				f()
			}
			return
		}
		var wake time.Time
		ahead, aheadFollowUps := 0, 0
		for _, w := range p.queue {
			if a := w.async; a != nil {
				if ahead == 0 {
					wake = earliest(wake, p.cfg.NextSlot(p.state(), now, w.headroom))
				}
				if a.call.Progress != nil {
					if prog := p.progress(w, ahead, aheadFollowUps, now); prog != a.last {
						a.last = prog
						out = append(out, func() { a.call.Progress(prog) })
					}
					if p.cfg.ProgressEvery > 0 {
						wake = earliest(wake, now.Add(p.cfg.ProgressEvery))
					}
				}
			}
			if !p.heldBack(w) {
				ahead++
				aheadFollowUps += w.followUps
			}
		}
		ch := p.changed
		p.mu.Unlock()
		for _, f := range out {
			f()
		}
		clear(out)
		out = out[:0]
		var (
			timer Timer
			tc    <-chan time.Time
		)
		if !wake.IsZero() {
			timer = p.clk.NewTimerAt(wake)
			tc = timer.C()
		}
		select {
		case <-ch:
		case <-tc:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// settleAwaiting lets one caller of Await leave the queue, if one must:
// its context ended, its quota is spent, or it is at the head and its slot
// has come. It reports whether one did (the queue changed: look again).
// Caller holds mu.
func (p *Pacer) settleAwaiting(now time.Time, out *[]func()) bool {
	ahead := 0
	for i, w := range p.queue {
		a := w.async
		if a == nil {
			if !p.heldBack(w) {
				ahead++
			}
			continue
		}
		var err error
		if cause := context.Cause(a.ctx); cause != nil {
			err = fmt.Errorf("pacer: stopped waiting at position %d: %w", i+1, cause)
		} else {
			err = p.quotaErr(a.kind, now)
		}
		if err != nil {
			p.remove(w)
			*out = append(*out, func() { go a.granted(nil, err) })
			return true
		}
		if ahead == 0 && !p.cfg.NextSlot(p.state(), now, w.headroom).After(now) {
			release := p.grant(w, a.call, a.kind, now)
			*out = append(*out, func() {
				go func() {
					p.journalGrant(a.ctx, a.kind, now)
					a.granted(release, nil)
				}()
			})
			return true
		}
		if !p.heldBack(w) {
			ahead++
		}
	}
	return false
}

// earliest is the earlier of a and b, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}
