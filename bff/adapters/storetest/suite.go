package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

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

// NewIntake is an open intake created at created, expiring two hours later.
func NewIntake(id, owner string, created time.Time) *bff.Intake {
	return &bff.Intake{
		ID: id, Owner: owner,
		CreatedAt: created, ExpiresAt: created.Add(2 * time.Hour), UpdatedAt: created,
		Status: bff.StatusOpen,
	}
}

// MustCreateIntake stores a fresh open intake with id, owned by "owner-"+id.
func MustCreateIntake(t testing.TB, db bff.IntakeStore, id string) *bff.Intake {
	t.Helper()
	in := NewIntake(id, "owner-"+id, t0)
	if err := db.CreateIntake(context.Background(), in); err != nil {
		t.Fatalf("CreateIntake(%s): %v", id, err)
	}
	return in
}

// WantCode fails t unless err carries code ("" for none).
func WantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := bff.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

func ptr[T any](v T) *T { return &v }

func testIntakes(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()

	a := NewIntake("enc_a", "alice", t0)
	a.AgeYears = ptr(0) // an infant: 0 is not "not given"
	a.Sex, a.History = "female", "asthma\n  inhaler"
	b := NewIntake("enc_b", "bob", t0.Add(time.Second).In(time.FixedZone("CET", 3600))) // stored as UTC
	c := NewIntake("enc_c", "alice", t0.Add(2*time.Second))
	for _, in := range []*bff.Intake{a, b, c} {
		if err := db.CreateIntake(ctx, in); err != nil {
			t.Fatalf("CreateIntake(%s): %v", in.ID, err)
		}
	}

	t.Run("conflict", func(t *testing.T) {
		WantCode(t, db.CreateIntake(ctx, NewIntake("enc_a", "mallory", t0)), bff.ECONFLICT)
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
		WantCode(t, err, bff.ENOTFOUND)
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
		WantCode(t, db.UpdateIntake(ctx, NewIntake("enc_missing", "x", t0)), bff.ENOTFOUND)
	})
}

func testTurns(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	MustCreateIntake(t, db, "enc_1")
	MustCreateIntake(t, db, "enc_2")

	first := &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-1", Message: "  sore throat\nsince Monday ", Status: bff.TurnQueued}
	if err := db.CreateTurn(ctx, first); err != nil {
		t.Fatal(err)
	}
	if first.Index != 1 || !first.CreatedAt.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("index %d, created %v", first.Index, first.CreatedAt)
	}

	t.Run("duplicate submission", func(t *testing.T) {
		err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-1", Message: "again"})
		WantCode(t, err, bff.ECONFLICT)
		if bff.ErrorMessage(err) != bff.MsgDuplicateSubmission {
			t.Fatalf("message %q", bff.ErrorMessage(err))
		}
	})
	t.Run("pending", func(t *testing.T) {
		err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-2", Message: "hello?"})
		WantCode(t, err, bff.ECONFLICT)
		if bff.ErrorMessage(err) != bff.MsgTurnPending {
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
		WantCode(t, err, bff.ENOTFOUND)
	})
	t.Run("pending turns oldest first", func(t *testing.T) {
		got, err := db.PendingTurns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if keys := TurnKeys(got); !slices.Equal(keys, []string{"enc_1/1", "enc_2/1"}) {
			t.Fatalf("pending %v", keys)
		}
	})
	t.Run("streaming is pending too", func(t *testing.T) {
		first.Status = bff.TurnStreaming
		if err := db.UpdateTurn(ctx, first); err != nil {
			t.Fatal(err)
		}
		err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-2", Message: "hello?"})
		WantCode(t, err, bff.ECONFLICT)
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
		if !EqualTurn(got, first) {
			t.Fatalf("got %s\nwant %s", DumpTurn(got), DumpTurn(first))
		}
		second := &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-2", Message: "2-3 days"}
		if err := db.CreateTurn(ctx, second); err != nil || second.Index != 2 {
			t.Fatalf("second: %v, index %d", err, second.Index)
		}
	})
	t.Run("update not found and second pending", func(t *testing.T) {
		WantCode(t, db.UpdateTurn(ctx, &bff.Turn{IntakeID: "enc_1", Index: 9, Status: bff.TurnFailed}), bff.ENOTFOUND)
		WantCode(t, db.UpdateTurn(ctx, &bff.Turn{IntakeID: "enc_missing", Index: 1, Status: bff.TurnFailed}), bff.ENOTFOUND)
		// Turn 2 is queued: turn 1 cannot become pending again.
		back := *first
		back.Status = bff.TurnQueued
		err := db.UpdateTurn(ctx, &back)
		WantCode(t, err, bff.ECONFLICT)
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
		WantCode(t, err, bff.ENOTFOUND)
		_, err = db.Turn(ctx, "enc_1", 3)
		WantCode(t, err, bff.ENOTFOUND)
		all, err := db.Turns(ctx, "enc_1")
		if err != nil {
			t.Fatal(err)
		}
		if keys := TurnKeys(all); !slices.Equal(keys, []string{"enc_1/1", "enc_1/2"}) {
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
		if keys := TurnKeys(pending); !slices.Equal(keys, []string{"enc_2/1", "enc_1/2"}) {
			t.Fatalf("pending %v", keys)
		}
	})
}

// Nullable state fields and choices keep nil apart from "" and [].
func testTurnNullsRoundTrip(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	MustCreateIntake(t, db, "enc_n")
	at := t0.Add(123456 * time.Microsecond)
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
		if !EqualTurn(got, want) {
			t.Errorf("case %d:\ngot  %s\nwant %s", i, DumpTurn(got), DumpTurn(want))
		}
	}
	// A turn created complete keeps its fields as given.
	full := &bff.Turn{IntakeID: "enc_n", SubmissionID: "full", Message: "m", Status: bff.TurnCompleted,
		Reply: "r", Choices: []string{"a"}, Terminal: true, SafetyStatus: ptr("x"), CompletedAt: &at, Release: "r1"}
	if err := db.CreateTurn(ctx, full); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Turn(ctx, "enc_n", full.Index); !EqualTurn(got, full) {
		t.Fatalf("got %s\nwant %s", DumpTurn(got), DumpTurn(full))
	}
}

