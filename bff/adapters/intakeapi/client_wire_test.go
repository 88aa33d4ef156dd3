package intakeapi_test

// Wire edge cases against httptest servers: what the sandbox never sends
// (proxies' HTML, unknown fields and enum values, odd Retry-After) and
// configuration rules.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

const testKey = "cis_sb_0123456789abcdef"

// recordingGate grants at once and records every call and outcome, so retry
// tests need not wait for Retry-After.
type recordingGate struct {
	mu       sync.Mutex
	calls    []intakeapi.Call
	outcomes []intakeapi.Outcome
}

func (g *recordingGate) Wait(ctx context.Context, c intakeapi.Call) (func(intakeapi.Outcome), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.calls = append(g.calls, c)
	g.mu.Unlock()
	return func(o intakeapi.Outcome) {
		g.mu.Lock()
		g.outcomes = append(g.outcomes, o)
		g.mu.Unlock()
	}, nil
}

func (g *recordingGate) snapshot() ([]intakeapi.Call, []intakeapi.Outcome) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]intakeapi.Call(nil), g.calls...), append([]intakeapi.Outcome(nil), g.outcomes...)
}

// logBuffer captures slog output at every level.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newTestClient(t *testing.T, base string, mod func(*intakeapi.Config)) (*intakeapi.Client, *recordingGate, *logBuffer) {
	t.Helper()
	gate := &recordingGate{}
	logs := &logBuffer{}
	cfg := intakeapi.Config{
		BaseURL:     base,
		APIKey:      testKey,
		Gate:        gate,
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		BackoffBase: time.Millisecond,
		BackoffMax:  5 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := intakeapi.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), testKey) {
			t.Errorf("the API key appears in the log:\n%s", logs.String())
		}
	})
	return c, gate, logs
}

// scripted answers each request with the next of its responses.
type scripted struct {
	mu    sync.Mutex
	resps []func(w http.ResponseWriter, r *http.Request)
	reqs  []*http.Request
	keys  []string // Idempotency-Key of each request
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := len(s.reqs)
	s.reqs = append(s.reqs, r)
	s.keys = append(s.keys, r.Header.Get("Idempotency-Key"))
	s.mu.Unlock()
	w.Header().Set("x-service-release", fmt.Sprintf("test-2026.08+build%d", i))
	if i >= len(s.resps) {
		http.Error(w, "no more scripted responses", http.StatusTeapot)
		return
	}
	s.resps[i](w, r)
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

func reply(status int, header map[string]string, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func envelope(code, msg string) string {
	return fmt.Sprintf(`{"error":{"code":%q,"message":%q}}`, code, msg)
}

const turnJSON = `{"encounter_id":"enc_abc_01","turn_index":1,"assistant_message":"Hello.\n  How are you?","choices":["Yes","No"],"terminal":false,"urgent":false,"safety_status":"no_red_flags_yet","disposition":"continue_intake","disposition_label":"Intake in progress"}`

func serve(t *testing.T, s *scripted) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestProxyHTML502IsAUsableError(t *testing.T) {
	html := "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
		reply(502, map[string]string{"Content-Type": "text/html"}, html),
		reply(502, map[string]string{"Content-Type": "text/html"}, html),
	}}
	c, _, _ := newTestClient(t, serve(t, s), nil)
	_, meta, err := c.Handoff(context.Background(), "enc_abc_01")
	e, ok := intakeapi.AsError(err)
	if !ok {
		t.Fatalf("err %v (%T), want *intakeapi.Error", err, err)
	}
	if e.Status != 502 || e.Code != "" || !strings.Contains(e.Message, "text/html") {
		t.Fatalf("error %+v", e)
	}
	if !strings.Contains(err.Error(), "502 Bad Gateway") {
		t.Fatalf("Error() = %q", err)
	}
	if s.count() != 2 || meta.Attempts != 2 {
		t.Fatalf("%d requests, meta %+v: a 502 is retried once", s.count(), meta)
	}
}

