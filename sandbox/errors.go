package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/clinical-intake/intake-web/intakeservice"
)

// Error codes of the spec's Errors table, plus the two the sandbox adds where
// the spec is silent (README, choices 6 and 12), as package intakeservice names them.
const (
	codeInvalidRequest     = intakeservice.CodeInvalidRequest
	codeUnauthorized       = intakeservice.CodeUnauthorized
	codeNotFound           = intakeservice.CodeNotFound
	codeIntakeClosed       = intakeservice.CodeIntakeClosed
	codeIntakeExpired      = intakeservice.CodeIntakeExpired
	codeRateLimited        = intakeservice.CodeRateLimited
	codeQuotaExceeded      = intakeservice.CodeQuotaExceeded
	codeUpstreamError      = intakeservice.CodeUpstreamError
	codeUnavailable        = intakeservice.CodeUnavailable
	codeInternalError      = intakeservice.CodeInternalError
	codeTurnInProgress     = intakeservice.CodeTurnInProgress
	codeMethodNotAllowed   = intakeservice.CodeMethodNotAllowed
	maxBodyBytes           = 64 << 10
	maxMessageChars        = 8000
	maxHistoryChars        = 4000
	maxAge                 = 130
	maxIdempotencyKeyLen   = 255
	idempotencyRetention   = 24 * time.Hour
	rateWindow             = time.Minute
	headerRelease          = "x-service-release"
	headerReplay           = "x-service-idempotent-replay"
	headerIdempotencyKey   = "Idempotency-Key"
	headerRetryAfter       = "Retry-After"
	contentTypeJSON        = "application/json"
	contentTypeEventStream = "text/event-stream"
)

// apiError is an error the service answers with: a status, a code from the
// spec and a message safe to show.
type apiError struct {
	status      int
	code        intakeservice.Code
	message     string
	encounterID string
	retryAfter  time.Duration // > 0 sets Retry-After
}

func (e *apiError) Error() string { return string(e.code) + ": " + e.message }

func errInvalid(format string, a ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: codeInvalidRequest, message: fmt.Sprintf(format, a...)}
}

func errNotFound(id string) *apiError {
	return &apiError{status: http.StatusNotFound, code: codeNotFound, message: "No intake with this identifier exists for this key.", encounterID: id}
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.retryAfter > 0 {
		secs := int64((e.retryAfter + time.Second - 1) / time.Second)
		w.Header().Set(headerRetryAfter, strconv.FormatInt(secs, 10))
	}
	writeJSON(w, e.status, intakeservice.ErrorEnvelope{Error: intakeservice.ErrorBody{Code: e.code, Message: e.message, EncounterID: e.encounterID}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Only our own wire types are marshalled; a failure is a bug.
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal_error","message":"The gateway failed to encode its response."}}`)
	}
	w.Header().Set("Content-Type", contentTypeJSON)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
