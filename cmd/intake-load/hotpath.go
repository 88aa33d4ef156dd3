package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
)

// The hotpath scenario measures issue 12's targets with the app (and the
// sandbox it streams from) in one process and the load clients in another:
// `intake-load hotpath` starts `intake-load serve` as its child, reads the
// child's addresses from its first line of output, and asks the child's
// debug listener for the sandbox's write stamps and the runtime's figures.

// serveInfo is the first line `serve` prints: where its listeners are.
type serveInfo struct {
	App     string `json:"app"`
	Sandbox string `json:"sandbox"`
	Debug   string `json:"debug"`
	PID     int    `json:"pid"`
}

// runtimeFigures is one reading of the serving process after GC.
type runtimeFigures struct {
	Goroutines int            `json:"goroutines"`
	HeapInuse  uint64         `json:"heap_inuse"`
	HeapAlloc  uint64         `json:"heap_alloc"`
	StackInuse uint64         `json:"stack_inuse"`
	RSS        uint64         `json:"rss"`   // VmRSS after GC, freed memory returned to the OS
	Roots      map[string]int `json:"roots"` // goroutines by entry function
	// GoMapped is what the Go runtime holds from the OS (runtime/metrics:
	// /memory/classes/total less heap/released); Metadata the part of it
	// that is neither heap nor goroutine stacks (spans, GC bitmaps,
	// profiling buckets, other).
	GoMapped uint64 `json:"go_mapped"`
	Metadata uint64 `json:"metadata"`
}

type stampJSON struct {
	At   int64  `json:"at"` // Unix nanoseconds: both processes read the same clock
	Text string `json:"text"`
}

// runServe starts the sandbox and the app in this process, prints a JSON
// serveInfo line and serves a debug listener until ctx ends (or stdin
// closes: the parent is gone).
func runServe(ctx context.Context, args []string, out io.Writer, verbose bool) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fragment := fs.Duration("fragment-delay", 20*time.Millisecond, "sandbox pause between fragments")
	first := fs.Duration("first-token", time.Second, "sandbox pause before the first fragment")
	upstream := fs.String("upstream", "", "serve only the app, streaming from the sandbox at this URL (another process)")
	sandboxOnly := fs.Bool("sandbox-only", false, "serve only the sandbox")
	pacer := fs.Int("pacer", -1, "the app's pacer, requests a minute (negative: none)")
	memRate := fs.Int("memprofilerate", 0, "runtime.MemProfileRate (0: Go's default): 1 records every allocation")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *memRate > 0 {
		runtime.MemProfileRate = *memRate
	}
	if _, err := raiseFileLimit(1 << 20); err != nil {
		return fmt.Errorf("raise RLIMIT_NOFILE: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	st, err := startStack(ctx, stackConfig{fragmentDelay: *fragment, firstToken: *first, pacerPerMinute: *pacer, appTurnsPerDay: -1, appIntakesDay: -1, verbose: verbose,
		upstream: *upstream, sandboxOnly: *sandboxOnly})
	if err != nil {
		return err
	}
	defer st.Close()
	if st.app == nil {
		return serveDebug(ctx, st, nil, out)
	}
	// The sandbox's record is by encounter id; the load clients know the
	// app's intake ids (an intake reaches the service with its first turn).
	db, err := sqlite.Open(ctx, filepath.Join(st.dir, "app.db"), nil)
	if err != nil {
		return err
	}
	defer db.Close()
	return serveDebug(ctx, st, db, out)
}