func TestMalformedErrorBodies(t *testing.T) {
	for name, body := range map[string]string{
		"empty":          "",
		"truncated JSON": `{"error":{"code":"unavail`,
		"wrong shape":    `{"error":"unavailable"}`,
		"plain text":     "Service Unavailable",
	} {
		t.Run(name, func(t *testing.T) {
			s := &scripted{resps: []func(http.ResponseWriter, *http.Request){reply(404, nil, body)}}
			c, _, _ := newTestClient(t, serve(t, s), nil)
			_, _, err := c.Summary(context.Background(), "enc_abc_01")
			e, ok := intakeapi.AsError(err)
			if !ok || e.Status != 404 || e.Code != "" || e.Message == "" {
				t.Fatalf("err %#v", err)
			}
			if e.Release != "test-2026.08+build0" {
				t.Fatalf("release %q not recorded on the error", e.Release)
			}
		})
	}
}

func TestTolerantDecoding(t *testing.T) {
	turn := `{"encounter_id":"enc_abc_01","turn_index":2,"assistant_message":"Hi","choices":[],"terminal":true,"urgent":true,
	"safety_status":"cannot_miss_maybe","disposition":"teleport_to_clinic","disposition_label":"Teleport",
	"next_action":{"kind":"await_patient"},"trace_id":"tr_123","brand_new_field":[1,2,3],
	"handoff":{"encounter_id":"enc_abc_01","captured_at":"2026-08-03T10:00:00.123Z","terminal":true,"urgent":true,
	"intake_status":"needs_a_nap","safety_status":null,"safety_notes":["n"],"disposition":null,"disposition_label":null,
	"soap":{"subjective":"s","objective":"o","assessment":"a","plan":"p","extra":"x"},
	"captured_facts":{"age":"34","sex":null,"pregnancy":null,"height":"180"},
	"active_protocol":null,"candidate_protocols":[],
	"scores":[{"key":"k","total":"3","band":"legendary","components":"c","weight":2}],
	"conversation":[{"role":"assistant","text":"Hi"},{"role":"narrator","text":"..."}],
	"provenance":{"release":"r","server_model":null,"latency_ms":12.5,"protocol_count":42,"new_thing":true}}}`
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){reply(200, nil, turn)}}
	c, _, _ := newTestClient(t, serve(t, s), nil)
	got, meta, err := c.Turn(context.Background(), "enc_abc_01", "hello", "key-1")
	if err != nil {
		t.Fatal(err)
	}
	h := got.Handoff
	switch {
	case *got.SafetyStatus != "cannot_miss_maybe", *got.Disposition != "teleport_to_clinic":
		t.Fatalf("unknown enum values not kept: %v %v", *got.SafetyStatus, *got.Disposition)
	case string(got.NextAction) != `{"kind":"await_patient"}`, string(got.TraceID) != `"tr_123"`:
		t.Fatalf("next_action %s trace_id %s", got.NextAction, got.TraceID)
	case h == nil || *h.IntakeStatus != "needs_a_nap" || h.SafetyStatus != nil || h.Scores[0].Band != "legendary":
		t.Fatalf("handoff %+v", h)
	case h.Conversation[1].Role != "narrator", *h.Provenance.LatencyMS != 12.5, *h.Provenance.ProtocolCount != 42:
		t.Fatalf("handoff %+v", h)
	case !h.CapturedAt.Equal(time.Date(2026, 8, 3, 10, 0, 0, 123e6, time.UTC)):
		t.Fatalf("captured_at %v", h.CapturedAt)
	case meta.Release != "test-2026.08+build0" || c.Release() != meta.Release:
		t.Fatalf("release %q / %q", meta.Release, c.Release())
	}
	if got.NeedsReconcile() {
		t.Fatal("a turn with its state fields needs no reconciliation")
	}
}

