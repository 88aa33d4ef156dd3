package sandbox_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/sandbox"
)

var releaseShape = regexp.MustCompile(`^[^+\s]+\+[^+\s]+$`)

func TestHealthNeedsNoKeyAndNamesTheRelease(t *testing.T) {
	e := mustStart(t)
	r := e.do("GET", "/v1/health", "", nil)
	expect(t, r, http.StatusOK, "")
	h := r.json(t)
	if h["ok"] != true || h["release"] != "sandbox-2026.08" {
		t.Fatalf("health = %v", h)
	}
	if _, ok := h["build_sha"]; !ok {
		t.Fatal("health has no build_sha field (string or null)")
	}
	if rel := r.header.Get("x-service-release"); !releaseShape.MatchString(rel) || !strings.HasPrefix(rel, "sandbox-2026.08+") {
		t.Fatalf("x-service-release = %q, want <release>+<build>", rel)
	}
}

func TestEveryResponseCarriesTheReleaseHeader(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	for _, r := range []response{
		e.do("GET", "/v1/health", "", nil),
		e.do("POST", "/v1/intakes", keyA, nil),
		e.turn(keyA, id, "hello"),
		e.do("GET", "/v1/intakes/"+id, keyA, nil),
		e.do("GET", "/v1/intakes/"+id+"/handoff", keyA, nil),
		e.do("GET", "/v1/openapi.yaml", keyA, nil),
		e.do("GET", "/v1/intakes/"+id, "", nil),       // 401
		e.do("GET", "/v1/nowhere", keyA, nil),         // 404
		e.do("DELETE", "/v1/intakes/"+id, keyA, nil),  // 405
		e.do("POST", "/v1/intakes", keyA, "{"),        // 400
		e.do("GET", "/v1/intakes/enc_x_y", keyA, nil), // 404
	} {
		if !releaseShape.MatchString(r.header.Get("x-service-release")) {
			t.Errorf("status %d response without x-service-release: %v", r.status, r.header)
		}
	}
}

func TestUnauthorized(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	paths := []struct{ method, path string }{
		{"POST", "/v1/intakes"},
		{"POST", "/v1/intakes/" + id + "/turns"},
		{"GET", "/v1/intakes/" + id},
		{"GET", "/v1/intakes/" + id + "/handoff"},
		{"GET", "/v1/openapi.yaml"},
		{"POST", "/v1/sandbox/faults"},
	}
	for _, auth := range []string{"", "Bearer", "Bearer ", "Basic " + keyA, "Bearer cis_sb_00000000000000000000000000000000", "Bearer " + keyA + "x", keyA} {
		for _, p := range paths {
			r := e.do(p.method, p.path, "", map[string]any{"message": "hi"}, "Authorization", auth)
			expect(t, r, http.StatusUnauthorized, "unauthorized")
		}
	}
}

func TestCreate(t *testing.T) {
	e := mustStart(t)
	for _, body := range []any{nil, "", "{}", map[string]any{
		"demographics":    map[string]any{"age_years": 34, "sex": "female"},
		"patient_history": "Penicillin allergy. Takes ibuprofen.",
	}} {
		r := e.do("POST", "/v1/intakes", keyA, body)
		expect(t, r, http.StatusCreated, "")
		m := r.json(t)
		id, _ := m["encounter_id"].(string)
		if !regexp.MustCompile(`^enc_[0-9a-f]{8}_[0-9a-f]{16}$`).MatchString(id) {
			t.Fatalf("encounter_id %q is not enc_<tenant>_<hex>", id)
		}
		if m["status"] != "open" {
			t.Fatalf("status = %v, want open", m["status"])
		}
		created, err1 := time.Parse(time.RFC3339, m["created_at"].(string))
		expires, err2 := time.Parse(time.RFC3339, m["expires_at"].(string))
		if err1 != nil || err2 != nil || expires.Sub(created) != 2*time.Hour {
			t.Fatalf("created_at %v, expires_at %v: want RFC 3339 two hours apart", m["created_at"], m["expires_at"])
		}
	}
	// The tenant identifies the key: same for one key, different for another.
	a1, a2, b := e.create(keyA, nil), e.create(keyA, nil), e.create(keyB, nil)
	if a1[:12] != a2[:12] || a1[:12] == b[:12] || a1 == a2 {
		t.Fatalf("tenants: %s %s %s", a1, a2, b)
	}
}