// serveDebug serves the debug listener of a `serve` process (db: the
// app's store, nil when the process has no app) and prints its serveInfo.
func serveDebug(ctx context.Context, st *stack, db *sqlite.DB, out io.Writer) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /deltas", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("id")
		if app := strings.TrimPrefix(id, "/intakes/"); strings.HasPrefix(app, "iw_") && db != nil {
			in, err := db.Intake(r.Context(), app)
			if err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
			id = in.EncounterID
		}
		var all [][]stampJSON
		for _, ws := range st.rec.deltas(id) {
			var one []stampJSON
			for _, x := range ws {
				one = append(one, stampJSON{At: x.at.UnixNano(), Text: x.text})
			}
			all = append(all, one)
		}
		_ = json.NewEncoder(w).Encode(all)
	})
	mux.HandleFunc("GET /runtime", func(w http.ResponseWriter, r *http.Request) {
		s := takeSnapshot()
		roots := map[string]int{}
		for k, v := range s.roots {
			_, fn, _ := strings.Cut(k, "\x00")
			roots[fn] += v
		}
		rss := releasedRSS()
		mapped, meta := goMemoryClasses()
		_ = json.NewEncoder(w).Encode(runtimeFigures{Goroutines: s.goroutines, HeapInuse: s.ms.HeapInuse,
			HeapAlloc: s.ms.HeapAlloc, StackInuse: s.ms.StackInuse, RSS: rss, Roots: roots, GoMapped: mapped, Metadata: meta})
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		if st.logs == nil || st.sb == nil {
			http.Error(w, "no app or no sandbox in this process", http.StatusNotFound)
			return
		}
		warn, errs, sample := st.logSummary()
		_ = json.NewEncoder(w).Encode(map[string]any{"turn_requests": st.sb.Stats().Requests["turn"], "warn": warn, "errors": errs, "sample": sample})
	})
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/", pprof.Index) // goroutine, heap, ...
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	appURL := ""
	if st.app != nil {
		appURL = st.app.URL
	}
	line, _ := json.Marshal(serveInfo{App: appURL, Sandbox: st.sbURL, Debug: "http://" + ln.Addr().String(), PID: os.Getpid()})
	fmt.Fprintln(out, string(line))
	<-ctx.Done()
	return nil
}

// server is a running `serve` child.
type server struct {
	serveInfo
	cmd   *exec.Cmd
	stdin io.Closer
	hc    *http.Client
}

func startServer(ctx context.Context, verbose bool, args ...string) (*server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if verbose {
		args = append(args, "-v")
	}
	cmd := exec.CommandContext(ctx, exe, append([]string{"serve"}, args...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stdin: stdin, hc: &http.Client{Timeout: time.Minute}}
	br := bufio.NewReader(stdout)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("serve: no address line: %w", err)
		}
		if strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &s.serveInfo); err != nil {
				s.Close()
				return nil, err
			}
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, br) }()
	return s, nil
}

// Close ends the child (its stdin closes) and waits for it.
func (s *server) Close() {
	_ = s.stdin.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

func (s *server) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Debug+path, nil)
	if err != nil {
		return err
	}
	res, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	return json.NewDecoder(res.Body).Decode(v)
}

// profile writes the serving process's CPU profile over the next d to file.
func (s *server) profile(ctx context.Context, file string, d time.Duration) error {
	return s.save(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds()+0.5)), file)
}

