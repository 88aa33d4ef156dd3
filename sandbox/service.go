// Package sandbox is an offline implementation of the Clinical Intake
// Service (docs/clinical-intake-service.md): every endpoint, status,
// error code, header, limit and stream event, with fault injection, in front
// of an engine.Engine. See README.md for the choices made where the spec is
// silent.
package sandbox

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/intakeservice"
	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// Service is the sandbox as an http.Handler. Its state lives in memory.
type Service struct {
	cfg      Config
	now      func() time.Time
	log      *slog.Logger
	identity engine.Identity
	release  string  // x-service-release value: <release>+<build>
	buildSHA *string // health's build_sha; nil when unknown
	commit   string  // provenance.source_commit

	keys map[string]string // sha256(key) hex -> tenant

	done      chan struct{} // closed by Close: running streams stop waiting
	closeOnce sync.Once

	mu        sync.Mutex
	intakes   map[string]*intake
	limits    map[string]*limits // by key hash
	idem      map[string]*idemEntry
	keyFaults map[string][]string // by key hash: armed fault kinds, oldest first
	requests  map[string]int      // by endpoint name
	runs      int                 // engine evaluations for turns
}

// intake is one encounter. Guarded by Service.mu.
type intake struct {
	id, owner string
	created   time.Time
	expires   time.Time
	closed    bool
	demo      engine.Demographics
	initial   engine.Result // the snapshot before any turn
	turns     []appliedTurn
	busy      bool     // a reply is still streaming (before message.completed)
	faults    []string // armed fault kinds, oldest first
}

type appliedTurn struct {
	patient  string
	result   engine.Result
	at       time.Time
	auditRef string
	latency  time.Duration
}

type idemEntry struct {
	encounterID string
	message     [32]byte
	body        []byte
	stored      time.Time
}

// Stats counts what the service has served, for tests that must prove a
// client made (or did not make) a call.
type Stats struct {
	Requests   map[string]int // by endpoint: health, create, turn, summary, handoff, openapi, faults
	EngineRuns int            // turns the engine was run for (replays and refused turns excluded)
}

// New checks cfg and returns the service.
func New(cfg Config) (*Service, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Service{
		cfg:       cfg,
		now:       cfg.Now,
		log:       cfg.Logger,
		identity:  cfg.Engine.Identity(),
		keys:      make(map[string]string, len(cfg.Keys)),
		done:      make(chan struct{}),
		intakes:   map[string]*intake{},
		limits:    map[string]*limits{},
		idem:      map[string]*idemEntry{},
		keyFaults: map[string][]string{},
		requests:  map[string]int{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, k := range cfg.Keys {
		h := hashKey(k)
		s.keys[h] = h[:8]
	}
	rev := vcsRevision()
	build := cfg.Build
	switch {
	case build != "":
	case rev != "":
		build = rev[:min(12, len(rev))]
	default:
		build = "dev"
	}
	s.release = cfg.Release + "+" + build
	s.commit = "devel"
	if rev != "" {
		s.buildSHA = strPtr(rev)
		s.commit = rev
	}
	return s, nil
}

// Close stops running streams from waiting; it does not close listeners.
func (s *Service) Close() { s.closeOnce.Do(func() { close(s.done) }) }

// Stats returns a copy of the counters.
func (s *Service) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := make(map[string]int, len(s.requests))
	for k, v := range s.requests {
		req[k] = v
	}
	return Stats{Requests: req, EngineRuns: s.runs}
}

// ServeHTTP routes a request. Every answer carries x-service-release, and
// every error is the spec's envelope.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(headerRelease, s.release)
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler { //nolint:errorlint // sentinel re-panicked as-is
				panic(v)
			}
			s.log.Error("sandbox handler panic", "panic", v, "path", r.URL.Path)
			writeError(w, &apiError{status: http.StatusInternalServerError, code: codeInternalError, message: "The gateway failed; retry once."})
		}
	}()
	name, id, methods := route(r.URL.Path)
	if name == "faults" && !s.cfg.Faults {
		name = ""
	}
	if name == "" {
		writeError(w, &apiError{status: http.StatusNotFound, code: codeNotFound, message: "No such endpoint: " + r.URL.Path})
		return
	}
	if r.Method != methods {
		w.Header().Set("Allow", methods)
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, code: codeMethodNotAllowed, message: r.URL.Path + " accepts " + methods + " only."})
		return
	}
	s.count(name)
	if name == "health" {
		writeJSON(w, http.StatusOK, intakeservice.Health{OK: true, Release: s.cfg.Release, BuildSHA: s.buildSHA})
		return
	}
	owner, aerr := s.authenticate(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if name != "faults" {
		if aerr := s.rateLimit(owner); aerr != nil {
			writeError(w, aerr)
			return
		}
	}
	switch name {
	case "create":
		s.create(w, r, owner)
	case "turn":
		s.turn(w, r, owner, id)
	case "summary":
		s.summary(w, owner, id)
	case "handoff":
		s.handoffRead(w, owner, id)
	case "openapi":
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(intakeservice.OpenAPI())
	case "faults":
		s.arm(w, r, owner)
	}
}

