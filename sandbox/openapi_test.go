package sandbox_test

// These tests hold the sandbox to its OpenAPI 3.1 document (openapi.yaml) in
// both directions: the document must be a valid OpenAPI 3.1 description that
// a real parser accepts, and every response a real sandbox sends must validate
// against it (status, content type, headers and body), as must the request
// whenever the sandbox accepted it. Requests the sandbox refuses with 400 must
// be refused by the document too, so the two cannot drift apart silently.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/intakeservice"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
	"github.com/clinical-intake/intake-web/sandbox/rules"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	valerrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

const oaDocumentPath = "../intakeservice/openapi.yaml"

// The six stream events and the component schema of each one's data.
var oaEventSchemas = map[string]string{
	"message.delta":     "MessageDeltaEvent",
	"message.completed": "MessageCompletedEvent",
	"handoff.compiling": "HandoffCompilingEvent",
	"handoff.progress":  "HandoffProgressEvent",
	"turn.completed":    "Turn",
	"error":             "StreamErrorEvent",
}

// Every error code a client may meet: the spec's Errors table plus the two
// the sandbox adds where the spec is silent (README choices 6 and 12).
var oaErrorCodes = []string{
	"invalid_request", "unauthorized", "not_found", "intake_closed", "intake_expired",
	"rate_limited", "quota_exceeded", "upstream_error", "unavailable", "internal_error",
	"turn_in_progress", "method_not_allowed",
}

// contract is a parsed OpenAPI document with the validators built from it.
type oaContract struct {
	doc     libopenapi.Document
	model   *v3.Document
	http    validator.Validator
	schemas schema_validation.SchemaValidator
	opts    *config.ValidationOptions

	mu        sync.Mutex
	validated []string // "METHOD path -> status" of every response validated
}

func oaOptions() []config.Option {
	return []config.Option{config.WithFormatAssertions()}
}

// oaLoad parses raw with libopenapi, builds the 3.1 model and fails the
// test on any parse, build or OpenAPI-schema error of the document itself.
func oaLoad(t testing.TB, raw []byte) *oaContract {
	t.Helper()
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatalf("libopenapi cannot parse the document: %v", err)
	}
	if got := doc.GetVersion(); got != "3.1.0" {
		t.Fatalf("document declares openapi %q, want 3.1.0", got)
	}
	built, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("libopenapi cannot build the 3.1 model: %v", err)
	}
	if built == nil {
		t.Fatal("libopenapi built no model")
	}
	if idx := built.Index; idx != nil {
		for _, e := range idx.GetReferenceIndexErrors() {
			t.Errorf("reference error in the document: %v", e)
		}
		for _, e := range idx.GetOperationParametersIndexErrors() {
			t.Errorf("parameter error in the document: %v", e)
		}
	}
	v, errs := validator.NewValidator(doc, oaOptions()...)
	if len(errs) > 0 {
		t.Fatalf("cannot build a validator from the document: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("the document is not valid OpenAPI 3.1: %s", oaDescribe(e))
		}
		t.FailNow()
	}
	return &oaContract{
		doc:     doc,
		model:   &built.Model,
		http:    v,
		schemas: schema_validation.NewSchemaValidator(oaOptions()...),
		opts:    config.NewValidationOptions(oaOptions()...),
	}
}

func oaReadDocument(t testing.TB) []byte {
	t.Helper()
	raw, err := os.ReadFile(oaDocumentPath)
	if err != nil {
		t.Fatalf("read %s: %v", oaDocumentPath, err)
	}
	return raw
}

func oaDescribe(e *valerrors.ValidationError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Message, e.Reason)
	for _, s := range e.SchemaValidationErrors {
		fmt.Fprintf(&b, "\n\t\tat %s (%s): %s", s.FieldPath, s.KeywordLocation, s.Reason)
	}
	return b.String()
}

func oaDescribeAll(errs []*valerrors.ValidationError) string {
	parts := make([]string, 0, len(errs))
	for _, e := range errs {
		parts = append(parts, "\n\t"+oaDescribe(e))
	}
	return strings.Join(parts, "")
}

// schema returns a component schema of the document.
func (c *oaContract) schema(t testing.TB, name string) *base.Schema {
	t.Helper()
	if c.model.Components == nil || c.model.Components.Schemas == nil {
		t.Fatal("the document has no component schemas")
	}
	proxy, ok := c.model.Components.Schemas.Get(name)
	if !ok || proxy == nil {
		t.Fatalf("the document has no component schema %q", name)
	}
	s := proxy.Schema()
	if s == nil {
		t.Fatalf("component schema %q does not build: %v", name, proxy.GetBuildError())
	}
	return s
}

// checkSchema validates a JSON payload against a component schema and returns
// the problems found (none when it conforms).
func (c *oaContract) checkSchema(t testing.TB, name string, payload []byte) []*valerrors.ValidationError {
	t.Helper()
	_, errs := c.schemas.ValidateSchemaBytesWithVersion(c.schema(t, name), payload, 3.1)
	return errs
}

// ---------------------------------------------------------------------------
// The document itself.