func TestNullStateFieldsDecodeAsNil(t *testing.T) {
	body := `{"encounter_id":"e","turn_index":1,"assistant_message":"Hi","choices":[],"terminal":false,"urgent":false,"safety_status":null,"disposition":null,"disposition_label":null}`
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){reply(200, nil, body)}}
	c, _, _ := newTestClient(t, serve(t, s), nil)
	got, _, err := c.Turn(context.Background(), "e", "hello", "")
	if err != nil {
		t.Fatal(err)
	}
	if got.SafetyStatus != nil || got.Disposition != nil || got.DispositionLabel != nil || !got.NeedsReconcile() {
		t.Fatalf("turn %+v", got)
	}
}

func TestRetryAfterForms(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		header string
		min    time.Duration
		max    time.Duration
	}{
		{"7", 7 * time.Second, 7 * time.Second},
		{" 30 ", 30 * time.Second, 30 * time.Second},
		{date, 80 * time.Second, 90 * time.Second},
		{"soon", 0, 0},
		{"-5", 0, 0},
		{"", 0, 0},
	} {
		t.Run(tc.header, func(t *testing.T) {
			s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
				reply(429, map[string]string{"Retry-After": tc.header}, envelope("quota_exceeded", "spent")),
			}}
			c, _, _ := newTestClient(t, serve(t, s), nil)
			_, _, err := c.CreateIntake(context.Background(), intakeapi.NewIntake{})
			e, ok := intakeapi.AsError(err)
			if !ok || !intakeapi.IsCode(err, intakeapi.CodeQuotaExceeded) {
				t.Fatalf("err %v", err)
			}
			if e.RetryAfter < tc.min || e.RetryAfter > tc.max {
				t.Fatalf("RetryAfter %s, want %s..%s", e.RetryAfter, tc.min, tc.max)
			}
		})
	}
}

func TestRateLimitedWaitsInTheGateThenRetries(t *testing.T) {
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
		reply(429, map[string]string{"Retry-After": "7"}, envelope("rate_limited", "slow down")),
		reply(201, nil, `{"encounter_id":"enc_abc_01","status":"open","created_at":"2026-08-03T10:00:00Z","expires_at":"2026-08-03T12:00:00Z"}`),
	}}
	c, gate, _ := newTestClient(t, serve(t, s), nil)
	in, meta, err := c.CreateIntake(context.Background(), intakeapi.NewIntake{})
	if err != nil || in.Status != intakeapi.StateOpen || meta.Attempts != 2 {
		t.Fatalf("intake %+v meta %+v err %v", in, meta, err)
	}
	calls, outs := gate.snapshot()
	if len(calls) != 2 || calls[1].Attempt != 2 || calls[0].Priority != intakeapi.PriorityCreateIntake {
		t.Fatalf("calls %+v", calls)
	}
	if outs[0].Status != 429 || outs[0].Code != intakeapi.CodeRateLimited || outs[0].RetryAfter != 7*time.Second {
		t.Fatalf("the gate was not told the Retry-After: %+v", outs[0])
	}
}

func TestRateLimitedWithoutRetryAfterStillWaits(t *testing.T) {
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
		reply(429, nil, envelope("rate_limited", "slow down")),
		reply(200, nil, `{"ok":true,"release":"r","build_sha":"abc"}`),
	}}
	c, gate, _ := newTestClient(t, serve(t, s), nil)
	if _, _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, outs := gate.snapshot(); len(outs) != 2 || outs[0].RetryAfter != time.Second {
		t.Fatalf("outcomes %+v: the gate must pause before the retry", outs)
	}
}