// route maps a path to an endpoint name, its encounter id and its method.
func route(path string) (name, id, method string) {
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return "", "", ""
	}
	switch rest {
	case "health":
		return "health", "", http.MethodGet
	case "intakes":
		return "create", "", http.MethodPost
	case "openapi.yaml":
		return "openapi", "", http.MethodGet
	case "sandbox/faults":
		return "faults", "", http.MethodPost
	}
	parts := strings.Split(rest, "/")
	if parts[0] != "intakes" || len(parts) < 2 || len(parts) > 3 || parts[1] == "" {
		return "", "", ""
	}
	if len(parts) == 2 {
		return "summary", parts[1], http.MethodGet
	}
	switch parts[2] {
	case "turns":
		return "turn", parts[1], http.MethodPost
	case "handoff":
		return "handoff", parts[1], http.MethodGet
	}
	return "", "", ""
}

func (s *Service) count(name string) {
	s.mu.Lock()
	s.requests[name]++
	s.mu.Unlock()
}

// authenticate returns the key's hash, which owns the key's intakes.
func (s *Service) authenticate(r *http.Request) (string, *apiError) {
	unauthorized := &apiError{status: http.StatusUnauthorized, code: codeUnauthorized, message: "A valid API key is required: Authorization: Bearer <key>."}
	scheme, key, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return "", unauthorized
	}
	// Looking the key up by its hash keeps the comparison independent of how
	// much of a guessed key matches.
	h := hashKey(strings.TrimSpace(key))
	if _, ok := s.keys[h]; !ok {
		return "", unauthorized
	}
	return h, nil
}

func (s *Service) rateLimit(owner string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	wait, ok := s.limitsOf(owner).allow(s.now(), s.cfg.RPM)
	if ok {
		return nil
	}
	return &apiError{status: http.StatusTooManyRequests, code: codeRateLimited, retryAfter: wait,
		message: "Too many requests in the last minute for this key; retry after the number of seconds in Retry-After."}
}

func (s *Service) limitsOf(owner string) *limits {
	l := s.limits[owner]
	if l == nil {
		l = &limits{}
		s.limits[owner] = l
	}
	return l
}

// lookup finds an intake of owner; another key's intake is not found.
func (s *Service) lookup(owner, id string) (*intake, *apiError) {
	in := s.intakes[id]
	if in == nil || in.owner != owner {
		return nil, errNotFound(id)
	}
	return in, nil
}

func (in *intake) status(now time.Time) string {
	switch {
	case in.closed:
		return "closed"
	case !now.Before(in.expires):
		return "expired"
	}
	return "open"
}

