package sandbox_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/sandbox"
)

func TestRateLimitPerKeyWithRetryAfter(t *testing.T) {
	e := mustStart(t, func(c *sandbox.Config) { c.RPM = 6 })
	id := e.create(keyA, nil) // 1
	e.clock.Advance(20 * time.Second)
	for range 5 { // 2..6, reads count too
		expect(t, e.do("GET", "/v1/intakes/"+id, keyA, nil), http.StatusOK, "")
	}
	// Health and the fault endpoint are not counted.
	expect(t, e.do("GET", "/v1/health", "", nil), http.StatusOK, "")
	e.arm(keyA, map[string]any{"kind": "null_state"})

	r := e.turn(keyA, id, "seventh")
	expect(t, r, http.StatusTooManyRequests, "rate_limited")
	if got := r.header.Get("Retry-After"); got != "40" {
		t.Fatalf("Retry-After = %q, want 40 (the first request leaves the window in 40 s)", got)
	}
	// Another key has its own window.
	expect(t, e.do("GET", "/v1/openapi.yaml", keyB, nil), http.StatusOK, "")

	e.clock.Advance(39 * time.Second)
	r = e.do("GET", "/v1/intakes/"+id+"/handoff", keyA, nil)
	expect(t, r, http.StatusTooManyRequests, "rate_limited")
	if got := r.header.Get("Retry-After"); got != "1" {
		t.Fatalf("Retry-After = %q, want 1", got)
	}
	e.clock.Advance(time.Second)
	expect(t, e.turn(keyA, id, "now it fits"), http.StatusOK, "")
	// The refused requests were not counted: only the first slot freed up.
	expect(t, e.do("GET", "/v1/intakes/"+id, keyA, nil), http.StatusTooManyRequests, "rate_limited")
}

func TestDailyQuotasResetAtMidnightUTC(t *testing.T) {
	e := mustStart(t, func(c *sandbox.Config) { c.IntakesPerDay, c.TurnsPerDay = 2, 3 })
	e.clock.Advance(14*time.Hour + 29*time.Minute) // 23:59 UTC
	id := e.create(keyA, nil)
	e.create(keyA, nil)
	r := e.do("POST", "/v1/intakes", keyA, nil)
	expect(t, r, http.StatusTooManyRequests, "quota_exceeded")
	if _, msg := r.errorCode(t); !strings.Contains(msg, "2026-11-22T00:00:00.000Z") {
		t.Fatalf("message %q does not say when the quota resets", msg)
	}
	if r.header.Get("Retry-After") != "" {
		t.Fatal("quota_exceeded carries Retry-After: clients would retry within the minute")
	}
	for range 3 {
		expect(t, e.turn(keyA, id, "hello"), http.StatusOK, "")
	}
	expect(t, e.turn(keyA, id, "one too many"), http.StatusTooManyRequests, "quota_exceeded")
	// Key B has its own quota.
	e.create(keyB, nil)

	e.clock.Advance(time.Minute) // 00:00 UTC
	expect(t, e.turn(keyA, id, "a new day"), http.StatusOK, "")
	e.create(keyA, nil)
	if n := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)["turn_count"]; n != float64(4) {
		t.Fatalf("turn_count = %v, want 4", n)
	}
}