func TestPriorityTravelsInTheContext(t *testing.T) {
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
		reply(200, nil, `{}`), reply(200, nil, `{}`), reply(200, nil, `{}`),
	}}
	c, gate, _ := newTestClient(t, serve(t, s), nil)
	ctx := context.Background()
	c.Handoff(ctx, "e")
	c.Handoff(intakeapi.WithPriority(ctx, intakeapi.PriorityReconciliation), "e")
	c.Health(ctx)
	calls, _ := gate.snapshot()
	want := []intakeapi.Priority{intakeapi.PriorityClinicianRead, intakeapi.PriorityReconciliation, intakeapi.PriorityBackground}
	for i, c := range calls {
		if c.Priority != want[i] {
			t.Errorf("call %d (%s): priority %s, want %s", i, c.Op, c.Priority, want[i])
		}
	}
}

func TestRateLimitedNotRetriedPastTheDeadline(t *testing.T) {
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
		reply(429, map[string]string{"Retry-After": "600"}, envelope("rate_limited", "slow down")),
	}}
	c, _, _ := newTestClient(t, serve(t, s), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, err := c.Summary(ctx, "e")
	if e, ok := intakeapi.AsError(err); !ok || !intakeapi.IsCode(err, intakeapi.CodeRateLimited) || e.RetryAfter != 10*time.Minute {
		t.Fatalf("err %v", err)
	}
	if s.count() != 1 {
		t.Fatalf("%d requests; a wait past the deadline is pointless", s.count())
	}
}

func TestUnavailableBacksOffWithinTheDeadline(t *testing.T) {
	resps := make([]func(http.ResponseWriter, *http.Request), 10)
	for i := range resps {
		resps[i] = reply(503, nil, envelope("unavailable", "engine unreachable"))
	}
	s := &scripted{resps: resps}
	c, _, _ := newTestClient(t, serve(t, s), func(cfg *intakeapi.Config) { cfg.MaxUnavailableRetries = 3 })
	_, meta, err := c.Turn(context.Background(), "e", "hi", "k1")
	if !intakeapi.IsCode(err, intakeapi.CodeUnavailable) || meta.Attempts != 4 || s.count() != 4 {
		t.Fatalf("err %v meta %+v requests %d: want 1 try + 3 retries", err, meta, s.count())
	}
	for i, k := range s.keys {
		if k != "k1" {
			t.Fatalf("request %d Idempotency-Key %q", i, k)
		}
	}
	// A backoff that would outlive the context is not attempted.
	s2 := &scripted{resps: resps}
	c2, _, _ := newTestClient(t, serve(t, s2), func(cfg *intakeapi.Config) {
		cfg.BackoffBase, cfg.BackoffMax = time.Hour, time.Hour
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := c2.Handoff(ctx, "e"); !intakeapi.IsCode(err, intakeapi.CodeUnavailable) || s2.count() != 1 {
		t.Fatalf("err %v, %d requests", err, s2.count())
	}
}

func TestNotRetried(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   intakeapi.Code
	}{
		{400, intakeapi.CodeInvalidRequest}, {401, intakeapi.CodeUnauthorized}, {404, intakeapi.CodeNotFound},
		{409, intakeapi.CodeIntakeClosed}, {409, intakeapi.CodeTurnInProgress}, {410, intakeapi.CodeIntakeExpired},
		{429, intakeapi.CodeQuotaExceeded}, {405, intakeapi.CodeMethodNotAllowed}, {413, intakeapi.CodeInvalidRequest},
	} {
		s := &scripted{resps: []func(http.ResponseWriter, *http.Request){reply(tc.status, nil, envelope(string(tc.code), "no"))}}
		c, _, _ := newTestClient(t, serve(t, s), nil)
		_, _, err := c.Turn(context.Background(), "e", "hi", "")
		if e, ok := intakeapi.AsError(err); !ok || e.Status != tc.status || !intakeapi.IsCode(err, tc.code) || s.count() != 1 {
			t.Errorf("%d %s: err %v after %d requests", tc.status, tc.code, err, s.count())
		}
	}
}

func TestStreamTurnErrorsBeforeTheStreamAreNotRetried(t *testing.T) {
	for _, status := range []int{500, 502, 503} {
		s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
			reply(status, nil, envelope("x", "no")), reply(status, nil, envelope("x", "no")),
		}}
		c, _, _ := newTestClient(t, serve(t, s), nil)
		_, err := c.StreamTurn(context.Background(), "e", "hi")
		if e, ok := intakeapi.AsError(err); !ok || e.Status != status || s.count() != 1 {
			t.Errorf("%d: err %v after %d requests", status, err, s.count())
		}
	}
}

