package intakeapi

import (
	"github.com/clinical-intake/intake-web/bff"

	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/clinical-intake/intake-web/intakeservice"
)

// Wire names and limits of the spec.
const (
	headerRelease        = "x-service-release"
	headerReplay         = "x-service-idempotent-replay"
	headerIdempotencyKey = "Idempotency-Key"

	MaxMessageChars = 8000
	MaxHistoryChars = 4000
	MaxAgeYears     = 130
	MaxBodyBytes    = 64 << 10
	// MaxIdempotencyKeyLen follows the sandbox (the spec does not say).
	MaxIdempotencyKeyLen = 255

	maxResponseBytes = 16 << 20
)

// Client is the typed client of the Clinical Intake Service. It is safe for
// concurrent use. Every HTTP attempt waits in the configured Gate first.
type Client struct {
	base    string
	key     string
	hc      *http.Client
	gate    Gate
	log     *slog.Logger
	cfg     Config // with defaults, for timeouts and retry limits
	release atomic.Pointer[string]
}

// New returns a Client for cfg, or an error naming what is wrong with it (the
// key is never part of that error).
func New(cfg Config) (*Client, error) {
	c, err := newClient(cfg)
	if err != nil && cfg.APIKey != "" {
		err = errors.New(strings.ReplaceAll(err.Error(), cfg.APIKey, RedactKey(cfg.APIKey)))
	}
	return c, err
}