// save writes what the debug listener answers at path to file.
func (s *server) save(ctx context.Context, path, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Debug+path, nil)
	if err != nil {
		return err
	}
	res, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (s *server) deltas(ctx context.Context, id string) ([][]write, error) {
	var all [][]stampJSON
	if err := s.get(ctx, "/deltas?id="+id, &all); err != nil {
		return nil, err
	}
	out := make([][]write, len(all))
	for i, ws := range all {
		for _, x := range ws {
			out[i] = append(out[i], write{at: time.Unix(0, x.At), text: x.Text})
		}
	}
	return out, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func runHotpath(ctx context.Context, args []string, out io.Writer, verbose bool) error {
	fs := flag.NewFlagSet("hotpath", flag.ContinueOnError)
	phases := fs.String("phases", "memory,latency,send", "phases to run, comma separated")
	n := fs.Int("n", 1000, "latency and memory phases: streams (relayed and direct, each)")
	sendN := fs.Int("send-n", 100, "send phase: patients pressing Send within -send-spread")
	spread := fs.Duration("send-spread", time.Second, "send phase: the Sends are spread evenly over this")
	fragment := fs.Duration("fragment-delay", 20*time.Millisecond, "sandbox pause between fragments")
	first := fs.Duration("first-token", time.Second, "latency and send phases: sandbox pause before the first fragment")
	hold := fs.Duration("hold", 90*time.Second, "memory phase: first-token delay that keeps the streams open and idle")
	settle := fs.Duration("settle", 25*time.Second, "memory phase: wait before each reading (fasthttp retires idle workers 10-20 s after their connection ends)")
	workers := fs.Int("setup-workers", 32, "concurrent sessions and intakes created during setup")
	profile := fs.String("profile", "", "held phases: write the app process's heap and goroutine profiles to files starting with this")
	cpuprofile := fs.String("cpuprofile", "", "latency and send phases: write the serving process's CPU profile of the round to this file (suffixed with the phase)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := raiseFileLimit(uint64(10**n + 1024)); err != nil {
		return fmt.Errorf("raise RLIMIT_NOFILE: %w", err)
	}
	var c checks
	for _, p := range strings.Split(*phases, ",") {
		fmt.Fprintf(out, "\nload average before %s: %s (%d CPUs)\n", p, loadavg(), runtime.NumCPU())
		var err error
		switch p {
		case "memory":
			err = hotMemory(ctx, out, &c, *n, *workers, *fragment, *hold, *settle, verbose)
		case "latency":
			err = hotRound(ctx, out, &c, "latency", *n, *workers, *fragment, *first, 0, *cpuprofile, verbose)
		case "held-inflight", "held-queued":
			err = hotHeld(ctx, out, &c, strings.TrimPrefix(p, "held-"), *n, *workers, *hold, *settle, *profile, verbose)
		case "send":
			err = hotRound(ctx, out, &c, "send", *sendN, *workers, *fragment, *first, *spread, *cpuprofile, verbose)
		default:
			err = fmt.Errorf("unknown phase %q", p)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\nload average after %s: %s\n", p, loadavg())
	}
	return c.report(out)
}

// hotMemory reads the serving process at 0 streams, with n turns running
// and no browser following them, and with n browser streams open on those
// turns: the last difference is what an open browser stream costs.
func hotMemory(ctx context.Context, out io.Writer, c *checks, n, workers int, fragment, hold, settle time.Duration, verbose bool) error {
	if 2*settle+30*time.Second >= hold {
		return fmt.Errorf("-hold %s must exceed 2 x -settle %s + 30 s", hold, settle)
	}
	srv, err := startServer(ctx, verbose, "-first-token", hold.String(), "-fragment-delay", fragment.String())
	if err != nil {
		return err
	}
	defer srv.Close()
	tr := newTransport(n)
	defer tr.CloseIdleConnections()
	browsers, intakes, err := openIntakes(ctx, srv.App, tr, n, workers)
	if err != nil {
		return fmt.Errorf("memory setup: %w", err)
	}
	tr.CloseIdleConnections()
	time.Sleep(settle)
	var zero, turns, open runtimeFigures
	if err := srv.get(ctx, "/runtime", &zero); err != nil {
		return err
	}
	hctx, hcancel := context.WithTimeout(ctx, hold)
	defer hcancel()
	urls := make([]string, n)
	err = forEach(hctx, n, workers, func(ctx context.Context, i int) error {
		urls[i], err = browsers[i].sendTurn(ctx, intakes[i], relayMessage)
		return err
	})
	if err != nil {
		return fmt.Errorf("memory: send: %w", err)
	}
	tr.CloseIdleConnections()
	time.Sleep(settle)
	if err := srv.get(ctx, "/runtime", &turns); err != nil {
		return err
	}
	var (
		ready    sync.WaitGroup
		wg       sync.WaitGroup
		opened   atomic.Int64
		early    atomic.Int64
		failures = make(chan error, n)
	)
	for i := range n {
		ready.Add(1)
		wg.Go(func() {
			done := sync.OnceFunc(ready.Done)
			defer done()
			s, err := browsers[i].events(hctx, urls[i])
			if err != nil {
				failures <- err
				return
			}
			defer s.Close()
			for {
				e, err := s.Next()
				if err != nil {
					if hctx.Err() == nil {
						failures <- fmt.Errorf("stream %d ended early: %w", i, err)
					}
					return
				}
				switch e.Name {
				case "started":
					opened.Add(1)
					done()
				case "delta":
					early.Add(1)
				}
			}
		})
	}
	waited := make(chan struct{})
	go func() { ready.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(hold / 4):
		c.expect(false, "memory phase: streams not open after %s", hold/4)
	}
	time.Sleep(settle)
	if err := srv.get(ctx, "/runtime", &open); err != nil {
		return err
	}
	c.expect(early.Load() == 0, "memory phase: %d deltas arrived before the reading; raise -hold", early.Load())
	c.expect(int(opened.Load()) == n, "memory phase: %d of %d streams open", opened.Load(), n)
	hcancel()
	wg.Wait()
	close(failures)
	for err := range failures {
		c.expect(false, "memory phase: %v", err)
	}
	fmt.Fprintf(out, "\n### hotpath memory: %d open, idle browser streams, app process %d (%s)\n\n", n, srv.PID, time.Now().Format("2006-01-02 15:04"))
	per := func(a, b uint64) string { return kib((float64(b) - float64(a)) / float64(n)) }
	t := table{head: []string{"measure (serving process, after GC)", "0 streams, 0 turns", "n turns, 0 streams", "n turns, n streams", "per turn", "**per browser stream**"}}
	t.add("heap in use (HeapInuse)", mib(float64(zero.HeapInuse)), mib(float64(turns.HeapInuse)), mib(float64(open.HeapInuse)), per(zero.HeapInuse, turns.HeapInuse), per(turns.HeapInuse, open.HeapInuse))
	t.add("heap objects (HeapAlloc)", mib(float64(zero.HeapAlloc)), mib(float64(turns.HeapAlloc)), mib(float64(open.HeapAlloc)), per(zero.HeapAlloc, turns.HeapAlloc), per(turns.HeapAlloc, open.HeapAlloc))
	t.add("goroutine stacks (StackInuse)", mib(float64(zero.StackInuse)), mib(float64(turns.StackInuse)), mib(float64(open.StackInuse)), per(zero.StackInuse, turns.StackInuse), per(turns.StackInuse, open.StackInuse))
	t.add("heap in use + stacks", "", "", "", per(zero.HeapInuse+zero.StackInuse, turns.HeapInuse+turns.StackInuse), per(turns.HeapInuse+turns.StackInuse, open.HeapInuse+open.StackInuse))
	t.add("goroutines", zero.Goroutines, turns.Goroutines, open.Goroutines,
		fmt.Sprintf("%.2f", float64(turns.Goroutines-zero.Goroutines)/float64(n)), fmt.Sprintf("%.2f", float64(open.Goroutines-turns.Goroutines)/float64(n)))
	t.print(out)
	fmt.Fprintf(out, "Goroutines each open browser stream adds, by entry function:\n\n")
	t2 := table{head: []string{"goroutine entry function", "per stream"}}
	for fn, v := range open.Roots {
		if d := v - turns.Roots[fn]; d >= max(n/20, 1) {
			t2.add("`"+fn+"`", fmt.Sprintf("%.2f", float64(d)/float64(n)))
		}
	}
	t2.print(out)
	return nil
}

// hotRound runs n relayed and n direct streaming turns of the same message
// and compares each fragment of a pair: latency mode starts the direct
// turn of pair i when the app has answered pair i's POST (both reach the
// sandbox together) and reports, per fragment, (relayed read - sandbox
// write) - (direct read - sandbox write); send mode starts pair i's two
// Sends at the same instant, the n instants spread over spread, and
// reports, per patient, (relayed first fragment - its Send) - (direct
// first fragment - its Send).
func hotRound(ctx context.Context, out io.Writer, c *checks, mode string, n, workers int, fragment, first, spread time.Duration, cpuprofile string, verbose bool) error {
	srv, err := startServer(ctx, verbose, "-first-token", first.String(), "-fragment-delay", fragment.String())
	if err != nil {
		return err
	}
	defer srv.Close()
	tr := newTransport(2 * n)
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	sbHost := strings.TrimPrefix(srv.Sandbox, "http://")
	browsers := make([]*browser, n)
	intakes := make([]string, n)
	direct := make([]string, n)
	err = forEach(ctx, n, workers, func(ctx context.Context, i int) error {
		b, err := newBrowser(srv.App, tr)
		if err != nil {
			return err
		}
		browsers[i] = b
		if intakes[i], err = b.start(ctx); err != nil {
			return err
		}
		direct[i], err = directCreate(ctx, hc, srv.Sandbox)
		return err
	})
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	relayed := make([]streamResult, n)
	directs := make([]streamResult, n)
	go0 := make(chan struct{})
	var wg sync.WaitGroup
	var began time.Time
	sctx, scancel := context.WithTimeout(ctx, 5*time.Minute)
	defer scancel()
	for i := range n {
		wg.Go(func() {
			<-go0
			if mode == "send" {
				if d := time.Until(began.Add(spread * time.Duration(i) / time.Duration(n))); d > 0 {
					time.Sleep(d)
				}
				wg.Go(func() { directs[i] = followDirect(sctx, sbHost, direct[i], began) })
				relayed[i] = followRelayed(sctx, browsers[i], intakes[i], began, func() {})
				return
			}
			relayed[i] = followRelayed(sctx, browsers[i], intakes[i], began, func() {
				wg.Go(func() { directs[i] = followDirect(sctx, sbHost, direct[i], began) })
			})
		})
	}
	profiled := make(chan error, 1)
	if cpuprofile != "" {
		// The round lasts about the first-token delay and a few seconds more.
		go func() { profiled <- srv.profile(ctx, cpuprofile+"."+mode, first+4*time.Second) }()
		// Where the serving process's goroutines wait when the first
		// fragments are due.
		time.AfterFunc(first+500*time.Millisecond, func() { _ = srv.save(ctx, "/debug/pprof/goroutine?debug=1", cpuprofile+"."+mode+".goroutines.txt") })
	} else {
		profiled <- nil
	}
	began = time.Now()
	close(go0)
	wg.Wait()
	if err := <-profiled; err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}

	var added, firstAdded, relFirst, dirFirst, relLat, dirLat []time.Duration
	for i := range n {
		r, d := relayed[i], directs[i]
		if r.err != nil || d.err != nil {
			c.expect(false, "pair %d: relayed %v, direct %v", i, r.err, d.err)
			continue
		}
		c.expect(r.end == "final/completed", "relayed stream %d ended %q", i, r.end)
		c.expect(d.end == "turn.completed", "direct stream %d ended %q", i, d.end)
		rw, err := srv.deltas(ctx, r.id)
		if err != nil {
			return err
		}
		dw, err := srv.deltas(ctx, d.id)
		if err != nil {
			return err
		}
		if len(rw) != 1 || len(dw) != 1 || len(rw[0]) != len(r.deltas) || len(dw[0]) != len(d.deltas) || len(r.deltas) != len(d.deltas) || len(r.deltas) == 0 {
			c.expect(false, "pair %d: turn requests %d/%d, fragments written %v read %d/%d", i, len(rw), len(dw), []int{lenAt(rw), lenAt(dw)}, len(r.deltas), len(d.deltas))
			continue
		}
		for j := range r.deltas {
			if r.deltas[j].Data != rw[0][j].text || d.deltas[j].Data != dw[0][j].text || r.deltas[j].Data != d.deltas[j].Data {
				c.expect(false, "pair %d fragment %d: texts differ", i, j)
				break
			}
			rl, dl := r.deltas[j].At.Sub(rw[0][j].at), d.deltas[j].At.Sub(dw[0][j].at)
			relLat, dirLat = append(relLat, rl), append(dirLat, dl)
			added = append(added, rl-dl)
		}
		rf, df := r.deltas[0].At.Sub(r.sent), d.deltas[0].At.Sub(d.sent)
		relFirst, dirFirst = append(relFirst, rf), append(dirFirst, df)
		firstAdded = append(firstAdded, rf-df)
	}
	var stats struct {
		TurnRequests int      `json:"turn_requests"`
		Warn         int      `json:"warn"`
		Errors       int      `json:"errors"`
		Sample       []string `json:"sample"`
	}
	if err := srv.get(ctx, "/stats", &stats); err != nil {
		return err
	}
	c.expect(stats.TurnRequests == 2*n, "the sandbox served %d turn requests, want %d", stats.TurnRequests, 2*n)
	fmt.Fprintf(out, "\n### hotpath %s: %d relayed + %d direct streaming turns, app process %d (%s)\n\n", mode, n, n, srv.PID, time.Now().Format("2006-01-02 15:04"))
	t := table{head: []string{"measure", "samples", "p50", "p90", "p99", "max"}}
	row := func(name string, d []time.Duration) {
		s := summarize(d)
		t.add(name, s.n, ms(s.p50), ms(s.p90), ms(s.p99), ms(s.maxd))
	}
	row("direct: sandbox write -> client read, per fragment", dirLat)
	row("relayed: sandbox write -> browser read, per fragment", relLat)
	row("**added per fragment** (relayed - direct, same fragment index of the pair)", added)
	row("direct: Send -> first fragment", dirFirst)
	row("relayed: Send -> first fragment", relFirst)
	row("**added to Send -> first fragment** (relayed - direct, per pair)", firstAdded)
	t.print(out)
	fmt.Fprintf(out, "app log warnings / errors: %d / %d\n", stats.Warn, stats.Errors)
	for _, s := range stats.Sample {
		fmt.Fprintln(out, "app log:", s)
	}
	return nil
}

func lenAt(w [][]write) int {
	if len(w) == 0 {
		return -1
	}
	return len(w[0])
}