func sseReply(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body)
	}
}

func TestStreamUnknownEventsAreKept(t *testing.T) {
	body := ": ok\n\nid: 1\nevent: message.delta\ndata: {\"text\":\"Hel\"}\n\nid: 2\nevent: message.delta\r\ndata: {\"text\":\"lo\",\"lang\":\"en\"}\r\n\r\n" +
		"event: queue.position\ndata: {\"position\":3}\n\nevent: message.completed\ndata: {\"elapsed_ms\":12}\n\n" +
		"event: turn.completed\ndata: " + turnJSON + "\n\n"
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){sseReply(body)}}
	c, _, _ := newTestClient(t, serve(t, s), nil)
	st, err := c.StreamTurn(context.Background(), "e", "hi")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var text string
	for ev, err := range st.All() {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.EventName())
		switch e := ev.(type) {
		case intakeapi.MessageDelta:
			text += e.Text
		case intakeapi.UnknownEvent:
			if string(e.Data) != `{"position":3}` {
				t.Fatalf("unknown event data %s", e.Data)
			}
		}
	}
	if text != "Hello" || strings.Join(names, ",") != "message.delta,message.delta,queue.position,message.completed,turn.completed" {
		t.Fatalf("text %q events %v", text, names)
	}
	if st.Turn() == nil || st.Turn().AssistantMessage != "Hello.\n  How are you?" || st.LastEventID() != "2" {
		t.Fatalf("turn %+v last id %q", st.Turn(), st.LastEventID())
	}
}

func TestStreamCutIsInterrupted(t *testing.T) {
	for name, body := range map[string]string{
		"after deltas":             "event: message.delta\ndata: {\"text\":\"Hel\"}\n\n",
		"inside turn.completed":    "event: message.completed\ndata: {}\n\nevent: turn.completed\ndata: {\"encounter_id\":",
		"final event unterminated": "event: turn.completed\ndata: " + turnJSON + "\n",
		"malformed data":           "event: message.delta\ndata: {\"text\":\n\n",
		"empty":                    "",
	} {
		t.Run(name, func(t *testing.T) {
			s := &scripted{resps: []func(http.ResponseWriter, *http.Request){sseReply(body)}}
			c, _, logs := newTestClient(t, serve(t, s), nil)
			st, err := c.StreamTurn(context.Background(), "e", "hi")
			if err != nil {
				t.Fatal(err)
			}
			for st.Next() {
			}
			if err := st.Err(); !errors.Is(err, intakeapi.ErrStreamInterrupted) || st.Turn() != nil {
				t.Fatalf("err %v, turn %v", err, st.Turn())
			}
			if !strings.Contains(logs.String(), "stream ended early") {
				t.Fatalf("no log line for the interruption:\n%s", logs)
			}
		})
	}
}

func TestStreamErrorEvent(t *testing.T) {
	body := "event: message.delta\ndata: {\"text\":\"Hel\"}\n\nevent: error\ndata: {\"code\":\"upstream_error\",\"message\":\"engine failed\"}\n\n"
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){sseReply(body)}}
	c, _, _ := newTestClient(t, serve(t, s), nil)
	st, err := c.StreamTurn(context.Background(), "e", "hi")
	if err != nil {
		t.Fatal(err)
	}
	var last intakeapi.Event
	for st.Next() {
		last = st.Event()
	}
	if se, ok := last.(intakeapi.StreamError); !ok || se.Code != intakeapi.CodeUpstreamError {
		t.Fatalf("last event %#v", last)
	}
	e, ok := intakeapi.AsError(st.Err())
	if !ok || !e.InStream || !intakeapi.IsCode(st.Err(), intakeapi.CodeUpstreamError) || errors.Is(st.Err(), intakeapi.ErrStreamInterrupted) {
		t.Fatalf("Err %v", st.Err())
	}
	if s.count() != 1 {
		t.Fatal("a failed stream was retried")
	}
}

