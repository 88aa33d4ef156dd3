package sandbox_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/sandbox"
)

func turnCount(t *testing.T, e *env, id string) float64 {
	t.Helper()
	return e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)["turn_count"].(float64)
}

func TestFaultsBeforeProcessing(t *testing.T) {
	cases := []struct {
		kind, code string
		status     int
		retryAfter string
	}{
		{"upstream_error", "upstream_error", 502, ""},
		{"unavailable", "unavailable", 503, ""},
		{"internal_error", "internal_error", 500, ""},
		{"rate_limited", "rate_limited", 429, "2"},
		{"quota_exceeded", "quota_exceeded", 429, ""},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			e := mustStart(t)
			id := e.create(keyA, nil)
			for _, stream := range []bool{false, true} {
				e.arm(keyA, map[string]any{"encounter_id": id, "kind": c.kind})
				runs := e.srv.Service.Stats().EngineRuns
				r := e.do("POST", "/v1/intakes/"+id+"/turns", keyA, map[string]any{"message": "hello", "stream": stream})
				expect(t, r, c.status, c.code)
				if got := r.header.Get("Retry-After"); got != c.retryAfter {
					t.Fatalf("Retry-After = %q, want %q", got, c.retryAfter)
				}
				if turnCount(t, e, id) != 0 || e.srv.Service.Stats().EngineRuns != runs {
					t.Fatal("a fault answered before processing applied the turn")
				}
			}
			// The fault is spent: the next turn goes through.
			expect(t, e.turn(keyA, id, "hello"), http.StatusOK, "")
		})
	}
}

func TestFaultStreamDrop(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	e.arm(keyA, map[string]any{"encounter_id": id, "kind": "stream_drop"})
	s := e.openStream(keyA, id, "a message that lands")
	var names []string
	var err error
	for {
		var ev sseEvent
		var ok bool
		if ev, ok, err = s.next(); !ok {
			break
		}
		names = append(names, ev.name)
	}
	if !errors.Is(err, io.ErrUnexpectedEOF) && (err == nil || !strings.Contains(err.Error(), "unexpected EOF")) {
		t.Fatalf("stream ended with %v after %v, want a cut connection", err, names)
	}
	if len(names) == 0 || strings.Contains(strings.Join(names, " "), "completed") {
		t.Fatalf("events before the drop: %v", names)
	}
	// The turn is applied: it is in the handoff.
	conv := e.handoff(keyA, id)["conversation"].([]any)
	if len(conv) != 2 || conv[0].(map[string]any)["text"] != "a message that lands" {
		t.Fatalf("conversation = %v", conv)
	}

	// Blocking: the connection is cut, the turn lands, and a retry with the
	// same key replays the stored response. (A fresh intake: the first one is
	// busy until the dropped reply would have finished.)
	id = e.create(keyA, nil)
	e.arm(keyA, map[string]any{"encounter_id": id, "kind": "stream_drop"})
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/intakes/"+id+"/turns", strings.NewReader(`{"message":"blocking drop"}`))
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Idempotency-Key", "drop-1")
	// net/http retries a request with an Idempotency-Key on a cut connection
	// (which would show the replay, not the cut); without GetBody it cannot.
	req.GetBody = nil
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("blocking stream_drop answered %d", res.StatusCode)
	}
	if turnCount(t, e, id) != 1 {
		t.Fatal("the dropped blocking turn did not land")
	}
	r := e.turn(keyA, id, "blocking drop", "Idempotency-Key", "drop-1")
	expect(t, r, http.StatusOK, "")
	if r.header.Get("x-service-idempotent-replay") != "true" || r.json(t)["turn_index"] != float64(1) {
		t.Fatalf("retry after the drop: %s", r.body)
	}
	if turnCount(t, e, id) != 1 {
		t.Fatal("the retry drove a second turn")
	}
}

func TestFaultStreamError(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	e.arm(keyA, map[string]any{"encounter_id": id, "kind": "stream_error"})
	evs := e.openStream(keyA, id, "this will fail").all()
	last := evs[len(evs)-1]
	if last.name != "error" || len(evs) < 2 || evs[0].name != "message.delta" {
		t.Fatalf("events = %v", evs)
	}
	data := decode(t, last.data)
	if data["code"] != "upstream_error" || data["message"] == "" {
		t.Fatalf("error event data = %v", data)
	}
	if turnCount(t, e, id) != 0 || len(e.handoff(keyA, id)["conversation"].([]any)) != 0 {
		t.Fatal("a stream_error turn was applied")
	}
	expect(t, e.turn(keyA, id, "this will work"), http.StatusOK, "")

	// Blocking: 502, not applied.
	e.arm(keyA, map[string]any{"encounter_id": id, "kind": "stream_error"})
	expect(t, e.turn(keyA, id, "blocking fail"), http.StatusBadGateway, "upstream_error")
	if turnCount(t, e, id) != 1 {
		t.Fatal("a blocking stream_error turn was applied")
	}
}