func TestCreateRefusesBadInputNamingTheField(t *testing.T) {
	e := mustStart(t)
	cases := []struct {
		body  any
		field string
	}{
		{"{", "JSON"},
		{"[]", "object"},
		{"42", "object"},
		{map[string]any{"demographics": map[string]any{"age_years": -1}}, "demographics.age_years"},
		{map[string]any{"demographics": map[string]any{"age_years": 131}}, "demographics.age_years"},
		{map[string]any{"demographics": map[string]any{"age_years": "34"}}, "demographics.age_years"},
		{map[string]any{"demographics": map[string]any{"age_years": 34.5}}, "demographics.age_years"},
		{map[string]any{"demographics": map[string]any{"sex": "other"}}, "demographics.sex"},
		{map[string]any{"demographics": map[string]any{"sex": nil}}, "demographics.sex"},
		{map[string]any{"demographics": nil}, "demographics"},
		{map[string]any{"demographics": map[string]any{"age": 30}}, "demographics.age"},
		{map[string]any{"patient_history": strings.Repeat("é", 4001)}, "patient_history"},
		{map[string]any{"patient_history": 12}, "patient_history"},
		{map[string]any{"history": "x"}, "history"},
	}
	for _, c := range cases {
		r := e.do("POST", "/v1/intakes", keyA, c.body)
		expect(t, r, http.StatusBadRequest, "invalid_request")
		if _, msg := r.errorCode(t); !strings.Contains(msg, c.field) {
			t.Errorf("body %v: message %q does not name %q", c.body, msg, c.field)
		}
	}
	// The limits themselves are accepted.
	for _, body := range []any{
		map[string]any{"demographics": map[string]any{"age_years": 0}},
		map[string]any{"demographics": map[string]any{"age_years": 130, "sex": "intersex"}},
		map[string]any{"patient_history": strings.Repeat("é", 4000)},
	} {
		expect(t, e.do("POST", "/v1/intakes", keyA, body), http.StatusCreated, "")
	}
}

func TestBlockingTurn(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	for i := 1; i <= 3; i++ {
		msg := fmt.Sprintf("message %d  with\nspaces", i)
		r := e.turn(keyA, id, msg)
		expect(t, r, http.StatusOK, "")
		m := r.json(t)
		if m["encounter_id"] != id || m["turn_index"] != float64(i) || m["terminal"] != false || m["urgent"] != false {
			t.Fatalf("turn %d = %v", i, m)
		}
		if want := fmt.Sprintf("Reply %d: You said %q.\n  Anything else?", i, msg); m["assistant_message"] != want {
			t.Fatalf("assistant_message = %q, want %q", m["assistant_message"], want)
		}
		if fmt.Sprint(m["choices"]) != "[Yes No]" || m["safety_status"] != "no_red_flags_yet" || m["disposition"] != "continue_intake" || m["disposition_label"] != "Intake in progress" {
			t.Fatalf("turn %d state = %v", i, m)
		}
		if _, ok := m["handoff"]; ok {
			t.Fatal("a non-terminal turn carries a handoff")
		}
	}
	sum := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)
	if sum["turn_count"] != float64(3) || sum["status"] != "open" || sum["last_safety_status"] != "no_red_flags_yet" || sum["last_disposition"] != "continue_intake" {
		t.Fatalf("summary = %v", sum)
	}
	conv := e.handoff(keyA, id)["conversation"].([]any)
	if len(conv) != 6 || conv[0].(map[string]any)["role"] != "patient" || conv[1].(map[string]any)["role"] != "assistant" {
		t.Fatalf("conversation = %v", conv)
	}
}

