package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// The SQLite-only tests' helpers (the suite in bff/storetest has its own).

var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589793238, time.UTC)

func newIntake(id, owner string, created time.Time) *bff.Intake {
	return &bff.Intake{
		ID: id, Owner: owner,
		CreatedAt: created, ExpiresAt: created.Add(2 * time.Hour), UpdatedAt: created,
		Status: bff.StatusOpen,
	}
}

func mustCreateIntake(t testing.TB, db bff.IntakeStore, id string) *bff.Intake {
	t.Helper()
	in := newIntake(id, "owner-"+id, t0)
	if err := db.CreateIntake(context.Background(), in); err != nil {
		t.Fatalf("CreateIntake(%s): %v", id, err)
	}
	return in
}

func turnKeys(ts []*bff.Turn) []string {
	var keys []string
	for _, t := range ts {
		keys = append(keys, fmt.Sprintf("%s/%d", t.IntakeID, t.Index))
	}
	return keys
}

// addAudits appends n entries, a second apart, and returns them in order.
func addAudits(t *testing.T, db bff.AuditStore, n int) []*bff.AuditEntry {
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

func auditIDs(es []*bff.AuditEntry) []int64 {
	var ids []int64
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}

func equalAudit(a, b *bff.AuditEntry) bool {
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

func equalReview(a, b *bff.Review) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.IntakeID == b.IntakeID && a.Clinician == b.Clinician && a.Note == b.Note && a.ReviewedAt.Equal(b.ReviewedAt)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := bff.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

func ptr[T any](v T) *T { return &v }

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
	return fmt.Sprintf("{%s/%d sub=%q msg=%q status=%s reply=%q choices=%s terminal=%t urgent=%t safety=%s disp=%s label=%s err=%q/%q release=%q created=%s completed=%s blocking=%t lease=%q until=%s}",
		t.IntakeID, t.Index, t.SubmissionID, t.Message, t.Status, t.Reply, ch, t.Terminal, t.Urgent,
		s(t.SafetyStatus), s(t.Disposition), s(t.DispositionLabel), t.ErrorCode, t.ErrorMessage,
		t.Release, t.CreatedAt.UTC().Format(time.RFC3339Nano), c, t.Blocking, t.LeaseOwner,
		t.LeaseUntil.UTC().Format(time.RFC3339Nano))
}
