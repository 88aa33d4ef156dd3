package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
)

// Patients start together at the key's limit, split over two replicas:
// each creation is followed by its first turn. Grants come in bursts (the
// window frees several slots at once) and the first turns arrive in another
// order than their creations were granted; they go in their creations'
// order, and no patient's place ever goes up.
func TestBudgetPlacesNeverRiseInBursts(t *testing.T) {
	const window = 600 * time.Millisecond
	bs, _ := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: 3, Window: window, Margin: -1}, ProgressEvery: 20 * time.Millisecond}, "a", "b")
	ctx := within(t, 60*time.Second)
	var wg sync.WaitGroup
	logs := make([]*progressLog, 8)
	for i := range logs {
		logs[i] = &progressLog{}
		fu := new(intakeapi.FollowUp)
		create := call(intakeapi.OpCreateIntake, intakeapi.PriorityPatientTurn)
		create.FollowUps, create.Announces = 1, fu
		// joined is closed once the creation is queued (told its place) or
		// granted: the next patient arrives after it, with no sleep.
		joined := make(chan struct{})
		var once sync.Once
		create.Progress = func(p intakeapi.Progress) {
			once.Do(func() { close(joined) })
			logs[i].record(p)
		}
		wg.Go(func() {
			b := bs[i%2]
			waitAndSettle(ctx, t, b, create, ok200)
			once.Do(func() { close(joined) })
			// The create call on the wire, for a varying while: the first
			// turns arrive in another order than their creations were
			// granted (what the test is about), whatever that order is.
			time.Sleep(time.Duration(i%3) * 5 * time.Millisecond)
			first := call(intakeapi.OpStreamTurn, intakeapi.PriorityFirstTurn)
			first.Follows = fu
			first.Progress = logs[i].record
			waitAndSettle(ctx, t, b, first, ok200)
		})
		<-joined
	}
	wg.Wait()
	for i, l := range logs {
		var seq []int
		for _, p := range l.all {
			seq = append(seq, p.Position)
		}
		for j := 1; j < len(seq); j++ {
			if seq[j] > seq[j-1] {
				t.Errorf("patient %d: place went up: %v", i, seq)
				break
			}
		}
		t.Log(fmt.Sprint("patient ", i, ": ", seq))
	}
}
