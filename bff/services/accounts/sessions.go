package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// Signed-in sessions: the web layer records each clinician's sign-in
// (StartSession), checks on every request that it still stands
// (SessionActive) and notes when it was last used (SessionSeen); the
// sessions pages list and end them. Ending one deletes its row in the
// session store, so its browser is signed out at its next request and its
// open worklist stream within a few seconds (it re-checks the session).

var errNoSessions = errors.New("accounts: no session index (Deps.Sessions)")

// StartSession records a signed-in session under token.
func (s *Service) StartSession(ctx context.Context, token string, cs *bff.ClinicianSession) error {
	if s.sessions == nil {
		return errNoSessions
	}
	cs.ID = bff.SessionID(token)
	return s.sessions.AddClinicianSession(ctx, token, cs)
}

// SessionActive returns the recorded session with token, ENOTFOUND when
// it was ended (by its clinician, another of their sessions or an
// administrator), signed out, or has expired.
func (s *Service) SessionActive(ctx context.Context, token string) (*bff.ClinicianSession, error) {
	if s.sessions == nil {
		return nil, errNoSessions
	}
	return s.sessions.ClinicianSession(ctx, token, s.now())
}

// SessionSeen notes that the session with token was used at at.
func (s *Service) SessionSeen(ctx context.Context, token string, at time.Time) error {
	if s.sessions == nil {
		return errNoSessions
	}
	return s.sessions.TouchClinicianSession(ctx, token, at)
}

// SessionSignedOut forgets the session with token (its clinician signed
// out, or it went idle).
func (s *Service) SessionSignedOut(ctx context.Context, token string) {
	if s.sessions == nil || token == "" {
		return
	}
	if err := s.sessions.RemoveClinicianSession(context.WithoutCancel(ctx), token); err != nil {
		s.log.Error("forget a signed-out session", "err", err)
	}
}

// Sessions lists username's sessions ("" for everyone's), the latest seen
// first, leaving out those idle longer than idle (signed out at their next
// request).
func (s *Service) Sessions(ctx context.Context, username string, idle time.Duration) ([]*bff.ClinicianSession, error) {
	if s.sessions == nil {
		return nil, errNoSessions
	}
	now := s.now()
	all, err := s.sessions.ClinicianSessions(ctx, username, now)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, cs := range all {
		if idle <= 0 || now.Sub(cs.LastSeen) <= idle {
			out = append(out, cs)
		}
	}
	return out, nil
}

// EndSession ends the session with id, audited under actor. owner is
// whose it must be ("": anyone's, for an administrator); another's is
// ENOTFOUND, as is one that has ended.
func (s *Service) EndSession(ctx context.Context, actor, owner, id string) (*bff.ClinicianSession, error) {
	if s.sessions == nil {
		return nil, errNoSessions
	}
	if owner != "" {
		mine, err := s.sessions.ClinicianSessions(ctx, owner, s.now())
		if err != nil {
			return nil, err
		}
		found := false
		for _, cs := range mine {
			found = found || cs.ID == id
		}
		if !found {
			return nil, bff.Errorf(bff.ENOTFOUND, "No such session of yours: it may have ended already.")
		}
	}
	cs, err := s.sessions.EndClinicianSession(ctx, id)
	if err != nil {
		return nil, err
	}
	bff.Record(ctx, s.audit, s.log, s.now(), actor, bff.AuditSessionEnd, "", fmt.Sprintf("session of %s on %s from %s, signed in %s",
		cs.Username, cs.Device, cs.Address, cs.SignedInAt.UTC().Format("2006-01-02 15:04 UTC")))
	return cs, nil
}

// EndOtherSessions ends every session of username but the one with id
// keep ("sign out everywhere else"), each audited, and returns how many it
// ended.
func (s *Service) EndOtherSessions(ctx context.Context, username, keep string) (int, error) {
	if s.sessions == nil {
		return 0, errNoSessions
	}
	mine, err := s.sessions.ClinicianSessions(ctx, username, s.now())
	if err != nil {
		return 0, err
	}
	n := 0
	for _, cs := range mine {
		if cs.ID == keep {
			continue
		}
		if _, err := s.EndSession(ctx, username, "", cs.ID); err != nil && bff.ErrorCode(err) != bff.ENOTFOUND {
			return n, err
		} else if err == nil {
			n++
		}
	}
	return n, nil
}
