package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const relayMessage = "I have had a sore throat and a fever since Tuesday"

// streamResult is one followed turn stream: the delta events read, in
// order, and how it ended.
type streamResult struct {
	id     string // encounter id
	opened time.Time
	sent   time.Time     // when the turn was sent (POST started)
	posted time.Duration // relayed: POST /turns until its 202
	deltas []sseEvent    // Data holds the decoded text
	end    string        // the last event's name (and status, relayed)
	took   time.Duration // from the start signal to the last event
	err    error
}

func runRelay(ctx context.Context, args []string, out io.Writer, verbose bool) error {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	n := fs.Int("n", 1000, "relayed browser streams and direct sandbox streams, each")
	fragment := fs.Duration("fragment-delay", 20*time.Millisecond, "sandbox pause between fragments")
	first := fs.Duration("first-token", time.Second, "sandbox pause before the first fragment (lets browsers subscribe before it)")
	hold := fs.Duration("hold", 90*time.Second, "memory phase: first-token delay that keeps the streams open and idle")
	workers := fs.Int("setup-workers", 32, "concurrent sessions and intakes created during setup")
	latency := fs.Bool("latency", true, "run the latency phase")
	memory := fs.Bool("memory", true, "run the memory phase (open, idle streams)")
	settle := fs.Duration("settle", 25*time.Second, "memory phase: wait before each measurement (fasthttp retires the idle workers of the closed POST connections 10-20 s later)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 {
		return fmt.Errorf("-n must be positive")
	}
	lim, err := raiseFileLimit(uint64(10**n + 1024))
	if err != nil {
		return fmt.Errorf("raise RLIMIT_NOFILE: %w", err)
	}
	fmt.Fprintf(out, "RLIMIT_NOFILE %d\n", lim)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()

	var c checks
	if *latency {
		if err := relayLatency(ctx, out, &c, *n, *workers, *fragment, *first, *settle, verbose); err != nil {
			return err
		}
	}
	if *memory {
		if err := relayMemory(ctx, out, &c, *n, *workers, *fragment, *hold, *settle, verbose); err != nil {
			return err
		}
	}
	return c.report(out)
}

