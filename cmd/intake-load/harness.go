package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
	"github.com/clinical-intake/intake-web/web"
)

// apiKey is the sandbox key of every run (a made-up key of the sandbox shape).
const apiKey = "cis_sb_10ad10ad10ad10ad10ad10ad10ad10ad"

// stack is one sandbox and one app in front of it, both in this process on
// loopback ports. The sandbox is served through a recorder that stamps every
// event it writes, per encounter.
type stack struct {
	sb     *sandbox.Service
	sbURL  string
	sbHTTP *http.Server
	rec    *recorder
	app    *app.App   // apps[0]
	apps   []*app.App // every replica, sharing dbURL when more than one
	dbURL  string     // PostgreSQL, when the stack has one
	pgDir  string     // the throwaway cluster's directory, stopped by Close
	pgStop string     // the script that stops it
	dir    string
	logs   *countingHandler
	offset atomic.Int64 // added to the sandbox's clock (pacing: verification reads)

	// The app's store, read to map its intake ids to encounters (encounter).
	lookupOnce sync.Once
	lookupMu   sync.Mutex
	lookupDB   *sqlite.DB
	lookupPG   *pgx.Conn
	lookupErr  error
	closeMu    sync.Once
}

type stackConfig struct {
	rpm, turnsPerDay, intakesPerDay int           // sandbox limits; 0 = none
	fragmentDelay, firstToken       time.Duration // sandbox pace
	pacerPerMinute                  int           // app pacer; negative = none
	appTurnsPerDay, appIntakesDay   int           // app quotas; negative = none
	verbose                         bool
	// replicas is how many apps to open (0 or 1: one, on SQLite); more than
	// one share databaseURL, or a throwaway cluster when it is empty.
	replicas    int
	databaseURL string
	// upstream, when set, is a sandbox in another process: the stack
	// starts only the app(s), streaming from it. sandboxOnly starts only
	// the sandbox. The held phase uses both, so the app's process holds
	// nothing of the sandbox's.
	upstream    string
	sandboxOnly bool
}

func startStack(ctx context.Context, sc stackConfig) (*stack, error) {
	eng, err := rules.New()
	if err != nil {
		return nil, fmt.Errorf("rules engine: %w", err)
	}
	st := &stack{rec: newRecorder()}
	if sc.upstream != "" {
		st.sbURL = sc.upstream
		return st, st.openApps(ctx, sc)
	}
	cfg := sandbox.DefaultConfig()
	cfg.Keys = []string{apiKey}
	cfg.Engine = eng
	cfg.RPM, cfg.TurnsPerDay, cfg.IntakesPerDay = sc.rpm, sc.turnsPerDay, sc.intakesPerDay
	cfg.FragmentDelay, cfg.FirstTokenDelay = sc.fragmentDelay, sc.firstToken
	cfg.Now = func() time.Time { return time.Now().Add(time.Duration(st.offset.Load())) }
	// sandbox.Start serves the bare Service; this is the same server (an
	// http.Server on a 127.0.0.1 port, no write timeout) with the recorder
	// in front, as sandbox/bench_test.go does.
	svc, err := sandbox.New(cfg)
	if err != nil {
		return nil, err
	}
	st.sb = svc
	st.rec.next = svc
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	st.sbURL = "http://" + ln.Addr().String()
	st.sbHTTP = &http.Server{Handler: st.rec, ReadHeaderTimeout: 10 * time.Second, Protocols: sandbox.Protocols()}
	go func() { _ = st.sbHTTP.Serve(ln) }()
	if sc.sandboxOnly {
		return st, nil
	}
	return st, st.openApps(ctx, sc)
}