func testHandoffs(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	MustCreateIntake(t, db, "enc_h")

	_, err := db.Handoff(ctx, "enc_h")
	WantCode(t, err, bff.ENOTFOUND)

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
	WantCode(t, err, bff.ENOTFOUND)
}

func testContextHonoured(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	MustCreateIntake(t, db, "enc_ctx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.Intake(ctx, "enc_ctx"); !errors.Is(err, context.Canceled) {
		t.Errorf("Intake: %v", err)
	}
	err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_ctx", SubmissionID: "s", Message: "m"})
	if !errors.Is(err, context.Canceled) || bff.ErrorCode(err) != bff.EINTERNAL {
		t.Errorf("CreateTurn: %v", err)
	}
	// Nothing was written.
	if turns, err := db.Turns(context.Background(), "enc_ctx"); err != nil || len(turns) != 0 {
		t.Fatalf("turns %v, %v", turns, err)
	}
}

func intakeIDs(ins []*bff.Intake) []string {
	var ids []string
	for _, in := range ins {
		ids = append(ids, in.ID)
	}
	return ids
}

// TurnKeys lists turns as intake/index.
func TurnKeys(ts []*bff.Turn) []string {
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

// EqualTurn compares two turns by DumpTurn.
func EqualTurn(a, b *bff.Turn) bool {
	if a == nil || b == nil {
		return a == b
	}
	return DumpTurn(a) == DumpTurn(b)
}

// dumpTurn prints every field, telling nil from empty.
func DumpTurn(t *bff.Turn) string {
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
	return fmt.Sprintf("{%s/%d sub=%q msg=%q status=%s reply=%q choices=%s terminal=%t urgent=%t safety=%s disp=%s label=%s err=%q/%q release=%q created=%s completed=%s blocking=%t lease=%q until=%s}",
		t.IntakeID, t.Index, t.SubmissionID, t.Message, t.Status, t.Reply, ch, t.Terminal, t.Urgent,
		s(t.SafetyStatus), s(t.Disposition), s(t.DispositionLabel), t.ErrorCode, t.ErrorMessage,
		t.Release, t.CreatedAt.UTC().Format(time.RFC3339Nano), c, t.Blocking, t.LeaseOwner,
		t.LeaseUntil.UTC().Format(time.RFC3339Nano))
}

func testBlockingModeRoundTrips(t *testing.T, open Opener) {
	db := open(t, fixedClock())
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
func testASettledTurnsSubmissionIsNotReused(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	MustCreateIntake(t, db, "enc_1")
	first := &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-1", Message: "hello", Status: bff.TurnQueued}
	if err := db.CreateTurn(ctx, first); err != nil {
		t.Fatal(err)
	}
	first.Status = bff.TurnCompleted
	if err := db.UpdateTurn(ctx, first); err != nil {
		t.Fatal(err)
	}
	err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_1", SubmissionID: "sub-1", Message: "hello", Status: bff.TurnQueued})
	WantCode(t, err, bff.ECONFLICT)
	if turns, _ := db.Turns(ctx, "enc_1"); len(turns) != 1 {
		t.Fatalf("%d turns for one submission", len(turns))
	}
}

// addAudits appends n entries, a second apart, and returns them in order.
// AddAudits appends n audit entries, a second apart from t0.
func AddAudits(t *testing.T, db bff.AuditStore, n int) []*bff.AuditEntry {
	t.Helper()
	var es []*bff.AuditEntry
	for i := range n {
		e := &bff.AuditEntry{
			At:     t0.Add(time.Duration(i) * time.Second),
			Actor:  fmt.Sprintf("dr_%d", i%3),
			Action: bff.AuditViewHandoff,
			// Every third entry is on no intake.
			IntakeID: map[bool]string{true: "", false: fmt.Sprintf("enc_%d", i)}[i%3 == 0],
			Detail:   fmt.Sprintf("detail %d", i),
		}
		if err := db.AddAudit(context.Background(), e); err != nil {
			t.Fatalf("AddAudit %d: %v", i, err)
		}
		es = append(es, e)
	}
	return es
}

func testAudit(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()

	if es, err := db.Audit(ctx, 10, 0); err != nil || len(es) != 0 {
		t.Fatalf("fresh store: %v, %v", es, err)
	}

	es := AddAudits(t, db, 7)
	for i := 1; i < len(es); i++ {
		if es[i].ID <= es[i-1].ID || es[0].ID <= 0 {
			t.Fatalf("ids not increasing: %v", AuditIDs(es))
		}
	}
	// The id orders the log, not At: an entry stamped earlier, appended later.
	late := &bff.AuditEntry{At: t0.Add(-time.Hour).In(time.FixedZone("CET", 3600)), Actor: "system",
		Action: bff.AuditRefresh, IntakeID: "enc_x", Detail: "clock stepped back"}
	if err := db.AddAudit(ctx, late); err != nil {
		t.Fatal(err)
	}
	es = append(es, late)
	newestFirst := slices.Clone(es)
	slices.Reverse(newestFirst)

	t.Run("round trip", func(t *testing.T) {
		got, err := db.Audit(ctx, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(es) {
			t.Fatalf("%d entries, want %d", len(got), len(es))
		}
		for i := range got {
			if !EqualAudit(got[i], newestFirst[i]) {
				t.Errorf("entry %d: got %+v, want %+v", i, got[i], newestFirst[i])
			}
		}
		if got[0].At.Location() != time.UTC || got[0].IntakeID != "enc_x" || got[len(got)-1].IntakeID != "" {
			t.Errorf("first %+v, last %+v", got[0], got[len(got)-1])
		}
	})
	t.Run("limit", func(t *testing.T) {
		got, err := db.Audit(ctx, 3, 0)
		if err != nil || !slices.Equal(AuditIDs(got), AuditIDs(newestFirst[:3])) {
			t.Fatalf("limit 3: %v, %v", AuditIDs(got), err)
		}
		for _, limit := range []int{0, -1} {
			if got, err := db.Audit(ctx, limit, 0); err != nil || len(got) != 0 {
				t.Fatalf("limit %d: %v, %v", limit, AuditIDs(got), err)
			}
		}
		if got, err := db.Audit(ctx, 1, -5); err != nil || !slices.Equal(AuditIDs(got), []int64{late.ID}) {
			t.Fatalf("negative before: %v, %v", AuditIDs(got), err)
		}
	})
	t.Run("paging by before", func(t *testing.T) {
		var pages [][]int64
		var all []int64
		before := int64(0)
		for {
			got, err := db.Audit(ctx, 3, before)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				break
			}
			pages = append(pages, AuditIDs(got))
			all = append(all, AuditIDs(got)...)
			before = got[len(got)-1].ID
			if len(pages) > 10 {
				t.Fatal("paging does not end")
			}
		}
		if len(pages) != 3 || len(pages[2]) != 2 || !slices.Equal(all, AuditIDs(newestFirst)) {
			t.Fatalf("pages %v, want %v", pages, AuditIDs(newestFirst))
		}
		// before is exclusive.
		got, err := db.Audit(ctx, 10, es[3].ID)
		if err != nil || !slices.Equal(AuditIDs(got), []int64{es[2].ID, es[1].ID, es[0].ID}) {
			t.Fatalf("before %d: %v, %v", es[3].ID, AuditIDs(got), err)
		}
		if got, err := db.Audit(ctx, 10, es[0].ID); err != nil || len(got) != 0 {
			t.Fatalf("before the oldest: %v, %v", AuditIDs(got), err)
		}
	})
}

// AuditIDs lists the entries' ids.
func AuditIDs(es []*bff.AuditEntry) []int64 {
	var ids []int64
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}

// EqualAudit compares two entries field by field, times to the microsecond.
func EqualAudit(a, b *bff.AuditEntry) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	if !x.At.Equal(y.At) {
		return false
	}
	x.At, y.At = time.Time{}, time.Time{}
	return x == y
}

func testClinicians(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()

	if cs, err := db.Clinicians(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("fresh store: %v, %v", cs, err)
	}

	hash := []byte("$2a$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\x00\xff")
	carol := &bff.Clinician{Username: "carol", PasswordHash: hash,
		CreatedAt: t0.In(time.FixedZone("CET", 3600)), // stored as UTC
		Roles:     []bff.Role{bff.RoleReviewer, bff.RoleAdministrator}}
	alice := &bff.Clinician{Username: "alice", PasswordHash: []byte("h-alice"), Disabled: true, CreatedAt: t0.Add(time.Second),
		Roles: bff.AllRoles()}
	upper := &bff.Clinician{Username: "Alice", PasswordHash: []byte("h-upper"), CreatedAt: t0.Add(2 * time.Second)}
	bob := &bff.Clinician{Username: "bob", PasswordHash: nil, CreatedAt: t0.Add(3 * time.Second)}
	for _, c := range []*bff.Clinician{carol, alice, upper, bob} {
		if err := db.CreateClinician(ctx, c); err != nil {
			t.Fatalf("CreateClinician(%s): %v", c.Username, err)
		}
	}

	t.Run("get round-trips every field", func(t *testing.T) {
		got, err := db.Clinician(ctx, "carol")
		if err != nil {
			t.Fatal(err)
		}
		if !equalClinician(got, carol) || got.CreatedAt.Location() != time.UTC {
			t.Fatalf("got %+v\nwant %+v", got, carol)
		}
		got, err = db.Clinician(ctx, "alice")
		if err != nil || !equalClinician(got, alice) || !got.Disabled {
			t.Fatalf("alice: %+v, %v", got, err)
		}
		got, err = db.Clinician(ctx, "bob")
		if err != nil || len(got.PasswordHash) != 0 {
			t.Fatalf("nil hash stored as empty: %+v, %v", got, err)
		}
		if got.Roles == nil || len(got.Roles) != 0 {
			t.Fatalf("no roles read back as %#v, want an empty list", got.Roles)
		}
	})
	t.Run("set roles", func(t *testing.T) {
		for _, roles := range [][]bff.Role{
			{bff.RoleScenarioRunner},
			{bff.RoleAdministrator, bff.RoleReviewer, bff.RoleAdministrator}, // any order, repeats: stored once, in order
			{bff.RoleSafetyOfficer},                   // the clinical safety officer's role (the stores' CHECK takes it)
			{bff.RoleSafetyOfficer, bff.RoleReviewer}, // beside another
			{},
			bff.AllRoles(),
		} {
			if err := db.SetClinicianRoles(ctx, "Alice", roles); err != nil {
				t.Fatalf("SetClinicianRoles(%v): %v", roles, err)
			}
			got, err := db.Clinician(ctx, "Alice")
			if err != nil || !slices.Equal(got.Roles, bff.NormalRoles(roles)) {
				t.Fatalf("after SetClinicianRoles(%v): %+v, %v", roles, got, err)
			}
			if !bytes.Equal(got.PasswordHash, []byte("h-upper")) || got.Disabled || !got.CreatedAt.Equal(t0.Add(2*time.Second)) {
				t.Fatalf("other fields changed: %+v", got)
			}
		}
		if got, _ := db.Clinician(ctx, "alice"); !slices.Equal(got.Roles, bff.AllRoles()) {
			t.Fatalf("another account's roles changed: %v", got.Roles)
		}
		if got, _ := db.Clinician(ctx, "carol"); !equalClinician(got, carol) {
			t.Fatalf("another account changed: %+v", got)
		}
		WantCode(t, db.SetClinicianRoles(ctx, "nobody", bff.AllRoles()), bff.ENOTFOUND)
		WantCode(t, db.SetClinicianRoles(ctx, "ALICE", bff.AllRoles()), bff.ENOTFOUND)
		if err := db.SetClinicianRoles(ctx, "Alice", nil); err != nil { // back, for the cases after
			t.Fatal(err)
		}
	})
	t.Run("lookup is exact", func(t *testing.T) {
		got, err := db.Clinician(ctx, "Alice")
		if err != nil || !equalClinician(got, upper) {
			t.Fatalf("Alice: %+v, %v", got, err)
		}
		for _, name := range []string{"CAROL", "carol ", " carol", "caro", "", "nobody"} {
			_, err := db.Clinician(ctx, name)
			WantCode(t, err, bff.ENOTFOUND)
		}
	})
	t.Run("duplicate username", func(t *testing.T) {
		dup := &bff.Clinician{Username: "carol", PasswordHash: []byte("other"), Disabled: true, CreatedAt: t0.Add(time.Hour)}
		err := db.CreateClinician(ctx, dup)
		WantCode(t, err, bff.ECONFLICT)
		if bff.ErrorMessage(err) == "" {
			t.Error("no message")
		}
		got, err := db.Clinician(ctx, "carol")
		if err != nil || !equalClinician(got, carol) {
			t.Fatalf("after conflict: %+v, %v", got, err)
		}
	})
	t.Run("list ordered by username", func(t *testing.T) {
		cs, err := db.Clinicians(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if names := clinicianNames(cs); !slices.Equal(names, []string{"Alice", "alice", "bob", "carol"}) {
			t.Fatalf("names %v", names)
		}
		if !equalClinician(cs[3], carol) || !equalClinician(cs[1], alice) {
			t.Fatalf("listed fields: %+v %+v", cs[3], cs[1])
		}
	})
	t.Run("disable and enable", func(t *testing.T) {
		for _, disabled := range []bool{true, true, false, false, true} { // repeats are fine
			if err := db.SetClinicianDisabled(ctx, "carol", disabled); err != nil {
				t.Fatalf("SetClinicianDisabled(%v): %v", disabled, err)
			}
			got, err := db.Clinician(ctx, "carol")
			if err != nil || got.Disabled != disabled {
				t.Fatalf("after SetClinicianDisabled(%v): %+v, %v", disabled, got, err)
			}
			if !bytes.Equal(got.PasswordHash, hash) || !got.CreatedAt.Equal(t0) {
				t.Fatalf("other fields changed: %+v", got)
			}
		}
		// Only carol changed.
		if got, _ := db.Clinician(ctx, "Alice"); got.Disabled {
			t.Fatal("Alice disabled too")
		}
		if got, _ := db.Clinician(ctx, "alice"); !got.Disabled {
			t.Fatal("alice enabled")
		}
	})
	t.Run("set password", func(t *testing.T) {
		if err := db.SetClinicianPassword(ctx, "carol", []byte("h-carol-2")); err != nil {
			t.Fatalf("SetClinicianPassword: %v", err)
		}
		got, err := db.Clinician(ctx, "carol")
		if err != nil || !bytes.Equal(got.PasswordHash, []byte("h-carol-2")) || !got.CreatedAt.Equal(t0) {
			t.Fatalf("after SetClinicianPassword: %+v, %v", got, err)
		}
		if other, _ := db.Clinician(ctx, "Alice"); !bytes.Equal(other.PasswordHash, []byte("h-upper")) {
			t.Fatal("another account's password changed")
		}
		WantCode(t, db.SetClinicianPassword(ctx, "nobody", []byte("h")), bff.ENOTFOUND)
		WantCode(t, db.SetClinicianPassword(ctx, "CAROL", []byte("h")), bff.ENOTFOUND)
		if err := db.SetClinicianPassword(ctx, "carol", hash); err != nil { // back, for the cases after
			t.Fatal(err)
		}
	})
	t.Run("disable unknown", func(t *testing.T) {
		WantCode(t, db.SetClinicianDisabled(ctx, "nobody", true), bff.ENOTFOUND)
		WantCode(t, db.SetClinicianDisabled(ctx, "CAROL", false), bff.ENOTFOUND)
		if cs, _ := db.Clinicians(ctx); len(cs) != 4 {
			t.Fatalf("accounts %v", clinicianNames(cs))
		}
	})
}

func testClinicianContextHonoured(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	MustCreateIntake(t, db, "enc_ctx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, err := range map[string]error{
		"CreateClinician":      db.CreateClinician(ctx, &bff.Clinician{Username: "x", CreatedAt: t0}),
		"SetClinicianDisabled": db.SetClinicianDisabled(ctx, "x", true),
		"SetClinicianRoles":    db.SetClinicianRoles(ctx, "x", bff.AllRoles()),
		"AddReview":            db.AddReview(ctx, &bff.Review{IntakeID: "enc_ctx", ReviewedAt: t0}),
		"AddAudit":             db.AddAudit(ctx, &bff.AuditEntry{At: t0, Actor: "x", Action: bff.AuditSignIn}),
	} {
		if !errors.Is(err, context.Canceled) || bff.ErrorCode(err) != bff.EINTERNAL {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := db.Clinician(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("Clinician: %v", err)
	}
	if _, err := db.LatestReviews(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("LatestReviews: %v", err)
	}
	if _, err := db.Audit(ctx, 10, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Audit: %v", err)
	}
	// Nothing was written.
	bg := context.Background()
	if cs, err := db.Clinicians(bg); err != nil || len(cs) != 0 {
		t.Errorf("clinicians %v, %v", clinicianNames(cs), err)
	}
	if rs, err := db.Reviews(bg, "enc_ctx"); err != nil || len(rs) != 0 {
		t.Errorf("reviews %v, %v", rs, err)
	}
	if es, err := db.Audit(bg, 10, 0); err != nil || len(es) != 0 {
		t.Errorf("audit %v, %v", es, err)
	}
}

func clinicianNames(cs []*bff.Clinician) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Username)
	}
	return names
}

func equalClinician(a, b *bff.Clinician) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Username == b.Username && bytes.Equal(a.PasswordHash, b.PasswordHash) &&
		a.Disabled == b.Disabled && a.CreatedAt.Equal(b.CreatedAt) && slices.Equal(bff.NormalRoles(a.Roles), b.Roles)
}

