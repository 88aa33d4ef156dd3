package intakeapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// The service's errors told in words a person can act on: the client's
// errors are its own (Error, QuotaError), and the core's services show
// these instead.

// Describe maps what the client or its Gate reported to an *bff.Error a
// person can be shown. The original is logged by the caller.
func Describe(err error, now time.Time) error {
	if err == nil {
		return nil
	}
	if be := (*bff.Error)(nil); errors.As(err, &be) {
		return be // already in words (an intake not created upstream yet, say)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return bff.Errorf(bff.EUNAVAILABLE, "The intake service did not answer in time. Please try again.")
	}
	var qe *QuotaError
	if errors.As(err, &qe) {
		return QuotaMessage(qe.Quota, qe.ResetAt, now)
	}
	ae, ok := AsError(err)
	if !ok {
		return bff.Errorf(bff.EUNAVAILABLE, "The intake service could not be reached. Please try again in a moment.")
	}
	switch ae.Code {
	case CodeRateLimited:
		return &bff.Error{Code: bff.ERATELIMIT, RetryAfter: ae.RetryAfter, Message: fmt.Sprintf("The intake service is busy; please try again in %d seconds.", int(math.Ceil(max(ae.RetryAfter, time.Second).Seconds())))}
	case CodeQuotaExceeded:
		return QuotaMessage("turns or intakes", time.Time{}, now)
	case CodeIntakeClosed:
		return bff.Errorf(bff.ECONFLICT, "This intake has ended; no more messages can be sent.")
	case CodeIntakeExpired:
		return bff.Errorf(bff.EGONE, "This intake passed its two-hour limit. Start a new intake; this one stays readable.")
	case CodeNotFound:
		return bff.Errorf(bff.ENOTFOUND, "The intake service no longer knows this intake.")
	case CodeTurnInProgress:
		return bff.Errorf(bff.ECONFLICT, "The previous reply is still being written; please wait for it.")
	case CodeInvalidRequest:
		return bff.Errorf(bff.EINVALID, "The intake service refused the request: %s", ae.Message)
	}
	return bff.Errorf(bff.EUNAVAILABLE, "The intake service is having trouble. Please try again in a moment.")
}

// QuotaMessage says which daily quota is spent and when it resets (00:00
// UTC when reset is zero).
func QuotaMessage(what string, reset, now time.Time) *bff.Error {
	if reset.IsZero() {
		y, m, d := now.UTC().Date()
		reset = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	}
	left := reset.Sub(now).Round(time.Minute)
	return &bff.Error{Code: bff.EQUOTA, Message: fmt.Sprintf("Today's %s for this service key are used up. They reset at 00:00 UTC (in %d h %02d min).",
		what, int(left.Hours()), int(left.Minutes())%60)}
}