// relayLatency runs n relayed and n direct streaming turns at once and
// compares the per-fragment latency from the sandbox's write.
func relayLatency(ctx context.Context, out io.Writer, c *checks, n, workers int, fragment, first, settle time.Duration, verbose bool) error {
	st, err := startStack(ctx, stackConfig{fragmentDelay: fragment, firstToken: first, pacerPerMinute: -1, appTurnsPerDay: -1, appIntakesDay: -1, verbose: verbose})
	if err != nil {
		return err
	}
	defer st.Close()
	tr := newTransport(2 * n)
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	sbHost := strings.TrimPrefix(st.sbURL, "http://")

	setup := time.Now()
	browsers := make([]*browser, n)
	intakes := make([]string, n)
	direct := make([]string, n)
	err = forEach(ctx, n, workers, func(ctx context.Context, i int) error {
		b, err := newBrowser(st.app.URL, tr)
		if err != nil {
			return err
		}
		browsers[i] = b
		if intakes[i], err = b.start(ctx); err != nil {
			return err
		}
		direct[i], err = directCreate(ctx, hc, st.sbURL)
		return err
	})
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	fmt.Fprintf(out, "setup: %d sessions with an intake each, %d direct intakes in %s\n", n, n, time.Since(setup).Round(time.Millisecond))

	tr.CloseIdleConnections()
	time.Sleep(settle)
	idle := takeSnapshot()

	relayed := make([]streamResult, n)
	directs := make([]streamResult, n)
	go0 := make(chan struct{})
	var wg sync.WaitGroup
	var began time.Time
	sctx, scancel := context.WithTimeout(ctx, 5*time.Minute)
	defer scancel()
	// Pairs: the direct turn of pair i starts when the app has answered the
	// relayed turn's POST (the app sent its upstream call just before), so
	// both paths reach the sandbox together and share the same load.
	for i := range n {
		wg.Go(func() {
			<-go0
			relayed[i] = followRelayed(sctx, browsers[i], intakes[i], began, func() {
				wg.Go(func() { directs[i] = followDirect(sctx, sbHost, direct[i], began) })
			})
		})
	}
	began = time.Now()
	close(go0)
	wg.Wait()
	wall := time.Since(began)
	// Every stream has ended: the goroutines should return to the idle
	// count, and what stays on the heap is what the app keeps per turn.
	tr.CloseIdleConnections()
	time.Sleep(settle)
	settled := takeSnapshot()

	var (
		lat          = map[string][]time.Duration{} // by path and part
		replayed     int
		posts, turns []time.Duration
	)
	match := func(path string, r streamResult, i int) {
		if r.err != nil {
			c.expect(false, "%s stream %d (%s): %v", path, i, r.id, r.err)
			return
		}
		enc, err := st.encounter(ctx, r.id)
		if err != nil {
			c.expect(false, "%s stream %d (%s): its encounter: %v", path, i, r.id, err)
			return
		}
		writes := st.rec.deltas(enc)
		if len(writes) != 1 {
			c.expect(false, "%s stream %d (%s): %d turn requests reached the sandbox, want 1", path, i, r.id, len(writes))
			return
		}
		w := writes[0]
		if len(w) == 0 || len(w) != len(r.deltas) {
			c.expect(false, "%s stream %d (%s): the sandbox wrote %d deltas, the client read %d", path, i, r.id, len(w), len(r.deltas))
			return
		}
		for j, d := range r.deltas {
			if d.Data != w[j].text {
				c.expect(false, "%s stream %d (%s): delta %d is %q, the sandbox wrote %q", path, i, r.id, j, d.Data, w[j].text)
				return
			}
			l := d.At.Sub(w[j].at)
			part := path + "/rest"
			if j == 0 {
				part = path + "/first"
			}
			lat[path] = append(lat[path], l)
			lat[part] = append(lat[part], l)
			if path == "relayed" && w[j].at.Before(r.opened) {
				replayed++
			}
		}
	}
	for i := range n {
		match("relayed", relayed[i], i)
		match("direct", directs[i], i)
		if relayed[i].err == nil {
			c.expect(relayed[i].end == "final/completed", "relayed stream %d ended %q", i, relayed[i].end)
			posts, turns = append(posts, relayed[i].posted), append(turns, relayed[i].took)
		}
		if directs[i].err == nil {
			c.expect(directs[i].end == "turn.completed", "direct stream %d ended %q", i, directs[i].end)
		}
	}
	stats := st.sb.Stats()
	c.expect(stats.Requests["turn"] == 2*n, "the sandbox served %d turn requests, want %d", stats.Requests["turn"], 2*n)
	warn, errs, sample := st.logSummary()

	fmt.Fprintf(out, "\n### relay: %d relayed browser streams + %d direct sandbox streams at once (%s, GOMAXPROCS %d)\n\n",
		n, n, time.Now().Format("2006-01-02"), gomaxprocs())
	fmt.Fprintf(out, "Sandbox: rules engine, %s to the first fragment, %s between fragments, no rate limit or quotas; app pacer off. "+
		"Latency per delta: sandbox handler's write -> the client's read of the same fragment (direct: `message.delta`; relayed: the app's `delta`).\n\n", first, fragment)
	t := table{head: []string{"path", "fragments", "p50", "p90", "p99", "max"}}
	for _, path := range []string{"direct", "relayed"} {
		for _, part := range []string{"", "/first", "/rest"} {
			s := summarize(lat[path+part])
			name := path
			switch part {
			case "/first":
				name += ": first fragment"
			case "/rest":
				name += ": later fragments"
			}
			t.add(name, s.n, ms(s.p50), ms(s.p90), ms(s.p99), ms(s.maxd))
		}
	}
	d, r := summarize(lat["direct"]), summarize(lat["relayed"])
	t.add("**added by the relay** (relayed - direct)", "", ms(r.p50-d.p50), ms(r.p90-d.p90), ms(r.p99-d.p99), ms(r.maxd-d.maxd))
	t.print(out)
	ps, ts := summarize(posts), summarize(turns)
	t2 := table{head: []string{"metric", "value"}}
	t2.add("wall time of the round (2 x n turns)", wall.Round(time.Millisecond))
	t2.add("relayed POST /turns -> 202: p50 / p99 / max", fmt.Sprintf("%s / %s / %s", ms(ps.p50), ms(ps.p99), ms(ps.maxd)))
	t2.add("relayed turn, start -> final event: p50 / p99 / max", fmt.Sprintf("%s / %s / %s", ms(ts.p50), ms(ts.p99), ms(ts.maxd)))
	t2.add("relayed deltas written before the browser's stream opened (replayed)", replayed)
	t2.add("streams completed (relayed / direct)", fmt.Sprintf("%d / %d", countEnd(relayed, "final/completed"), countEnd(directs, "turn.completed")))
	t2.add(fmt.Sprintf("goroutines before the round / %s after it", settle), fmt.Sprintf("%d / %d", idle.goroutines, settled.goroutines))
	t2.add("heap objects kept after the round, per turn (HeapAlloc)", kib((float64(settled.ms.HeapAlloc)-float64(idle.ms.HeapAlloc))/float64(n)))
	t2.add("app log warnings / errors", fmt.Sprintf("%d / %d", warn, errs))
	t2.print(out)
	for _, s := range sample {
		fmt.Fprintln(out, "app log:", s)
	}
	// The app's upstream client keeps up to 64 idle keep-alive connections
	// (intakeapi: MaxIdleConnsPerHost) for 90 s: each is a read loop and a
	// write loop here and a serving goroutine in the sandbox. Not a leak.
	const idlePool = 64 * 3
	if settled.goroutines > idle.goroutines+10+idlePool {
		var grew []string
		for _, r := range rootDiff(idle, settled, 1) {
			grew = append(grew, fmt.Sprintf("%+d %s", r.d, r.key))
		}
		c.expect(false, "goroutines: %d before the round, %d %s after it (a leak?): %s", idle.goroutines, settled.goroutines, settle,
			strings.ReplaceAll(strings.Join(grew, ", "), "\x00", " "))
	}
	return nil
}

