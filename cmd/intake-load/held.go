package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The held phase measures what a patient holding their stream open costs
// the app's process alone: the sandbox runs in a process of its own
// (`serve -sandbox-only`), the app in another (`serve -upstream`), the
// load's browsers in this one. Two cases: a turn in flight (the sandbox
// holds its first fragment for -hold) and a turn waiting in the key's
// queue (the app's pacer at one request a minute, so all but the first
// wait). Per stream = (reading with n held - reading before the turns) / n,
// the RSS read after GC and after returning freed memory to the OS.

// rssBytes is this process's resident set (VmRSS), 0 when unknown.
func rssBytes() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) == 2 {
				kb, _ := strconv.ParseUint(string(f[0]), 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// releasedRSS returns freed memory to the OS and reads the resident set.
func releasedRSS() uint64 {
	debug.FreeOSMemory()
	return rssBytes()
}

type heldCase struct {
	name  string
	pacer int    // the app's pacer, requests a minute (negative: none)
	want  string // the first event each stream must show
}

var heldCases = map[string]heldCase{
	"inflight": {name: "a turn in flight (upstream answered, first fragment held)", pacer: -1, want: "started"},
	"queued":   {name: "a turn waiting in the key's queue (pacer at 1 a minute)", pacer: 1, want: "queued"},
}

func hotHeld(ctx context.Context, out io.Writer, c *checks, which string, n, workers int, hold, settle time.Duration, profile string, verbose bool) error {
	hc, ok := heldCases[which]
	if !ok {
		return fmt.Errorf("unknown held case %q", which)
	}
	sb, err := startServer(ctx, verbose, "-sandbox-only", "-first-token", hold.String())
	if err != nil {
		return err
	}
	defer sb.Close()
	args := []string{"-upstream", sb.Sandbox, "-pacer", strconv.Itoa(hc.pacer)}
	if profile != "" {
		args = append(args, "-memprofilerate", "1") // every allocation, for the breakdown
	}
	srv, err := startServer(ctx, verbose, args...)
	if err != nil {
		return err
	}
	defer srv.Close()
	tr := newTransport(n)
	defer tr.CloseIdleConnections()
	browsers, intakes, err := openIntakes(ctx, srv.App, tr, n, workers)
	if err != nil {
		return fmt.Errorf("held setup: %w", err)
	}
	tr.CloseIdleConnections()
	time.Sleep(settle)
	var zero, held runtimeFigures
	if err := srv.get(ctx, "/runtime", &zero); err != nil {
		return err
	}
	if profile != "" {
		if err := srv.save(ctx, "/debug/pprof/heap", fmt.Sprintf("%s.%s.%d.heap0", profile, which, n)); err != nil {
			return err
		}
	}
	hctx, hcancel := context.WithTimeout(ctx, hold)
	defer hcancel()
	var (
		wg       sync.WaitGroup
		ready    sync.WaitGroup
		shown    atomic.Int64
		early    atomic.Int64
		failures = make(chan error, n)
	)
	// Send and open one by one (workers at a time), each stream kept open
	// until the reading is taken.
	sem := make(chan struct{}, workers)
	for i := range n {
		ready.Add(1)
		sem <- struct{}{}
		wg.Go(func() {
			done := sync.OnceFunc(ready.Done)
			defer done()
			url, err := browsers[i].sendTurn(hctx, intakes[i], relayMessage)
			if err != nil {
				<-sem
				failures <- fmt.Errorf("send %d: %w", i, err)
				return
			}
			s, err := browsers[i].events(hctx, url)
			<-sem
			if err != nil {
				failures <- fmt.Errorf("stream %d: %w", i, err)
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
				case hc.want:
					if shown.Add(1) > 0 {
						done()
					}
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
	case <-hctx.Done():
	}
	tr.CloseIdleConnections()
	time.Sleep(settle)
	if err := srv.get(ctx, "/runtime", &held); err != nil {
		return err
	}
	if profile != "" {
		for _, p := range []string{"heap", "goroutine"} {
			if err := srv.save(ctx, "/debug/pprof/"+p, fmt.Sprintf("%s.%s.%d.%s", profile, which, n, p)); err != nil {
				return err
			}
		}
	}
	c.expect(early.Load() == 0, "held phase: %d deltas arrived before the reading; raise -hold", early.Load())
	c.expect(shown.Load() >= int64(n-1), "held phase: %d of %d streams showed %q", shown.Load(), n, hc.want)
	hcancel()
	srv.Close() // the app stops before the browsers' reads end: no stream is left waiting
	wg.Wait()
	close(failures)
	count := 0
	for err := range failures {
		if count++; count <= 5 {
			c.expect(false, "held phase: %v", err)
		}
	}
	fmt.Fprintf(out, "\n### hotpath held (%s): %d patients, %s; app process %d alone (%s), RLIMIT_NOFILE %d\n\n",
		which, n, hc.name, srv.PID, time.Now().Format("2006-01-02 15:04"), fileLimit())
	per := func(a, b uint64) string { return kib((float64(b) - float64(a)) / float64(n)) }
	t := table{head: []string{"measure (app process, after GC)", "sessions and intakes, no turn", "n held", "**per held stream**"}}
	t.add("resident set (VmRSS, freed memory returned)", mib(float64(zero.RSS)), mib(float64(held.RSS)), per(zero.RSS, held.RSS))
	t.add("heap in use (HeapInuse)", mib(float64(zero.HeapInuse)), mib(float64(held.HeapInuse)), per(zero.HeapInuse, held.HeapInuse))
	t.add("heap objects (HeapAlloc)", mib(float64(zero.HeapAlloc)), mib(float64(held.HeapAlloc)), per(zero.HeapAlloc, held.HeapAlloc))
	t.add("goroutine stacks (StackInuse)", mib(float64(zero.StackInuse)), mib(float64(held.StackInuse)), per(zero.StackInuse, held.StackInuse))
	t.add("heap in use + stacks", "", "", per(zero.HeapInuse+zero.StackInuse, held.HeapInuse+held.StackInuse))
	t.add("Go runtime metadata (spans, GC bitmaps, profiling buckets, other)", mib(float64(zero.Metadata)), mib(float64(held.Metadata)), per(zero.Metadata, held.Metadata))
	t.add("outside the Go runtime (VmRSS less what Go holds and has not released: SQLite's pages, the binary)",
		mib(float64(zero.RSS)-float64(zero.GoMapped)), mib(float64(held.RSS)-float64(held.GoMapped)), per(zero.RSS-min(zero.RSS, zero.GoMapped), held.RSS-min(held.RSS, held.GoMapped)))
	t.add("goroutines", zero.Goroutines, held.Goroutines, fmt.Sprintf("%.2f", float64(held.Goroutines-zero.Goroutines)/float64(n)))
	t.print(out)
	t2 := table{head: []string{"goroutine entry function", "per held stream"}}
	for fn, v := range held.Roots {
		if d := v - zero.Roots[fn]; d >= max(n/20, 1) {
			t2.add("`"+fn+"`", fmt.Sprintf("%.2f", float64(d)/float64(n)))
		}
	}
	t2.print(out)
	return nil
}

func fileLimit() uint64 {
	l, _ := raiseFileLimit(0)
	return l
}
