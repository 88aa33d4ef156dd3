package app

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// saveWatch follows whether the database can be written: a full disk or a
// database refusing writes makes every page that saves answer 503 (web),
// /readyz not ready with the reason, and one log line a minute rather than
// one a request; it passes by itself once writes succeed again.
type saveWatch struct {
	unwritable func(error) (reason string, ok bool) // the adapter's
	probe      func(context.Context) error          // one small write
	log        *slog.Logger
	now        func() time.Time
	// probeFailing and probeFine bound how often it probes: while writes
	// fail, and while they work.
	probeFailing, probeFine time.Duration

	mu       sync.Mutex
	reason   string    // why the database cannot be written; "" = it can
	since    time.Time // when it stopped
	loggedAt time.Time
	refusals int // requests refused since the last log line
	probedAt time.Time
}

// logEvery is how often the log repeats that the database cannot save.
const logEvery = time.Minute

// refused is web.Deps.CannotSave: whether err is the database refusing
// writes, noted when it is.
func (w *saveWatch) refused(err error) bool {
	reason, ok := w.unwritable(err)
	if ok {
		w.fail(reason, true)
	}
	return ok
}

// fail notes that a write failed for reason; request says a person's
// request was refused for it.
func (w *saveWatch) fail(reason string, request bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	if request {
		w.refusals++
	}
	if w.reason == "" {
		w.reason, w.since = reason, now
		w.log.Error("the database cannot save: pages that save answer 503 (nothing sent, what was typed kept) "+
			"and /readyz says not ready until it can; this is logged once a minute", "reason", reason)
		w.loggedAt, w.refusals = now, 0
		return
	}
	w.reason = reason
	if now.Sub(w.loggedAt) >= logEvery {
		w.log.Error("the database still cannot save", "reason", reason, "since", w.since.UTC().Format(time.RFC3339),
			"requests_refused", w.refusals)
		w.loggedAt, w.refusals = now, 0
	}
}

// state is /readyz's view: why the database cannot be written, "" when it
// can. It probes a write now and then (more often while failing), so the
// state clears by itself once space returns.
func (w *saveWatch) state(ctx context.Context) string {
	w.mu.Lock()
	every := w.probeFine
	if w.reason != "" {
		every = w.probeFailing
	}
	due := w.probedAt.IsZero() || w.now().Sub(w.probedAt) >= every
	if due {
		w.probedAt = w.now()
	}
	w.mu.Unlock()
	if due {
		err := w.probe(ctx)
		if reason, ok := w.unwritable(err); ok {
			w.fail(reason, false)
		} else if err == nil {
			w.recovered()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason
}

func (w *saveWatch) recovered() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reason == "" {
		return
	}
	w.log.Info("the database can save again", "was", w.reason, "since", w.since.UTC().Format(time.RFC3339),
		"requests_refused", w.refusals)
	w.reason, w.refusals = "", 0
}
