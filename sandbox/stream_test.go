package sandbox_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/sandbox"
)

// eventOrder is the spec's event sequence, with the fragments folded.
func eventOrder(evs []sseEvent) string {
	var names []string
	for _, ev := range evs {
		if n := len(names); n > 0 && names[n-1] == ev.name && (ev.name == "message.delta" || ev.name == "handoff.progress") {
			continue
		}
		names = append(names, ev.name)
	}
	return strings.Join(names, " ")
}

func TestStreamingTurnWireFormatAndOrder(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	s := e.openStream(keyA, id, "my  message\nwith lines")
	if ct := s.res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	if !releaseShape.MatchString(s.res.Header.Get("x-service-release")) {
		t.Fatal("stream without x-service-release")
	}
	evs := s.all() // next() enforces event line, one data line, blank line
	if got := eventOrder(evs); got != "message.delta message.completed handoff.compiling handoff.progress turn.completed" {
		t.Fatalf("event order = %s", got)
	}
	var text strings.Builder
	deltas := 0
	for _, ev := range evs {
		if ev.name == "message.delta" {
			deltas++
			text.WriteString(decode(t, ev.data)["text"].(string))
		}
	}
	final := decode(t, evs[len(evs)-1].data)
	if deltas < 2 || text.String() != final["assistant_message"] {
		t.Fatalf("%d deltas joined = %q, assistant_message = %q", deltas, text.String(), final["assistant_message"])
	}
	completed := decode(t, evs[deltas].data)
	if _, ok := completed["elapsed_ms"].(float64); !ok {
		t.Fatalf("message.completed data = %v", completed)
	}
	if decode(t, evs[deltas+1].data)["terminal"] != false {
		t.Fatalf("handoff.compiling data = %s", evs[deltas+1].data)
	}
	prev := -1.0
	for _, ev := range evs[deltas+2 : len(evs)-1] {
		c := decode(t, ev.data)["chars"].(float64)
		if c <= prev {
			t.Fatalf("handoff.progress chars not increasing: %v after %v", c, prev)
		}
		prev = c
	}

	// turn.completed is the same Turn object a blocking call returns.
	blocking := e.turn(keyA, e.create(keyA, nil), "my  message\nwith lines").json(t)
	delete(blocking, "encounter_id")
	delete(final, "encounter_id")
	if !reflect.DeepEqual(blocking, final) {
		t.Fatalf("turn.completed %v\n!= blocking turn %v", final, blocking)
	}
}

func TestTerminalStreamCarriesTheHandoff(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	evs := e.openStream(keyA, id, "emergency").all()
	var compiling, final map[string]any
	for _, ev := range evs {
		switch ev.name {
		case "handoff.compiling":
			compiling = decode(t, ev.data)
		case "turn.completed":
			final = decode(t, ev.data)
		}
	}
	if compiling["terminal"] != true || final["terminal"] != true || final["urgent"] != true {
		t.Fatalf("compiling %v, final %v", compiling, final)
	}
	h, ok := final["handoff"].(map[string]any)
	if !ok {
		t.Fatalf("terminal turn.completed without handoff: %v", final)
	}
	read := e.handoff(keyA, id)
	if !reflect.DeepEqual(h, read) {
		t.Fatalf("streamed handoff %v\n!= handoff endpoint %v", h, read)
	}
}

func TestNextTurnIsAcceptedOnceMessageCompleted(t *testing.T) {
	// Slow compile steps leave room to send a turn while the handoff compiles.
	e := mustStart(t, func(c *sandbox.Config) { c.FragmentDelay = 150 * time.Millisecond })
	id := e.create(keyA, nil)
	s := e.openStream(keyA, id, "first")
	ev, _, err := s.next()
	if err != nil || ev.name != "message.delta" {
		t.Fatalf("first event %v %v", ev, err)
	}
	// Still streaming: the next turn is refused.
	expect(t, e.turn(keyA, id, "too soon"), http.StatusConflict, "turn_in_progress")
	for ev.name != "message.completed" {
		if ev, _, err = s.next(); err != nil {
			t.Fatal(err)
		}
	}
	// message.completed sent, handoff still compiling: accepted.
	r := e.turn(keyA, id, "second")
	expect(t, r, http.StatusOK, "")
	if r.json(t)["turn_index"] != float64(2) {
		t.Fatalf("second turn = %s", r.body)
	}
	rest := s.all()
	if rest[len(rest)-1].name != "turn.completed" || decode(t, rest[len(rest)-1].data)["turn_index"] != float64(1) {
		t.Fatalf("the first stream did not finish with its own turn: %v", rest[len(rest)-1])
	}
}

func TestClientDisconnectMidStreamStillAppliesTheTurn(t *testing.T) {
	e := mustStart(t, func(c *sandbox.Config) { c.FragmentDelay = 30 * time.Millisecond })
	id := e.create(keyA, nil)
	s := e.openStream(keyA, id, "please remember this")
	if _, _, err := s.next(); err != nil {
		t.Fatal(err)
	}
	s.res.Body.Close()
	h := e.handoff(keyA, id)
	conv := h["conversation"].([]any)
	if len(conv) != 2 || conv[0].(map[string]any)["text"] != "please remember this" {
		t.Fatalf("conversation after a disconnect = %v", conv)
	}
	// The reply finishes server-side; then the next turn is taken.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := e.turn(keyA, id, "next")
		if r.status == http.StatusOK {
			break
		}
		expect(t, r, http.StatusConflict, "turn_in_progress")
		if time.Now().After(deadline) {
			t.Fatal("the intake never left turn_in_progress after the client went away")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)["turn_count"]; n != float64(2) {
		t.Fatalf("turn_count = %v, want 2", n)
	}
}

func TestStreamRefusalsComeBeforeTheStream(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	expect(t, e.turn(keyA, id, "done"), http.StatusOK, "")
	r := e.do("POST", "/v1/intakes/"+id+"/turns", keyA, map[string]any{"message": "more", "stream": true})
	expect(t, r, http.StatusConflict, "intake_closed")
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("refusal Content-Type = %q, want JSON", ct)
	}
}

func TestRealisticProfileTimings(t *testing.T) {
	cfg := sandbox.DefaultConfig()
	if err := cfg.ApplyProfile("realistic"); err != nil {
		t.Fatal(err)
	}
	if cfg.FirstTokenDelay < time.Second || cfg.ReplyDuration != 20*time.Second {
		t.Fatalf("realistic profile: first token %v, reply %v", cfg.FirstTokenDelay, cfg.ReplyDuration)
	}
	if err := cfg.ApplyProfile("turbo"); err == nil {
		t.Fatal("an unknown profile was accepted")
	}
}

// The handoff's conversation is exactly what was said, in order.
func TestConversationIsVerbatim(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	msgs := []string{"  leading spaces", "<b>not html</b> & \"quotes\"", "line1\nline2\r\nline3"}
	var replies []string
	for _, m := range msgs {
		r := e.turn(keyA, id, m)
		expect(t, r, http.StatusOK, "")
		replies = append(replies, r.json(t)["assistant_message"].(string))
	}
	raw := e.do("GET", "/v1/intakes/"+id+"/handoff", keyA, nil).body
	var h struct {
		Conversation []struct{ Role, Text string } `json:"conversation"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if h.Conversation[2*i].Text != m || h.Conversation[2*i+1].Text != replies[i] {
			t.Fatalf("conversation[%d] = %+v, want %q then %q", i, h.Conversation[2*i:2*i+2], m, replies[i])
		}
	}
}