func TestMalformedSuccessBodyIsTransport(t *testing.T) {
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){reply(200, nil, `{"encounter_id":`)}}
	c, _, _ := newTestClient(t, serve(t, s), nil)
	_, _, err := c.Turn(context.Background(), "e", "hi", "")
	if !errors.Is(err, intakeapi.ErrTransport) {
		t.Fatalf("err %v, want ErrTransport (the turn may have run)", err)
	}
}

func TestConnectionRefusedIsTransport(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	c, gate, _ := newTestClient(t, base, nil)
	_, _, err := c.Turn(context.Background(), "e", "hi", "")
	if !errors.Is(err, intakeapi.ErrTransport) || strings.Contains(err.Error(), testKey) {
		t.Fatalf("err %v", err)
	}
	if _, outs := gate.snapshot(); len(outs) != 1 || outs[0].Status != 0 || !outs[0].Charged() {
		t.Fatalf("outcomes %+v: no answer counts as possibly charged", outs)
	}
}

func TestLocalValidationSendsNothing(t *testing.T) {
	s := &scripted{}
	c, gate, _ := newTestClient(t, serve(t, s), nil)
	age := 131
	ctx := context.Background()
	checks := map[string]error{}
	_, _, checks["age"] = c.CreateIntake(ctx, intakeapi.NewIntake{AgeYears: &age})
	_, _, checks["sex"] = c.CreateIntake(ctx, intakeapi.NewIntake{Sex: "unknown"})
	_, _, checks["history"] = c.CreateIntake(ctx, intakeapi.NewIntake{PatientHistory: strings.Repeat("é", 4001)})
	_, _, checks["empty message"] = c.Turn(ctx, "e", "", "")
	_, _, checks["long message"] = c.Turn(ctx, "e", strings.Repeat("a", 8001), "")
	_, checks["long stream message"] = c.StreamTurn(ctx, "e", strings.Repeat("a", 8001))
	_, _, checks["idempotency key"] = c.Turn(ctx, "e", "hi", "has space")
	_, _, checks["no encounter"] = c.Handoff(ctx, "")
	for name, err := range checks {
		if e, ok := intakeapi.AsError(err); !ok || e.Status != 0 || e.Code != intakeapi.CodeInvalidRequest {
			t.Errorf("%s: %v", name, err)
		}
	}
	if calls, _ := gate.snapshot(); s.count() != 0 || len(calls) != 0 {
		t.Fatalf("%d requests, %d gate calls for invalid input", s.count(), len(calls))
	}
	// 8,000 characters is the limit, not 8,000 bytes.
	s.resps = append(s.resps, reply(200, nil, turnJSON))
	if _, _, err := c.Turn(ctx, "e", strings.Repeat("é", 8000), ""); err != nil {
		t.Fatalf("8000 two-byte characters: %v", err)
	}
}