func testReviews(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	for _, id := range []string{"enc_a", "enc_b", "enc_c"} {
		MustCreateIntake(t, db, id)
	}

	if m, err := db.LatestReviews(ctx); err != nil || m == nil || len(m) != 0 {
		t.Fatalf("fresh store: %v (nil %v), %v", m, m == nil, err)
	}

	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// Inserted out of time order; two of enc_a's share a time.
	adds := []*bff.Review{
		{IntakeID: "enc_a", Clinician: "alice", Note: "first look", ReviewedAt: at(10)},
		{IntakeID: "enc_a", Clinician: "bob", Note: "", ReviewedAt: at(30).In(time.FixedZone("CET", 3600))},
		{IntakeID: "enc_b", Clinician: "bob", Note: "b old", ReviewedAt: at(5)},
		{IntakeID: "enc_a", Clinician: "carol", Note: "earlier, added late", ReviewedAt: at(20)},
		{IntakeID: "enc_b", Clinician: "alice", Note: "b new\nline two", ReviewedAt: at(40)},
		{IntakeID: "enc_a", Clinician: "dave", Note: "same time as bob, added after", ReviewedAt: at(30)},
	}
	for i, r := range adds {
		if err := db.AddReview(ctx, r); err != nil {
			t.Fatalf("AddReview %d: %v", i, err)
		}
	}

	t.Run("unknown intake", func(t *testing.T) {
		err := db.AddReview(ctx, &bff.Review{IntakeID: "enc_missing", Clinician: "alice", ReviewedAt: at(50)})
		WantCode(t, err, bff.ENOTFOUND)
		if rs, err := db.Reviews(ctx, "enc_missing"); err != nil || len(rs) != 0 {
			t.Fatalf("reviews of a missing intake: %v, %v", rs, err)
		}
		if m, _ := db.LatestReviews(ctx); m["enc_missing"] != nil {
			t.Fatal("review of a missing intake stored")
		}
	})
	t.Run("newest first", func(t *testing.T) {
		rs, err := db.Reviews(ctx, "enc_a")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := reviewKeys(rs), []string{"dave@30", "bob@30", "carol@20", "alice@10"}; !slices.Equal(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
		if !EqualReview(rs[1], adds[1]) || rs[1].ReviewedAt.Location() != time.UTC || !EqualReview(rs[3], adds[0]) {
			t.Fatalf("fields: %+v %+v", rs[1], rs[3])
		}
		rs, err = db.Reviews(ctx, "enc_b")
		if err != nil || !slices.Equal(reviewKeys(rs), []string{"alice@40", "bob@5"}) || !EqualReview(rs[0], adds[4]) {
			t.Fatalf("enc_b: %v, %v", reviewKeys(rs), err)
		}
		if rs, err := db.Reviews(ctx, "enc_c"); err != nil || len(rs) != 0 {
			t.Fatalf("unreviewed: %v, %v", rs, err)
		}
	})
	t.Run("latest per intake", func(t *testing.T) {
		m, err := db.LatestReviews(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) != 2 || m["enc_c"] != nil {
			t.Fatalf("latest %v", m)
		}
		if !EqualReview(m["enc_a"], adds[5]) || !EqualReview(m["enc_b"], adds[4]) {
			t.Fatalf("latest enc_a %+v, enc_b %+v", m["enc_a"], m["enc_b"])
		}
		// Each agrees with the head of Reviews.
		for id, r := range m {
			rs, _ := db.Reviews(ctx, id)
			if !EqualReview(r, rs[0]) {
				t.Errorf("%s: latest %+v, Reviews[0] %+v", id, r, rs[0])
			}
		}
	})
	t.Run("a newer review takes over", func(t *testing.T) {
		newer := &bff.Review{IntakeID: "enc_b", Clinician: "erin", Note: "again", ReviewedAt: at(41)}
		if err := db.AddReview(ctx, newer); err != nil {
			t.Fatal(err)
		}
		first := &bff.Review{IntakeID: "enc_c", Clinician: "frank", ReviewedAt: at(1)}
		if err := db.AddReview(ctx, first); err != nil {
			t.Fatal(err)
		}
		m, err := db.LatestReviews(ctx)
		if err != nil || len(m) != 3 || !EqualReview(m["enc_b"], newer) || !EqualReview(m["enc_c"], first) || !EqualReview(m["enc_a"], adds[5]) {
			t.Fatalf("latest %v, %v", m, err)
		}
	})
}

// LatestReviews over many intakes and reviews agrees with Reviews.
func testLatestReviewsMany(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	want := map[string]string{}
	for i := range 20 {
		id := fmt.Sprintf("enc_%02d", i)
		MustCreateIntake(t, db, id)
		for j := range i % 5 { // 0..4 reviews, not in time order
			s := []int{3, 1, 4, 2}[j]
			r := &bff.Review{IntakeID: id, Clinician: fmt.Sprintf("c%d", s), ReviewedAt: t0.Add(time.Duration(s) * time.Minute)}
			if err := db.AddReview(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if n := i % 5; n > 0 {
			want[id] = fmt.Sprintf("c%d", slices.Max([]int{3, 1, 4, 2}[:n]))
		}
	}
	m, err := db.LatestReviews(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != len(want) {
		t.Fatalf("%d latest, want %d", len(m), len(want))
	}
	for id, c := range want {
		if m[id] == nil || m[id].Clinician != c || m[id].IntakeID != id {
			t.Errorf("%s: latest %+v, want %s", id, m[id], c)
		}
	}
}

func reviewKeys(rs []*bff.Review) []string {
	var keys []string
	for _, r := range rs {
		keys = append(keys, fmt.Sprintf("%s@%d", r.Clinician, int(r.ReviewedAt.Sub(t0)/time.Second)))
	}
	return keys
}

// EqualReview compares two reviews field by field, times to the microsecond.
func EqualReview(a, b *bff.Review) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.IntakeID == b.IntakeID && a.Clinician == b.Clinician && a.Note == b.Note && a.ReviewedAt.Equal(b.ReviewedAt)
}

func testSignInFailures(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	failures := func(key string, since time.Time) []time.Time {
		t.Helper()
		f, err := db.SignInFailures(ctx, key, since)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	equal := func(a, b []time.Time) bool { return slices.EqualFunc(a, b, time.Time.Equal) }

	if f := failures("u:ada", t0.Add(-time.Hour)); len(f) != 0 {
		t.Fatalf("fresh store: %v", f)
	}
	// Recorded out of order, in another zone: returned oldest first, UTC.
	for _, s := range []int{30, 10, 20, 20} {
		if err := db.AddSignInFailure(ctx, at(s).In(time.FixedZone("CET", 3600)), "u:ada", "a:192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddSignInFailure(ctx, at(15), "u:bob"); err != nil {
		t.Fatal(err)
	}
	if f := failures("u:ada", t0); !equal(f, []time.Time{at(10), at(20), at(20), at(30)}) || f[0].Location() != time.UTC {
		t.Fatalf("u:ada %v", f)
	}
	// since is exclusive.
	if f := failures("a:192.0.2.1", at(10)); !equal(f, []time.Time{at(20), at(20), at(30)}) {
		t.Fatalf("a: after 10 s %v", f)
	}
	// Keys are exact.
	if f := failures("u:ad", t0); len(f) != 0 {
		t.Fatalf("u:ad %v", f)
	}

	// Remove takes back exactly one failure at exactly that time.
	if err := db.RemoveSignInFailure(ctx, "u:ada", at(20)); err != nil {
		t.Fatal(err)
	}
	if err := db.RemoveSignInFailure(ctx, "u:ada", at(21)); err != nil {
		t.Fatal(err)
	}
	if f := failures("u:ada", t0); !equal(f, []time.Time{at(10), at(20), at(30)}) {
		t.Fatalf("after remove %v", f)
	}

	// Clear is per key.
	if err := db.ClearSignInFailures(ctx, "u:ada"); err != nil {
		t.Fatal(err)
	}
	if f := failures("u:ada", t0); len(f) != 0 {
		t.Fatalf("after clear %v", f)
	}
	if f := failures("a:192.0.2.1", t0); len(f) != 4 {
		t.Fatalf("clear of u:ada took the address's too: %v", f)
	}

	// Prune drops every key's failures at or before the cut, and the rows
	// themselves (the table does not grow with old failures).
	if err := db.PruneSignInFailures(ctx, at(20)); err != nil {
		t.Fatal(err)
	}
	if f := failures("a:192.0.2.1", t0); !equal(f, []time.Time{at(30)}) {
		t.Fatalf("after prune %v", f)
	}
	if f := failures("u:bob", t0); len(f) != 0 {
		t.Fatalf("u:bob after prune %v", f)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for name, err := range map[string]error{
		"AddSignInFailure":    db.AddSignInFailure(cctx, at(1), "u:x"),
		"RemoveSignInFailure": db.RemoveSignInFailure(cctx, "u:x", at(1)),
		"ClearSignInFailures": db.ClearSignInFailures(cctx, "u:x"),
		"PruneSignInFailures": db.PruneSignInFailures(cctx, at(1)),
	} {
		if !errors.Is(err, context.Canceled) || bff.ErrorCode(err) != bff.EINTERNAL {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := db.SignInFailures(cctx, "u:x", t0); !errors.Is(err, context.Canceled) {
		t.Errorf("SignInFailures: %v", err)
	}
}

func testOpeningMessagesAndActiveProtocol(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t, fixedClock())
	MustCreateIntake(t, db, "enc_a")
	MustCreateIntake(t, db, "enc_b")
	MustCreateIntake(t, db, "enc_c") // no turn
	for _, tt := range []struct{ id, sub, msg string }{
		{"enc_a", "s1", "I have a headache"}, {"enc_b", "s2", "Sore throat for 3 days"},
	} {
		if err := db.CreateTurn(ctx, &bff.Turn{IntakeID: tt.id, SubmissionID: tt.sub, Message: tt.msg, Status: bff.TurnCompleted}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_a", SubmissionID: "s3", Message: "No"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.OpeningMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["enc_a"] != "I have a headache" || got["enc_b"] != "Sore throat for 3 days" {
		t.Errorf("opening messages: %v", got)
	}

	if err := db.SetActiveProtocol(ctx, "enc_a", "headache.v1"); err != nil {
		t.Fatal(err)
	}
	in, err := db.Intake(ctx, "enc_a")
	if err != nil || in.ActiveProtocol != "headache.v1" {
		t.Errorf("active protocol after SetActiveProtocol: %+v, %v", in, err)
	}
	WantCode(t, db.SetActiveProtocol(ctx, "enc_none", "x"), bff.ENOTFOUND)
}

// 50 browsers send at once on one intake: exactly one turn becomes pending,
// every other gets the pending conflict, and nothing fails inside SQLite.
func testConcurrentCreateTurnOnePendingWins(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	MustCreateIntake(t, db, "enc_race")

	const n = 50
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_race", SubmissionID: fmt.Sprint("sub-", i), Message: "hi"})
		})
	}
	close(start)
	wg.Wait()

	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
		case bff.ErrorCode(err) == bff.ECONFLICT && bff.ErrorMessage(err) == bff.MsgTurnPending:
		default:
			t.Errorf("goroutine %d: %v", i, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d turns created, want exactly 1", wins)
	}
	turns, err := db.Turns(ctx, "enc_race")
	if err != nil || len(turns) != 1 || turns[0].Index != 1 {
		t.Fatalf("turns %v, %v", TurnKeys(turns), err)
	}
}

// 50 goroutines each get one turn onto one intake: whoever wins completes
// its turn, the others retry. Indexes come out 1..50, each once.
func testConcurrentCreateTurnIndexesUnique(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	MustCreateIntake(t, db, "enc_seq")

	const n = 50
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			tr := &bff.Turn{IntakeID: "enc_seq", SubmissionID: fmt.Sprint("sub-", i), Message: fmt.Sprint("m", i)}
			for {
				err := db.CreateTurn(ctx, tr)
				if bff.ErrorCode(err) == bff.ECONFLICT && bff.ErrorMessage(err) == bff.MsgTurnPending {
					runtime.Gosched()
					continue
				} else if err != nil {
					errs[i] = err
					return
				}
				tr.Status = bff.TurnCompleted
				errs[i] = db.UpdateTurn(ctx, tr)
				return
			}
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("goroutine %d: %v", i, err)
		}
	}
	turns, err := db.Turns(ctx, "enc_seq")
	if err != nil {
		t.Fatal(err)
	}
	var idx []int
	subs := map[string]bool{}
	for _, tr := range turns {
		idx = append(idx, tr.Index)
		subs[tr.SubmissionID] = true
		if tr.Status != bff.TurnCompleted {
			t.Errorf("turn %d is %s", tr.Index, tr.Status)
		}
	}
	want := make([]int, n)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(idx, want) || len(subs) != n {
		t.Fatalf("indexes %v, %d distinct submissions", idx, len(subs))
	}
}