func newClient(cfg Config) (*Client, error) {
	base, err := parseBase(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.BaseURL = base
	gate := cfg.Gate
	if gate == nil {
		gate = &pauseGate{}
	}
	return &Client{base: base, key: cfg.APIKey, hc: cfg.HTTPClient, gate: gate, log: cfg.Logger, cfg: cfg}, nil
}

func (c *Client) String() string {
	return fmt.Sprintf("intakeapi.Client{BaseURL: %q, APIKey: %s}", c.base, RedactKey(c.key))
}

// GoString keeps %#v from printing the key.
func (c *Client) GoString() string { return c.String() }

// LogValue keeps slog from printing the key.
func (c *Client) LogValue() slog.Value {
	return slog.GroupValue(slog.String("base_url", c.base), slog.String("api_key", RedactKey(c.key)))
}

// TurnTimeout is the timeout of one turn attempt (at least 240 s).
func (c *Client) TurnTimeout() time.Duration { return c.cfg.TurnTimeout }

// ReadTimeout is the timeout of one attempt of every other call.
func (c *Client) ReadTimeout() time.Duration { return c.cfg.ReadTimeout }

// Release is the x-service-release of the latest response, "" before any.
func (c *Client) Release() string {
	if p := c.release.Load(); p != nil {
		return *p
	}
	return ""
}

// Health reads GET /v1/health (sent without the key).
func (c *Client) Health(ctx context.Context) (*Health, Meta, error) {
	var h Health
	meta, err := c.getJSON(ctx, request{op: OpHealth, method: http.MethodGet, path: "/v1/health"}, &h)
	if err != nil {
		return nil, meta, err
	}
	return &h, meta, nil
}

// CreateIntake creates an intake (POST /v1/intakes). A request breaking the
// spec's rules is refused locally with CodeInvalidRequest, spending nothing.
// A retry after a 5xx may leave an empty intake behind; the spec says to use
// the newest encounter_id, which is the one returned.
func (c *Client) CreateIntake(ctx context.Context, in NewIntake) (*Intake, Meta, error) {
	body, err := in.marshal()
	if err != nil {
		return nil, Meta{}, err
	}
	var out Intake
	meta, err := c.getJSON(ctx, request{op: OpCreateIntake, method: http.MethodPost, path: "/v1/intakes", body: body, auth: true}, &out)
	if err != nil {
		return nil, meta, err
	}
	return &out, meta, nil
}

func (in NewIntake) marshal() ([]byte, error) {
	var w intakeservice.CreateIntakeRequest
	if in.AgeYears != nil && (*in.AgeYears < 0 || *in.AgeYears > MaxAgeYears) {
		return nil, localError("age_years must be 0 to %d (got %d)", MaxAgeYears, *in.AgeYears)
	}
	switch in.Sex {
	case "", SexFemale, SexMale, SexIntersex:
	default:
		return nil, localError("sex must be one of female, male, intersex")
	}
	if n := utf8.RuneCountInString(in.PatientHistory); n > MaxHistoryChars {
		return nil, localError("patient_history must be at most %d characters (got %d)", MaxHistoryChars, n)
	}
	if in.AgeYears != nil || in.Sex != "" {
		w.Demographics = &intakeservice.Demographics{AgeYears: in.AgeYears, Sex: in.Sex}
	}
	w.PatientHistory = in.PatientHistory
	return json.Marshal(w)
}

// Turn sends one patient message as a blocking turn. idempotencyKey ties
// retries and resubmissions to one engine run: the same key returns the
// stored turn (Meta.Replayed) without using quota. An empty key gets a random
// one (returned in Meta.IdempotencyKey) so the client's own retries stay safe.
//
// Retries: a 502 and a 500 once each with the same key, a 503 with backoff,
// rate_limited after Retry-After. A turn answer without its state fields
// (Turn.NeedsReconcile) is returned as is: do not resend it.
func (c *Client) Turn(ctx context.Context, encounterID, message, idempotencyKey string) (*Turn, Meta, error) {
	path, body, err := turnRequest(encounterID, message, false)
	if err != nil {
		return nil, Meta{}, err
	}
	if idempotencyKey == "" {
		idempotencyKey = newIdempotencyKey()
	} else if err := checkIdempotencyKey(idempotencyKey); err != nil {
		return nil, Meta{}, err
	}
	h := http.Header{}
	h.Set(headerIdempotencyKey, idempotencyKey)
	var t Turn
	meta, err := c.getJSON(ctx, request{op: OpTurn, method: http.MethodPost, path: path, body: body, header: h, auth: true}, &t)
	meta.IdempotencyKey = idempotencyKey
	if err != nil {
		return nil, meta, err
	}
	return &t, meta, nil
}

// StreamTurn sends one patient message as a streaming turn and returns the
// open stream once the service answered 200. An HTTP error before the stream
// starts is an *Error; only rate_limited is retried (it is refused before any
// processing). Nothing else is retried: after a failure the caller reads the
// handoff to learn whether the turn landed (docs/architecture.md: reconcile, never guess).
func (c *Client) StreamTurn(ctx context.Context, encounterID, message string) (*TurnStream, error) {
	path, body, err := turnRequest(encounterID, message, true)
	if err != nil {
		return nil, err
	}
	r := request{op: OpStreamTurn, method: http.MethodPost, path: path, body: body, auth: true, stream: true}
	resp, cancel, meta, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	return newTurnStream(c, resp, cancel, meta), nil
}

// Summary reads the status summary of an intake.
func (c *Client) Summary(ctx context.Context, encounterID string) (*Summary, Meta, error) {
	if err := checkEncounterID(encounterID); err != nil {
		return nil, Meta{}, err
	}
	var s Summary
	meta, err := c.getJSON(ctx, request{op: OpSummary, method: http.MethodGet, path: "/v1/intakes/" + url.PathEscape(encounterID), auth: true}, &s)
	if err != nil {
		return nil, meta, err
	}
	return &s, meta, nil
}

// Handoff reads the handoff of an intake in any state. Reconciliation reads
// should carry WithPriority(ctx, PriorityReconciliation).
func (c *Client) Handoff(ctx context.Context, encounterID string) (*Handoff, Meta, error) {
	if err := checkEncounterID(encounterID); err != nil {
		return nil, Meta{}, err
	}
	var h Handoff
	meta, err := c.getJSON(ctx, request{op: OpHandoff, method: http.MethodGet, path: "/v1/intakes/" + url.PathEscape(encounterID) + "/handoff", auth: true}, &h)
	if err != nil {
		return nil, meta, err
	}
	return &h, meta, nil
}

func turnRequest(encounterID, message string, stream bool) (string, []byte, error) {
	if err := checkEncounterID(encounterID); err != nil {
		return "", nil, err
	}
	if n := utf8.RuneCountInString(message); n < 1 || n > MaxMessageChars {
		return "", nil, localError("message must be 1 to %d characters (got %d)", MaxMessageChars, n)
	}
	body, err := json.Marshal(intakeservice.TurnRequest{Message: message, Stream: stream})
	if err != nil {
		return "", nil, err
	}
	if len(body) > MaxBodyBytes {
		return "", nil, localError("request body is %d bytes, over the %d byte limit", len(body), MaxBodyBytes)
	}
	return "/v1/intakes/" + url.PathEscape(encounterID) + "/turns", body, nil
}

func checkEncounterID(id string) error {
	if id == "" {
		return localError("encounter id is empty")
	}
	return nil
}

func checkIdempotencyKey(k string) error {
	if len(k) > MaxIdempotencyKeyLen {
		return localError("Idempotency-Key is longer than %d characters", MaxIdempotencyKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] >= 0x7f {
			return localError("Idempotency-Key must be printable ASCII without spaces")
		}
	}
	return nil
}

func newIdempotencyKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "ik_" + hex.EncodeToString(b[:])
}

func localError(format string, a ...any) *Error {
	return &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf(format, a...)}
}