func TestIdempotentReplayDrivesNothingAndSpendsNoQuota(t *testing.T) {
	e := mustStart(t, func(c *sandbox.Config) { c.TurnsPerDay = 2 })
	id := e.create(keyA, nil)
	first := e.turn(keyA, id, "my throat hurts", "Idempotency-Key", "sub-1")
	expect(t, first, http.StatusOK, "")
	if first.header.Get("x-service-idempotent-replay") != "" {
		t.Fatal("a first response is marked as a replay")
	}
	runs := e.srv.Service.Stats().EngineRuns
	for range 3 {
		again := e.turn(keyA, id, "my throat hurts", "Idempotency-Key", "sub-1")
		expect(t, again, http.StatusOK, "")
		if again.header.Get("x-service-idempotent-replay") != "true" || string(again.body) != string(first.body) {
			t.Fatalf("replay: header %q body %s, want the stored response", again.header.Get("x-service-idempotent-replay"), again.body)
		}
	}
	if got := e.srv.Service.Stats().EngineRuns; got != runs {
		t.Fatalf("replays drove the engine: %d runs, want %d", got, runs)
	}
	// Replays spent none of the two turns of the day.
	expect(t, e.turn(keyA, id, "second turn", "Idempotency-Key", "sub-2"), http.StatusOK, "")
	if n := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)["turn_count"]; n != float64(2) {
		t.Fatalf("turn_count = %v, want 2", n)
	}
	// Reusing a key for another message or intake is refused.
	other := e.create(keyA, nil)
	for _, r := range []response{
		e.turn(keyA, id, "a different message", "Idempotency-Key", "sub-1"),
		e.turn(keyA, other, "my throat hurts", "Idempotency-Key", "sub-1"),
	} {
		expect(t, r, http.StatusBadRequest, "invalid_request")
		if _, msg := r.errorCode(t); !strings.Contains(msg, "Idempotency-Key") {
			t.Fatalf("message %q does not name the header", msg)
		}
	}
	// Keys are scoped to the API key: B's "sub-1" is its own.
	idB := e.create(keyB, nil)
	if r := e.turn(keyB, idB, "hello", "Idempotency-Key", "sub-1"); r.status != http.StatusOK || r.header.Get("x-service-idempotent-replay") != "" {
		t.Fatalf("B's first use of sub-1: %d replay=%q", r.status, r.header.Get("x-service-idempotent-replay"))
	}
	// The stored response outlives the intake's closing but not 24 hours.
	e.clock.Advance(23 * time.Hour)
	expect(t, e.turn(keyA, id, "my throat hurts", "Idempotency-Key", "sub-1"), http.StatusOK, "")
}

func TestIdempotentReplayOfATerminalTurn(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	first := e.turn(keyA, id, "done", "Idempotency-Key", "end")
	expect(t, first, http.StatusOK, "")
	// The intake is closed, but a retry of the turn that closed it is a replay, not a 409.
	again := e.turn(keyA, id, "done", "Idempotency-Key", "end")
	expect(t, again, http.StatusOK, "")
	if string(again.body) != string(first.body) || again.header.Get("x-service-idempotent-replay") != "true" {
		t.Fatalf("replay of the terminal turn: %s", again.body)
	}
	expect(t, e.turn(keyA, id, "done", "Idempotency-Key", "new"), http.StatusConflict, "intake_closed")
}

func TestIdempotencyKeyRules(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	for _, k := range []string{strings.Repeat("k", 256), "has space", "tab\tkey", "é"} {
		r := e.turn(keyA, id, "hello", "Idempotency-Key", k)
		expect(t, r, http.StatusBadRequest, "invalid_request")
	}
	expect(t, e.turn(keyA, id, "hello", "Idempotency-Key", strings.Repeat("k", 255)), http.StatusOK, "")
	// An error answer leaves the key unused, so the client can retry with it.
	e.arm(keyA, map[string]any{"encounter_id": id, "kind": "upstream_error"})
	expect(t, e.turn(keyA, id, "retry me", "Idempotency-Key", "r1"), http.StatusBadGateway, "upstream_error")
	r := e.turn(keyA, id, "retry me", "Idempotency-Key", "r1")
	expect(t, r, http.StatusOK, "")
	if r.header.Get("x-service-idempotent-replay") != "" {
		t.Fatal("the retry after a 502 was answered as a replay, but nothing was stored")
	}
	if n := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)["turn_count"]; n != float64(2) {
		t.Fatalf("turn_count = %v, want 2 (the 502 applied nothing)", n)
	}
}

func TestStreamingTurnIgnoresTheIdempotencyKey(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	for range 2 {
		r := e.do("POST", "/v1/intakes/"+id+"/turns", keyA, map[string]any{"message": "hi", "stream": true}, "Idempotency-Key", "same")
		expect(t, r, http.StatusOK, "")
		if r.header.Get("x-service-idempotent-replay") != "" {
			t.Fatal("a streaming turn was replayed")
		}
	}
	if n := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)["turn_count"]; n != float64(2) {
		t.Fatalf("turn_count = %v, want 2: idempotency does not apply to streaming turns", n)
	}
}
