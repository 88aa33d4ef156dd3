package postgres_test

import (
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/gatetest"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
)

// The budget passes the suite every gate passes, on the real clock (its
// database connections cannot live in a testing/synctest bubble) with a
// short window; each test has a database of its own.
func TestBudgetGateSuite(t *testing.T) {
	gatetest.Run(t, gatetest.Harness{
		New: func(t *testing.T, r pacing.Rules) gatetest.Gate {
			b, _ := replicas(t, postgres.BudgetConfig{Rules: r}, "a")
			return b[0]
		},
		Run:    func(t *testing.T, f func(t *testing.T)) { f(t) },
		Window: 800 * time.Millisecond,
		Slack:  200 * time.Millisecond,
	})
}