func countEnd(rs []streamResult, end string) int {
	k := 0
	for _, r := range rs {
		if r.err == nil && r.end == end {
			k++
		}
	}
	return k
}

// followRelayed sends the browser's turn and follows the app's stream to
// its settling event; accepted is called when the POST is answered.
func followRelayed(ctx context.Context, b *browser, intake string, began time.Time, accepted func()) streamResult {
	r := streamResult{id: strings.TrimPrefix(intake, "/intakes/"), sent: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	ev, err := b.sendTurn(ctx, intake, relayMessage)
	r.posted = time.Since(began)
	accepted()
	if err != nil {
		r.err = err
		return r
	}
	s, err := b.events(ctx, ev)
	if err != nil {
		r.err = err
		return r
	}
	defer s.Close()
	r.opened = s.Opened
	for {
		e, err := s.Next()
		if err != nil {
			r.err = fmt.Errorf("events after %d deltas: %w", len(r.deltas), err)
			return r
		}
		switch e.Name {
		case "delta":
			if e.Data, err = decodeText(e.Data); err != nil {
				r.err = err
				return r
			}
			r.deltas = append(r.deltas, e)
		case "final", "failed":
			var d struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal([]byte(e.Data), &d)
			r.end, r.took = e.Name+"/"+d.Status, e.At.Sub(began)
			return r
		}
	}
}

// followDirect streams one turn straight from the sandbox.
func followDirect(ctx context.Context, host, id string, began time.Time) streamResult {
	r := streamResult{id: id, sent: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"message": relayMessage, "stream": true})
	s, err := openSSE(ctx, host, http.MethodPost, "/v1/intakes/"+url.PathEscape(id)+"/turns", body,
		"Authorization", "Bearer "+apiKey, "Content-Type", "application/json", "Accept", "text/event-stream")
	if err != nil {
		r.err = err
		return r
	}
	defer s.Close()
	r.opened = s.Opened
	for {
		e, err := s.Next()
		if err != nil {
			r.err = fmt.Errorf("stream after %d deltas: %w", len(r.deltas), err)
			return r
		}
		switch e.Name {
		case "message.delta":
			if e.Data, err = decodeText(e.Data); err != nil {
				r.err = err
				return r
			}
			r.deltas = append(r.deltas, e)
		case "turn.completed", "error":
			r.end, r.took = e.Name, e.At.Sub(began)
			return r
		}
	}
}

func decodeText(data string) (string, error) {
	var d struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		return "", fmt.Errorf("delta %q: %w", data, err)
	}
	return d.Text, nil
}

