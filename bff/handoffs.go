package bff

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
)

// How fresh the handoff of an open intake must be: a view re-reads it at
// most once per openHandoffMaxAge, a refresh button at most once per
// refreshMinInterval (each read costs one of the key's six a minute).
const (
	openHandoffMaxAge  = 30 * time.Second
	refreshMinInterval = 10 * time.Second
	MaxReviewNoteChars = 2000
)

// HandoffRecord is a handoff as a clinician sees it.
type HandoffRecord struct {
	Intake    *Intake
	Handoff   *intakeapi.Handoff // decoded from Raw
	Raw       []byte             // exactly as the service sent it
	FetchedAt time.Time          // when it was read from the service
	Release   string             // the release that served it
	Reviews   []*Review          // newest first
	// Stale is set when a fresh read failed and an older copy is shown;
	// StaleReason says why, in words a clinician can act on.
	Stale       bool
	StaleReason string
}

// ClinicianHandoff returns an intake's handoff for a signed-in clinician.
// The handoff of a closed or expired intake never changes, so once stored
// it is served with no upstream call. An open intake's is re-read through
// the pacer at clinician priority when older than 30 s, or on refresh.
// Every call is audited.
func (s *Service) ClinicianHandoff(ctx context.Context, clinician, id string, refresh bool) (*HandoffRecord, error) {
	in, err := s.intakes.Intake(ctx, id)
	if err != nil {
		return nil, err
	}
	s.markExpired(ctx, in)
	rec := &HandoffRecord{Intake: in}

	// One read per intake at a time: two clinicians opening it together
	// cost one request. Locks are striped by intake so memory stays fixed.
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	mu := &s.fetching[h.Sum32()%uint32(len(s.fetching))]
	mu.Lock()
	defer mu.Unlock()

	stored, err := s.handoffs.Handoff(ctx, id)
	if err != nil && ErrorCode(err) != ENOTFOUND {
		return nil, err
	}
	age := time.Duration(1<<62 - 1)
	if stored != nil {
		age = s.now().Sub(stored.FetchedAt)
	}
	need := stored == nil || (!stored.Terminal && (age > openHandoffMaxAge || (refresh && age > refreshMinInterval)))
	if need {
		h, meta, err := s.client.Handoff(intakeapi.WithPriority(ctx, intakeapi.PriorityClinicianRead), id)
		switch {
		case err == nil:
			s.storeHandoff(ctx, h, meta.Release)
			if stored, err = s.handoffs.Handoff(ctx, id); err != nil {
				return nil, err
			}
		case stored != nil:
			s.log.Warn("handoff re-read failed; showing the stored copy", "encounter_id", id, "err", err)
			rec.Stale, rec.StaleReason = true, ErrorMessage(upstreamError(err, s.now()))
		default:
			s.log.Warn("handoff read failed", "encounter_id", id, "err", err)
			return nil, upstreamError(err, s.now())
		}
	}
	rec.Raw, rec.FetchedAt, rec.Release = stored.JSON, stored.FetchedAt, stored.Release
	rec.Handoff = new(intakeapi.Handoff)
	if err := json.Unmarshal(stored.JSON, rec.Handoff); err != nil {
		return nil, fmt.Errorf("decode stored handoff of %s: %w", id, err)
	}
	if rec.Reviews, err = s.reviews.Reviews(ctx, id); err != nil {
		return nil, err
	}
	action, detail := AuditViewHandoff, ""
	if refresh {
		action = AuditRefresh
	}
	if need && !rec.Stale {
		detail = "read from the service"
	}
	s.record(ctx, clinician, action, id, detail)
	return rec, nil
}

// RawHandoff returns the stored handoff bytes for download, audited. It
// reads the service only when nothing is stored yet.
func (s *Service) RawHandoff(ctx context.Context, clinician, id string) ([]byte, error) {
	stored, err := s.handoffs.Handoff(ctx, id)
	if ErrorCode(err) == ENOTFOUND {
		rec, err := s.ClinicianHandoff(ctx, clinician, id, false)
		if err != nil {
			return nil, err
		}
		s.record(ctx, clinician, AuditDownload, id, "")
		return rec.Raw, nil
	}
	if err != nil {
		return nil, err
	}
	s.record(ctx, clinician, AuditDownload, id, "")
	return stored.JSON, nil
}

// MarkReviewed records that clinician reviewed the intake's handoff.
func (s *Service) MarkReviewed(ctx context.Context, clinician, id, note string) (*Review, error) {
	note = strings.TrimSpace(note)
	if n := utf8.RuneCountInString(note); n > MaxReviewNoteChars {
		return nil, Invalid("note", "A review note is at most %s characters; this one has %s.", thousands(MaxReviewNoteChars), thousands(n))
	}
	in, err := s.intakes.Intake(ctx, id)
	if err != nil {
		return nil, err
	}
	r := &Review{IntakeID: id, Clinician: clinician, Note: note, ReviewedAt: s.now()}
	if err := s.reviews.AddReview(ctx, r); err != nil {
		return nil, err
	}
	detail := ""
	if note != "" {
		detail = "with a note"
	}
	s.record(ctx, clinician, AuditReview, id, detail)
	s.changed(in)
	return r, nil
}
