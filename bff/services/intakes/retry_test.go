package intakes_test

import (
	"testing"

	"github.com/clinical-intake/intake-web/bff"
)

// Only a turn proven not to have landed (or refused before anything was
// applied) may be sent again: a turn whose fate is unknown, or that failed
// for any other reason, may have reached the engine.
func TestOnlyTurnsProvenNotLandedAreRetryable(t *testing.T) {
	for _, c := range []struct {
		status bff.TurnStatus
		code   string
		want   bool
	}{
		{bff.TurnFailed, bff.CodeNotLanded, true},
		{bff.TurnFailed, "rate_limited", true},
		{bff.TurnFailed, "turn_in_progress", true},
		{bff.TurnFailed, bff.CodeUnconfirmed, false},
		{bff.TurnFailed, "internal", false},
		{bff.TurnFailed, "upstream_error", false},
		{bff.TurnFailed, "internal_error", false},
		{bff.TurnFailed, "unavailable", false},
		{bff.TurnFailed, "quota_exceeded", false},
		{bff.TurnFailed, "", false},
		{bff.TurnCompleted, bff.CodeNotLanded, false},
		{bff.TurnQueued, bff.CodeNotLanded, false},
		{bff.TurnStreaming, "", false},
	} {
		turn := &bff.Turn{Status: c.status, ErrorCode: c.code}
		if got := turn.Retryable(); got != c.want {
			t.Errorf("%s/%q: Retryable() = %v, want %v", c.status, c.code, got, c.want)
		}
	}
}
