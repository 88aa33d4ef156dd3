package sandbox_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
)

const (
	keyA = "cis_sb_0123456789abcdef0123456789abcdef"
	keyB = "cis_sb_fedcba9876543210fedcba9876543210"
)

// fakeClock is the service's injectable clock: tests move time by hand for
// limits, quotas and expiry. Stream pacing still uses real (tiny) delays.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a sandbox on a loopback port and a client for it.
type env struct {
	t     *testing.T
	srv   *sandbox.Server
	clock *fakeClock
}

// testConfig has no rate limit, tiny delays and faults on; tests change what
// they need.
func testConfig() sandbox.Config {
	cfg := sandbox.DefaultConfig()
	cfg.Keys = []string{keyA, keyB}
	cfg.Engine = enginetest.Scripted{}
	cfg.RPM = 0
	cfg.FragmentDelay = time.Millisecond
	cfg.Faults = true
	cfg.SlowStart = 300 * time.Millisecond
	cfg.FaultRetryAfter = 2 * time.Second
	return cfg
}

func mustStart(t *testing.T, mutate ...func(*sandbox.Config)) *env {
	t.Helper()
	cfg := testConfig()
	clock := &fakeClock{t: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)}
	cfg.Now = clock.Now
	for _, m := range mutate {
		m(&cfg)
	}
	srv, err := sandbox.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, clock: clock}
}

// response is what a client saw.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// errorCode checks the error envelope and returns its code and message.
func (r response) errorCode(t *testing.T) (string, string) {
	t.Helper()
	var env struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil || env.Error == nil || env.Error.Code == "" || env.Error.Message == "" {
		t.Fatalf("status %d: body is not the error envelope: %s", r.status, r.body)
	}
	return env.Error.Code, env.Error.Message
}

func (e *env) do(method, path, key string, body any, header ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// expect fails unless the response has the status and, for errors, the code.
func expect(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	if code != "" {
		if got, _ := r.errorCode(t); got != code {
			t.Fatalf("code = %q, want %q", got, code)
		}
	}
}

func (e *env) create(key string, body any) string {
	e.t.Helper()
	r := e.do("POST", "/v1/intakes", key, body)
	expect(e.t, r, http.StatusCreated, "")
	return r.json(e.t)["encounter_id"].(string)
}

func (e *env) turn(key, id, message string, header ...string) response {
	e.t.Helper()
	return e.do("POST", "/v1/intakes/"+id+"/turns", key, map[string]any{"message": message}, header...)
}

func (e *env) handoff(key, id string) map[string]any {
	e.t.Helper()
	r := e.do("GET", "/v1/intakes/"+id+"/handoff", key, nil)
	expect(e.t, r, http.StatusOK, "")
	return r.json(e.t)
}

func (e *env) arm(key string, fault map[string]any) {
	e.t.Helper()
	expect(e.t, e.do("POST", "/v1/sandbox/faults", key, fault), http.StatusOK, "")
}

// sseEvent is one event as it came over the wire.
type sseEvent struct {
	name string
	data string
}

// stream is an open streaming turn, read event by event.
type stream struct {
	res *http.Response
	rd  *bufio.Reader
	t   *testing.T
}

func (e *env) openStream(key, id, message string) *stream {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"message": message, "stream": true})
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/intakes/"+id+"/turns", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("open stream: %v", err)
	}
	e.t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		e.t.Fatalf("stream status %d: %s", res.StatusCode, b)
	}
	return &stream{res: res, rd: bufio.NewReader(res.Body), t: e.t}
}

// next reads one event, insisting on the spec's wire format: an event line,
// one data line, a blank line. It returns false at the end of the stream.
func (s *stream) next() (sseEvent, bool, error) {
	s.t.Helper()
	line, err := s.rd.ReadString('\n')
	if err != nil {
		if line != "" {
			return sseEvent{}, false, io.ErrUnexpectedEOF
		}
		return sseEvent{}, false, err
	}
	name, ok := strings.CutPrefix(line, "event: ")
	if !ok {
		s.t.Fatalf("expected an event line, got %q", line)
	}
	data, err := s.rd.ReadString('\n')
	if err != nil {
		return sseEvent{}, false, err
	}
	d, ok := strings.CutPrefix(data, "data: ")
	if !ok {
		s.t.Fatalf("expected a data line after %q, got %q", name, data)
	}
	blank, err := s.rd.ReadString('\n')
	if err != nil {
		return sseEvent{}, false, err
	}
	if blank != "\n" {
		s.t.Fatalf("expected a blank line after the data of %q, got %q", name, blank)
	}
	return sseEvent{name: strings.TrimSuffix(name, "\n"), data: strings.TrimSuffix(d, "\n")}, true, nil
}

// all reads the stream to its end and returns its events.
func (s *stream) all() []sseEvent {
	s.t.Helper()
	var out []sseEvent
	for {
		ev, ok, err := s.next()
		if !ok {
			if err != io.EOF {
				s.t.Fatalf("stream ended badly after %d events: %v", len(out), err)
			}
			return out
		}
		out = append(out, ev)
	}
}

func decode(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event data is not a JSON object: %v: %s", err, data)
	}
	return m
}
