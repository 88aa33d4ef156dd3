package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
)

// Many intakes written at once, with readers alongside: no error, nothing
// lost.
func TestConcurrentWritersOnDifferentIntakes(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	const intakes, turnsEach = 40, 15
	for i := range intakes {
		storetest.MustCreateIntake(t, db, fmt.Sprint("enc_", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, intakes*2)
	for i := range intakes {
		id := fmt.Sprint("enc_", i)
		wg.Go(func() { // writer
			for j := range turnsEach {
				tr := &bff.Turn{IntakeID: id, SubmissionID: fmt.Sprint("s", j), Message: "m"}
				if err := db.CreateTurn(ctx, tr); err != nil {
					errs <- fmt.Errorf("%s create %d: %w", id, j, err)
					return
				}
				tr.Status, tr.Reply = bff.TurnCompleted, "ok"
				if err := db.UpdateTurn(ctx, tr); err != nil {
					errs <- fmt.Errorf("%s update %d: %w", id, j, err)
					return
				}
				in, err := db.Intake(ctx, id)
				if err != nil {
					errs <- err
					return
				}
				in.TurnCount = tr.Index
				if err := db.UpdateIntake(ctx, in); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() { // reader
			for range turnsEach {
				if _, err := db.Turns(ctx, id); err != nil {
					errs <- err
					return
				}
				if _, err := db.PendingTurns(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range intakes {
		id := fmt.Sprint("enc_", i)
		turns, err := db.Turns(ctx, id)
		if err != nil || len(turns) != turnsEach || turns[turnsEach-1].Index != turnsEach {
			t.Fatalf("%s: %d turns, %v", id, len(turns), err)
		}
		in, err := db.Intake(ctx, id)
		if err != nil || in.TurnCount != turnsEach {
			t.Fatalf("%s: turn count %d, %v", id, in.TurnCount, err)
		}
	}
	if p, err := db.PendingTurns(ctx); err != nil || len(p) != 0 {
		t.Fatalf("pending %v, %v", storetest.TurnKeys(p), err)
	}
}

// Two handles on one file stand for two processes: busy_timeout makes
// their writers wait for each other; the constraints still decide.
func TestTwoHandlesOneFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	var dbs [2]*sqlite.DB
	for i := range dbs {
		db, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[i] = db
	}
	storetest.MustCreateIntake(t, dbs[0], "enc_two")
	const n = 40
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = dbs[i%2].CreateTurn(ctx, &bff.Turn{IntakeID: "enc_two", SubmissionID: fmt.Sprint("s", i), Message: "m"})
		})
	}
	close(start)
	wg.Wait()
	wins := 0
	for i, err := range errs {
		if err == nil {
			wins++
		} else if bff.ErrorCode(err) != bff.ECONFLICT {
			t.Errorf("goroutine %d: %v", i, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d wins, want 1", wins)
	}
}