// read answers a read of owner's intake id with what body builds from it
// under the lock, or not_found.
func (s *Service) read(w http.ResponseWriter, owner, id string, body func(*intake) any) {
	s.mu.Lock()
	in, aerr := s.lookup(owner, id)
	var v any
	if aerr == nil {
		v = body(in)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Service) summary(w http.ResponseWriter, owner, id string) {
	s.read(w, owner, id, func(in *intake) any { return s.summaryOf(in) })
}

func (s *Service) summaryOf(in *intake) intakeservice.Summary {
	sum := intakeservice.Summary{
		EncounterID: in.id,
		Status:      intakeservice.State(in.status(s.now())),
		TurnCount:   len(in.turns),
		CreatedAt:   in.created,
		ExpiresAt:   in.expires,
	}
	if n := len(in.turns); n > 0 {
		last := in.turns[n-1].result
		sum.LastSafetyStatus = opt[intakeservice.SafetyStatus](last.SafetyStatus)
		sum.LastDisposition = opt[intakeservice.Disposition](last.Disposition)
	}
	return sum
}

func (s *Service) handoffRead(w http.ResponseWriter, owner, id string) {
	s.read(w, owner, id, func(in *intake) any { return s.handoff(in) })
}

// handoff builds the snapshot of in from its last applied turn. The caller
// holds s.mu.
func (s *Service) handoff(in *intake) intakeservice.Handoff {
	res, at := in.initial, in.created
	audit := "aud_" + in.id[len(in.id)-16:] + "_0"
	var latency time.Duration
	if n := len(in.turns); n > 0 {
		t := in.turns[n-1]
		res, at, audit, latency = t.result, t.at, t.auditRef, t.latency
	}
	conv := make([]intakeservice.Message, 0, 2*len(in.turns))
	for _, t := range in.turns {
		conv = append(conv, intakeservice.Message{Role: intakeservice.RolePatient, Text: t.patient}, intakeservice.Message{Role: intakeservice.RoleAssistant, Text: t.result.Reply})
	}
	scores := make([]intakeservice.Score, 0, len(res.Scores))
	for _, sc := range res.Scores {
		scores = append(scores, intakeservice.Score{Key: sc.Key, Total: sc.Total, Band: intakeservice.Band(sc.Band), Components: sc.Components})
	}
	id := s.identity
	lat, count := float64(latency.Milliseconds()), float64(id.ProtocolCount)
	return intakeservice.Handoff{
		EncounterID:        in.id,
		CapturedAt:         at,
		Terminal:           in.status(s.now()) != "open",
		Urgent:             res.Urgent,
		IntakeStatus:       opt[intakeservice.IntakeStatus](res.IntakeStatus),
		SafetyStatus:       opt[intakeservice.SafetyStatus](res.SafetyStatus),
		SafetyNotes:        nonNil(res.SafetyNotes),
		Disposition:        opt[intakeservice.Disposition](res.Disposition),
		DispositionLabel:   optStr(res.DispositionLabel),
		SOAP:               intakeservice.SOAP{Subjective: res.SOAP.Subjective, Objective: res.SOAP.Objective, Assessment: res.SOAP.Assessment, Plan: res.SOAP.Plan},
		CapturedFacts:      intakeservice.CapturedFacts{Age: res.Facts.Age, Sex: res.Facts.Sex, Pregnancy: res.Facts.Pregnancy},
		ActiveProtocol:     optStr(res.ActiveProtocol),
		CandidateProtocols: nonNil(res.CandidateProtocols),
		Scores:             scores,
		Conversation:       conv,
		Provenance: intakeservice.Provenance{
			Release:        strPtr(s.cfg.Release),
			ServerModel:    optStr(id.ServerModel),
			PromptHash:     optStr(id.PromptHash),
			SourceCommit:   strPtr(s.commit),
			DirectoryHash:  optStr(id.DirectoryHash),
			RuntimeProfile: optStr(id.RuntimeProfile),
			PromptProfile:  optStr(id.PromptProfile),
			VoiceProfile:   optStr(id.VoiceProfile),
			AuditRef:       strPtr(audit),
			LatencyMS:      &lat,
			ProtocolCount:  &count,
		},
	}
}

func hashKey(k string) string {
	sum := sha256.Sum256([]byte(k))
	return hex.EncodeToString(sum[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func vcsRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}

// Key returns the first accepted key, for a process that embeds the sandbox
// and generated it.
func (s *Service) Key() string { return s.cfg.Keys[0] }