// openApps opens the stack's app replicas on st.sbURL.
func (st *stack) openApps(ctx context.Context, sc stackConfig) error {
	var err error
	if st.dir, err = os.MkdirTemp("", "intake-load-*"); err != nil {
		st.Close()
		return err
	}
	var out io.Writer = io.Discard
	if sc.verbose {
		out = os.Stderr
	}
	st.logs = &countingHandler{next: slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}), c: &logCounts{}}
	n := max(sc.replicas, 1)
	if n > 1 || sc.databaseURL != "" {
		if st.dbURL = sc.databaseURL; st.dbURL == "" {
			if st.dbURL, err = st.startCluster(ctx); err != nil {
				st.Close()
				return err
			}
		}
	}
	for i := range n {
		cfg := app.Config{
			Config: web.Config{ListenAddr: "127.0.0.1:0", Embedded: true, Logger: slog.New(st.logs).With("replica", i),
				// Every load client comes from 127.0.0.1 (the cap per address
				// would refuse the thousand sessions it starts), and the render
				// scenario writes a 40-turn conversation in seconds: the caps
				// per session and address are lifted for load runs.
				Limits: web.Limits{IntakesPerHourPerAddress: 1 << 20, TurnsPerMinute: 1 << 20, MaxConnections: 1 << 20}},
			DatabasePath:   filepath.Join(st.dir, "app.db"),
			DatabaseURL:    st.dbURL,
			ReplicaName:    fmt.Sprintf("load-%d", i),
			UpstreamURL:    st.sbURL,
			APIKey:         apiKey,
			PacerPerMinute: sc.pacerPerMinute,
			TurnsPerDay:    sc.appTurnsPerDay,
			IntakesPerDay:  sc.appIntakesDay,
			ShutdownGrace:  5 * time.Second,
		}
		a, err := app.Open(ctx, cfg)
		if err != nil {
			st.Close()
			return fmt.Errorf("open replica %d: %w", i, err)
		}
		st.apps = append(st.apps, a)
	}
	st.app = st.apps[0]
	return nil
}

// Close stops the app and the sandbox (cutting open streams) and removes the
// database.
func (st *stack) Close() {
	st.closeMu.Do(func() {
		if st.lookupDB != nil {
			_ = st.lookupDB.Close()
		}
		if st.lookupPG != nil {
			_ = st.lookupPG.Close(context.Background())
		}
		for _, a := range st.apps {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = a.Shutdown(ctx)
			cancel()
		}
		if st.sb != nil {
			st.sb.Close()
		}
		if st.sbHTTP != nil {
			_ = st.sbHTTP.Close()
		}
		if st.pgDir != "" {
			_ = exec.Command(st.pgStop, "stop", st.pgDir).Run()
		}
		if st.dir != "" {
			_ = os.RemoveAll(st.dir)
		}
	})
}

// startCluster starts a throwaway PostgreSQL cluster with scripts/pg-cluster
// (found from the working directory up) and
// returns the URL of a fresh database in it; Close stops it and removes
// its directory.
func (st *stack) startCluster(ctx context.Context) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if script := filepath.Join(dir, "scripts", "pg-cluster"); fileExists(script) {
			st.pgStop = script
			break
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no scripts/pg-cluster above %s: run from the repository or pass -database-url", wd)
		}
	}
	// Its own directory, not under st.dir: pg-cluster hands it to the
	// postgres user, who cannot enter st.dir (0700, ours).
	if st.pgDir, err = os.MkdirTemp("", "intake-load-pg-*"); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, st.pgStop, "start", st.pgDir).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("pg-cluster start: %w", err)
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "INTAKE_TEST_DATABASE_URL=")
	if !ok {
		return "", fmt.Errorf("pg-cluster start printed %q", out)
	}
	// The cluster's admin database is "postgres"; the app gets its own.
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", fmt.Errorf("connect to the cluster: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE intake_load TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("create the database: %w", err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", err
	}
	u.Path = "/intake_load"
	return u.String(), nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ---- the recorder in front of the sandbox ----

// write is one message.delta the sandbox wrote: when, and its text.
type write struct {
	at   time.Time
	text string
}

// recorder wraps the sandbox handler: it stamps each message.delta written
// on a turn stream (per encounter, per turn request) and counts statuses.
type recorder struct {
	next http.Handler

	mu       sync.Mutex
	turns    map[string][][]write // encounter id -> one slice per turn request
	statuses map[int]int
	posts    []post // creates and turns, in arrival order
}