func TestOpenAPIDocumentIsValid31(t *testing.T) {
	c := oaLoad(t, oaReadDocument(t))
	m := c.model

	if m.Info == nil || m.Info.Version != "2026.08" {
		t.Errorf("info.version must be 2026.08, got %+v", m.Info)
	}
	if m.Info != nil && (m.Info.Title == "" || !strings.Contains(m.Info.Description, "synthetic")) {
		t.Errorf("info needs a title and a description that says synthetic data only")
	}
	if len(m.Servers) == 0 {
		t.Error("the document declares no server")
	}

	// The bearer scheme, applied globally; health alone opts out.
	if m.Components.SecuritySchemes == nil {
		t.Fatal("no security schemes")
	}
	bearer, ok := m.Components.SecuritySchemes.Get("bearerAuth")
	if !ok || bearer.Type != "http" || !strings.EqualFold(bearer.Scheme, "bearer") {
		t.Errorf("security scheme bearerAuth must be http bearer, got %+v", bearer)
	}
	if len(m.Security) != 1 || m.Security[0].Requirements == nil {
		t.Fatal("the document needs one global security requirement")
	}
	if _, ok := m.Security[0].Requirements.Get("bearerAuth"); !ok {
		t.Errorf("bearerAuth must be the global security requirement")
	}

	wantOps := map[string]bool{
		"GET /v1/health":                         false,
		"POST /v1/intakes":                       true,
		"POST /v1/intakes/{encounter_id}/turns":  true,
		"GET /v1/intakes/{encounter_id}":         true,
		"GET /v1/intakes/{encounter_id}/handoff": true,
		"GET /v1/openapi.yaml":                   true,
		"POST /v1/sandbox/faults":                true,
	}
	gotOps := map[string]bool{}
	for path, item := range m.Paths.PathItems.FromOldest() {
		if !strings.HasPrefix(path, "/v1/") {
			t.Errorf("path %s is outside /v1", path)
		}
		for method, op := range item.GetOperations().FromOldest() {
			key := strings.ToUpper(method) + " " + path
			// nil Security inherits the global requirement; an empty list opts out.
			secured := op.Security == nil || len(op.Security) > 0
			gotOps[key] = secured
			if op.OperationId == "" {
				t.Errorf("%s has no operationId", key)
			}
			for code, resp := range op.Responses.Codes.FromOldest() {
				h, ok := resp.Headers.Get("x-service-release")
				if !ok || !h.Required {
					t.Errorf("%s response %s does not declare the required x-service-release header", key, code)
				}
				if code[0] != '2' {
					if _, ok := resp.Content.Get("application/json"); !ok {
						t.Errorf("%s error response %s is not application/json", key, code)
					}
				}
			}
			if secured {
				if _, ok := op.Responses.Codes.Get("401"); !ok {
					t.Errorf("%s needs the key but documents no 401", key)
				}
			}
		}
	}
	for op, secured := range wantOps {
		got, ok := gotOps[op]
		switch {
		case !ok:
			t.Errorf("the document lacks %s", op)
		case got != secured:
			t.Errorf("%s: secured=%v, want %v", op, got, secured)
		}
	}
	for op := range gotOps {
		if _, ok := wantOps[op]; !ok {
			t.Errorf("the document has %s, which neither the spec nor the sandbox README has", op)
		}
	}

	// The turn: both 200 media types, every documented status, Retry-After on 429.
	turn := m.Paths.PathItems.GetOrZero("/v1/intakes/{encounter_id}/turns").Post
	ok200 := turn.Responses.Codes.GetOrZero("200")
	for _, mt := range []string{"application/json", "text/event-stream"} {
		if _, ok := ok200.Content.Get(mt); !ok {
			t.Errorf("turn 200 lacks %s", mt)
		}
	}
	if _, ok := ok200.Headers.Get("x-service-idempotent-replay"); !ok {
		t.Error("turn 200 lacks the x-service-idempotent-replay header")
	}
	for _, code := range []string{"200", "400", "401", "404", "409", "410", "413", "429", "500", "502", "503"} {
		if _, ok := turn.Responses.Codes.Get(code); !ok {
			t.Errorf("turn lacks response %s", code)
		}
	}
	if _, ok := turn.Responses.Codes.GetOrZero("429").Headers.Get("Retry-After"); !ok {
		t.Error("turn 429 lacks Retry-After")
	}
	var idem *v3.Parameter
	for _, p := range turn.Parameters {
		if p.In == "header" && strings.EqualFold(p.Name, "Idempotency-Key") {
			idem = p
		}
	}
	if idem == nil || idem.Schema == nil || idem.Schema.Schema().MaxLength == nil || *idem.Schema.Schema().MaxLength != 255 {
		t.Error("turn needs an Idempotency-Key header parameter of at most 255 characters")
	}

	// The stream events: the extension names a schema for each of the six.
	sse, _ := ok200.Content.Get("text/event-stream")
	node, ok := sse.Extensions.Get("x-sse-events")
	if !ok {
		t.Fatal("text/event-stream lacks x-sse-events")
	}
	var declared map[string]map[string]string
	if err := node.Decode(&declared); err != nil {
		t.Fatalf("x-sse-events: %v", err)
	}
	if len(declared) != len(oaEventSchemas) {
		t.Errorf("x-sse-events names %d events, the spec has %d", len(declared), len(oaEventSchemas))
	}
	for ev, name := range oaEventSchemas {
		if got := declared[ev]["$ref"]; got != "#/components/schemas/"+name {
			t.Errorf("x-sse-events[%s] = %q, want the %s schema", ev, got, name)
		}
		c.schema(t, name)
		if !strings.Contains(ok200.Description, "`"+ev+"`") {
			t.Errorf("the turn 200 description does not describe event %s", ev)
		}
	}

	// Error codes stay an open string, with every known code listed.
	code := c.schema(t, "ErrorCode")
	if len(code.Enum) != 0 {
		t.Error("ErrorCode must not be a closed enum: clients keep unknown codes")
	}
	for _, k := range oaErrorCodes {
		if !strings.Contains(code.Description, "`"+k+"`") {
			t.Errorf("ErrorCode's description does not list %s", k)
		}
	}
}

// The schemas must accept what the spec allows and refuse what it forbids;
// otherwise validating the sandbox against them proves nothing.
func TestOpenAPISchemasDiscriminate(t *testing.T) {
	c := oaLoad(t, oaReadDocument(t))

	provenance := `{"release":"r","server_model":null,"prompt_hash":null,"source_commit":null,"directory_hash":null,` +
		`"runtime_profile":null,"prompt_profile":null,"voice_profile":null,"audit_ref":null,"latency_ms":12.5,"protocol_count":null}`
	handoff := func(extra string) string {
		return `{"encounter_id":"enc_0a1b2c3d_00112233aabbccdd","captured_at":"2026-08-01T10:00:00.000Z","terminal":true,"urgent":false,` +
			`"intake_status":"complete","safety_status":"cannot_miss_negative","safety_notes":[],"disposition":"self_care",` +
			`"disposition_label":"Self-care","soap":{"subjective":"s","objective":"","assessment":"","plan":"p"},` +
			`"captured_facts":{"age":"34","sex":null,"pregnancy":null},"active_protocol":null,"candidate_protocols":[],` +
			`"scores":[{"key":"k","total":"1","band":"weak","components":"c"}],` +
			`"conversation":[{"role":"patient","text":"hi"},{"role":"assistant","text":"hello"}],` +
			`"provenance":` + provenance + extra + `}`
	}
	turn := func(terminal bool, rest string) string {
		return fmt.Sprintf(`{"encounter_id":"enc_0a1b2c3d_00112233aabbccdd","turn_index":1,"assistant_message":"Hello",`+
			`"choices":[],"terminal":%v,"urgent":false%s}`, terminal, rest)
	}
	state := `,"safety_status":"no_red_flags_yet","disposition":"continue_intake","disposition_label":"In progress"`
	nullState := `,"safety_status":null,"disposition":null,"disposition_label":null`

	cases := []struct {
		name, schema, payload string
		valid                 bool
	}{
		{"open turn", "Turn", turn(false, state), true},
		{"open turn, null state", "Turn", turn(false, nullState), true},
		{"open turn, unknown safety status kept", "Turn", turn(false, `,"safety_status":"new_status","disposition":"new_disp","disposition_label":"x"`), true},
		{"terminal turn with handoff", "Turn", turn(true, state+`,"handoff":`+handoff("")), true},
		{"terminal turn without handoff", "Turn", turn(true, state), false},
		{"open turn with a handoff", "Turn", turn(false, state+`,"handoff":`+handoff("")), false},
		{"turn without assistant_message", "Turn", `{"encounter_id":"enc_a_1","turn_index":1,"choices":[],"terminal":false,"urgent":false` + state + `}`, false},
		{"turn_index 0", "Turn", strings.Replace(turn(false, state), `"turn_index":1`, `"turn_index":0`, 1), false},
		{"turn without the nullable state fields", "Turn", turn(false, ""), false},
		{"handoff", "Handoff", handoff(""), true},
		{"handoff, bad band", "Handoff", strings.Replace(handoff(""), `"band":"weak"`, `"band":"excellent"`, 1), false},
		{"handoff, clinician role", "Handoff", strings.Replace(handoff(""), `"role":"patient"`, `"role":"clinician"`, 1), false},
		{"handoff, numeric age", "Handoff", strings.Replace(handoff(""), `"age":"34"`, `"age":34`, 1), false},
		{"handoff, bad captured_at", "Handoff", strings.Replace(handoff(""), `2026-08-01T10:00:00.000Z`, `yesterday`, 1), false},
		{"handoff, string latency", "Handoff", strings.Replace(handoff(""), `"latency_ms":12.5`, `"latency_ms":"12.5"`, 1), false},
		{"handoff, unknown intake_status kept", "Handoff", strings.Replace(handoff(""), `"intake_status":"complete"`, `"intake_status":"needs_onset"`, 1), true},
		{"health", "Health", `{"ok":true,"release":"sandbox-2026.08","build_sha":null}`, true},
		{"health without build_sha", "Health", `{"ok":true,"release":"sandbox-2026.08"}`, false},
		{"intake", "Intake", `{"encounter_id":"enc_0a1b2c3d_00112233aabbccdd","status":"open","created_at":"2026-08-01T10:00:00.000Z","expires_at":"2026-08-01T12:00:00.000Z"}`, true},
		{"intake not open", "Intake", `{"encounter_id":"enc_0a1b2c3d_00112233aabbccdd","status":"closed","created_at":"2026-08-01T10:00:00.000Z","expires_at":"2026-08-01T12:00:00.000Z"}`, false},
		{"summary", "IntakeSummary", `{"encounter_id":"enc_a_1","status":"expired","turn_count":0,"created_at":"2026-08-01T10:00:00.000Z","expires_at":"2026-08-01T12:00:00.000Z","last_safety_status":null,"last_disposition":null}`, true},
		{"summary, unknown status", "IntakeSummary", `{"encounter_id":"enc_a_1","status":"paused","turn_count":0,"created_at":"2026-08-01T10:00:00.000Z","expires_at":"2026-08-01T12:00:00.000Z","last_safety_status":null,"last_disposition":null}`, false},
		{"error envelope", "ErrorEnvelope", `{"error":{"code":"intake_closed","message":"closed","encounter_id":"enc_a_1"}}`, true},
		{"error envelope, unknown code kept", "ErrorEnvelope", `{"error":{"code":"brand_new_code","message":"m"}}`, true},
		{"error envelope without message", "ErrorEnvelope", `{"error":{"code":"not_found"}}`, false},
		{"create request", "CreateIntakeRequest", `{"demographics":{"age_years":130,"sex":"intersex"},"patient_history":"none"}`, true},
		{"create request, age 131", "CreateIntakeRequest", `{"demographics":{"age_years":131}}`, false},
		{"create request, unknown field", "CreateIntakeRequest", `{"patient_histroy":"typo"}`, false},
		{"create request, sex other", "CreateIntakeRequest", `{"demographics":{"sex":"other"}}`, false},
		{"create request, history 4001", "CreateIntakeRequest", `{"patient_history":"` + strings.Repeat("é", 4001) + `"}`, false},
		{"turn request, 8000 characters", "TurnRequest", `{"message":"` + strings.Repeat("é", 8000) + `"}`, true},
		{"turn request, 8001 characters", "TurnRequest", `{"message":"` + strings.Repeat("é", 8001) + `"}`, false},
		{"turn request, empty", "TurnRequest", `{"message":""}`, false},
		{"turn request, stream string", "TurnRequest", `{"message":"hi","stream":"yes"}`, false},
		{"fault request", "FaultRequest", `{"kind":"null_state"}`, true},
		{"fault request, count 0", "FaultRequest", `{"kind":"null_state","count":0}`, false},
		{"fault request, unknown kind", "FaultRequest", `{"kind":"meteor"}`, false},
		{"fault", "Fault", `{"encounter_id":null,"kind":"stream_drop","count":2}`, true},
		{"delta event", "MessageDeltaEvent", `{"text":"Hel"}`, true},
		{"delta event without text", "MessageDeltaEvent", `{}`, false},
		{"completed event", "MessageCompletedEvent", `{"elapsed_ms":1200}`, true},
		{"compiling event", "HandoffCompilingEvent", `{"terminal":"no"}`, false},
		{"progress event", "HandoffProgressEvent", `{"chars":120}`, true},
		{"stream error event", "StreamErrorEvent", `{"code":"upstream_error","message":"m"}`, true},
	}
	for _, tc := range cases {
		errs := c.checkSchema(t, tc.schema, []byte(tc.payload))
		if tc.valid && len(errs) > 0 {
			t.Errorf("%s: %s should accept it:%s", tc.name, tc.schema, oaDescribeAll(errs))
		}
		if !tc.valid && len(errs) == 0 {
			t.Errorf("%s: %s should refuse it", tc.name, tc.schema)
		}
	}
}

