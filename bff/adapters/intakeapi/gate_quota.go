package intakeapi

import (
	"errors"
	"fmt"
	"time"
)

// ErrQuotaSpent is matched (errors.Is) by every *QuotaError.
var ErrQuotaSpent = errors.New("pacer: daily quota spent")

// QuotaError is a Gate's refusal of a call because a daily quota of the key
// is spent; nothing was sent. Every Gate (the in-process pacer, the
// PostgreSQL budget shared by replicas) returns this type, so callers match
// one error whichever gate paces them.
type QuotaError struct {
	Quota   string    // "turns" or "intakes"
	Limit   int       // the configured quota, 0 if the service reported it spent
	ResetAt time.Time // next 00:00 UTC
}

func (e *QuotaError) Error() string {
	limit := ""
	if e.Limit > 0 {
		limit = fmt.Sprintf(" (%d)", e.Limit)
	}
	return fmt.Sprintf("pacer: the daily %s quota%s is spent; it resets at %s", e.Quota, limit, e.ResetAt.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrQuotaSpent) true.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaSpent }

// ErrorCode lets IsCode(err, CodeQuotaExceeded) match an early refusal the
// same as the service's own 429.
func (e *QuotaError) ErrorCode() Code { return CodeQuotaExceeded }