func TestTurnRefusesBadInputNamingTheField(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	cases := []struct {
		body  any
		field string
	}{
		{"{", "JSON"},
		{map[string]any{}, "message"},
		{map[string]any{"message": ""}, "message"},
		{map[string]any{"message": nil}, "message"},
		{map[string]any{"message": 42}, "message"},
		{map[string]any{"message": strings.Repeat("ü", 8001)}, "message"},
		{map[string]any{"message": "hi", "stream": "yes"}, "stream"},
		{map[string]any{"message": "hi", "stream": nil}, "stream"},
		{map[string]any{"message": "hi", "streaming": true}, "streaming"},
	}
	for _, c := range cases {
		r := e.do("POST", "/v1/intakes/"+id+"/turns", keyA, c.body)
		expect(t, r, http.StatusBadRequest, "invalid_request")
		if _, msg := r.errorCode(t); !strings.Contains(msg, c.field) {
			t.Errorf("body %v: message %q does not name %q", c.body, msg, c.field)
		}
	}
	expect(t, e.turn(keyA, id, strings.Repeat("ü", 8000)), http.StatusOK, "")
	expect(t, e.turn(keyA, id, "x"), http.StatusOK, "")
	if n := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)["turn_count"]; n != float64(2) {
		t.Fatalf("turn_count = %v after 2 valid turns and %d refused", n, len(cases))
	}
}

func TestBodyOver64KBIs413(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	big := `{"message":"` + strings.Repeat("a", 64<<10) + `"}`
	expect(t, e.do("POST", "/v1/intakes/"+id+"/turns", keyA, big), http.StatusRequestEntityTooLarge, "invalid_request")
	expect(t, e.do("POST", "/v1/intakes", keyA, `{"patient_history":"`+strings.Repeat("a", 70000)+`"}`), http.StatusRequestEntityTooLarge, "invalid_request")
}

func TestKeysSeeOnlyTheirOwnIntakes(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	expect(t, e.turn(keyA, id, "hello"), http.StatusOK, "")
	expect(t, e.do("GET", "/v1/intakes/"+id, keyB, nil), http.StatusNotFound, "not_found")
	expect(t, e.do("GET", "/v1/intakes/"+id+"/handoff", keyB, nil), http.StatusNotFound, "not_found")
	expect(t, e.turn(keyB, id, "hello"), http.StatusNotFound, "not_found")
	expect(t, e.do("POST", "/v1/sandbox/faults", keyB, map[string]any{"encounter_id": id, "kind": "upstream_error"}), http.StatusNotFound, "not_found")
	// Nothing B did touched A's intake.
	if n := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)["turn_count"]; n != float64(1) {
		t.Fatalf("turn_count = %v", n)
	}
}

func TestUnknownPathsAndMethods(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	for _, p := range []string{"/", "/v2/health", "/v1/intakes/" + id + "/nope", "/v1/intakes//turns", "/v1/intakes/enc_0_0"} {
		expect(t, e.do("GET", p, keyA, nil), http.StatusNotFound, "not_found")
	}
	for _, c := range []struct{ method, path, allow string }{
		{"GET", "/v1/intakes", "POST"},
		{"POST", "/v1/health", "GET"},
		{"PUT", "/v1/intakes/" + id, "GET"},
		{"GET", "/v1/intakes/" + id + "/turns", "POST"},
		{"DELETE", "/v1/intakes/" + id + "/handoff", "GET"},
	} {
		r := e.do(c.method, c.path, keyA, nil)
		expect(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
		if r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: Allow = %q, want %q", c.method, c.path, r.header.Get("Allow"), c.allow)
		}
	}
}

func TestTerminalTurnClosesTheIntake(t *testing.T) {
	e := mustStart(t)
	for _, c := range []struct {
		message, disposition, safety string
		urgent                       bool
	}{
		{"I am done", "self_care", "cannot_miss_negative", false},
		{"this is an emergency", "urgent_escalation", "cannot_miss_positive", true},
	} {
		id := e.create(keyA, nil)
		expect(t, e.turn(keyA, id, "hello"), http.StatusOK, "")
		r := e.turn(keyA, id, c.message)
		expect(t, r, http.StatusOK, "")
		m := r.json(t)
		h, ok := m["handoff"].(map[string]any)
		if m["terminal"] != true || m["urgent"] != c.urgent || m["disposition"] != c.disposition || !ok {
			t.Fatalf("terminal turn = %v", m)
		}
		if h["terminal"] != true || h["urgent"] != c.urgent || h["safety_status"] != c.safety || h["encounter_id"] != id {
			t.Fatalf("handoff in terminal turn = %v", h)
		}
		expect(t, e.turn(keyA, id, "one more"), http.StatusConflict, "intake_closed")
		sum := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t)
		if sum["status"] != "closed" || sum["turn_count"] != float64(2) || sum["last_disposition"] != c.disposition {
			t.Fatalf("summary = %v", sum)
		}
		read := e.handoff(keyA, id)
		if read["disposition"] != c.disposition || len(read["conversation"].([]any)) != 4 {
			t.Fatalf("handoff read = %v", read)
		}
	}
}