// ---------------------------------------------------------------------------
// Exchanges with a real sandbox.

// oaExchange is one request sent to the sandbox and the response it got, kept
// whole so both can be validated.
type oaExchange struct {
	method, url string
	reqHeader   http.Header
	reqBody     []byte
	status      int
	header      http.Header
	body        []byte
}

func (x *oaExchange) String() string {
	var k string
	if v, ok := x.reqHeader["Idempotency-Key"]; ok {
		k = fmt.Sprintf(" (Idempotency-Key %q)", v)
	}
	return fmt.Sprintf("%s %s%s -> %d %s", x.method, x.url, k, x.status, oaTruncate(x.body))
}

func oaTruncate(b []byte) string {
	const n = 400
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

func (x *oaExchange) request(t testing.TB) *http.Request {
	t.Helper()
	var body io.Reader = http.NoBody
	if x.reqBody != nil {
		body = bytes.NewReader(x.reqBody)
	}
	req, err := http.NewRequest(x.method, x.url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = x.reqHeader.Clone()
	return req
}

func (x *oaExchange) response(req *http.Request) *http.Response {
	return &http.Response{
		StatusCode: x.status,
		Header:     x.header.Clone(),
		Body:       io.NopCloser(bytes.NewReader(x.body)),
		Request:    req,
	}
}

// errorCode is the error.code of an error envelope response ("" if none).
func (x *oaExchange) errorCode() string {
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(x.body, &env)
	return env.Error.Code
}

func (x *oaExchange) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(x.body, v); err != nil {
		t.Fatalf("%s: decode: %v", x, err)
	}
}

// do sends one request. key "" sends no Authorization header; body nil sends
// no body.
func oaDo(t testing.TB, method, url, key string, body []byte, header http.Header) *oaExchange {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return &oaExchange{
		method: method, url: url, reqHeader: req.Header.Clone(), reqBody: body,
		status: resp.StatusCode, header: resp.Header, body: got,
	}
}

// expect checks what a client sees: the status, the error code when one is
// expected, and that the response conforms to the document (status listed,
// content type listed, headers, body schema). requestValid says whether the
// document must accept the request as sent: true for everything the sandbox
// processed, false for a request the sandbox refused as invalid, so the
// document and the sandbox agree on what is a valid request.
func (c *oaContract) expect(t testing.TB, x *oaExchange, status int, code string, requestValid bool) {
	t.Helper()
	c.expectResponse(t, x, status, code)
	ok, errs := c.http.ValidateHttpRequest(x.request(t))
	switch {
	case requestValid && !ok:
		t.Errorf("%s: the sandbox processed a request the document refuses:%s", x, oaDescribeAll(errs))
	case !requestValid && ok:
		t.Errorf("%s: the sandbox refused a request the document accepts", x)
	}
}

// expectResponse is expect without the request check.
func (c *oaContract) expectResponse(t testing.TB, x *oaExchange, status int, code string) {
	t.Helper()
	if x.status != status {
		t.Fatalf("%s: status %d, want %d", x, x.status, status)
	}
	if code != "" {
		if got := x.errorCode(); got != code {
			t.Errorf("%s: error code %q, want %q", x, got, code)
		}
	}
	req := x.request(t)
	if ok, errs := c.http.ValidateHttpResponse(req, x.response(req)); !ok {
		t.Errorf("%s: the response does not conform to the document:%s", x, oaDescribeAll(errs))
	}
	c.checkOptionalHeaders(t, x, req)
	c.record(x)
}

func (c *oaContract) record(x *oaExchange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	path := x.url
	if i := strings.Index(path, "/v1/"); i >= 0 {
		path = path[i:]
	}
	c.validated = append(c.validated, fmt.Sprintf("%s %s -> %d %s", x.method, path, x.status, x.errorCode()))
}

// checkOptionalHeaders validates the declared response headers the library
// only checks when they are required (Retry-After, the replay marker).
func (c *oaContract) checkOptionalHeaders(t testing.TB, x *oaExchange, req *http.Request) {
	t.Helper()
	item, errs, _ := paths.FindPath(req, c.model, c.opts)
	if item == nil || len(errs) > 0 {
		return // reported by ValidateHttpResponse
	}
	op := helpers.ExtractOperation(req, item)
	if op == nil {
		return
	}
	resp := op.Responses.Codes.GetOrZero(fmt.Sprint(x.status))
	if resp == nil || resp.Headers == nil {
		return
	}
	for name, h := range resp.Headers.FromOldest() {
		v := x.header.Get(name)
		if v == "" || h.Required || h.Schema == nil {
			continue
		}
		js, _ := json.Marshal(v)
		if _, errs := c.schemas.ValidateSchemaBytesWithVersion(h.Schema.Schema(), js, 3.1); len(errs) > 0 {
			t.Errorf("%s: header %s: %q does not conform:%s", x, name, v, oaDescribeAll(errs))
		}
	}
}

// expectOutsideDocument checks a response to a request the document does
// not describe (unknown path, wrong method): the document must refuse the
// request, and the response must still be an error envelope with the
// x-service-release header.
func (c *oaContract) expectOutsideDocument(t testing.TB, x *oaExchange, status int, code string) {
	t.Helper()
	if x.status != status {
		t.Fatalf("%s: status %d, want %d", x, x.status, status)
	}
	if got := x.errorCode(); got != code {
		t.Errorf("%s: error code %q, want %q", x, got, code)
	}
	if ok, _ := c.http.ValidateHttpRequest(x.request(t)); ok {
		t.Errorf("%s: the document describes this request, but it should not", x)
	}
	if ct := x.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: content type %q, want application/json", x, ct)
	}
	if errs := c.checkSchema(t, "ErrorEnvelope", x.body); len(errs) > 0 {
		t.Errorf("%s: not an error envelope:%s", x, oaDescribeAll(errs))
	}
	c.checkReleaseHeader(t, x)
	c.record(x)
}