// post is one create or turn request the sandbox received.
type post struct {
	at     time.Time
	op     string // "create" or "turn"
	status int
}

func newRecorder() *recorder {
	return &recorder{turns: map[string][][]write{}, statuses: map[int]int{}}
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	sw := &stampWriter{ResponseWriter: w, rec: r, idx: -1}
	at, op := time.Now(), ""
	if req.Method == http.MethodPost && req.URL.Path == "/v1/intakes" {
		op = "create"
	}
	if id, ok := strings.CutSuffix(strings.TrimPrefix(req.URL.Path, "/v1/intakes/"), "/turns"); ok && req.Method == http.MethodPost {
		r.mu.Lock()
		r.turns[id] = append(r.turns[id], nil)
		sw.id, sw.idx = id, len(r.turns[id])-1
		r.mu.Unlock()
		op = "turn"
	}
	r.next.ServeHTTP(sw, req)
	if !sw.wrote {
		sw.status(http.StatusOK)
	}
	if op != "" {
		r.mu.Lock()
		r.posts = append(r.posts, post{at: at, op: op, status: sw.code})
		r.mu.Unlock()
	}
}

// postLog returns the creates and turns received, by arrival time.
func (r *recorder) postLog() []post {
	r.mu.Lock()
	defer r.mu.Unlock()
	ps := slices.Clone(r.posts)
	slices.SortFunc(ps, func(a, b post) int { return a.at.Compare(b.at) })
	return ps
}

// encounters returns the ids of the encounters that received turns.
func (r *recorder) encounters() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.turns))
}

// deltas returns the delta writes of an encounter's turn requests.
func (r *recorder) deltas(id string) [][]write {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.turns[id]
}

func (r *recorder) statusCounts() map[int]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := make(map[int]int, len(r.statuses))
	for k, v := range r.statuses {
		m[k] = v
	}
	return m
}

type stampWriter struct {
	http.ResponseWriter
	rec   *recorder
	id    string
	idx   int
	wrote bool
	code  int
}

var deltaPrefix = []byte("event: message.delta\n")

func (w *stampWriter) status(code int) {
	w.wrote, w.code = true, code
	w.rec.mu.Lock()
	w.rec.statuses[code]++
	w.rec.mu.Unlock()
}

func (w *stampWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *stampWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	if w.idx >= 0 && bytes.HasPrefix(b, deltaPrefix) {
		at := time.Now()
		text := deltaText(b[len(deltaPrefix):])
		w.rec.mu.Lock()
		w.rec.turns[w.id][w.idx] = append(w.rec.turns[w.id][w.idx], write{at: at, text: text})
		w.rec.mu.Unlock()
	}
	return n, err
}

func (w *stampWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// deltaText decodes the text of a "data: {...}" line of a delta event.
func deltaText(b []byte) string {
	b, _ = bytes.CutPrefix(b, []byte("data: "))
	var d struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &d); err != nil {
		return "\x00undecodable"
	}
	return d.Text
}

// ---- counting the app's warnings and errors ----

type logCounts struct {
	mu     sync.Mutex
	warn   int
	errs   int
	sample []string
}

type countingHandler struct {
	next slog.Handler
	c    *logCounts
}

func (h *countingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn
}

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	h.c.mu.Lock()
	if r.Level >= slog.LevelError {
		h.c.errs++
	} else {
		h.c.warn++
	}
	if len(h.c.sample) < 5 {
		h.c.sample = append(h.c.sample, r.Level.String()+" "+r.Message)
	}
	h.c.mu.Unlock()
	return h.next.Handle(ctx, r)
}

func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &countingHandler{next: h.next.WithAttrs(as), c: h.c}
}

func (h *countingHandler) WithGroup(name string) slog.Handler {
	return &countingHandler{next: h.next.WithGroup(name), c: h.c}
}

func (st *stack) logSummary() (warn, errs int, sample []string) {
	st.logs.c.mu.Lock()
	defer st.logs.c.mu.Unlock()
	return st.logs.c.warn, st.logs.c.errs, append([]string(nil), st.logs.c.sample...)
}