// relayMemory opens n browser streams on turns held before their first
// fragment (a long first-token delay) and measures the heap and goroutines
// they hold, with GC first.
func relayMemory(ctx context.Context, out io.Writer, c *checks, n, workers int, fragment, hold, settle time.Duration, verbose bool) error {
	if settle >= hold/2 {
		return fmt.Errorf("-settle %s must be under half of -hold %s", settle, hold)
	}
	st, err := startStack(ctx, stackConfig{fragmentDelay: fragment, firstToken: hold, pacerPerMinute: -1, appTurnsPerDay: -1, appIntakesDay: -1, verbose: verbose})
	if err != nil {
		return err
	}
	defer st.Close()
	tr := newTransport(n)
	defer tr.CloseIdleConnections()
	browsers, intakes, err := openIntakes(ctx, st.app.URL, tr, n, workers)
	if err != nil {
		return fmt.Errorf("memory setup: %w", err)
	}
	tr.CloseIdleConnections()
	time.Sleep(settle)         // the setup's connections and their workers end
	runtime.MemProfileRate = 1 // every allocation from here on, for the attribution
	before := takeSnapshot()

	hctx, hcancel := context.WithTimeout(ctx, hold)
	defer hcancel()
	var (
		ready    sync.WaitGroup
		wg       sync.WaitGroup
		opened   atomic.Int64
		early    atomic.Int64 // deltas that arrived while measuring: the hold was too short
		failures = make(chan error, n)
	)
	start := time.Now()
	for i := range n {
		ready.Add(1)
		wg.Go(func() {
			done := sync.OnceFunc(ready.Done)
			defer done()
			ev, err := browsers[i].sendTurn(hctx, intakes[i], relayMessage)
			if err != nil {
				failures <- err
				return
			}
			s, err := browsers[i].events(hctx, ev)
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
					done() // open and idle until the first fragment
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
	case <-time.After(hold / 2):
		c.expect(false, "memory phase: streams not open after %s", hold/2)
	}
	openTime := time.Since(start)
	tr.CloseIdleConnections() // the POSTs' pooled connections are not streams
	time.Sleep(settle)
	after := takeSnapshot()
	measuredAt := time.Since(start)
	c.expect(early.Load() == 0, "memory phase: %d deltas arrived before the measurement; raise -hold", early.Load())
	c.expect(int(opened.Load()) == n, "memory phase: %d of %d streams open", opened.Load(), n)
	hcancel()
	wg.Wait()
	close(failures)
	for err := range failures {
		c.expect(false, "memory phase: %v", err)
	}
	runtime.MemProfileRate = 512 * 1024

	per := func(a, b uint64) string { return kib((float64(b) - float64(a)) / float64(n)) }
	fmt.Fprintf(out, "\n### relay memory: %d open, idle browser streams (%s)\n\n", n, time.Now().Format("2006-01-02"))
	fmt.Fprintf(out, "Each stream is a turn held before its first fragment (sandbox first-token delay %s): the browser's SSE connection, "+
		"the app's stream writer and relay subscription, its turn runner and upstream stream, and the sandbox's handler. "+
		"Streams opened in %s (every allocation is profiled in this phase, so this is no latency figure); measured %s after the first POST, after GC.\n\n", hold, openTime.Round(time.Millisecond), measuredAt.Round(time.Millisecond))
	t := table{head: []string{"measure", "before", "with streams open", "per stream"}}
	t.add("heap in use (MemStats.HeapInuse)", mib(float64(before.ms.HeapInuse)), mib(float64(after.ms.HeapInuse)), per(before.ms.HeapInuse, after.ms.HeapInuse))
	t.add("heap objects' bytes (MemStats.HeapAlloc)", mib(float64(before.ms.HeapAlloc)), mib(float64(after.ms.HeapAlloc)), per(before.ms.HeapAlloc, after.ms.HeapAlloc))
	t.add("goroutine stacks (MemStats.StackInuse)", mib(float64(before.ms.StackInuse)), mib(float64(after.ms.StackInuse)), per(before.ms.StackInuse, after.ms.StackInuse))
	t.add("goroutines", before.goroutines, after.goroutines, fmt.Sprintf("%.2f", float64(after.goroutines-before.goroutines)/float64(n)))
	t.print(out)

	fmt.Fprintf(out, "Attribution (runtime.MemProfile at MemProfileRate 1 and the goroutine profile, by the packages on each stack):\n\n")
	t2 := table{head: []string{"owner", "heap per stream", "goroutines per stream"}}
	for _, o := range owners {
		dh := after.heap[o] - before.heap[o]
		dg := after.gs[o] - before.gs[o]
		t2.add(o, kib(float64(dh)/float64(n)), fmt.Sprintf("%.2f", float64(dg)/float64(n)))
	}
	t2.print(out)

	fmt.Fprintf(out, "Goroutines each open stream adds, by where they started:\n\n")
	t3 := table{head: []string{"owner", "goroutine entry function", "per stream"}}
	for _, r := range rootDiff(before, after, max(n/20, 1)) {
		o, fn, _ := strings.Cut(r.key, "\x00")
		t3.add(o, "`"+fn+"`", fmt.Sprintf("%.2f", float64(r.d)/float64(n)))
	}
	t3.print(out)
	return nil
}

type rootCount struct {
	key string // owner NUL entry function
	d   int
}

// rootDiff lists the goroutine entry functions that gained at least min
// goroutines from a to b, most first.
func rootDiff(a, b snapshot, least int) []rootCount {
	var roots []rootCount
	for k, v := range b.roots {
		if d := v - a.roots[k]; d >= least {
			roots = append(roots, rootCount{k, d})
		}
	}
	slices.SortFunc(roots, func(x, y rootCount) int { return cmp.Or(y.d-x.d, strings.Compare(x.key, y.key)) })
	return roots
}