func (c *oaContract) checkReleaseHeader(t testing.TB, x *oaExchange) {
	t.Helper()
	rel := c.model.Components.Headers.GetOrZero("ServiceRelease")
	v := x.header.Get("x-service-release")
	if v == "" {
		t.Errorf("%s: no x-service-release header", x)
		return
	}
	js, _ := json.Marshal(v)
	if _, errs := c.schemas.ValidateSchemaBytesWithVersion(rel.Schema.Schema(), js, 3.1); len(errs) > 0 {
		t.Errorf("%s: x-service-release %q does not conform:%s", x, v, oaDescribeAll(errs))
	}
}

// oaEvent is one Server-Sent Event of a streaming turn.
type oaEvent struct {
	name string
	data []byte
}

// oaParseEvents reads the wire format of the spec: each event is an
// "event: <name>" line and one "data: <json>" line, events separated by a
// blank line. SSE comment lines (":") are tolerated.
func oaParseEvents(t testing.TB, body []byte) []oaEvent {
	t.Helper()
	var events []oaEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var cur *oaEvent
	dataLines := 0
	flush := func() {
		if cur == nil {
			return
		}
		if dataLines != 1 {
			t.Errorf("event %q has %d data lines, the spec says one", cur.name, dataLines)
		}
		events = append(events, *cur)
		cur, dataLines = nil, 0
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			if cur != nil {
				t.Errorf("event %q is not separated from the next by a blank line", cur.name)
				flush()
			}
			cur = &oaEvent{name: strings.TrimPrefix(line, "event: ")}
		case strings.HasPrefix(line, "data: "):
			if cur == nil {
				t.Errorf("data line without an event line: %q", line)
				continue
			}
			cur.data = []byte(strings.TrimPrefix(line, "data: "))
			dataLines++
		default:
			t.Errorf("unexpected stream line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read stream: %v", err)
	}
	if cur != nil {
		t.Errorf("the stream ends inside event %q (no blank line)", cur.name)
		flush()
	}
	return events
}

// expectStream validates a streaming turn: the response (status, content
// type, headers) against the document, then each event's data against the
// component schema of its event, and the event order of README choice 8.
// It returns the events.
func (c *oaContract) expectStream(t testing.TB, x *oaExchange) []oaEvent {
	t.Helper()
	c.expect(t, x, http.StatusOK, "", true)
	if ct := x.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("%s: content type %q, want text/event-stream", x, ct)
	}
	events := oaParseEvents(t, x.body)
	if len(events) == 0 {
		t.Fatalf("%s: no events", x)
	}
	for i, ev := range events {
		name, ok := oaEventSchemas[ev.name]
		if !ok {
			t.Errorf("event %d: %q is not one of the spec's events", i, ev.name)
			continue
		}
		if errs := c.checkSchema(t, name, ev.data); len(errs) > 0 {
			t.Errorf("event %d %s: data %s does not conform to %s:%s", i, ev.name, oaTruncate(ev.data), name, oaDescribeAll(errs))
		}
	}
	oaCheckEventOrder(t, events)
	return events
}

// oaCheckEventOrder: message.delta+ -> message.completed -> handoff.compiling
// -> handoff.progress+ -> turn.completed (README choice 8), or a prefix of it
// ended by one error event.
func oaCheckEventOrder(t testing.TB, events []oaEvent) {
	t.Helper()
	var names, runs []string
	for i, e := range events {
		names = append(names, e.name)
		repeatable := e.name == "message.delta" || e.name == "handoff.progress"
		if i > 0 && repeatable && events[i-1].name == e.name {
			continue
		}
		runs = append(runs, e.name)
	}
	want := []string{"message.delta", "message.completed", "handoff.compiling", "handoff.progress", "turn.completed"}
	if n := len(runs); n > 0 && runs[n-1] == "error" {
		if len(runs)-1 > len(want) || !slices.Equal(runs[:n-1], want[:n-1]) {
			t.Errorf("event order %v: not a prefix of %v ended by error", names, want)
		}
		return
	}
	if !slices.Equal(runs, want) {
		t.Errorf("event order %v, want %v (README choice 8)", names, want)
	}
}

// ---------------------------------------------------------------------------
// The live sandbox.

const (
	oaKeyA = "cis_sb_0123456789abcdef"
	oaKeyB = "cis_sb_fedcba9876543210"
	// oaKeyUnknown has the sandbox shape but is not accepted.
	oaKeyUnknown = "cis_sb_00000000000000000000000000000000"
)

// oaClock is the sandbox's injectable clock: time moves only when a test
// says so, so expiry needs no waiting.
type oaClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *oaClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *oaClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// live is a running sandbox and the contract its responses are held to.
type oaLive struct {
	*oaContract
	url   string
	clock *oaClock
}

// oaStart starts a sandbox with the spec's limits, two keys, the scripted
// engine, fast streaming and faults enabled; tune adjusts the config. The
// contract is the document embedded in the sandbox binary.
func oaStart(t *testing.T, tune func(*sandbox.Config)) *oaLive {
	t.Helper()
	clock := &oaClock{now: time.Date(2026, 8, 3, 9, 30, 0, 0, time.UTC)}
	cfg := sandbox.DefaultConfig()
	cfg.Keys = []string{oaKeyA, oaKeyB}
	cfg.Engine = enginetest.Scripted{}
	cfg.RPM = 0
	cfg.FragmentDelay = time.Millisecond
	cfg.SlowStart = time.Millisecond
	cfg.Faults = true
	cfg.Now = clock.Now
	if tune != nil {
		tune(&cfg)
	}
	srv, err := sandbox.Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Cleanup(srv.Close)
	l := &oaLive{oaContract: oaLoad(t, intakeservice.OpenAPI()), url: srv.URL, clock: clock}
	t.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		t.Logf("%d responses validated against the document:\n\t%s", len(l.validated), strings.Join(l.validated, "\n\t"))
	})
	return l
}

func (l *oaLive) do(t *testing.T, method, path, key string, body any, header http.Header) *oaExchange {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	return oaDo(t, method, l.url+path, key, raw, header)
}

// create makes an intake for key and returns its id.
func (l *oaLive) create(t *testing.T, key string) string {
	t.Helper()
	x := l.do(t, http.MethodPost, "/v1/intakes", key, map[string]any{}, nil)
	l.expect(t, x, http.StatusCreated, "", true)
	var in struct {
		EncounterID string `json:"encounter_id"`
	}
	x.decode(t, &in)
	return in.EncounterID
}

type oaTurn struct {
	EncounterID      string          `json:"encounter_id"`
	TurnIndex        int             `json:"turn_index"`
	AssistantMessage string          `json:"assistant_message"`
	Terminal         bool            `json:"terminal"`
	Urgent           bool            `json:"urgent"`
	SafetyStatus     *string         `json:"safety_status"`
	Disposition      *string         `json:"disposition"`
	DispositionLabel *string         `json:"disposition_label"`
	Handoff          json.RawMessage `json:"handoff"`
}