// ---- browsers ----

// newTransport is the client side of every browser: no per-host limit, and
// enough idle connections that each browser keeps its own.
func newTransport(n int) *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxConnsPerHost:     0,
		MaxIdleConns:        n + 16,
		MaxIdleConnsPerHost: n + 16,
		IdleConnTimeout:     2 * time.Minute,
	}
}

// browser is one patient: a cookie jar (one session) and its CSRF token.
type browser struct {
	base *url.URL
	jar  http.CookieJar
	hc   *http.Client
	csrf string
}

// openIntakes makes n browsers of the app at base, workers at a time, each
// with an intake started: the setup of every phase that holds streams.
func openIntakes(ctx context.Context, base string, tr http.RoundTripper, n, workers int) ([]*browser, []string, error) {
	browsers := make([]*browser, n)
	intakes := make([]string, n)
	err := forEach(ctx, n, workers, func(ctx context.Context, i int) error {
		b, err := newBrowser(base, tr)
		if err != nil {
			return err
		}
		browsers[i] = b
		intakes[i], err = b.start(ctx)
		return err
	})
	return browsers, intakes, err
}

func newBrowser(base string, tr http.RoundTripper) (*browser, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	jar, _ := cookiejar.New(nil)
	return &browser{base: u, jar: jar, hc: &http.Client{
		Jar: jar, Transport: tr, Timeout: 15 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

var csrfMeta = regexp.MustCompile(`name="csrf-token" content="([0-9a-f]+)"`)

func (b *browser) do(ctx context.Context, method, path string, body io.Reader, hdr ...string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, b.base.String()+path, body)
	if err != nil {
		return nil, nil, err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := b.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return res, data, err
}

// start opens the start page (the session and its token) and creates an
// intake through the form; it returns the intake's path.
func (b *browser) start(ctx context.Context) (string, error) {
	res, page, err := b.do(ctx, http.MethodGet, "/", nil)
	if err != nil {
		return "", fmt.Errorf("start page: %w", err)
	}
	m := csrfMeta.FindSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil {
		return "", fmt.Errorf("start page: %d, csrf meta found %v", res.StatusCode, m != nil)
	}
	b.csrf = string(m[1])
	form := url.Values{"_csrf": {b.csrf}, "synthetic": {"on"}, "submission_id": {"s-" + randomID()}}
	res, page, err = b.do(ctx, http.MethodPost, "/intakes", strings.NewReader(form.Encode()),
		"Content-Type", "application/x-www-form-urlencoded")
	if err != nil {
		return "", fmt.Errorf("create intake: %w", err)
	}
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/intakes/") {
		return "", fmt.Errorf("create intake: %d %q %.200s", res.StatusCode, loc, page)
	}
	return loc, nil
}

// sendTurn posts a message the way the page script does and returns the
// turn's events URL.
func (b *browser) sendTurn(ctx context.Context, intake, message string) (string, error) {
	form := url.Values{"message": {message}, "submission_id": {"t-" + randomID()}}
	res, body, err := b.do(ctx, http.MethodPost, intake+"/turns", strings.NewReader(form.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json", "X-CSRF-Token", b.csrf)
	if err != nil {
		return "", fmt.Errorf("send turn: %w", err)
	}
	var r struct {
		EventsURL string `json:"events_url"`
	}
	if res.StatusCode != http.StatusAccepted || json.Unmarshal(body, &r) != nil || r.EventsURL == "" {
		return "", fmt.Errorf("send turn: %d %.200s", res.StatusCode, body)
	}
	return r.EventsURL, nil
}

// cookieHeader is what the browser would send to the app.
func (b *browser) cookieHeader() string {
	var parts []string
	for _, c := range b.jar.Cookies(b.base) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// events opens a turn's event stream (as an EventSource would).
func (b *browser) events(ctx context.Context, path string) (*sseConn, error) {
	return openSSE(ctx, b.base.Host, http.MethodGet, path, nil, "Cookie", b.cookieHeader(), "Accept", "text/event-stream")
}

// ---- direct clients of the sandbox ----

func directCreate(ctx context.Context, hc *http.Client, base string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/intakes", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	res, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var m struct {
		EncounterID string `json:"encounter_id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || res.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("create: %d %v", res.StatusCode, err)
	}
	return m.EncounterID, nil
}

// sandboxGet reads a JSON document of the sandbox with the key.
func sandboxGet(ctx context.Context, hc *http.Client, base, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		return fmt.Errorf("GET %s: %d %.200s", path, res.StatusCode, b)
	}
	return json.NewDecoder(res.Body).Decode(v)
}

// ---- a minimal EventSource over a raw connection ----

// sseConn is one event stream read over its own TCP connection. It is
// written by hand (not http.Client) so that the memory and goroutines of
// the load's own browsers are attributable to package main.
type sseConn struct {
	conn   net.Conn
	body   io.ReadCloser
	r      *bufio.Reader
	Opened time.Time // when the response headers were read
	stop   func() bool
}

type sseEvent struct {
	ID, Name, Data string
	At             time.Time // when the event's first line was read
}

func openSSE(ctx context.Context, host, method, path string, body []byte, hdr ...string) (*sseConn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	s := &sseConn{conn: conn}
	s.stop = context.AfterFunc(ctx, func() { _ = conn.Close() })
	req, err := http.NewRequest(method, "http://"+host+path, bytes.NewReader(body))
	if err != nil {
		s.Close()
		return nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = nil, 0
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if err := req.Write(conn); err != nil {
		s.Close()
		return nil, err
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, req)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Opened = time.Now()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		s.Close()
		return nil, fmt.Errorf("%s %s: %d %s %.200s", method, path, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	s.body = res.Body
	s.r = bufio.NewReaderSize(res.Body, 4096)
	return s, nil
}

// Next returns the next event (comments and retry lines skipped).
func (s *sseConn) Next() (sseEvent, error) {
	var ev sseEvent
	var data []string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if ev.Name != "" || data != nil {
				ev.Data = strings.Join(data, "\n")
				if ev.Name == "" {
					ev.Name = "message"
				}
				return ev, nil
			}
			continue
		}
		if ev.At.IsZero() && !strings.HasPrefix(line, ":") && !strings.HasPrefix(line, "retry:") {
			ev.At = time.Now()
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Name = value
		case "data":
			data = append(data, value)
		}
	}
}

func (s *sseConn) Close() {
	s.stop()
	_ = s.conn.Close()
}

func randomID() string {
	return fmt.Sprintf("%x", time.Now().UnixNano()) + fmt.Sprintf("%04x", idSeq.Add(1)&0xffff)
}

var idSeq atomic.Uint64

// forEach runs f for 0..n-1 with at most workers at once and returns the
// first error.
func forEach(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					cancel(fmt.Errorf("item %d: %w", i, err))
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// encounter is the service's id of the app's intake (its id or its path):
// the sandbox's record is by encounter, the load clients know the app's
// ids (an intake reaches the service with its first turn). One connection
// serves every lookup of a run.
func (st *stack) encounter(ctx context.Context, appID string) (string, error) {
	id := strings.TrimPrefix(appID, "/intakes/")
	st.lookupOnce.Do(func() {
		if st.dbURL != "" {
			st.lookupPG, st.lookupErr = pgx.Connect(ctx, st.dbURL)
		} else {
			st.lookupDB, st.lookupErr = sqlite.Open(ctx, filepath.Join(st.dir, "app.db"), nil)
		}
	})
	if st.lookupErr != nil {
		return "", st.lookupErr
	}
	if st.lookupPG != nil {
		st.lookupMu.Lock() // a pgx.Conn serves one query at a time
		defer st.lookupMu.Unlock()
		var enc string
		err := st.lookupPG.QueryRow(ctx, `SELECT encounter_id FROM intakes WHERE id = $1`, id).Scan(&enc)
		return enc, err
	}
	in, err := st.lookupDB.Intake(ctx, id)
	if err != nil {
		return "", err
	}
	return in.EncounterID, nil
}
