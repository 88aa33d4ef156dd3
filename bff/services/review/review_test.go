package review_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/services/intakes"
	"github.com/clinical-intake/intake-web/bff/services/review"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
	"github.com/clinical-intake/intake-web/sandbox/sandboxtest"
)

const key = "cis_sb_0123456789abcdef0123456789abcdef"

// failingHandoffs is the store with handoff writes failing.
type failingHandoffs struct{ *sqlite.DB }

func (failingHandoffs) PutHandoff(context.Context, *bff.StoredHandoff) error {
	return errors.New("disk full")
}

type stack struct {
	sb      *sandboxtest.Server
	db      *sqlite.DB
	reviews *review.Service
	id      string
}

// newStack starts an open intake with one answered turn, and the review
// service over handoffs (the store, or one whose writes fail).
func newStack(t *testing.T, failWrites bool) *stack {
	cfg := sandbox.DefaultConfig()
	cfg.Keys, cfg.Engine, cfg.RPM, cfg.FragmentDelay = []string{key}, enginetest.Scripted{}, 0, time.Millisecond
	sb := sandboxtest.Start(t, cfg)
	client, err := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key, HTTPClient: sb.Client})
	if err != nil {
		t.Fatal(err)
	}
	db := sqlitetest.MustOpenDB(t)
	patients, runner := intakes.New(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Hub: relay.NewHub(time.Minute, nil)})
	t.Cleanup(func() { _ = runner.Shutdown(context.Background()) })
	ctx := context.Background()
	in, err := patients.StartIntake(ctx, "owner", bff.StartForm{Synthetic: true, SubmissionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := patients.SendTurnBlocking(ctx, "owner", in.ID, "hello", "t1")
	if err != nil {
		t.Fatal(err)
	}
	patients.WaitSettled(ctx, in.ID, turn.Index)
	var handoffs bff.HandoffStore = db
	if failWrites {
		handoffs = failingHandoffs{db}
	}
	rs := review.New(review.Deps{Client: client, Intakes: db, Handoffs: handoffs, Reviews: db, Audit: db, Worklist: db, Feed: relay.NewFeed(10)})
	return &stack{sb: sb, db: db, reviews: rs, id: in.ID}
}

// Clinicians opening the same open intake's handoff together cost one
// upstream read.
func TestConcurrentHandoffReadsShareOneCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStack(t, false)
		before := s.sb.Service.Stats().Requests["handoff"]
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				rec, err := s.reviews.Handoff(context.Background(), "dr."+string(rune('a'+i)), s.id, false)
				if err != nil || rec.Handoff == nil || rec.Handoff.IntakeID != rec.Intake.EncounterID {
					t.Errorf("handoff: %v", err)
				}
			})
		}
		wg.Wait()
		if got := s.sb.Service.Stats().Requests["handoff"] - before; got != 1 {
			t.Fatalf("8 clinicians opening one handoff made %d upstream reads, want 1", got)
		}
	})
}

// A handoff read from the service is shown from that read, decoded once,
// even when storing it fails: the clinician is not told "not found".
func TestAHandoffReadIsShownWhenStoringItFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStack(t, true)
		rec, err := s.reviews.Handoff(context.Background(), "dr.ada", s.id, false)
		if err != nil {
			t.Fatalf("handoff with a failing store: %v", err)
		}
		if rec.Handoff == nil || rec.Handoff.IntakeID != rec.Intake.EncounterID || len(rec.Raw) == 0 || rec.Stale {
			t.Fatalf("record %+v", rec)
		}
		if n := rec.Handoff.PatientMessages(); n != 1 {
			t.Fatalf("conversation has %d patient messages, want 1", n)
		}
	})
}

// An intake whose patient has not sent a first message has no encounter
// upstream: its handoff page says so, and nothing is read from the service.
func TestAHandoffBeforeTheFirstMessageSaysItHasNotStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStack(t, false)
		patients, _ := intakes.New(intakes.Deps{Intakes: s.db, Turns: s.db, Handoffs: s.db, Hub: relay.NewHub(time.Minute, nil)})
		in, err := patients.StartIntake(context.Background(), "owner", bff.StartForm{Synthetic: true, SubmissionID: "not-started"})
		if err != nil {
			t.Fatal(err)
		}
		before := s.sb.Service.Stats().Requests["handoff"]
		_, err = s.reviews.Handoff(context.Background(), "dr.ada", in.ID, false)
		if bff.ErrorCode(err) != bff.ECONFLICT || !strings.Contains(bff.ErrorMessage(err), "has not reached the intake service") {
			t.Fatalf("handoff of an intake not started: %v", err)
		}
		if n := s.sb.Service.Stats().Requests["handoff"] - before; n != 0 {
			t.Fatalf("%d handoff reads reached the service for an intake it does not know", n)
		}
	})
}