// turn sends a blocking turn and expects a 200 that conforms.
func (l *oaLive) turn(t *testing.T, key, id, message string, header http.Header) (*oaExchange, oaTurn) {
	t.Helper()
	x := l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", key, map[string]any{"message": message}, header)
	l.expect(t, x, http.StatusOK, "", true)
	var tr oaTurn
	x.decode(t, &tr)
	return x, tr
}

func (l *oaLive) arm(t *testing.T, id, kind string, count int) {
	t.Helper()
	req := map[string]any{"kind": kind}
	if id != "" {
		req["encounter_id"] = id
	}
	if count > 0 {
		req["count"] = count
	}
	x := l.do(t, http.MethodPost, "/v1/sandbox/faults", oaKeyA, req, nil)
	l.expect(t, x, http.StatusOK, "", true)
	var f struct {
		EncounterID *string `json:"encounter_id"`
		Kind        string  `json:"kind"`
		Count       int     `json:"count"`
	}
	x.decode(t, &f)
	wantCount := max(count, 1)
	if f.Kind != kind || f.Count != wantCount || (id == "") != (f.EncounterID == nil) || (id != "" && *f.EncounterID != id) {
		t.Errorf("%s: the armed fault is not echoed: got %+v, want %s x%d for %q", x, f, kind, wantCount, id)
	}
}

func TestOpenAPIServedDocumentIsTheFile(t *testing.T) {
	l := oaStart(t, nil)
	file := oaReadDocument(t)
	if !bytes.Equal(intakeservice.OpenAPI(), file) {
		t.Error("the embedded document differs from intakeservice/openapi.yaml")
	}

	x := l.do(t, http.MethodGet, "/v1/openapi.yaml", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
	if ct := x.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/yaml") {
		t.Errorf("served with content type %q, want application/yaml", ct)
	}
	if !bytes.Equal(x.body, file) {
		t.Error("the served document differs from intakeservice/openapi.yaml")
	}
	oaLoad(t, x.body) // the served bytes are themselves a valid 3.1 document

	// README choice 10: the document needs the key.
	x = l.do(t, http.MethodGet, "/v1/openapi.yaml", "", nil, nil)
	l.expect(t, x, http.StatusUnauthorized, "unauthorized", false)
}

func TestOpenAPIConformanceIntakeLifecycle(t *testing.T) {
	l := oaStart(t, nil)

	x := l.do(t, http.MethodGet, "/v1/health", "", nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
	var health struct {
		Release string `json:"release"`
	}
	x.decode(t, &health)
	if rel, _, _ := strings.Cut(x.header.Get("x-service-release"), "+"); rel != health.Release {
		t.Errorf("health release %q is not the release of x-service-release %q", health.Release, x.header.Get("x-service-release"))
	}

	// The intake's identity and times (README choices 13 and 14, spec's two hours).
	x = l.do(t, http.MethodPost, "/v1/intakes", oaKeyA, map[string]any{}, nil)
	l.expect(t, x, http.StatusCreated, "", true)
	var in struct {
		EncounterID string `json:"encounter_id"`
		CreatedAt   string `json:"created_at"`
		ExpiresAt   string `json:"expires_at"`
	}
	x.decode(t, &in)
	sum := sha256.Sum256([]byte(oaKeyA))
	if !regexp.MustCompile(`^enc_` + hex.EncodeToString(sum[:])[:8] + `_[0-9a-f]{16}$`).MatchString(in.EncounterID) {
		t.Errorf("encounter_id %q is not enc_<first 8 hex of sha256(key)>_<16 hex> (README choice 13)", in.EncounterID)
	}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	created, err1 := time.Parse(time.RFC3339, in.CreatedAt)
	expires, err2 := time.Parse(time.RFC3339, in.ExpiresAt)
	switch {
	case !stamp.MatchString(in.CreatedAt) || !stamp.MatchString(in.ExpiresAt) || err1 != nil || err2 != nil:
		t.Errorf("times %q, %q are not RFC 3339 UTC with milliseconds (README choice 14)", in.CreatedAt, in.ExpiresAt)
	case expires.Sub(created) != 2*time.Hour:
		t.Errorf("expires_at - created_at = %v, the spec says two hours", expires.Sub(created))
	}

	// Create: no body, an empty object, every field at its limits.
	x = l.do(t, http.MethodPost, "/v1/intakes", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusCreated, "", true)
	x = l.do(t, http.MethodPost, "/v1/intakes", oaKeyA, map[string]any{
		"demographics":    map[string]any{"age_years": 130, "sex": "intersex"},
		"patient_history": strings.Repeat("é", 4000),
	}, nil)
	l.expect(t, x, http.StatusCreated, "", true)
	x = l.do(t, http.MethodPost, "/v1/intakes", oaKeyA, map[string]any{"demographics": map[string]any{"age_years": 0, "sex": "female"}}, nil)
	l.expect(t, x, http.StatusCreated, "", true)
	id := l.create(t, oaKeyA)

	// An open intake before any turn: summary and handoff.
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id, oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id+"/handoff", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)

	// Blocking turns, open: no handoff.
	_, tr := l.turn(t, oaKeyA, id, "I have a sore throat", nil)
	if tr.TurnIndex != 1 || tr.Terminal || tr.Handoff != nil {
		t.Errorf("first turn: index %d, terminal %v, handoff %s", tr.TurnIndex, tr.Terminal, tr.Handoff)
	}
	_, tr = l.turn(t, oaKeyA, id, strings.Repeat("é", 8000), nil)
	if tr.TurnIndex != 2 {
		t.Errorf("second turn index %d, want 2", tr.TurnIndex)
	}

	// Idempotent replay: the second answer is the stored one, marked.
	idem := http.Header{"Idempotency-Key": {"turn-3-" + strings.Repeat("k", 240)}}
	first, _ := l.turn(t, oaKeyA, id, "It started yesterday", idem)
	if first.header.Get("x-service-idempotent-replay") == "true" {
		t.Errorf("%s: a first call is marked as a replay", first)
	}
	again, _ := l.turn(t, oaKeyA, id, "It started yesterday", idem)
	if again.header.Get("x-service-idempotent-replay") != "true" {
		t.Errorf("%s: a replay lacks x-service-idempotent-replay: true", again)
	}
	if !bytes.Equal(first.body, again.body) {
		t.Errorf("the replay differs from the stored response:\n%s\n%s", first.body, again.body)
	}
	// The same key with another message: refused (README choice 5), though
	// the document cannot tell the request from a valid one.
	x = l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", oaKeyA, map[string]any{"message": "something else"}, idem)
	l.expect(t, x, http.StatusBadRequest, "invalid_request", true)

	// The summary and handoff of an open intake with turns.
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id, oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id+"/handoff", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)

	// A terminal turn carries the handoff; the intake is closed after it.
	_, tr = l.turn(t, oaKeyA, id, "done", nil)
	if !tr.Terminal || tr.Handoff == nil {
		t.Errorf("the done turn: terminal %v, handoff %s", tr.Terminal, tr.Handoff)
	}
	x = l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", oaKeyA, map[string]any{"message": "one more"}, nil)
	l.expect(t, x, http.StatusConflict, "intake_closed", true)
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id, oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
	var summary struct {
		Status string `json:"status"`
	}
	x.decode(t, &summary)
	if summary.Status != "closed" {
		t.Errorf("summary status %q after the terminal turn, want closed", summary.Status)
	}
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id+"/handoff", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)

	// An urgent terminal turn.
	urgent := l.create(t, oaKeyA)
	_, tr = l.turn(t, oaKeyA, urgent, "this is an emergency", nil)
	if !tr.Terminal || !tr.Urgent || tr.Handoff == nil {
		t.Errorf("the emergency turn: terminal %v, urgent %v, handoff %s", tr.Terminal, tr.Urgent, tr.Handoff)
	}
	x = l.do(t, http.MethodGet, "/v1/intakes/"+urgent+"/handoff", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)

	// Another key's intake, and one that does not exist, are not found.
	for _, c := range []struct{ key, id string }{{oaKeyB, urgent}, {oaKeyA, "enc_00000000_0000000000000000"}} {
		x = l.do(t, http.MethodPost, "/v1/intakes/"+c.id+"/turns", c.key, map[string]any{"message": "hello"}, nil)
		l.expect(t, x, http.StatusNotFound, "not_found", true)
		x = l.do(t, http.MethodGet, "/v1/intakes/"+c.id, c.key, nil, nil)
		l.expect(t, x, http.StatusNotFound, "not_found", true)
		x = l.do(t, http.MethodGet, "/v1/intakes/"+c.id+"/handoff", c.key, nil, nil)
		l.expect(t, x, http.StatusNotFound, "not_found", true)
	}

	// 401: an unknown key (a request the document accepts), no key and a
	// non-bearer credential (requests the document refuses).
	for _, path := range []string{"/v1/intakes/" + id, "/v1/intakes/" + id + "/handoff", "/v1/openapi.yaml"} {
		x = l.do(t, http.MethodGet, path, oaKeyUnknown, nil, nil)
		l.expect(t, x, http.StatusUnauthorized, "unauthorized", true)
	}
	x = l.do(t, http.MethodPost, "/v1/intakes", oaKeyUnknown, nil, nil)
	l.expect(t, x, http.StatusUnauthorized, "unauthorized", true)
	x = l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", oaKeyUnknown, map[string]any{"message": "hi"}, nil)
	l.expect(t, x, http.StatusUnauthorized, "unauthorized", true)
	x = l.do(t, http.MethodPost, "/v1/intakes", "", nil, nil)
	l.expect(t, x, http.StatusUnauthorized, "unauthorized", false)
	x = l.do(t, http.MethodPost, "/v1/intakes", "", nil, http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}})
	l.expect(t, x, http.StatusUnauthorized, "unauthorized", false)
}

