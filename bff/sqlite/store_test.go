package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/sqlite"
	"github.com/clinical-intake/intake-web/bff/sqlite/sqlitetest"
)

var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589793238, time.UTC)

// fixedClock returns a clock that advances one millisecond per call, so
// CreatedAt values are distinct and predictable.
func fixedClock() bff.Clock {
	var mu sync.Mutex
	now := t0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}
}

func newIntake(id, owner string, created time.Time) *bff.Intake {
	return &bff.Intake{
		ID: id, Owner: owner,
		CreatedAt: created, ExpiresAt: created.Add(2 * time.Hour), UpdatedAt: created,
		Status: bff.StatusOpen,
	}
}

func mustCreateIntake(t testing.TB, db *sqlite.DB, id string) *bff.Intake {
	t.Helper()
	in := newIntake(id, "owner-"+id, t0)
	if err := db.CreateIntake(context.Background(), in); err != nil {
		t.Fatalf("CreateIntake(%s): %v", id, err)
	}
	return in
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := bff.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

func ptr[T any](v T) *T { return &v }

func TestOpenPragmas(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	for pragma, want := range map[string]string{
		"journal_mode": "wal",
		"foreign_keys": "1",
		"synchronous":  "1", // NORMAL
		"busy_timeout": "10000",
	} {
		var got string
		if err := db.SQL().QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %q, want %q", pragma, got, want)
		}
	}
}

func TestOpenMemory(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustCreateIntake(t, db, "enc_mem")
	if _, err := db.Intake(ctx, "enc_mem"); err != nil {
		t.Fatal(err)
	}
	tr := &bff.Turn{IntakeID: "enc_mem", SubmissionID: "s1", Message: "hi"}
	if err := db.CreateTurn(ctx, tr); err != nil || tr.Index != 1 {
		t.Fatalf("CreateTurn: %v, index %d", err, tr.Index)
	}
}

