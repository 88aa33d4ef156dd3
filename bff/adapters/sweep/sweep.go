// Package sweep runs a periodic deletion (expired sessions, in either
// store) on a goroutine of its own until it is stopped.
package sweep

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Sweeper calls its function every interval until Stop.
type Sweeper struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Every starts calling fn every interval; what fn deleted is logged at
// debug level, its failures as errors (a failure while stopping is not one).
func Every(interval time.Duration, fn func(ctx context.Context) (int64, error), logger *slog.Logger) *Sweeper {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sweeper{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ticker.C:
				n, err := fn(ctx)
				if err != nil && ctx.Err() == nil {
					logger.Error("sweep failed", slog.Any("err", err))
				} else if n > 0 {
					logger.Debug("swept", slog.Int64("count", n))
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return s
}

// Stop stops the sweeper and waits for its goroutine; safe to call more
// than once, and on a nil Sweeper.
func (s *Sweeper) Stop() {
	if s == nil {
		return
	}
	s.once.Do(s.cancel)
	<-s.done
}