func TestOpenAPIConformanceStreaming(t *testing.T) {
	l := oaStart(t, nil)
	id := l.create(t, oaKeyA)

	turnOf := func(events []oaEvent) oaTurn {
		t.Helper()
		var tr oaTurn
		last := events[len(events)-1]
		if last.name != "turn.completed" {
			t.Fatalf("the stream ends with %s, want turn.completed", last.name)
		}
		if err := json.Unmarshal(last.data, &tr); err != nil {
			t.Fatal(err)
		}
		return tr
	}

	x := l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", oaKeyA, map[string]any{"message": "I feel dizzy", "stream": true}, nil)
	tr := turnOf(l.expectStream(t, x))
	if tr.Terminal || tr.Handoff != nil {
		t.Errorf("an open streamed turn: terminal %v, handoff %s", tr.Terminal, tr.Handoff)
	}

	x = l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", oaKeyA, map[string]any{"message": "done", "stream": true}, nil)
	tr = turnOf(l.expectStream(t, x))
	if !tr.Terminal || tr.Handoff == nil {
		t.Errorf("a terminal streamed turn: terminal %v, handoff %s", tr.Terminal, tr.Handoff)
	}

	x = l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", oaKeyA, map[string]any{"message": "again", "stream": true}, nil)
	l.expect(t, x, http.StatusConflict, "intake_closed", true)
}

