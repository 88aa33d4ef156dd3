package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// sandboxFaults arms faults of the embedded sandbox through its own
// endpoint (POST /v1/sandbox/faults, sandbox/README.md) with the key only
// this process holds: the key never leaves it, the clinician's browser sees
// only the fault panel. Each arming is audited under the clinician's name.
type sandboxFaults struct {
	url, key string
	http     *http.Client
	audit    bff.AuditStore
	intakes  bff.IntakeStore // the app's intake id leads to the service's encounter id
	log      *slog.Logger
	now      func() time.Time
}

// intakeIDPattern is the app's intake ids: its own (iw_), and the service's
// encounter ids that intakes from before the app had its own ids carry.
var intakeIDPattern = regexp.MustCompile(`^(iw_[0-9a-f]{24}|enc_[0-9a-f]{8}_[0-9a-f]{16})$`)

// ArmFault implements bff.FaultArmer.
func (f *sandboxFaults) ArmFault(ctx context.Context, clinician string, fault bff.Fault) error {
	if !bff.IsFaultKind(fault.Kind) {
		return bff.Invalid("kind", "Choose one of the fault kinds.")
	}
	if fault.Count < 1 || fault.Count > bff.MaxFaultCount {
		return bff.Invalid("count", "The count must be a whole number from 1 to %d.", bff.MaxFaultCount)
	}
	body := map[string]any{"kind": fault.Kind, "count": fault.Count}
	if fault.IntakeID != "" {
		if !intakeIDPattern.MatchString(fault.IntakeID) {
			return bff.Invalid("intake", "An intake id looks like iw_0123456789abcdef01234567 (it ends the intake's address); leave it empty to arm every intake.")
		}
		in, err := f.intakes.Intake(ctx, fault.IntakeID)
		switch {
		case bff.ErrorCode(err) == bff.ENOTFOUND:
			return &bff.Error{Code: bff.ENOTFOUND, Field: "intake", Message: "This app has no intake with this id."}
		case err != nil:
			return err
		case in.EncounterID == "":
			return &bff.Error{Code: bff.ECONFLICT, Field: "intake", Message: "This intake has not reached the sandbox yet (it starts with its first message): arm the fault for every intake, or after the first message."}
		}
		body["encounter_id"] = in.EncounterID
	}
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(f.url, "/")+"/v1/sandbox/faults", bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("arm fault: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+f.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := f.http.Do(req)
	if err != nil {
		f.log.Warn("arming a sandbox fault failed", "err", err)
		return bff.Errorf(bff.EUNAVAILABLE, "The embedded sandbox did not answer. Try again.")
	}
	defer func() { _ = res.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		if fault.IntakeID != "" {
			return &bff.Error{Code: bff.ENOTFOUND, Field: "intake", Message: "The sandbox knows no intake with this id."}
		}
		return bff.Errorf(bff.EUNAVAILABLE, "The embedded sandbox's fault injection is off.")
	default:
		f.log.Warn("the sandbox refused a fault", "status", res.StatusCode)
		return bff.Errorf(bff.EUNAVAILABLE, "The embedded sandbox refused the fault (status %d).", res.StatusCode)
	}
	target := "every intake"
	if fault.IntakeID != "" {
		target = "this intake"
	}
	bff.Record(ctx, f.audit, f.log, f.now(), clinician, bff.AuditFaultArmed, fault.IntakeID,
		fmt.Sprintf("%s × %d for the next turns of %s", fault.Kind, fault.Count, target))
	return nil
}