func TestIntakeExpiresAfterTheSessionLimit(t *testing.T) {
	e := mustStart(t, func(c *sandbox.Config) { c.SessionTTL = 10 * time.Minute })
	id := e.create(keyA, nil)
	expect(t, e.turn(keyA, id, "hello"), http.StatusOK, "")
	e.clock.Advance(10*time.Minute - time.Second)
	expect(t, e.turn(keyA, id, "still here"), http.StatusOK, "")
	e.clock.Advance(time.Second)
	r := e.turn(keyA, id, "too late")
	expect(t, r, http.StatusGone, "intake_expired")
	if r.json(t)["error"].(map[string]any)["encounter_id"] != id {
		t.Fatalf("410 envelope does not name the intake: %s", r.body)
	}
	if s := e.do("GET", "/v1/intakes/"+id, keyA, nil).json(t); s["status"] != "expired" || s["turn_count"] != float64(2) {
		t.Fatalf("summary = %v", s)
	}
	h := e.handoff(keyA, id)
	if h["terminal"] != true || len(h["conversation"].([]any)) != 4 {
		t.Fatalf("expired handoff = %v", h)
	}
	// An expired intake never returns to open.
	e.clock.Advance(48 * time.Hour)
	expect(t, e.turn(keyA, id, "later"), http.StatusGone, "intake_expired")
}

func TestOpenAPIIsServedWithTheKey(t *testing.T) {
	e := mustStart(t)
	r := e.do("GET", "/v1/openapi.yaml", keyA, nil)
	expect(t, r, http.StatusOK, "")
	if !strings.Contains(string(r.body), "openapi: 3.1") || !strings.Contains(string(r.body), "2026.08") {
		t.Fatalf("openapi.yaml = %.200s", r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/yaml" {
		t.Fatalf("Content-Type = %q", ct)
	}
}

func TestHandoffOfANewIntake(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, map[string]any{"demographics": map[string]any{"age_years": 40}})
	h := e.handoff(keyA, id)
	if h["terminal"] != false || h["urgent"] != false || len(h["conversation"].([]any)) != 0 {
		t.Fatalf("handoff = %v", h)
	}
	prov := h["provenance"].(map[string]any)
	for _, f := range []string{"release", "server_model", "prompt_hash", "source_commit", "directory_hash", "runtime_profile", "prompt_profile", "voice_profile", "audit_ref", "latency_ms", "protocol_count"} {
		if prov[f] == nil {
			t.Errorf("provenance.%s is null", f)
		}
	}
	for _, f := range []string{"soap", "captured_facts", "safety_notes", "candidate_protocols", "scores", "captured_at", "intake_status", "active_protocol", "disposition", "disposition_label", "safety_status"} {
		if _, ok := h[f]; !ok {
			t.Errorf("handoff has no %s field", f)
		}
	}
}

func TestEachTurnHasItsOwnAuditRef(t *testing.T) {
	e := mustStart(t)
	id := e.create(keyA, nil)
	seen := map[string]bool{}
	for i := range 3 {
		expect(t, e.turn(keyA, id, fmt.Sprint("turn ", i)), http.StatusOK, "")
		ref := e.handoff(keyA, id)["provenance"].(map[string]any)["audit_ref"].(string)
		if seen[ref] {
			t.Fatalf("audit_ref %s repeated", ref)
		}
		seen[ref] = true
	}
}

func TestConfigRefusesKeysOfAnotherShape(t *testing.T) {
	for _, k := range []string{"sk_live_abc", "cis_sb_XYZ0123456789abcd", "cis_sb_zz", "other_sb_0123456789abcdef"} {
		cfg := testConfig()
		cfg.Keys = []string{k}
		_, err := sandbox.New(cfg)
		if err == nil || !strings.Contains(err.Error(), "cis_sb_") {
			t.Errorf("key %q: err = %v, want a refusal naming the shape", k, err)
		}
		if err != nil && strings.Contains(err.Error(), k) {
			t.Errorf("the refusal echoes the key: %v", err)
		}
	}
	if k := sandbox.GenerateKey("cis"); sandbox.CheckKey("cis", k) != nil {
		t.Fatalf("generated key %q has the wrong shape", k)
	}
}
