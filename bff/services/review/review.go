// Package review is the clinicians' side of intakes (bff.ReviewService):
// the worklist and its live feed, handoffs read with as few upstream calls
// as possible, reviews, and the audit log every read and review goes to.
package review

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/singleflight"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
	"github.com/clinical-intake/intake-web/bff/fhir"
	"github.com/clinical-intake/intake-web/bff/services/handoffs"
)

// How fresh the handoff of an open intake must be: a view re-reads it at
// most once per openHandoffMaxAge, a refresh button at most once per
// refreshMinInterval (each read costs one of the key's six a minute).
const (
	openHandoffMaxAge  = 30 * time.Second
	refreshMinInterval = 10 * time.Second
)

// Deps are what the review service needs.
type Deps struct {
	Client   *intakeapi.Client
	Intakes  bff.IntakeStore
	Handoffs bff.HandoffStore
	Reviews  bff.ReviewStore
	Audit    bff.AuditStore
	Worklist bff.WorklistStore // opening messages, active protocols
	Feed     *relay.Feed       // the worklist's live feed, shared with the turn runner
	// Announce tells every replica's worklist of a change (nil: Feed, one
	// replica).
	Announce bff.Announcer
	Now      func() time.Time
	Logger   *slog.Logger
}

var _ bff.ReviewService = (*Service)(nil)

// Service is bff.ReviewService.
type Service struct {
	intakes  bff.IntakeStore
	handoffs *handoffs.Reader
	reviews  bff.ReviewStore
	audit    bff.AuditStore
	worklist bff.WorklistStore
	feed     *relay.Feed
	announce bff.Announcer
	now      func() time.Time
	log      *slog.Logger
	// reads shares one upstream read among clinicians opening the same
	// intake's handoff at once: they cost one of the key's requests.
	reads singleflight.Group
}

// New returns the review service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if d.Announce == nil && d.Feed != nil {
		d.Announce = d.Feed
	}
	return &Service{
		intakes: d.Intakes, reviews: d.Reviews, audit: d.Audit, worklist: d.Worklist, feed: d.Feed, announce: d.Announce, now: d.Now, log: d.Logger,
		handoffs: &handoffs.Reader{Client: d.Client, Store: d.Handoffs, Now: d.Now, Log: d.Logger},
	}
}

// fetched is one upstream read, shared by the callers that waited on it.
type fetched struct {
	h       *bff.Handoff
	raw     []byte
	release string
	at      time.Time
}

// Handoff returns an intake's handoff for a signed-in clinician: see
// bff.ReviewService. A handoff read from the service is decoded once and
// shown even if storing it fails.
func (s *Service) Handoff(ctx context.Context, clinician, id string, refresh bool) (*bff.HandoffRecord, error) {
	rec, read, err := s.record(ctx, id, refresh)
	if err != nil {
		return nil, err
	}
	if rec.Reviews, err = s.reviews.Reviews(ctx, id); err != nil {
		return nil, err
	}
	action, detail := bff.AuditViewHandoff, ""
	if refresh {
		action = bff.AuditRefresh
	}
	if read {
		detail = "read from the service"
	}
	bff.Record(ctx, s.audit, s.log, s.now(), clinician, action, id, detail)
	return rec, nil
}

// record reads an intake's handoff as Handoff does, without its reviews and
// without an audit entry; read says a fresh copy came from the service.
func (s *Service) record(ctx context.Context, id string, refresh bool) (*bff.HandoffRecord, bool, error) {
	in, err := s.intakes.Intake(ctx, id)
	if err != nil {
		return nil, false, err
	}
	bff.MarkExpired(ctx, s.intakes, s.log, in, s.now())
	rec := &bff.HandoffRecord{Intake: in}
	stored, err := s.handoffs.Store.Handoff(ctx, id)
	if err != nil && bff.ErrorCode(err) != bff.ENOTFOUND {
		return nil, false, err
	}
	age := time.Duration(1<<62 - 1)
	if stored != nil {
		age = s.now().Sub(stored.FetchedAt)
	}
	need := stored == nil || (!stored.Terminal && (age > openHandoffMaxAge || (refresh && age > refreshMinInterval)))
	if need {
		v, err, _ := s.reads.Do(id, func() (any, error) {
			// A read that finished while this caller was on its way
			// (between its look at the store and here) is as fresh.
			if again, err := s.handoffs.Store.Handoff(ctx, id); err == nil && (stored == nil || again.FetchedAt.After(stored.FetchedAt)) {
				h, err := handoffs.Decode(again)
				if err != nil {
					return nil, err
				}
				return &fetched{h: h, raw: again.JSON, release: again.Release, at: again.FetchedAt}, nil
			}
			h, release, err := s.handoffs.Read(context.WithoutCancel(ctx), in, intakeapi.PriorityClinicianRead, true)
			if err != nil {
				return nil, err
			}
			return &fetched{h: intakeapi.DomainHandoff(h), raw: h.Raw, release: release, at: s.now()}, nil
		})
		switch {
		case err == nil:
			f := v.(*fetched)
			rec.Handoff, rec.Raw, rec.Release, rec.FetchedAt = f.h, f.raw, f.release, f.at
			s.recordProtocol(ctx, in, f.h)
		case stored != nil:
			s.log.Warn("handoff re-read failed; showing the stored copy", "intake_id", id, "err", err)
			rec.Stale, rec.StaleReason = true, bff.ErrorMessage(intakeapi.Describe(err, s.now()))
		default:
			s.log.Warn("handoff read failed", "intake_id", id, "err", err)
			return nil, false, intakeapi.Describe(err, s.now())
		}
	}
	if rec.Handoff == nil {
		if rec.Handoff, err = handoffs.Decode(stored); err != nil {
			return nil, false, err
		}
		rec.Raw, rec.FetchedAt, rec.Release = stored.JSON, stored.FetchedAt, stored.Release
	}
	return rec, need && !rec.Stale, nil
}