func TestRequestShape(t *testing.T) {
	var got *http.Request
	var body []byte
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
		func(w http.ResponseWriter, r *http.Request) {
			got, body = r, must(io.ReadAll(r.Body))
			io.WriteString(w, `{"ok":true,"release":"r","build_sha":null}`)
		},
		func(w http.ResponseWriter, r *http.Request) {
			got, body = r, must(io.ReadAll(r.Body))
			w.WriteHeader(201)
			io.WriteString(w, `{"encounter_id":"enc_a/b","status":"open","created_at":"2026-08-03T10:00:00Z","expires_at":"2026-08-03T12:00:00Z"}`)
		},
		func(w http.ResponseWriter, r *http.Request) {
			got, body = r, must(io.ReadAll(r.Body))
			io.WriteString(w, turnJSON)
		},
	}}
	c, _, _ := newTestClient(t, serve(t, s)+"/", nil)
	ctx := context.Background()
	h, _, err := c.Health(ctx)
	if err != nil || !h.OK || h.BuildSHA != nil || got.Header.Get("Authorization") != "" || got.URL.Path != "/v1/health" {
		t.Fatalf("health %+v %v auth %q path %q", h, err, got.Header.Get("Authorization"), got.URL.Path)
	}
	age := 0
	if _, _, err := c.CreateIntake(ctx, intakeapi.NewIntake{AgeYears: &age, Sex: intakeapi.SexFemale, PatientHistory: "penicillin"}); err != nil {
		t.Fatal(err)
	}
	if string(body) != `{"demographics":{"age_years":0,"sex":"female"},"patient_history":"penicillin"}` ||
		got.Header.Get("Authorization") != "Bearer "+testKey || got.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("create body %s headers %v", body, got.Header)
	}
	if _, _, err := c.Turn(ctx, "enc_a/b", "I have a sore throat", "sub-42"); err != nil {
		t.Fatal(err)
	}
	if got.URL.EscapedPath() != "/v1/intakes/enc_a%2Fb/turns" || string(body) != `{"message":"I have a sore throat"}` || got.Header.Get("Idempotency-Key") != "sub-42" {
		t.Fatalf("turn path %s body %s key %q", got.URL.EscapedPath(), body, got.Header.Get("Idempotency-Key"))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// deadlineRecorder fails every request after noting how long its context had.
type deadlineRecorder struct {
	mu   sync.Mutex
	left map[string]time.Duration
}

func (d *deadlineRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	dl, ok := r.Context().Deadline()
	d.mu.Lock()
	defer d.mu.Unlock()
	if ok {
		d.left[r.Method+" "+r.URL.Path] = time.Until(dl)
	}
	return nil, errors.New("recorded")
}

func TestTimeouts(t *testing.T) {
	rec := &deadlineRecorder{left: map[string]time.Duration{}}
	c, _, _ := newTestClient(t, "http://service.invalid", func(cfg *intakeapi.Config) {
		cfg.HTTPClient = &http.Client{Transport: rec}
	})
	if c.TurnTimeout() != 240*time.Second || c.ReadTimeout() != 15*time.Second {
		t.Fatalf("defaults %s %s", c.TurnTimeout(), c.ReadTimeout())
	}
	ctx := context.Background()
	c.Turn(ctx, "e", "hi", "")
	c.StreamTurn(ctx, "e", "hi")
	c.Handoff(ctx, "e")
	c.Health(ctx)
	for path, left := range rec.left {
		isTurn := strings.HasSuffix(path, "/turns")
		if isTurn && left < 239*time.Second {
			t.Errorf("%s had %s; turns get at least 240 s", path, left)
		}
		if !isTurn && left > 15*time.Second {
			t.Errorf("%s had %s; reads are short", path, left)
		}
	}
	if len(rec.left) != 3 { // the two turns share a path
		t.Fatalf("recorded %v", rec.left)
	}
	// A longer turn timeout is allowed, a shorter one is not.
	for _, tc := range []struct {
		turn    time.Duration
		http    time.Duration
		wantErr bool
	}{
		{300 * time.Second, 0, false},
		{239 * time.Second, 0, true},
		{0, 60 * time.Second, true},
		{0, 300 * time.Second, false},
	} {
		_, err := intakeapi.New(intakeapi.Config{BaseURL: "http://x", APIKey: testKey, TurnTimeout: tc.turn, HTTPClient: &http.Client{Timeout: tc.http}})
		if (err != nil) != tc.wantErr {
			t.Errorf("TurnTimeout %s, HTTP timeout %s: err %v", tc.turn, tc.http, err)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	for _, cfg := range []intakeapi.Config{
		{BaseURL: "", APIKey: testKey},
		{BaseURL: "ftp://host", APIKey: testKey},
		{BaseURL: "http://", APIKey: testKey},
		{BaseURL: "http://host?key=" + testKey, APIKey: testKey},
		{BaseURL: "http://user:" + testKey + "@host", APIKey: testKey},
		{BaseURL: "http://host", APIKey: ""},
		{BaseURL: "http://host", APIKey: testKey + "\n"},
		{BaseURL: "http://host", APIKey: testKey, ReadTimeout: -1},
	} {
		_, err := intakeapi.New(cfg)
		if err == nil {
			t.Errorf("New(%v) accepted", cfg)
			continue
		}
		if strings.Contains(err.Error(), testKey) {
			t.Errorf("New error shows the key: %v", err)
		}
	}
}

func TestKeyNeverShown(t *testing.T) {
	cfg := intakeapi.Config{BaseURL: "http://host", APIKey: testKey}
	c, err := intakeapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	log.Info("config", "cfg", cfg, "client", c)
	log.Info("config", slog.Any("cfg", &cfg))
	shown := []string{
		fmt.Sprint(cfg), fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg),
		fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c),
		logs.String(),
	}
	for _, s := range shown {
		if strings.Contains(s, testKey) || strings.Contains(s, "0123456789abcdef") {
			t.Fatalf("key shown: %s", s)
		}
	}
	if !strings.Contains(fmt.Sprint(c), "cis_sb_…(redacted)") {
		t.Fatalf("String() = %s", c)
	}
}

func TestServerEchoingTheKeyIsRedacted(t *testing.T) {
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
		reply(401, nil, envelope("unauthorized", "key "+testKey+" is revoked")),
	}}
	c, _, _ := newTestClient(t, serve(t, s), nil)
	_, _, err := c.Summary(context.Background(), "e")
	if !intakeapi.IsCode(err, intakeapi.CodeUnauthorized) || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "cis_sb_…(redacted)") {
		t.Fatalf("err %v", err)
	}
}

