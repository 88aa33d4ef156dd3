package storetest

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// testSecondFactor: a sealed secret and its recovery codes are set and
// reset together, a step is accepted once and only forwards, a recovery
// code is used once even by two at the same moment.
func testSecondFactor(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	for _, n := range []string{"dr.a", "dr.b"} {
		if err := db.CreateClinician(ctx, &bff.Clinician{Username: n, PasswordHash: []byte("h"), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if c, _ := db.Clinician(ctx, "dr.a"); c.HasSecondFactor() || c.TOTPStep != 0 {
		t.Fatalf("a new account has a second factor: %+v", c)
	}
	codes := func(n int) []bff.RecoveryCode {
		var out []bff.RecoveryCode
		for i := 1; i <= n; i++ {
			out = append(out, bff.RecoveryCode{ID: i, Salt: []byte{byte(i), 0xff}, Hash: bytes.Repeat([]byte{byte(i)}, 32)})
		}
		return out
	}
	sealed := []byte("sealed\x00secret\xff")
	if err := db.SetClinicianTOTP(ctx, "dr.a", sealed, codes(10)); err != nil {
		t.Fatal(err)
	}
	c, err := db.Clinician(ctx, "dr.a")
	if err != nil || !bytes.Equal(c.TOTPSecret, sealed) || !c.HasSecondFactor() {
		t.Fatalf("after SetClinicianTOTP: %+v, %v", c, err)
	}
	if other, _ := db.Clinician(ctx, "dr.b"); other.HasSecondFactor() {
		t.Fatal("another account got a second factor")
	}
	got, err := db.RecoveryCodes(ctx, "dr.a")
	if err != nil || !slices.EqualFunc(got, codes(10), func(a, b bff.RecoveryCode) bool {
		return a.ID == b.ID && bytes.Equal(a.Salt, b.Salt) && bytes.Equal(a.Hash, b.Hash) && !a.Used
	}) {
		t.Fatalf("RecoveryCodes: %+v, %v", got, err)
	}
	WantCode(t, db.SetClinicianTOTP(ctx, "nobody", sealed, codes(1)), bff.ENOTFOUND)

	t.Run("steps go forward only", func(t *testing.T) {
		for _, tc := range []struct {
			step int64
			code string
		}{{100, ""}, {100, bff.ECONFLICT}, {99, bff.ECONFLICT}, {102, ""}, {101, bff.ECONFLICT}} {
			err := db.AdvanceTOTPStep(ctx, "dr.a", tc.step)
			if tc.code == "" && err != nil {
				t.Fatalf("step %d: %v", tc.step, err)
			} else if tc.code != "" {
				WantCode(t, err, tc.code)
			}
		}
		if c, _ := db.Clinician(ctx, "dr.a"); c.TOTPStep != 102 {
			t.Fatalf("step %d, want 102", c.TOTPStep)
		}
		WantCode(t, db.AdvanceTOTPStep(ctx, "nobody", 1), bff.ENOTFOUND)
	})
	t.Run("a recovery code is used once", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { errs[i] = db.UseRecoveryCode(ctx, "dr.a", 3) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else if bff.ErrorCode(err) != bff.ENOTFOUND {
				t.Fatalf("UseRecoveryCode: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d of 8 uses at once succeeded, want 1", won)
		}
		got, _ := db.RecoveryCodes(ctx, "dr.a")
		for _, c := range got {
			if c.Used != (c.ID == 3) {
				t.Fatalf("code %d used: %v", c.ID, c.Used)
			}
		}
		WantCode(t, db.UseRecoveryCode(ctx, "dr.a", 11), bff.ENOTFOUND)
		WantCode(t, db.UseRecoveryCode(ctx, "dr.b", 1), bff.ENOTFOUND)
	})
	t.Run("a new enrolment replaces the codes and the step; a reset removes all", func(t *testing.T) {
		if err := db.SetClinicianTOTP(ctx, "dr.a", []byte("another"), codes(2)); err != nil {
			t.Fatal(err)
		}
		c, _ := db.Clinician(ctx, "dr.a")
		got, _ := db.RecoveryCodes(ctx, "dr.a")
		if !bytes.Equal(c.TOTPSecret, []byte("another")) || c.TOTPStep != 0 || len(got) != 2 || got[0].Used || got[1].Used {
			t.Fatalf("after re-enrolment: %+v, codes %+v", c, got)
		}
		if err := db.SetClinicianTOTP(ctx, "dr.a", nil, codes(2)); err != nil {
			t.Fatal(err)
		}
		c, _ = db.Clinician(ctx, "dr.a")
		got, _ = db.RecoveryCodes(ctx, "dr.a")
		if c.HasSecondFactor() || c.TOTPSecret != nil || len(got) != 0 {
			t.Fatalf("after reset: %+v, codes %+v", c, got)
		}
		if !bytes.Equal(c.PasswordHash, []byte("h")) || !c.CreatedAt.Equal(t0) {
			t.Fatalf("other fields changed: %+v", c)
		}
	})
}

// testClinicianSessions: the index lists, touches, ends and prunes
// sessions; ending one removes its row from the session table too.
func testClinicianSessions(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	now := t0
	add := func(token, user string, seen time.Duration, life time.Duration) *bff.ClinicianSession {
		t.Helper()
		s := &bff.ClinicianSession{ID: bff.SessionID(token), Username: user, Device: "Firefox on Linux", Address: "192.0.2.7",
			SignedInAt: now.Add(-time.Hour), LastSeen: now.Add(seen), ExpiresAt: now.Add(life)}
		if err := db.AddClinicianSession(ctx, token, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a1 := add("tok-a1", "dr.a", -time.Minute, time.Hour)
	a2 := add("tok-a2", "dr.a", -2*time.Minute, time.Hour)
	b1 := add("tok-b1", "dr.b", -30*time.Second, time.Hour)
	add("tok-old", "dr.a", -3*time.Minute, -time.Second) // expired

	list := func(user string) []string {
		t.Helper()
		ss, err := db.ClinicianSessions(ctx, user, now)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
		return ids
	}
	if got := list("dr.a"); !slices.Equal(got, []string{a1.ID, a2.ID}) {
		t.Fatalf("dr.a's sessions %v, want a1, a2 (latest seen first, none expired)", got)
	}
	if got := list(""); !slices.Equal(got, []string{b1.ID, a1.ID, a2.ID}) {
		t.Fatalf("everyone's sessions %v", got)
	}
	got, err := db.ClinicianSession(ctx, "tok-a1", now)
	if err != nil || got.ID != a1.ID || got.Username != "dr.a" || got.Device != a1.Device || got.Address != a1.Address ||
		!got.SignedInAt.Equal(a1.SignedInAt) || !got.LastSeen.Equal(a1.LastSeen) || !got.ExpiresAt.Equal(a1.ExpiresAt) {
		t.Fatalf("ClinicianSession: %+v, %v", got, err)
	}
	_, err = db.ClinicianSession(ctx, "tok-old", now)
	WantCode(t, err, bff.ENOTFOUND)
	_, err = db.ClinicianSession(ctx, "tok-none", now)
	WantCode(t, err, bff.ENOTFOUND)

	if err := db.TouchClinicianSession(ctx, "tok-a2", now); err != nil {
		t.Fatal(err)
	}
	if got := list("dr.a"); !slices.Equal(got, []string{a2.ID, a1.ID}) {
		t.Fatalf("after a touch: %v", got)
	}
	WantCode(t, db.TouchClinicianSession(ctx, "tok-none", now), bff.ENOTFOUND)

	ended, err := db.EndClinicianSession(ctx, a1.ID)
	if err != nil || ended.Username != "dr.a" || ended.ID != a1.ID {
		t.Fatalf("EndClinicianSession: %+v, %v", ended, err)
	}
	_, err = db.EndClinicianSession(ctx, a1.ID)
	WantCode(t, err, bff.ENOTFOUND)
	if got := list("dr.a"); !slices.Equal(got, []string{a2.ID}) {
		t.Fatalf("after ending a1: %v", got)
	}
	if err := db.RemoveClinicianSession(ctx, "tok-a2"); err != nil {
		t.Fatal(err)
	}
	if err := db.RemoveClinicianSession(ctx, "tok-a2"); err != nil { // none is no error
		t.Fatal(err)
	}
	if got := list("dr.a"); len(got) != 0 {
		t.Fatalf("after removing a2: %v", got)
	}
	if n, err := db.PruneClinicianSessions(ctx, now); err != nil || n != 1 {
		t.Fatalf("prune: %d, %v; want the expired one", n, err)
	}
	if got := list(""); !slices.Equal(got, []string{b1.ID}) {
		t.Fatalf("after pruning: %v", got)
	}
}
