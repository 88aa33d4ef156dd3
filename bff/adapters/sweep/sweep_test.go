package sweep_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/sweep"
)

// A sweeper calls its function every interval, and never again once
// stopped; Stop waits for the goroutine and may be called twice.
func TestSweepsEveryIntervalUntilStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int64
		s := sweep.Every(time.Minute, func(ctx context.Context) (int64, error) {
			calls.Add(1)
			return 1, nil
		}, slog.New(slog.DiscardHandler))
		time.Sleep(3*time.Minute + time.Second)
		if n := calls.Load(); n != 3 {
			t.Fatalf("%d sweeps in 3 minutes, want 3", n)
		}
		s.Stop()
		s.Stop()
		time.Sleep(10 * time.Minute)
		if n := calls.Load(); n != 3 {
			t.Fatalf("%d sweeps after Stop, want 3", n)
		}
		var none *sweep.Sweeper
		none.Stop()
	})
}
