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
// short window; each test has a database of its own. The window is long
// enough that a loaded machine (CI runs every package at once) does not let
// grants leave it before the test has looked: at 800 ms, RetryAfter and
// Headroom tests failed now and then under a load of 15.
func TestBudgetGateSuite(t *testing.T) {
	gatetest.Run(t, gatetest.Harness{
		New: func(t *testing.T, r pacing.Rules) gatetest.Gate {
			b, _ := replicas(t, postgres.BudgetConfig{Rules: r}, "a")
			return b[0]
		},
		Run:    func(t *testing.T, f func(t *testing.T)) { f(t) },
		Window: 2 * time.Second,
		Slack:  400 * time.Millisecond,
	})
}