// request is one logical call; do may send it several times.
type request struct {
	op     Op
	method string
	path   string
	body   []byte
	header http.Header
	auth   bool
	stream bool
}

func (c *Client) getJSON(ctx context.Context, r request, v any) (Meta, error) {
	body, meta, err := c.send(ctx, r)
	if err != nil {
		return meta, err
	}
	if err := json.Unmarshal(body, v); err != nil {
		// A 2xx we cannot read: the call may have taken effect.
		return meta, &transportError{kind: ErrTransport, op: r.op, cause: err, text: "undecodable " + string(r.op) + " response: " + c.redact(err.Error())}
	}
	return meta, nil
}

// send runs a non-streaming call to completion and returns its 2xx body.
func (c *Client) send(ctx context.Context, r request) ([]byte, Meta, error) {
	resp, cancel, meta, err := c.do(ctx, r)
	if err != nil {
		return nil, meta, err
	}
	defer cancel()
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, meta, c.transport(ErrTransport, r.op, err)
	}
	return body, meta, nil
}

// do sends r, retrying per the spec's Errors table, and returns the first 2xx
// response with its body unread; cancel ends the attempt's timeout context and
// must be called once the body is done with. Every attempt waits in the Gate;
// its release is called as soon as the status is known.
func (c *Client) do(ctx context.Context, r request) (resp *http.Response, cancel context.CancelFunc, meta Meta, err error) {
	var (
		tries   = map[int]int{} // retries made per HTTP status
		lastErr *Error
	)
	timeout := c.cfg.ReadTimeout
	if r.op.IsTurn() {
		timeout = c.cfg.TurnTimeout
	}
	for attempt := 1; ; attempt++ {
		meta.Attempts = attempt
		var (
			release func(Outcome)
			werr    error
		)
		if attempt == 1 {
			release = takeGrant(ctx, r.op) // waited for already (Queue)
		}
		if release == nil {
			release, werr = c.gate.Wait(ctx, callFor(ctx, r.op, attempt))
		}
		if werr != nil {
			if lastErr != nil {
				return nil, nil, meta, fmt.Errorf("%w; retry not sent: %w", lastErr, werr)
			}
			return nil, nil, meta, werr
		}
		actx, acancel := context.WithTimeout(ctx, timeout)
		req, rerr := c.newRequest(actx, r)
		if rerr != nil {
			acancel()
			release(Outcome{NotSent: true})
			return nil, nil, meta, rerr
		}
		start := time.Now()
		resp, herr := c.hc.Do(req)
		if herr != nil {
			acancel()
			release(Outcome{})
			c.observe(Observation{Op: r.op, Elapsed: time.Since(start)})
			c.log.LogAttrs(ctx, slog.LevelWarn, "intakeapi: no response", slog.String("op", string(r.op)), slog.Int("attempt", attempt), slog.String("err", c.redact(herr.Error())), slog.String("request_id", RequestID(ctx)))
			return nil, nil, meta, c.transport(ErrTransport, r.op, herr)
		}
		meta.Status = resp.StatusCode
		meta.Release = resp.Header.Get(headerRelease)
		if meta.Release != "" {
			c.release.Store(&meta.Release)
		}
		c.log.LogAttrs(ctx, slog.LevelDebug, "intakeapi: response", slog.String("op", string(r.op)), slog.Int("attempt", attempt),
			slog.Int("status", resp.StatusCode), slog.String("release", meta.Release), slog.Duration("elapsed", time.Since(start)),
			slog.String("request_id", RequestID(ctx)))
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			c.observe(Observation{Op: r.op, Status: resp.StatusCode, Elapsed: time.Since(start)})
			meta.Replayed = strings.EqualFold(resp.Header.Get(headerReplay), "true")
			release(Outcome{Status: resp.StatusCode, Replayed: meta.Replayed})
			return resp, acancel, meta, nil
		}
		apiErr := c.readError(resp)
		resp.Body.Close()
		acancel()
		c.observe(Observation{Op: r.op, Status: apiErr.Status, Code: apiErr.Code, Elapsed: time.Since(start)})
		release(Outcome{Status: apiErr.Status, Code: apiErr.Code, RetryAfter: apiErr.RetryAfter})
		lastErr = apiErr
		delay, retry := c.retryAfter(ctx, r, apiErr, tries)
		if !retry {
			return nil, nil, meta, apiErr
		}
		tries[apiErr.Status]++
		c.log.LogAttrs(ctx, slog.LevelWarn, "intakeapi: retrying", slog.String("op", string(r.op)), slog.Int("attempt", attempt),
			slog.Int("status", apiErr.Status), slog.String("code", string(apiErr.Code)), slog.Duration("delay", delay))
		if delay > 0 {
			// A 503's back-off is a wait the service asked for: a caller
			// shown its wait is told it (the Gate's wait comes after).
			if fn, ok := ctx.Value(progressKey).(func(Progress)); ok {
				fn(Progress{Position: 1, Wait: delay, Paused: true})
			}
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, nil, meta, fmt.Errorf("%w; retry abandoned: %w", apiErr, ctx.Err())
			case <-t.C:
			}
		}
	}
}