// FHIRHandoff returns the handoff as a FHIR R4 document for download,
// audited as a FHIR download (and nothing else): see bff.ReviewService.
func (s *Service) FHIRHandoff(ctx context.Context, clinician, id string) ([]byte, error) {
	rec, read, err := s.record(ctx, id, false)
	if err != nil {
		return nil, err
	}
	doc, err := fhir.Document(fhir.Input{Handoff: rec.Handoff, Intake: rec.Intake, FetchedAt: rec.FetchedAt, Release: rec.Release})
	if err != nil {
		return nil, err
	}
	detail := ""
	if read {
		detail = "read from the service"
	}
	if rec.Stale {
		detail = "stored copy (a fresh read failed)"
	}
	bff.Record(ctx, s.audit, s.log, s.now(), clinician, bff.AuditDownloadFHIR, id, detail)
	return doc, nil
}

// recordProtocol keeps the intake's active protocol as a fresh handoff
// says: the turn stream does not carry it, so without this an open intake's
// worklist row would name none until it closed. A failed write is logged:
// the handoff is shown either way.
func (s *Service) recordProtocol(ctx context.Context, in *bff.Intake, h *bff.Handoff) {
	if h.ActiveProtocol == nil || *h.ActiveProtocol == in.ActiveProtocol {
		return
	}
	in.ActiveProtocol = *h.ActiveProtocol
	if err := s.worklist.SetActiveProtocol(context.WithoutCancel(ctx), in.ID, in.ActiveProtocol); err != nil {
		s.log.Error("record the active protocol", "intake_id", in.ID, "err", err)
		return
	}
	bff.AnnounceChange(s.announce, in)
}

// RawHandoff returns the stored handoff bytes for download, audited. It
// reads the service only when nothing is stored yet.
func (s *Service) RawHandoff(ctx context.Context, clinician, id string) ([]byte, error) {
	stored, err := s.handoffs.Store.Handoff(ctx, id)
	if bff.ErrorCode(err) == bff.ENOTFOUND {
		rec, err := s.Handoff(ctx, clinician, id, false)
		if err != nil {
			return nil, err
		}
		bff.Record(ctx, s.audit, s.log, s.now(), clinician, bff.AuditDownload, id, "")
		return rec.Raw, nil
	}
	if err != nil {
		return nil, err
	}
	bff.Record(ctx, s.audit, s.log, s.now(), clinician, bff.AuditDownload, id, "")
	return stored.JSON, nil
}

// MarkReviewed records that clinician reviewed the intake's handoff.
func (s *Service) MarkReviewed(ctx context.Context, clinician, id, note string) (*bff.Review, error) {
	note = strings.TrimSpace(note)
	if n := utf8.RuneCountInString(note); n > bff.MaxReviewNoteChars {
		return nil, bff.Invalid("note", "A review note is at most %s characters; this one has %s.", bff.Count(bff.MaxReviewNoteChars), bff.Count(n))
	}
	in, err := s.intakes.Intake(ctx, id)
	if err != nil {
		return nil, err
	}
	r := &bff.Review{IntakeID: id, Clinician: clinician, Note: note, ReviewedAt: s.now()}
	if err := s.reviews.AddReview(ctx, r); err != nil {
		return nil, err
	}
	detail := ""
	if note != "" {
		detail = "with a note"
	}
	bff.Record(ctx, s.audit, s.log, s.now(), clinician, bff.AuditReview, id, detail)
	bff.AnnounceChange(s.announce, in)
	return r, nil
}

// AuditLog returns audit entries newest first, 100 a page, before an id.
func (s *Service) AuditLog(ctx context.Context, before int64) ([]*bff.AuditEntry, error) {
	return s.audit.Audit(ctx, 100, before)
}

// FollowWorklist subscribes to the worklist's feed.
func (s *Service) FollowWorklist(after int64) ([]bff.Event, <-chan bff.Event, func(), bool) {
	return s.feed.Subscribe(after)
}

// LastWorklistEvent is the newest feed event id.
func (s *Service) LastWorklistEvent() int64 { return s.feed.LastID() }
