package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// BenchHotPath measures one turn's store calls on the hot path, serially,
// each turn on an intake of its own (so reads do not grow): CreateIntake,
// CreateTurn (leased), MarkTurnStreaming, SettleTurn with the intake, then a
// page's reads (Intake, Turns). It reports turns/s.
func BenchHotPath(b *testing.B, db Stores) {
	ctx := context.Background()
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		id := fmt.Sprint("bench-", i)
		in := &bff.Intake{ID: id, Owner: "o", CreatedAt: now, ExpiresAt: now.Add(time.Hour), UpdatedAt: now, Status: bff.StatusOpen}
		if err := db.CreateIntake(ctx, in); err != nil {
			b.Fatal(err)
		}
		t := &bff.Turn{IntakeID: id, SubmissionID: fmt.Sprint("s", i), Message: "I have had a sore throat since Monday",
			LeaseOwner: "replica-1", LeaseUntil: now.Add(time.Minute)}
		if err := db.CreateTurn(ctx, t); err != nil {
			b.Fatal(err)
		}
		t.Release = "r1"
		if err := db.MarkTurnStreaming(ctx, t); err != nil {
			b.Fatal(err)
		}
		done := time.Now()
		t.Status, t.Reply, t.Choices, t.CompletedAt = bff.TurnCompleted, "How bad is the pain?", []string{"Mild", "Severe"}, &done
		in.TurnCount, in.UpdatedAt = i+1, done
		if err := db.SettleTurn(ctx, t, in); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Intake(ctx, id); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Turns(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
}