func TestHandoffKeepsItsRawBytes(t *testing.T) {
	raw := `{"encounter_id":"enc_a_b", "terminal":true,"future_field":{"x":[1, 2]},"conversation":[]}`
	var h intakeapi.Handoff
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		t.Fatal(err)
	}
	if string(h.Raw) != raw || h.EncounterID != "enc_a_b" || !h.Terminal {
		t.Fatalf("Raw = %s, fields %+v", h.Raw, h)
	}
	var turn intakeapi.Turn
	if err := json.Unmarshal([]byte(`{"turn_index":3,"terminal":true,"handoff":`+raw+`}`), &turn); err != nil {
		t.Fatal(err)
	}
	if turn.Handoff == nil || string(turn.Handoff.Raw) != raw {
		t.Fatalf("nested handoff Raw = %s", turn.Handoff.Raw)
	}
}

func TestRequestIDAndObserver(t *testing.T) {
	var gotID string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotID = r.Header.Get("X-Request-Id")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"no"}}`)
	}))
	defer srv.Close()
	var seen []intakeapi.Observation
	var mu sync.Mutex
	c, err := intakeapi.New(intakeapi.Config{BaseURL: srv.URL, APIKey: "cis_sb_0123456789abcdef", Observer: func(o intakeapi.Observation) {
		mu.Lock()
		seen = append(seen, o)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Summary(intakeapi.WithRequestID(context.Background(), "req-42"), "enc_a_b")
	if !intakeapi.IsCode(err, intakeapi.CodeNotFound) || gotID != "req-42" {
		t.Fatalf("err %v, X-Request-Id %q", err, gotID)
	}
	if len(seen) != 1 || seen[0].Status != 404 || seen[0].Code != intakeapi.CodeNotFound || seen[0].Op != intakeapi.OpSummary {
		t.Fatalf("observations: %+v", seen)
	}
}