// README choice 6: a turn sent while the previous reply still streams is a
// 409 turn_in_progress. The stream pauses an hour between fragments, so the
// second turn surely arrives before message.completed.
func TestOpenAPIConformanceTurnInProgress(t *testing.T) {
	l := oaStart(t, func(c *sandbox.Config) { c.FragmentDelay = time.Hour })
	id := l.create(t, oaKeyA)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	body := []byte(`{"message":"a long story about my cough","stream":true}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url+"/v1/intakes/"+id+"/turns", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+oaKeyA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Wait for the first fragment: the turn is now streaming.
	rd := bufio.NewReader(resp.Body)
	var head bytes.Buffer
	for !strings.Contains(head.String(), "\n\n") {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("read the first event: %v (got %q)", err, head.String())
		}
		head.WriteString(line)
	}
	streaming := &oaExchange{method: req.Method, url: req.URL.String(), reqHeader: req.Header.Clone(), reqBody: body,
		status: resp.StatusCode, header: resp.Header, body: head.Bytes()}
	l.expect(t, streaming, http.StatusOK, "", true)
	for _, ev := range oaParseEvents(t, head.Bytes()) {
		if ev.name != "message.delta" {
			t.Errorf("first event %s, want message.delta", ev.name)
		}
		if errs := l.checkSchema(t, "MessageDeltaEvent", ev.data); len(errs) > 0 {
			t.Errorf("first event data does not conform:%s", oaDescribeAll(errs))
		}
	}

	x := l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", oaKeyA, map[string]any{"message": "hello?"}, nil)
	l.expect(t, x, http.StatusConflict, "turn_in_progress", true)
}

func TestOpenAPIConformanceInvalidRequests(t *testing.T) {
	l := oaStart(t, nil)
	id := l.create(t, oaKeyA)
	turns := "/v1/intakes/" + id + "/turns"

	creates := map[string]string{
		"bad JSON":          `{"demographics":`,
		"not an object":     `[]`,
		"unknown field":     `{"patient_histroy":"x"}`,
		"unknown nested":    `{"demographics":{"age":30}}`,
		"age 131":           `{"demographics":{"age_years":131}}`,
		"age -1":            `{"demographics":{"age_years":-1}}`,
		"age fractional":    `{"demographics":{"age_years":30.5}}`,
		"age string":        `{"demographics":{"age_years":"30"}}`,
		"sex other":         `{"demographics":{"sex":"other"}}`,
		"history 4001":      `{"patient_history":"` + strings.Repeat("é", 4001) + `"}`,
		"history null":      `{"patient_history":null}`,
		"demographics list": `{"demographics":[]}`,
		"demographics null": `{"demographics":null}`,
	}
	for name, body := range creates {
		x := l.do(t, http.MethodPost, "/v1/intakes", oaKeyA, body, nil)
		if x.status != http.StatusBadRequest {
			t.Errorf("create, %s: status %d, want 400", name, x.status)
			continue
		}
		l.expect(t, x, http.StatusBadRequest, "invalid_request", false)
	}

	turnBodies := map[string]string{
		"bad JSON":        `{"message":`,
		"no message":      `{}`,
		"empty message":   `{"message":""}`,
		"message 8001":    `{"message":"` + strings.Repeat("é", 8001) + `"}`,
		"message number":  `{"message":42}`,
		"message null":    `{"message":null}`,
		"stream string":   `{"message":"hi","stream":"true"}`,
		"unknown field":   `{"message":"hi","trace_id":"x"}`,
		"body not object": `"hi"`,
		"stream null":     `{"message":"hi","stream":null}`,
	}
	for name, body := range turnBodies {
		x := l.do(t, http.MethodPost, turns, oaKeyA, body, nil)
		if x.status != http.StatusBadRequest {
			t.Errorf("turn, %s: status %d, want 400", name, x.status)
			continue
		}
		l.expect(t, x, http.StatusBadRequest, "invalid_request", false)
	}
	x := l.do(t, http.MethodPost, turns, oaKeyA, nil, nil)
	l.expect(t, x, http.StatusBadRequest, "invalid_request", false)

	keys := map[string]string{
		"256 characters": strings.Repeat("k", 256),
		"a space":        "two words",
		"non-ASCII":      "clé",
	}
	for name, k := range keys {
		x := l.do(t, http.MethodPost, turns, oaKeyA, `{"message":"hi"}`, http.Header{"Idempotency-Key": {k}})
		if x.status != http.StatusBadRequest {
			t.Errorf("Idempotency-Key with %s: status %d, want 400", name, x.status)
			continue
		}
		l.expect(t, x, http.StatusBadRequest, "invalid_request", false)
	}

	// An empty Idempotency-Key: refused. The document refuses it too
	// (minLength 1), but libopenapi-validator v0.13.8 checks an empty header
	// value only some of the time, so only the response is checked here.
	x = l.do(t, http.MethodPost, turns, oaKeyA, `{"message":"hi"}`, http.Header{"Idempotency-Key": {""}})
	l.expectResponse(t, x, http.StatusBadRequest, "invalid_request")

	faults := map[string]string{
		"unknown kind":  `{"kind":"meteor"}`,
		"no kind":       `{"count":1}`,
		"count 0":       `{"kind":"null_state","count":0}`,
		"unknown field": `{"kind":"null_state","intake":"x"}`,
	}
	for name, body := range faults {
		x := l.do(t, http.MethodPost, "/v1/sandbox/faults", oaKeyA, body, nil)
		if x.status != http.StatusBadRequest {
			t.Errorf("fault, %s: status %d, want 400", name, x.status)
			continue
		}
		l.expect(t, x, http.StatusBadRequest, "invalid_request", false)
	}

	// README choice 3: over 64 KB is a 413 invalid_request.
	big := `{"message":"` + strings.Repeat("a", 70_000) + `"}`
	x = l.do(t, http.MethodPost, turns, oaKeyA, big, nil)
	l.expect(t, x, http.StatusRequestEntityTooLarge, "invalid_request", false)
	big = `{"patient_history":"` + strings.Repeat("a", 70_000) + `"}`
	x = l.do(t, http.MethodPost, "/v1/intakes", oaKeyA, big, nil)
	l.expect(t, x, http.StatusRequestEntityTooLarge, "invalid_request", false)
}

func TestOpenAPIConformanceExpiry(t *testing.T) {
	l := oaStart(t, nil)
	id := l.create(t, oaKeyA)
	l.turn(t, oaKeyA, id, "I have a headache", nil)

	l.clock.Advance(2*time.Hour + time.Second)

	x := l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", oaKeyA, map[string]any{"message": "still there?"}, nil)
	l.expect(t, x, http.StatusGone, "intake_expired", true)
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id, oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
	var sum struct {
		Status string `json:"status"`
	}
	x.decode(t, &sum)
	if sum.Status != "expired" {
		t.Errorf("summary status %q after the session limit, want expired", sum.Status)
	}
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id+"/handoff", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
}

func TestOpenAPIConformanceLimits(t *testing.T) {
	l := oaStart(t, func(c *sandbox.Config) {
		c.RPM = 4
		c.TurnsPerDay = 1
		c.IntakesPerDay = 2
	})
	// Daily quotas.
	id := l.create(t, oaKeyA)                                      // request 1
	l.create(t, oaKeyA)                                            // 2
	x := l.do(t, http.MethodPost, "/v1/intakes", oaKeyA, nil, nil) // 3
	l.expect(t, x, http.StatusTooManyRequests, "quota_exceeded", true)
	l.turn(t, oaKeyA, id, "hello", nil) // 4
	// The per-minute limit: every further request of the key is refused.
	x = l.do(t, http.MethodGet, "/v1/health", "", nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
	x = l.do(t, http.MethodPost, "/v1/intakes/"+id+"/turns", oaKeyA, map[string]any{"message": "again"}, nil)
	l.expect(t, x, http.StatusTooManyRequests, "rate_limited", true)
	x = l.do(t, http.MethodPost, "/v1/intakes", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusTooManyRequests, "rate_limited", true)
	for _, path := range []string{"/v1/intakes/" + id, "/v1/intakes/" + id + "/handoff", "/v1/openapi.yaml"} {
		x = l.do(t, http.MethodGet, path, oaKeyA, nil, nil)
		l.expect(t, x, http.StatusTooManyRequests, "rate_limited", true)
		// README choice 1: whole seconds until the oldest counted request
		// leaves the rolling minute; the clock has not moved, so 60.
		if got := x.header.Get("Retry-After"); got != "60" {
			t.Errorf("%s: Retry-After %q, want 60", x, got)
		}
	}
	// Refused requests did not count: a minute later the key is served again.
	l.clock.Advance(time.Minute + time.Second)
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id, oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
	// Another key has its own window, and its own daily quota.
	other := l.create(t, oaKeyB)
	l.turn(t, oaKeyB, other, "hello", nil)
	x = l.do(t, http.MethodPost, "/v1/intakes/"+other+"/turns", oaKeyB, map[string]any{"message": "again"}, nil)
	l.expect(t, x, http.StatusTooManyRequests, "quota_exceeded", true)
}

func TestOpenAPIConformanceFaults(t *testing.T) {
	l := oaStart(t, nil)
	id := l.create(t, oaKeyA)
	turns := "/v1/intakes/" + id + "/turns"
	msg := map[string]any{"message": "tell me more"}

	for _, c := range []struct {
		kind   string
		status int
	}{
		{"upstream_error", http.StatusBadGateway},
		{"unavailable", http.StatusServiceUnavailable},
		{"internal_error", http.StatusInternalServerError},
		{"rate_limited", http.StatusTooManyRequests},
		{"quota_exceeded", http.StatusTooManyRequests},
		{"stream_error", http.StatusBadGateway}, // blocking: 502 upstream_error
	} {
		l.arm(t, id, c.kind, 0)
		x := l.do(t, http.MethodPost, turns, oaKeyA, msg, nil)
		code := c.kind
		if c.kind == "stream_error" {
			code = "upstream_error"
		}
		l.expect(t, x, c.status, code, true)
		// The README's fault table: "429 rate_limited with Retry-After: 3
		// (Config.FaultRetryAfter)".
		if c.kind == "rate_limited" && x.header.Get("Retry-After") != "3" {
			t.Errorf("%s: an injected rate_limited answers Retry-After %q; the README documents 3", x, x.header.Get("Retry-After"))
		}
	}

	// The engine failing on its own is a 502 too.
	x := l.do(t, http.MethodPost, turns, oaKeyA, map[string]any{"message": "engine-fault please"}, nil)
	l.expect(t, x, http.StatusBadGateway, "upstream_error", true)

	// null_state: the turn completes with the three state fields null.
	l.arm(t, id, "null_state", 0)
	_, tr := l.turn(t, oaKeyA, id, "and then?", nil)
	if tr.SafetyStatus != nil || tr.Disposition != nil || tr.DispositionLabel != nil {
		t.Errorf("null_state turn: state %v %v %v, want all null", tr.SafetyStatus, tr.Disposition, tr.DispositionLabel)
	}
	x = l.do(t, http.MethodGet, "/v1/intakes/"+id+"/handoff", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)

	// slow_start, armed for every intake of the key, blocking and streaming.
	l.arm(t, "", "slow_start", 2)
	l.turn(t, oaKeyA, id, "slowly", nil)
	x = l.do(t, http.MethodPost, turns, oaKeyA, map[string]any{"message": "slowly streamed", "stream": true}, nil)
	l.expectStream(t, x)

	// stream_error while streaming: an error event ends the stream.
	l.arm(t, id, "stream_error", 1)
	x = l.do(t, http.MethodPost, turns, oaKeyA, map[string]any{"message": "streaming", "stream": true}, nil)
	events := l.expectStream(t, x)
	if last := events[len(events)-1]; last.name != "error" || !strings.Contains(string(last.data), `"upstream_error"`) {
		t.Errorf("stream_error: the stream ends with %s %s, want an upstream_error error event", last.name, last.data)
	}

	// Arming for another key's or an unknown intake is not found.
	other := l.create(t, oaKeyB)
	x = l.do(t, http.MethodPost, "/v1/sandbox/faults", oaKeyA, map[string]any{"encounter_id": other, "kind": "unavailable"}, nil)
	l.expect(t, x, http.StatusNotFound, "not_found", true)
	x = l.do(t, http.MethodPost, "/v1/sandbox/faults", oaKeyUnknown, map[string]any{"kind": "unavailable"}, nil)
	l.expect(t, x, http.StatusUnauthorized, "unauthorized", true)

	// Without -faults the endpoint does not exist.
	off := oaStart(t, func(c *sandbox.Config) { c.Faults = false })
	x = off.do(t, http.MethodPost, "/v1/sandbox/faults", oaKeyA, map[string]any{"kind": "unavailable"}, nil)
	off.expect(t, x, http.StatusNotFound, "not_found", true)
}

// Requests outside the document: unknown paths and wrong methods still get
// the error envelope and the release header (README choice 12).
func TestOpenAPIConformanceOutsideDocument(t *testing.T) {
	l := oaStart(t, nil)
	id := l.create(t, oaKeyA)

	for _, path := range []string{"/v1/nope", "/v2/health", "/v1/intakes/" + id + "/turns/1", "/"} {
		x := l.do(t, http.MethodGet, path, oaKeyA, nil, nil)
		l.expectOutsideDocument(t, x, http.StatusNotFound, "not_found")
	}
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodGet, "/v1/intakes", "POST"},
		{http.MethodDelete, "/v1/intakes/" + id, "GET"},
		{http.MethodGet, "/v1/intakes/" + id + "/turns", "POST"},
		{http.MethodPost, "/v1/intakes/" + id + "/handoff", "GET"},
		{http.MethodPut, "/v1/health", "GET"},
		{http.MethodPost, "/v1/openapi.yaml", "GET"},
		{http.MethodGet, "/v1/sandbox/faults", "POST"},
	} {
		x := l.do(t, c.method, c.path, oaKeyA, nil, nil)
		l.expectOutsideDocument(t, x, http.StatusMethodNotAllowed, "method_not_allowed")
		if got := x.header.Get("Allow"); !strings.Contains(got, c.allow) {
			t.Errorf("%s: Allow %q, want it to name %s", x, got, c.allow)
		}
		// The documented operations of the path are exactly what Allow names.
		item := l.model.Paths.PathItems.GetOrZero(oaDocPath(c.path, id))
		if item == nil {
			t.Errorf("%s is not a documented path", c.path)
			continue
		}
		var documented []string
		for m := range item.GetOperations().KeysFromOldest() {
			documented = append(documented, strings.ToUpper(m))
		}
		if got := strings.Join(documented, ", "); got != x.header.Get("Allow") {
			t.Errorf("%s: Allow %q, the document has %q", x, x.header.Get("Allow"), got)
		}
	}
}

func oaDocPath(path, id string) string {
	return strings.Replace(path, id, "{encounter_id}", 1)
}

// The validation above can fail: the same real responses, held to documents
// that each break one promise, are refused.
func TestOpenAPIValidationDetectsDrift(t *testing.T) {
	l := oaStart(t, nil)
	id := l.create(t, oaKeyA)
	health := l.do(t, http.MethodGet, "/v1/health", "", nil, nil)
	summary := l.do(t, http.MethodGet, "/v1/intakes/"+id, oaKeyA, nil, nil)
	doc := l.do(t, http.MethodGet, "/v1/openapi.yaml", oaKeyA, nil, nil)
	missing := l.do(t, http.MethodGet, "/v1/intakes/enc_00000000_0000000000000000", oaKeyA, nil, nil)

	raw := string(oaReadDocument(t))
	mutate := func(old, new string) *oaContract {
		t.Helper()
		if !strings.Contains(raw, old) {
			t.Fatalf("the document no longer contains %q", old)
		}
		return oaLoad(t, []byte(strings.Replace(raw, old, new, 1)))
	}
	mutateAfter := func(anchor, old, new string) *oaContract {
		t.Helper()
		i := strings.Index(raw, anchor)
		if i < 0 || !strings.Contains(raw[i:], old) {
			t.Fatalf("the document no longer contains %q after %q", old, anchor)
		}
		return oaLoad(t, []byte(raw[:i]+strings.Replace(raw[i:], old, new, 1)))
	}
	cases := []struct {
		name string
		c    *oaContract
		x    *oaExchange
	}{
		{"a field the health record lacks", mutate("required: [ok, release, build_sha]", "required: [ok, release, build_sha, uptime]"), health},
		{"a wrong field type", mutate("turn_count:\n          type: integer", "turn_count:\n          type: string"), summary},
		{"a release header shape", mutate(`pattern: "^.+\\+.+$"`, `pattern: "^never$"`), summary},
		{"another media type", mutate("application/yaml:\n              schema:", "text/yaml:\n              schema:"), doc},
		{"an undocumented status", mutateAfter("operationId: getIntake", `"404":`, `"418":`), missing},
	}
	for _, tc := range cases {
		req := tc.x.request(t)
		if ok, _ := tc.c.http.ValidateHttpResponse(req, tc.x.response(req)); ok {
			t.Errorf("%s: a document with %s still accepts %s", tc.name, tc.name, tc.x)
		}
		req = tc.x.request(t)
		if ok, errs := l.http.ValidateHttpResponse(req, tc.x.response(req)); !ok {
			t.Errorf("%s: the real document refuses %s:%s", tc.name, tc.x, oaDescribeAll(errs))
		}
	}
}

// The rules engine the binaries run: a whole conversation, blocking and
// streamed turns alternating, every response held to the document, so real
// clinical content (scores, facts, notes, provenance) is validated too.
func TestOpenAPIConformanceRulesEngine(t *testing.T) {
	eng, err := rules.New()
	if err != nil {
		t.Fatalf("rules engine: %v", err)
	}
	l := oaStart(t, func(c *sandbox.Config) { c.Engine = eng })
	x := l.do(t, http.MethodPost, "/v1/intakes", oaKeyA, map[string]any{
		"demographics":    map[string]any{"age_years": 30, "sex": "male"},
		"patient_history": "penicillin allergy",
	}, nil)
	l.expect(t, x, http.StatusCreated, "", true)
	var in struct {
		EncounterID string `json:"encounter_id"`
	}
	x.decode(t, &in)
	turns := "/v1/intakes/" + in.EncounterID + "/turns"

	script := []string{"I have a sore throat", "no", "no", "no", "No", "Yes", "No", "No", "1 to 2 days"}
	const maxTurns = 15 // the rules engine's longest path
	terminal := false
	for i := 0; i < maxTurns && !terminal; i++ {
		msg := "no"
		if i < len(script) {
			msg = script[i]
		}
		stream := i%2 == 1
		x := l.do(t, http.MethodPost, turns, oaKeyA, map[string]any{"message": msg, "stream": stream}, nil)
		var tr oaTurn
		if stream {
			events := l.expectStream(t, x)
			if err := json.Unmarshal(events[len(events)-1].data, &tr); err != nil {
				t.Fatalf("turn %d: %v", i+1, err)
			}
		} else {
			l.expect(t, x, http.StatusOK, "", true)
			x.decode(t, &tr)
		}
		terminal = tr.Terminal
		x = l.do(t, http.MethodGet, "/v1/intakes/"+in.EncounterID+"/handoff", oaKeyA, nil, nil)
		l.expect(t, x, http.StatusOK, "", true)
	}
	if !terminal {
		t.Fatalf("the sore-throat conversation did not end within %d turns", maxTurns)
	}
	x = l.do(t, http.MethodGet, "/v1/intakes/"+in.EncounterID, oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)

	// A red flag ends another intake at once.
	urgent := l.create(t, oaKeyA)
	_, tr := l.turn(t, oaKeyA, urgent, "I have crushing chest pain and I can't breathe", nil)
	x = l.do(t, http.MethodGet, "/v1/intakes/"+urgent+"/handoff", oaKeyA, nil, nil)
	l.expect(t, x, http.StatusOK, "", true)
	if !tr.Terminal || !tr.Urgent {
		t.Errorf("the red-flag message did not give the urgent terminal turn this test validates (terminal %v, urgent %v)", tr.Terminal, tr.Urgent)
	}
}
