// Package storetest is the one test suite of the bff store adapters
// (bff/adapters/sqlite, bff/adapters/postgres): each adapter's tests call Run (and, when it
// keeps an event log, RunEventLog) with a function that opens a fresh store.
// What only one adapter has (SQLite's pragmas and single writer,
// PostgreSQL's notifications) is tested beside that adapter.
package storetest

import (
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// Stores is every store interface an adapter implements: the core's list.
type Stores = bff.Stores

// Opener opens a fresh, empty store whose CreateTurn takes its times from
// now, closed when t ends.
type Opener = func(t *testing.T, now bff.Clock) Stores

// t0 has microseconds, not nanoseconds: PostgreSQL keeps microseconds.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)

// Run runs the suite on the stores open returns, each test on a store of
// its own.
func Run(t *testing.T, open func(t *testing.T, now bff.Clock) Stores) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"Intakes", testIntakes},
		{"EncounterID", testEncounterID},
		{"Turns", testTurns},
		{"TurnNullsRoundTrip", testTurnNullsRoundTrip},
		{"Handoffs", testHandoffs},
		{"ContextHonoured", testContextHonoured},
		{"BlockingModeRoundTrips", testBlockingModeRoundTrips},
		{"ASettledTurnsSubmissionIsNotReused", testASettledTurnsSubmissionIsNotReused},
		{"Audit", testAudit},
		{"Clinicians", testClinicians},
		{"ClinicianContextHonoured", testClinicianContextHonoured},
		{"SecondFactor", testSecondFactor},
		{"ClinicianSessions", testClinicianSessions},
		{"Reviews", testReviews},
		{"LatestReviewsMany", testLatestReviewsMany},
		{"SignInFailures", testSignInFailures},
		{"SSOLinks", testSSOLinks},
		{"OpeningMessagesAndActiveProtocol", testOpeningMessagesAndActiveProtocol},
		{"ConcurrentCreateTurnOnePendingWins", testConcurrentCreateTurnOnePendingWins},
		{"ConcurrentCreateTurnIndexesUnique", testConcurrentCreateTurnIndexesUnique},
		{"CreateTurnKeepsLease", testCreateTurnKeepsLease},
		{"ClaimStaleTurns", testClaimStaleTurns},
		{"ConcurrentClaimsNeverShare", testConcurrentClaimsNeverShare},
		{"RenewLeases", testRenewLeases},
		{"LostLease", testLostLease},
		{"SettleTurn", testSettleTurn},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open) })
	}
	t.Run("Worklist", func(t *testing.T) { RunWorklist(t, open) })
	t.Run("ScenarioRuns", func(t *testing.T) { runScenarios(t, open) })
	t.Run("Safety", func(t *testing.T) { runSafety(t, open) })
}
