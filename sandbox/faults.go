package sandbox

import (
	"net/http"

	"github.com/clinical-intake/intake-web/intakeservice"
)

// Fault kinds (README, "Fault injection").
const (
	faultUpstreamError = string(intakeservice.FaultUpstreamError)
	faultUnavailable   = string(intakeservice.FaultUnavailable)
	faultInternalError = string(intakeservice.FaultInternalError)
	faultRateLimited   = string(intakeservice.FaultRateLimited)
	faultQuotaExceeded = string(intakeservice.FaultQuotaExceeded)
	faultStreamDrop    = string(intakeservice.FaultStreamDrop)
	faultStreamError   = string(intakeservice.FaultStreamError)
	faultNullState     = string(intakeservice.FaultNullState)
	faultSlowStart     = string(intakeservice.FaultSlowStart)
)

// arm handles POST /v1/sandbox/faults.
func (s *Service) arm(w http.ResponseWriter, r *http.Request, owner string) {
	body, aerr := readBody(w, r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	req, aerr := parseFault(body)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := intakeservice.Fault{Kind: intakeservice.FaultKind(req.kind), Count: req.count}
	if req.encounterID != "" {
		in, aerr := s.lookup(owner, req.encounterID)
		if aerr != nil {
			writeError(w, aerr)
			return
		}
		for range req.count {
			in.faults = append(in.faults, req.kind)
		}
		resp.EncounterID = &in.id
	} else {
		for range req.count {
			s.keyFaults[owner] = append(s.keyFaults[owner], req.kind)
		}
	}
	s.log.Info("sandbox fault armed", "kind", req.kind, "count", req.count, "encounter_id", req.encounterID)
	writeJSON(w, http.StatusOK, resp)
}

// popFault takes the next armed fault for a turn of in: the intake's own
// first, then the key's. Caller holds s.mu.
func (s *Service) popFault(in *intake) string {
	if len(in.faults) > 0 {
		f := in.faults[0]
		in.faults = in.faults[1:]
		return f
	}
	if q := s.keyFaults[in.owner]; len(q) > 0 {
		s.keyFaults[in.owner] = q[1:]
		return q[0]
	}
	return ""
}

// preProcessingFault is the answer of a fault that strikes before the turn
// is processed, or nil.
func (s *Service) preProcessingFault(kind, id string) *apiError {
	switch kind {
	case faultUpstreamError:
		return &apiError{status: http.StatusBadGateway, code: codeUpstreamError, encounterID: id, message: "The engine failed on this call; retry once with the same Idempotency-Key."}
	case faultUnavailable:
		return &apiError{status: http.StatusServiceUnavailable, code: codeUnavailable, encounterID: id, message: "The engine is unreachable; retry with backoff."}
	case faultInternalError:
		return &apiError{status: http.StatusInternalServerError, code: codeInternalError, encounterID: id, message: "The gateway failed; retry once."}
	case faultRateLimited:
		return &apiError{status: http.StatusTooManyRequests, code: codeRateLimited, retryAfter: s.cfg.FaultRetryAfter,
			message: "Too many requests in the last minute for this key; retry after the number of seconds in Retry-After."}
	case faultQuotaExceeded:
		return quotaError("turns", s.cfg.TurnsPerDay, s.now())
	}
	return nil
}
