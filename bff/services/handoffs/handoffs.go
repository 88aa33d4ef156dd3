// Package handoffs holds the handoffs the core's services share: read from
// the Clinical Intake Service through the client, kept in the store as
// received, and decoded from the store into the domain type.
package handoffs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// Reader reads handoffs through the client and keeps them in the store.
type Reader struct {
	Client *intakeapi.Client
	Store  bff.HandoffStore
	Now    func() time.Time
	Log    *slog.Logger
}

// Read reads the handoff of the intake in (by its encounter id) from the
// service at priority p. A terminal one is stored under in.ID (it never
// changes); so is any other when keep. An intake not yet created upstream
// has none: ECONFLICT, saying so.
func (hs *Reader) Read(ctx context.Context, in *bff.Intake, p intakeapi.Priority, keep bool) (*intakeapi.Handoff, string, error) {
	if in.EncounterID == "" {
		return nil, "", bff.Errorf(bff.ECONFLICT, "This intake has not reached the intake service yet: it starts with the patient's first message.")
	}
	h, meta, err := hs.Client.Handoff(intakeapi.WithPriority(ctx, p), in.EncounterID)
	if err != nil {
		return nil, "", err
	}
	if keep || h.Terminal {
		hs.Put(ctx, in.ID, h, meta.Release)
	}
	return h, meta.Release, nil
}

// Put stores h as received (its raw bytes; a handoff the app assembled
// itself is encoded) under the app's intake id. A failure is logged: the
// caller has the handoff.
func (hs *Reader) Put(ctx context.Context, intakeID string, h *intakeapi.Handoff, release string) {
	raw, err := []byte(h.Raw), error(nil)
	if len(raw) == 0 {
		raw, err = json.Marshal(h)
	}
	if err != nil {
		hs.Log.Error("encode handoff", "encounter_id", h.EncounterID, "err", err)
		return
	}
	sh := &bff.StoredHandoff{IntakeID: intakeID, JSON: raw, Terminal: h.Terminal, FetchedAt: hs.Now(), Release: release}
	if err := hs.Store.PutHandoff(context.WithoutCancel(ctx), sh); err != nil {
		hs.Log.Error("store handoff", "encounter_id", h.EncounterID, "err", err)
	}
}

// Decode decodes a stored handoff into the domain type.
func Decode(sh *bff.StoredHandoff) (*bff.Handoff, error) {
	var h intakeapi.Handoff
	if err := json.Unmarshal(sh.JSON, &h); err != nil {
		return nil, fmt.Errorf("decode stored handoff of %s: %w", sh.IntakeID, err)
	}
	return intakeapi.DomainHandoff(&h), nil
}
