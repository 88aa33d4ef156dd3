package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
	"github.com/clinical-intake/intake-web/web"
	"golang.org/x/crypto/bcrypt"
)

// lateCount is a store read just before another replica created the demo
// clinician: it still says there are none.
type lateCount struct{ *sqlite.DB }

func (lateCount) Clinicians(context.Context) ([]*bff.Clinician, error) { return nil, nil }

// Two replicas starting together on one database both see no clinician and
// both create the demo account (issue #25, item 7): the second must start
// anyway, not exit with "A clinician named demo already exists".
func TestTheDemoClinicianIsCreatedOnceByReplicasStartingTogether(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "app.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	acc := accounts.New(accounts.Deps{Clinicians: lateCount{db}, Audit: db, SignInFailures: db, BcryptCost: bcrypt.MinCost})
	first := &App{cfg: Config{Config: web.Config{Embedded: true}}, log: slog.New(slog.DiscardHandler), accounts: acc}
	second := &App{cfg: Config{Config: web.Config{Embedded: true}}, log: slog.New(slog.DiscardHandler), accounts: acc}
	if err := first.demoClinician(ctx); err != nil {
		t.Fatalf("the first replica: %v", err)
	}
	if err := second.demoClinician(ctx); err != nil {
		t.Fatalf("the second replica, starting at the same moment: %v", err)
	}
	if _, err := acc.ActiveClinician(ctx, "demo"); err != nil {
		t.Fatalf("the demo clinician: %v", err)
	}
}
