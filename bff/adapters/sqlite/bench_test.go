package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// BenchmarkCreateUpdateTurn measures one turn's two writes (CreateTurn, then
// UpdateTurn to completed), serially and from parallel goroutines each on
// its own intake. The writers=N variants widen the writer pool to N
// connections, the alternative to one writer, to compare: they count
// failures (SQLITE_BUSY) instead of stopping at the first.
func BenchmarkCreateUpdateTurn(b *testing.B) {
	b.Run("serial", func(b *testing.B) { benchTurns(b, 1, false) })
	for _, writers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("parallel/writers=%d", writers), func(b *testing.B) { benchTurns(b, writers, true) })
	}
}

func benchTurns(b *testing.B, writers int, parallel bool) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.w.SetMaxOpenConns(writers)
	db.w.SetMaxIdleConns(writers)

	var (
		seq, failures atomic.Int64
		mu            sync.Mutex
		lat           []time.Duration // per turn, both writes
	)
	newIntake := func() string {
		id := fmt.Sprint("enc_", seq.Add(1))
		now := time.Now()
		if err := db.CreateIntake(ctx, &bff.Intake{ID: id, Owner: "o", CreatedAt: now, ExpiresAt: now, UpdatedAt: now, Status: "open"}); err != nil {
			failures.Add(1)
		}
		return id
	}
	turn := func(id string, i int) {
		began := time.Now()
		defer func() {
			d := time.Since(began)
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}()
		t := &bff.Turn{IntakeID: id, SubmissionID: fmt.Sprint("s", i), Message: "I have had a sore throat since Monday"}
		if err := db.CreateTurn(ctx, t); err != nil {
			failures.Add(1)
			return
		}
		done := time.Now()
		t.Status, t.Reply, t.Choices, t.CompletedAt = bff.TurnCompleted, "How bad is the pain?", []string{"Mild", "Severe"}, &done
		t.SafetyStatus, t.Disposition = new(string), nil
		if err := db.UpdateTurn(ctx, t); err != nil {
			failures.Add(1)
		}
	}

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	if parallel {
		b.SetParallelism(8) // 8 x GOMAXPROCS goroutines: many turns land at once
		b.RunParallel(func(pb *testing.PB) {
			id := newIntake()
			for i := 0; pb.Next(); i++ {
				turn(id, i)
			}
		})
	} else {
		id := newIntake()
		for i := 0; i < b.N; i++ {
			turn(id, i)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
	b.ReportMetric(float64(failures.Load()), "failures")
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
	}
}
