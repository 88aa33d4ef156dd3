package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// Request bodies are decoded field by field so that every refusal names the
// field and the rule it broke.

type createRequest struct {
	demo engine.Demographics
}

type turnRequest struct {
	message string
	stream  bool
}

type faultRequest struct {
	encounterID string
	kind        string
	count       int
}

// readBody reads at most 64 KB; a larger body is a 413.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	tooLarge := &apiError{status: http.StatusRequestEntityTooLarge, code: codeInvalidRequest,
		message: "The request body is larger than the 64 KB limit."}
	if r.ContentLength > maxBodyBytes {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		return nil, errInvalid("The request body could not be read.")
	}
	return body, nil
}

// object decodes body as a JSON object and refuses keys outside allowed.
func object(body []byte, where string, allowed ...string) (map[string]json.RawMessage, *apiError) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if where == "" {
			return nil, errInvalid("The request body must be a JSON object.")
		}
		return nil, errInvalid("%s must be an object.", where)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, errInvalid("The request body is not valid JSON (at byte %d).", se.Offset)
		}
		return nil, errInvalid("The request body is not valid JSON.")
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, join(where, k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, errInvalid("Unknown field %s: allowed fields are %s.", strings.Join(unknown, ", "), strings.Join(prefixed(where, allowed), ", "))
	}
	return m, nil
}

func parseCreate(body []byte) (createRequest, *apiError) {
	var req createRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil // the body is optional
	}
	m, aerr := object(body, "", "demographics", "patient_history")
	if aerr != nil {
		return req, aerr
	}
	if raw, ok := m["demographics"]; ok {
		d, aerr := object(raw, "demographics", "age_years", "sex")
		if aerr != nil {
			return req, aerr
		}
		if raw, ok := d["age_years"]; ok {
			age, ok := integer(raw)
			if !ok || age < 0 || age > maxAge {
				return req, errInvalid("demographics.age_years must be an integer from 0 to %d.", maxAge)
			}
			req.demo.AgeYears = &age
		}
		if raw, ok := d["sex"]; ok {
			var sex string
			if json.Unmarshal(raw, &sex) != nil || (sex != "female" && sex != "male" && sex != "intersex") {
				return req, errInvalid("demographics.sex must be one of female, male, intersex.")
			}
			req.demo.Sex = sex
		}
	}
	if raw, ok := m["patient_history"]; ok {
		h, ok := str(raw)
		if !ok {
			return req, errInvalid("patient_history must be a string.")
		}
		if n := utf8.RuneCountInString(h); n > maxHistoryChars {
			return req, errInvalid("patient_history must be at most %d characters (got %d).", maxHistoryChars, n)
		}
		req.demo.History = h
	}
	return req, nil
}

func parseTurn(body []byte) (turnRequest, *apiError) {
	var req turnRequest
	m, aerr := object(body, "", "message", "stream")
	if aerr != nil {
		return req, aerr
	}
	raw, ok := m["message"]
	if !ok {
		return req, errInvalid("message is required.")
	}
	msg, ok := str(raw)
	if !ok {
		return req, errInvalid("message must be a string.")
	}
	if n := utf8.RuneCountInString(msg); n < 1 || n > maxMessageChars {
		return req, errInvalid("message must be 1 to %d characters (got %d).", maxMessageChars, n)
	}
	req.message = msg
	if raw, ok := m["stream"]; ok {
		if json.Unmarshal(raw, &req.stream) != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return req, errInvalid("stream must be a boolean.")
		}
	}
	return req, nil
}

var faultKinds = []string{
	faultUpstreamError, faultUnavailable, faultInternalError, faultRateLimited, faultQuotaExceeded,
	faultStreamDrop, faultStreamError, faultNullState, faultSlowStart,
}

func parseFault(body []byte) (faultRequest, *apiError) {
	req := faultRequest{count: 1}
	m, aerr := object(body, "", "encounter_id", "kind", "count")
	if aerr != nil {
		return req, aerr
	}
	if raw, ok := m["encounter_id"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		id, ok := str(raw)
		if !ok || id == "" {
			return req, errInvalid("encounter_id must be a non-empty string or null.")
		}
		req.encounterID = id
	}
	kind, ok := str(m["kind"])
	if !ok || !slices.Contains(faultKinds, kind) {
		return req, errInvalid("kind is required and must be one of %s.", strings.Join(faultKinds, ", "))
	}
	req.kind = kind
	if raw, ok := m["count"]; ok {
		n, ok := integer(raw)
		if !ok || n < 1 || n > 1000 {
			return req, errInvalid("count must be an integer from 1 to 1000.")
		}
		req.count = n
	}
	return req, nil
}

// validIdempotencyKey: 1 to 255 printable ASCII characters, no spaces.
func validIdempotencyKey(k string) bool {
	if len(k) == 0 || len(k) > maxIdempotencyKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func integer(raw json.RawMessage) (int, bool) {
	s := strings.TrimSpace(string(raw))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || s == "" || s[0] == '"' || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return 0, false
	}
	return int(f), true
}

func str(raw json.RawMessage) (string, bool) {
	var s string
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func join(where, k string) string {
	if where == "" {
		return k
	}
	return where + "." + k
}

func prefixed(where string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = join(where, k)
	}
	return out
}
