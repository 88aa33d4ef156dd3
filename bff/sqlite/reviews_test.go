package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/sqlite/sqlitetest"
)

func TestReviews(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	for _, id := range []string{"enc_a", "enc_b", "enc_c"} {
		mustCreateIntake(t, db, id)
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
		wantCode(t, err, bff.ENOTFOUND)
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
		if !equalReview(rs[1], adds[1]) || rs[1].ReviewedAt.Location() != time.UTC || !equalReview(rs[3], adds[0]) {
			t.Fatalf("fields: %+v %+v", rs[1], rs[3])
		}
		rs, err = db.Reviews(ctx, "enc_b")
		if err != nil || !slices.Equal(reviewKeys(rs), []string{"alice@40", "bob@5"}) || !equalReview(rs[0], adds[4]) {
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
		if !equalReview(m["enc_a"], adds[5]) || !equalReview(m["enc_b"], adds[4]) {
			t.Fatalf("latest enc_a %+v, enc_b %+v", m["enc_a"], m["enc_b"])
		}
		// Each agrees with the head of Reviews.
		for id, r := range m {
			rs, _ := db.Reviews(ctx, id)
			if !equalReview(r, rs[0]) {
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
		if err != nil || len(m) != 3 || !equalReview(m["enc_b"], newer) || !equalReview(m["enc_c"], first) || !equalReview(m["enc_a"], adds[5]) {
			t.Fatalf("latest %v, %v", m, err)
		}
	})
	t.Run("reviews go with their intake", func(t *testing.T) {
		if _, err := db.SQL().ExecContext(ctx, `DELETE FROM intakes WHERE id = 'enc_a'`); err != nil {
			t.Fatal(err)
		}
		if rs, err := db.Reviews(ctx, "enc_a"); err != nil || len(rs) != 0 {
			t.Fatalf("reviews of a deleted intake: %v, %v", reviewKeys(rs), err)
		}
		m, err := db.LatestReviews(ctx)
		if err != nil || len(m) != 2 || m["enc_a"] != nil {
			t.Fatalf("latest after delete %v, %v", m, err)
		}
	})
}

// LatestReviews over many intakes and reviews agrees with Reviews.
func TestLatestReviewsMany(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	want := map[string]string{}
	for i := range 20 {
		id := fmt.Sprintf("enc_%02d", i)
		mustCreateIntake(t, db, id)
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

func equalReview(a, b *bff.Review) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.IntakeID == b.IntakeID && a.Clinician == b.Clinician && a.Note == b.Note && a.ReviewedAt.Equal(b.ReviewedAt)
}