func TestIntakes(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()

	a := newIntake("enc_a", "alice", t0)
	a.AgeYears = ptr(0) // an infant: 0 is not "not given"
	a.Sex, a.History = "female", "asthma\n  inhaler"
	b := newIntake("enc_b", "bob", t0.Add(time.Second).In(time.FixedZone("CET", 3600))) // stored as UTC
	c := newIntake("enc_c", "alice", t0.Add(2*time.Second))
	for _, in := range []*bff.Intake{a, b, c} {
		if err := db.CreateIntake(ctx, in); err != nil {
			t.Fatalf("CreateIntake(%s): %v", in.ID, err)
		}
	}

	t.Run("conflict", func(t *testing.T) {
		wantCode(t, db.CreateIntake(ctx, newIntake("enc_a", "mallory", t0)), bff.ECONFLICT)
		got, err := db.Intake(ctx, "enc_a")
		if err != nil || got.Owner != "alice" {
			t.Fatalf("after conflict: %+v, %v", got, err)
		}
	})
	t.Run("get", func(t *testing.T) {
		got, err := db.Intake(ctx, "enc_a")
		if err != nil {
			t.Fatal(err)
		}
		if !equalIntake(got, a) {
			t.Fatalf("got %+v\nwant %+v", got, a)
		}
		got, err = db.Intake(ctx, "enc_b")
		if err != nil || got.AgeYears != nil {
			t.Fatalf("nil age: %v, %v", got.AgeYears, err)
		}
		_, err = db.Intake(ctx, "enc_missing")
		wantCode(t, err, bff.ENOTFOUND)
	})
	t.Run("by owner newest first", func(t *testing.T) {
		got, err := db.IntakesByOwner(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if ids := intakeIDs(got); !slices.Equal(ids, []string{"enc_c", "enc_a"}) {
			t.Fatalf("ids %v", ids)
		}
		got, err = db.IntakesByOwner(ctx, "nobody")
		if err != nil || len(got) != 0 {
			t.Fatalf("nobody: %v, %v", got, err)
		}
	})
	t.Run("all with limit", func(t *testing.T) {
		got, err := db.Intakes(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ids := intakeIDs(got); !slices.Equal(ids, []string{"enc_c", "enc_b", "enc_a"}) {
			t.Fatalf("ids %v", ids)
		}
		got, err = db.Intakes(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if ids := intakeIDs(got); !slices.Equal(ids, []string{"enc_c", "enc_b"}) {
			t.Fatalf("limit 2: ids %v", ids)
		}
	})
	t.Run("update", func(t *testing.T) {
		u := *b
		u.Owner, u.CreatedAt = "mallory", t0.Add(time.Hour) // never written
		u.ExpiresAt = t0.Add(3 * time.Hour)
		u.UpdatedAt = t0.Add(time.Minute)
		u.Status, u.TurnCount, u.Terminal, u.Urgent = bff.StatusClosed, 7, true, true
		u.SafetyStatus, u.Disposition, u.DispositionLabel = "red_flag", "emergency", "Call 999 now"
		u.ActiveProtocol, u.AgeYears, u.Sex, u.History = "chest_pain", ptr(54), "male", "none"
		u.Release = "2026.03.1"
		if err := db.UpdateIntake(ctx, &u); err != nil {
			t.Fatal(err)
		}
		got, err := db.Intake(ctx, "enc_b")
		if err != nil {
			t.Fatal(err)
		}
		want := u
		want.Owner, want.CreatedAt = b.Owner, b.CreatedAt
		if !equalIntake(got, &want) {
			t.Fatalf("got %+v\nwant %+v", got, &want)
		}
		u.AgeYears = nil
		if err := db.UpdateIntake(ctx, &u); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.Intake(ctx, "enc_b"); got.AgeYears != nil {
			t.Fatalf("age not cleared: %d", *got.AgeYears)
		}
		wantCode(t, db.UpdateIntake(ctx, newIntake("enc_missing", "x", t0)), bff.ENOTFOUND)
	})
}

func TestTurns(t *testing.T) {
	db := sqlitetest.MustOpenDB(t, sqlite.WithClock(fixedClock()))
	ctx := context.Background()
	mustCreateIntake(t, db, "enc_1")
	mustCreateIntake(t, db, "enc_2")

	first := &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-1", Message: "  sore throat\nsince Monday ", Status: bff.TurnQueued}
	if err := db.CreateTurn(ctx, first); err != nil {
		t.Fatal(err)
	}
	if first.Index != 1 || !first.CreatedAt.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("index %d, created %v", first.Index, first.CreatedAt)
	}

	t.Run("duplicate submission", func(t *testing.T) {
		err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-1", Message: "again"})
		wantCode(t, err, bff.ECONFLICT)
		if bff.ErrorMessage(err) != sqlite.MsgDuplicateSubmission {
			t.Fatalf("message %q", bff.ErrorMessage(err))
		}
	})
	t.Run("pending", func(t *testing.T) {
		err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-2", Message: "hello?"})
		wantCode(t, err, bff.ECONFLICT)
		if bff.ErrorMessage(err) != sqlite.MsgTurnPending {
			t.Fatalf("message %q", bff.ErrorMessage(err))
		}
		// Another intake is not held up.
		other := &bff.Turn{IntakeID: "enc_2", SubmissionID: "sub-1", Message: "cough"}
		if err := db.CreateTurn(ctx, other); err != nil || other.Index != 1 || other.Status != bff.TurnQueued {
			t.Fatalf("other intake: %v, %+v", err, other)
		}
	})
	t.Run("unknown intake", func(t *testing.T) {
		err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_missing", SubmissionID: "s", Message: "m"})
		wantCode(t, err, bff.ENOTFOUND)
	})
	t.Run("pending turns oldest first", func(t *testing.T) {
		got, err := db.PendingTurns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if keys := turnKeys(got); !slices.Equal(keys, []string{"enc_1/1", "enc_2/1"}) {
			t.Fatalf("pending %v", keys)
		}
	})
	t.Run("streaming is pending too", func(t *testing.T) {
		first.Status = bff.TurnStreaming
		if err := db.UpdateTurn(ctx, first); err != nil {
			t.Fatal(err)
		}
		err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-2", Message: "hello?"})
		wantCode(t, err, bff.ECONFLICT)
	})

	completed := t0.Add(30 * time.Second)
	t.Run("update and next index", func(t *testing.T) {
		first.Status = bff.TurnCompleted
		first.Reply = "How long have you had it?\n\n  Since when?"
		first.Choices = []string{"Today", "2-3 days", "A week or more"}
		first.Terminal, first.Urgent = false, true
		first.SafetyStatus, first.Disposition, first.DispositionLabel = ptr(""), ptr("self_care"), nil
		first.Release = "2026.03.1"
		first.CompletedAt = &completed
		if err := db.UpdateTurn(ctx, first); err != nil {
			t.Fatal(err)
		}
		got, err := db.Turn(ctx, "enc_1", 1)
		if err != nil {
			t.Fatal(err)
		}
		if !equalTurn(got, first) {
			t.Fatalf("got %s\nwant %s", dumpTurn(got), dumpTurn(first))
		}
		second := &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-2", Message: "2-3 days"}
		if err := db.CreateTurn(ctx, second); err != nil || second.Index != 2 {
			t.Fatalf("second: %v, index %d", err, second.Index)
		}
	})
	t.Run("update not found and second pending", func(t *testing.T) {
		wantCode(t, db.UpdateTurn(ctx, &bff.Turn{IntakeID: "enc_1", Index: 9, Status: bff.TurnFailed}), bff.ENOTFOUND)
		wantCode(t, db.UpdateTurn(ctx, &bff.Turn{IntakeID: "enc_missing", Index: 1, Status: bff.TurnFailed}), bff.ENOTFOUND)
		// Turn 2 is queued: turn 1 cannot become pending again.
		back := *first
		back.Status = bff.TurnQueued
		err := db.UpdateTurn(ctx, &back)
		wantCode(t, err, bff.ECONFLICT)
		if got, _ := db.Turn(ctx, "enc_1", 1); got.Status != bff.TurnCompleted {
			t.Fatalf("turn 1 changed to %s", got.Status)
		}
	})
	t.Run("lookups", func(t *testing.T) {
		got, err := db.TurnBySubmission(ctx, "enc_1", "sub-2")
		if err != nil || got.Index != 2 || got.Message != "2-3 days" {
			t.Fatalf("by submission: %+v, %v", got, err)
		}
		_, err = db.TurnBySubmission(ctx, "enc_2", "sub-2")
		wantCode(t, err, bff.ENOTFOUND)
		_, err = db.Turn(ctx, "enc_1", 3)
		wantCode(t, err, bff.ENOTFOUND)
		all, err := db.Turns(ctx, "enc_1")
		if err != nil {
			t.Fatal(err)
		}
		if keys := turnKeys(all); !slices.Equal(keys, []string{"enc_1/1", "enc_1/2"}) {
			t.Fatalf("turns %v", keys)
		}
		none, err := db.Turns(ctx, "enc_missing")
		if err != nil || len(none) != 0 {
			t.Fatalf("turns of a missing intake: %v, %v", none, err)
		}
		pending, err := db.PendingTurns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if keys := turnKeys(pending); !slices.Equal(keys, []string{"enc_2/1", "enc_1/2"}) {
			t.Fatalf("pending %v", keys)
		}
	})
}

// Nullable state fields and choices keep nil apart from "" and [].
func TestTurnNullsRoundTrip(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	mustCreateIntake(t, db, "enc_n")
	at := t0.Add(123456789 * time.Nanosecond)
	cases := []*bff.Turn{
		{Status: bff.TurnCompleted}, // all nil
		{Status: bff.TurnCompleted, Choices: []string{}, SafetyStatus: ptr(""), Disposition: ptr(""), DispositionLabel: ptr(""), CompletedAt: &at},
		{Status: bff.TurnFailed, Choices: []string{"", "Yes"}, SafetyStatus: ptr("ok"), Disposition: ptr("gp"), DispositionLabel: ptr("See your GP"), ErrorCode: "stream_dropped", ErrorMessage: "The reply was cut off."},
	}
	for i, want := range cases {
		want.IntakeID, want.SubmissionID, want.Message = "enc_n", fmt.Sprint("s", i), fmt.Sprint("m", i)
		created := &bff.Turn{IntakeID: want.IntakeID, SubmissionID: want.SubmissionID, Message: want.Message}
		if err := db.CreateTurn(ctx, created); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want.Index, want.CreatedAt = created.Index, created.CreatedAt
		if err := db.UpdateTurn(ctx, want); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		got, err := db.Turn(ctx, "enc_n", want.Index)
		if err != nil {
			t.Fatal(err)
		}
		if !equalTurn(got, want) {
			t.Errorf("case %d:\ngot  %s\nwant %s", i, dumpTurn(got), dumpTurn(want))
		}
	}
	// NULL in the database, not '' (a later Postgres port reads the same).
	var nulls int
	if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM turns
		WHERE safety_status IS NULL AND disposition IS NULL AND disposition_label IS NULL AND completed_at IS NULL`).Scan(&nulls); err != nil {
		t.Fatal(err)
	}
	if nulls != 1 {
		t.Fatalf("%d rows with NULL state, want 1", nulls)
	}
	// A turn created complete keeps its fields as given.
	full := &bff.Turn{IntakeID: "enc_n", SubmissionID: "full", Message: "m", Status: bff.TurnCompleted,
		Reply: "r", Choices: []string{"a"}, Terminal: true, SafetyStatus: ptr("x"), CompletedAt: &at, Release: "r1"}
	if err := db.CreateTurn(ctx, full); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Turn(ctx, "enc_n", full.Index); !equalTurn(got, full) {
		t.Fatalf("got %s\nwant %s", dumpTurn(got), dumpTurn(full))
	}
}

func TestHandoffs(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	mustCreateIntake(t, db, "enc_h")

	_, err := db.Handoff(ctx, "enc_h")
	wantCode(t, err, bff.ENOTFOUND)

	// Odd spacing, key order, escapes and non-ASCII must survive untouched.
	raw := []byte("{\"z\":1,  \"a\" : \"caf\u00e9 \\u00e9\\n\",\n\t\"n\":1.50e+2,\"x\":null}\n")
	h := &bff.StoredHandoff{IntakeID: "enc_h", JSON: raw, Terminal: false, FetchedAt: t0, Release: "r1"}
	if err := db.PutHandoff(ctx, h); err != nil {
		t.Fatal(err)
	}
	got, err := db.Handoff(ctx, "enc_h")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.JSON) != string(raw) || got.Terminal || !got.FetchedAt.Equal(t0) || got.Release != "r1" || got.IntakeID != "enc_h" {
		t.Fatalf("got %+v (json %q)", got, got.JSON)
	}

	raw2 := []byte(`{"terminal":true}`)
	h2 := &bff.StoredHandoff{IntakeID: "enc_h", JSON: raw2, Terminal: true, FetchedAt: t0.Add(time.Minute), Release: "r2"}
	if err := db.PutHandoff(ctx, h2); err != nil {
		t.Fatal(err)
	}
	got, err = db.Handoff(ctx, "enc_h")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.JSON) != string(raw2) || !got.Terminal || !got.FetchedAt.Equal(h2.FetchedAt) || got.Release != "r2" {
		t.Fatalf("replaced: got %+v (json %q)", got, got.JSON)
	}

	err = db.PutHandoff(ctx, &bff.StoredHandoff{IntakeID: "enc_missing", JSON: raw, FetchedAt: t0})
	wantCode(t, err, bff.ENOTFOUND)
}

func TestContextHonoured(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	mustCreateIntake(t, db, "enc_ctx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.Intake(ctx, "enc_ctx"); !errors.Is(err, context.Canceled) {
		t.Errorf("Intake: %v", err)
	}
	err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_ctx", SubmissionID: "s", Message: "m"})
	if !errors.Is(err, context.Canceled) || bff.ErrorCode(err) != bff.EINTERNAL {
		t.Errorf("CreateTurn: %v", err)
	}
	if err := db.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping: %v", err)
	}
	// Nothing was written.
	if turns, err := db.Turns(context.Background(), "enc_ctx"); err != nil || len(turns) != 0 {
		t.Fatalf("turns %v, %v", turns, err)
	}
}

// Everything written is there after Close and Open: restart safety.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "intake.db")
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := mustCreateIntake(t, db, "enc_r")
	in.AgeYears = ptr(31)
	turn := &bff.Turn{IntakeID: "enc_r", SubmissionID: "s1", Message: "m1", SafetyStatus: ptr("")}
	if err := db.CreateTurn(ctx, turn); err != nil {
		t.Fatal(err)
	}
	pending := &bff.Turn{IntakeID: "enc_r", SubmissionID: "s0", Message: "m0"}
	turn.Status = bff.TurnCompleted
	if err := db.UpdateTurn(ctx, turn); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTurn(ctx, pending); err != nil {
		t.Fatal(err)
	}
	raw := []byte(` {"a": 1} `)
	if err := db.PutHandoff(ctx, &bff.StoredHandoff{IntakeID: "enc_r", JSON: raw, FetchedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	db, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	gotIn, err := db.Intake(ctx, "enc_r")
	if err != nil || gotIn.ID != "enc_r" {
		t.Fatalf("intake after reopen: %+v, %v", gotIn, err)
	}
	gotTurn, err := db.Turn(ctx, "enc_r", 1)
	if err != nil || !equalTurn(gotTurn, turn) {
		t.Fatalf("turn after reopen: %s, %v", dumpTurn(gotTurn), err)
	}
	ps, err := db.PendingTurns(ctx)
	if err != nil || len(ps) != 1 || ps[0].Index != 2 || ps[0].SubmissionID != "s0" {
		t.Fatalf("pending after reopen: %v, %v", turnKeys(ps), err)
	}
	h, err := db.Handoff(ctx, "enc_r")
	if err != nil || string(h.JSON) != string(raw) {
		t.Fatalf("handoff after reopen: %v, %v", h, err)
	}
	// The constraints still hold.
	wantCode(t, db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_r", SubmissionID: "s9", Message: "m"}), bff.ECONFLICT)
}

func intakeIDs(ins []*bff.Intake) []string {
	var ids []string
	for _, in := range ins {
		ids = append(ids, in.ID)
	}
	return ids
}

func turnKeys(ts []*bff.Turn) []string {
	var keys []string
	for _, t := range ts {
		keys = append(keys, fmt.Sprintf("%s/%d", t.IntakeID, t.Index))
	}
	return keys
}

func equalIntake(a, b *bff.Intake) bool {
	x, y := *a, *b
	if !x.CreatedAt.Equal(y.CreatedAt) || !x.ExpiresAt.Equal(y.ExpiresAt) || !x.UpdatedAt.Equal(y.UpdatedAt) {
		return false
	}
	if (x.AgeYears == nil) != (y.AgeYears == nil) || (x.AgeYears != nil && *x.AgeYears != *y.AgeYears) {
		return false
	}
	x.CreatedAt, x.ExpiresAt, x.UpdatedAt, x.AgeYears = time.Time{}, time.Time{}, time.Time{}, nil
	y.CreatedAt, y.ExpiresAt, y.UpdatedAt, y.AgeYears = time.Time{}, time.Time{}, time.Time{}, nil
	return x == y
}

func equalTurn(a, b *bff.Turn) bool {
	if a == nil || b == nil {
		return a == b
	}
	return dumpTurn(a) == dumpTurn(b)
}

// dumpTurn prints every field, telling nil from empty.
func dumpTurn(t *bff.Turn) string {
	if t == nil {
		return "<nil>"
	}
	s := func(p *string) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprintf("%q", *p)
	}
	c := "nil"
	if t.CompletedAt != nil {
		c = t.CompletedAt.UTC().Format(time.RFC3339Nano)
	}
	ch := "nil"
	if t.Choices != nil {
		ch = fmt.Sprintf("%q", t.Choices)
	}
	return fmt.Sprintf("{%s/%d sub=%q msg=%q status=%s reply=%q choices=%s terminal=%t urgent=%t safety=%s disp=%s label=%s err=%q/%q release=%q created=%s completed=%s}",
		t.IntakeID, t.Index, t.SubmissionID, t.Message, t.Status, t.Reply, ch, t.Terminal, t.Urgent,
		s(t.SafetyStatus), s(t.Disposition), s(t.DispositionLabel), t.ErrorCode, t.ErrorMessage,
		t.Release, t.CreatedAt.UTC().Format(time.RFC3339Nano), c)
}

func TestBlockingModeRoundTrips(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	in := &bff.Intake{ID: "enc_blk_1", Owner: "o", Status: bff.StatusOpen, CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour), UpdatedAt: time.Now()}
	if err := db.CreateIntake(ctx, in); err != nil {
		t.Fatal(err)
	}
	b := &bff.Turn{IntakeID: in.ID, SubmissionID: "s1", Message: "m", Blocking: true}
	if err := db.CreateTurn(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, err := db.Turn(ctx, in.ID, b.Index)
	if err != nil || !got.Blocking {
		t.Fatalf("blocking turn read back as %+v, %v", got, err)
	}
	got.Status = bff.TurnCompleted
	if err := db.UpdateTurn(ctx, got); err != nil {
		t.Fatal(err)
	}
	s := &bff.Turn{IntakeID: in.ID, SubmissionID: "s2", Message: "m"}
	if err := db.CreateTurn(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Turn(ctx, in.ID, s.Index); got.Blocking {
		t.Fatal("a streaming turn read back as blocking")
	}
}

// A submission id is used once per intake, also after its turn settled
// (no pending turn holds the next one back then): the store refuses it.
func TestASettledTurnsSubmissionIsNotReused(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	mustCreateIntake(t, db, "enc_1")
	first := &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-1", Message: "hello", Status: bff.TurnQueued}
	if err := db.CreateTurn(ctx, first); err != nil {
		t.Fatal(err)
	}
	first.Status = bff.TurnCompleted
	if err := db.UpdateTurn(ctx, first); err != nil {
		t.Fatal(err)
	}
	err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-1", Message: "hello", Status: bff.TurnQueued})
	wantCode(t, err, bff.ECONFLICT)
	if turns, _ := db.Turns(ctx, "enc_1"); len(turns) != 1 {
		t.Fatalf("%d turns for one submission", len(turns))
	}
}
