package accounts

import (
	"context"
	"github.com/clinical-intake/intake-web/bff"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
)

// An unknown username costs one bcrypt comparison against a hash of the
// accounts' cost, as a known one does: the time does not tell them apart.
// (Counted, not timed: a timed assertion fails on a busy machine.)
func TestUnknownUsernamesCostABcryptCompare(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	s := New(Deps{Clinicians: db, Audit: db, SignInFailures: db, BcryptCost: 5})
	if _, err := s.AddClinician(context.Background(), "system", "dr.ada", "correct horse battery", bff.AllRoles()); err != nil {
		t.Fatal(err)
	}
	var costs []int
	s.compare = func(hash, password []byte) error {
		c, err := bcrypt.Cost(hash)
		if err != nil {
			t.Fatalf("compared against something not a bcrypt hash: %v", err)
		}
		costs = append(costs, c)
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	for i, user := range []string{"dr.ada", "nobody"} {
		_, _ = s.SignIn(context.Background(), user, "wrong password!!", "192.0.2.1")
		if len(costs) != i+1 || costs[i] != 5 {
			t.Fatalf("sign-in as %s: bcrypt comparisons at costs %v, want one more at cost 5", user, costs)
		}
	}
}