// retryAfter applies the spec's Errors table: it reports whether e may be
// retried and how long to sleep first. rate_limited needs no sleep here: the
// Gate holds every call until Retry-After has passed.
func (c *Client) retryAfter(ctx context.Context, r request, e *Error, tries map[int]int) (time.Duration, bool) {
	fits := func(d time.Duration) bool {
		dl, ok := ctx.Deadline()
		return !ok || time.Now().Add(d).Before(dl)
	}
	if e.Status == http.StatusTooManyRequests {
		if e.Code == CodeQuotaExceeded || (e.Code != CodeRateLimited && e.RetryAfter == 0) {
			return 0, false
		}
		return 0, tries[429] < c.cfg.MaxRateLimitRetries && fits(e.RetryAfter)
	}
	if r.stream {
		return 0, false // the caller reconciles first
	}
	switch e.Status {
	case http.StatusBadGateway, http.StatusInternalServerError:
		return 0, tries[e.Status] < 1
	case http.StatusServiceUnavailable:
		n := tries[e.Status]
		if n >= c.cfg.MaxUnavailableRetries {
			return 0, false
		}
		d := max(e.RetryAfter, c.backoff(n))
		return d, fits(d)
	}
	return 0, false
}

// backoff is exponential with "equal jitter": half fixed, half random, so
// retries of many callers spread out but never fire immediately.
func (c *Client) backoff(n int) time.Duration {
	d := c.cfg.BackoffBase << min(n, 20)
	if d <= 0 || d > c.cfg.BackoffMax {
		d = c.cfg.BackoffMax
	}
	return d/2 + rand.N(d/2+1)
}

func (c *Client) newRequest(ctx context.Context, r request) (*http.Request, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.base+r.path, body)
	if err != nil {
		return nil, errors.New(c.redact(err.Error()))
	}
	// Without GetBody net/http cannot replay the POST by itself (it would
	// for a request carrying Idempotency-Key on a reused connection that
	// broke), so every attempt is one the Gate saw and counted.
	req.GetBody = nil
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if id := RequestID(ctx); id != "" {
		req.Header.Set("X-Request-Id", id)
	}
	if r.auth {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	return req, nil
}

// readError turns an error response into an *Error, whatever its body.
func (c *Client) readError(resp *http.Response) *Error {
	e := &Error{
		Status:     resp.StatusCode,
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		Release:    resp.Header.Get(headerRelease),
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var env ErrorEnvelope
	if jerr := json.Unmarshal(body, &env); jerr == nil && env.Error.Code != "" {
		e.Code = env.Error.Code
		e.Message = c.redact(env.Error.Message)
		e.EncounterID = env.Error.EncounterID
		if e.Code == CodeRateLimited && e.RetryAfter == 0 {
			// The spec promises Retry-After here; without one, retrying at
			// once would only be refused again.
			e.RetryAfter = time.Second
		}
		return e
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "" {
		ct = "no content type"
	}
	e.Message = fmt.Sprintf("the response was not an error envelope (%s, %d bytes)", ct, len(body))
	if err != nil {
		e.Message += "; reading it failed: " + c.redact(err.Error())
	}
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP date; anything else is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func (c *Client) transport(kind error, op Op, cause error) error {
	return &transportError{kind: kind, op: op, cause: cause, text: c.redact(cause.Error())}
}

// redact removes the key from text that may echo it (a server message, a
// transport error); belt and braces, as nothing should contain it.
func (c *Client) redact(s string) string {
	if c.key == "" || !strings.Contains(s, c.key) {
		return s
	}
	return strings.ReplaceAll(s, c.key, RedactKey(c.key))
}

// Observation is one HTTP attempt, reported to Config.Observer for metrics.
type Observation struct {
	Op      Op
	Status  int  // 0 when no answer came
	Code    Code // the error envelope's code, if any
	Elapsed time.Duration
}

func (c *Client) observe(o Observation) {
	if c.cfg.Observer != nil {
		c.cfg.Observer(o)
	}
}

// WithRequestID returns a context whose calls carry id as X-Request-Id (and
// in the client's log lines), tying upstream calls to the request that
// caused them.
func WithRequestID(ctx context.Context, id string) context.Context {
	return bff.WithRequestID(ctx, id)
}

// RequestID returns the request id set by WithRequestID, or "".
func RequestID(ctx context.Context) string { return bff.RequestID(ctx) }