func TestFaultNullState(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	e.arm(keyA, map[string]any{"encounter_id": id, "kind": "null_state", "count": 2})
	for _, stream := range []bool{false, true} {
		var m map[string]any
		if stream {
			evs := e.openStream(keyA, id, "hello").all()
			m = decode(t, evs[len(evs)-1].data)
		} else {
			m = e.turn(keyA, id, "hello").json(t)
		}
		for _, f := range []string{"safety_status", "disposition", "disposition_label"} {
			if v, ok := m[f]; !ok || v != nil {
				t.Fatalf("%s = %v (present %v), want null", f, v, ok)
			}
		}
		if m["assistant_message"] == "" {
			t.Fatal("null_state turn without its reply")
		}
	}
	// The handoff has the real state.
	h := e.handoff(keyA, id)
	if h["safety_status"] != "no_red_flags_yet" || h["disposition"] != "continue_intake" || len(h["conversation"].([]any)) != 4 {
		t.Fatalf("handoff after null_state = %v", h)
	}
}

func TestFaultSlowStart(t *testing.T) {
	e := mustStart(t, func(c *sandbox.Config) { c.SlowStart = 400 * time.Millisecond })
	id := e.create(keyA, nil)
	e.arm(keyA, map[string]any{"encounter_id": id, "kind": "slow_start"})
	start := time.Now()
	s := e.openStream(keyA, id, "hello")
	headers := time.Since(start)
	if _, _, err := s.next(); err != nil {
		t.Fatal(err)
	}
	// Headers come at once, the first fragment only after the slow start.
	// (Ordering, not speed: the delay is a configured floor.)
	if first := time.Since(start); first < 400*time.Millisecond || headers >= first {
		t.Fatalf("headers after %v, first fragment after %v", headers, first)
	}
	s.all()
	if turnCount(t, e, id) != 1 {
		t.Fatal("slow_start turn not applied")
	}
}

func TestKeyWideFaultsAndCount(t *testing.T) {
	e := mustStart(t)
	a, b := e.create(keyA, nil), e.create(keyA, nil)
	e.arm(keyA, map[string]any{"kind": "unavailable", "count": 2})
	expect(t, e.turn(keyA, a, "x"), 503, "unavailable")
	expect(t, e.turn(keyA, b, "x"), 503, "unavailable")
	expect(t, e.turn(keyA, a, "x"), 200, "")
	// An intake's own fault goes first.
	e.arm(keyA, map[string]any{"kind": "internal_error"})
	e.arm(keyA, map[string]any{"encounter_id": b, "kind": "upstream_error"})
	expect(t, e.turn(keyA, b, "x"), 502, "upstream_error")
	expect(t, e.turn(keyA, b, "x"), 500, "internal_error")
	// Another key's turns are untouched.
	e.arm(keyA, map[string]any{"kind": "unavailable"})
	expect(t, e.turn(keyB, e.create(keyB, nil), "x"), 200, "")
}

func TestFaultRequestValidation(t *testing.T) {
	e := mustStart(t)
	for _, body := range []any{
		map[string]any{},
		map[string]any{"kind": "meteor"},
		map[string]any{"kind": "stream_drop", "count": 0},
		map[string]any{"kind": "stream_drop", "count": "2"},
		map[string]any{"kind": "stream_drop", "when": "now"},
	} {
		expect(t, e.do("POST", "/v1/sandbox/faults", keyA, body), http.StatusBadRequest, "invalid_request")
	}
	expect(t, e.do("POST", "/v1/sandbox/faults", keyA, map[string]any{"kind": "stream_drop", "encounter_id": "enc_00000000_0000000000000000"}), http.StatusNotFound, "not_found")
}

func TestFaultEndpointIs404WithoutFaults(t *testing.T) {
	e := mustStart(t, func(c *sandbox.Config) { c.Faults = false })
	expect(t, e.do("POST", "/v1/sandbox/faults", keyA, map[string]any{"kind": "stream_drop"}), http.StatusNotFound, "not_found")
}
