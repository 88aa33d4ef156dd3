package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// renderMessages are vague patient messages: the rules engine keeps asking
// for the main problem, so the intake stays open for as many turns as asked.
var renderMessages = []string{
	"Hello",
	"I am not feeling well today",
	"Hmm, let me think about how to put it",
	"It is hard to describe, I just feel off",
	"Sorry, give me a moment",
}

func runRender(ctx context.Context, args []string, out io.Writer, verbose bool) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	clients := fs.Int("c", 32, "concurrent clients (sharing the patient's session)")
	dur := fs.Duration("d", 10*time.Second, "measured duration")
	warm := fs.Duration("warmup", 2*time.Second, "unmeasured warm-up")
	turns := fs.Int("turns", 40, "completed turns in the conversation")
	fragment := fs.Duration("fragment-delay", time.Millisecond, "sandbox pause between fragments while building the conversation")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *clients < 1 || *turns < 1 || *dur <= 0 {
		return fmt.Errorf("-c, -turns and -d must be positive")
	}
	if _, err := raiseFileLimit(uint64(4**clients + 1024)); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *dur+*warm+10*time.Minute)
	defer cancel()
	st, err := startStack(ctx, stackConfig{fragmentDelay: *fragment, pacerPerMinute: -1, appTurnsPerDay: -1, appIntakesDay: -1, verbose: verbose})
	if err != nil {
		return err
	}
	defer st.Close()
	tr := newTransport(*clients)
	defer tr.CloseIdleConnections()
	var c checks

	// The conversation: real turns through the app, as the page script
	// sends them, each followed to its final event.
	b, err := newBrowser(st.app.URL, tr)
	if err != nil {
		return err
	}
	intake, err := b.start(ctx)
	if err != nil {
		return err
	}
	built := time.Now()
	for i := range *turns {
		var t pacingTurn
		end, err := followTurn(ctx, b, intake, renderMessages[i%len(renderMessages)], &t)
		if err != nil {
			return fmt.Errorf("turn %d: %w", i+1, err)
		}
		if end != "final/completed" {
			return fmt.Errorf("turn %d ended %q", i+1, end)
		}
	}
	fmt.Fprintf(out, "setup: %d turns completed through the app in %s\n", *turns, time.Since(built).Round(time.Millisecond))

	res, page, err := b.do(ctx, http.MethodGet, intake, nil)
	if err != nil {
		return err
	}
	c.expect(res.StatusCode == http.StatusOK, "GET %s: %d", intake, res.StatusCode)
	for i := 1; i <= *turns; i++ {
		c.expect(strings.Contains(string(page), `id="turn-`+strconv.Itoa(i)+`"`), "the page lacks turn %d", i)
	}
	c.expect(!strings.Contains(string(page), `id="turn-`+strconv.Itoa(*turns+1)+`"`), "the page has more than %d turns", *turns)

	type result struct {
		lat               []time.Duration
		bytes, minB, maxB int
		bad               int
		firstBad          string
	}
	results := make([]result, *clients)
	var wg sync.WaitGroup
	begin := time.Now()
	measureFrom, stopAt := begin.Add(*warm), begin.Add(*warm+*dur)
	for i := range *clients {
		wg.Go(func() {
			r := &results[i]
			for {
				t0 := time.Now()
				if !t0.Before(stopAt) || ctx.Err() != nil {
					return
				}
				rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
				res, body, err := b.do(rctx, http.MethodGet, intake, nil)
				rcancel()
				d := time.Since(t0)
				if t0.Before(measureFrom) {
					continue
				}
				if err != nil || res.StatusCode != http.StatusOK {
					r.bad++
					if r.firstBad == "" {
						if err != nil {
							r.firstBad = err.Error()
						} else {
							r.firstBad = fmt.Sprintf("status %d", res.StatusCode)
						}
					}
					continue
				}
				r.lat = append(r.lat, d)
				r.bytes += len(body)
				if r.minB == 0 || len(body) < r.minB {
					r.minB = len(body)
				}
				r.maxB = max(r.maxB, len(body))
			}
		})
	}
	wg.Wait()
	var (
		all        []time.Duration
		bytes, bad int
		minB, maxB int
	)
	for _, r := range results {
		all = append(all, r.lat...)
		bytes, bad = bytes+r.bytes, bad+r.bad
		if r.minB > 0 && (minB == 0 || r.minB < minB) {
			minB = r.minB
		}
		maxB = max(maxB, r.maxB)
		c.expect(r.bad == 0, "%d failed page loads (first: %s)", r.bad, r.firstBad)
	}
	s := summarize(all)
	warn, errs, sample := st.logSummary()
	fmt.Fprintf(out, "\n### render: GET /intakes/{id} with %d completed turns, %d concurrent clients, %s (%s, GOMAXPROCS %d)\n\n",
		*turns, *clients, *dur, time.Now().Format("2006-01-02"), gomaxprocs())
	t := table{head: []string{"metric", "value"}}
	t.add("requests (200 / failed)", fmt.Sprintf("%d / %d", len(all), bad))
	t.add("throughput", fmt.Sprintf("%.0f pages/s", float64(len(all))/dur.Seconds()))
	t.add("latency p50 / p90 / p99 / max", fmt.Sprintf("%s / %s / %s / %s", ms(s.p50), ms(s.p90), ms(s.p99), ms(s.maxd)))
	if len(all) > 0 {
		t.add("bytes per page (avg, min-max)", fmt.Sprintf("%d (%d-%d)", bytes/len(all), minB, maxB))
		t.add("transfer", fmt.Sprintf("%.1f MiB/s", float64(bytes)/dur.Seconds()/(1<<20)))
	}
	t.add("app log warnings / errors", fmt.Sprintf("%d / %d", warn, errs))
	t.print(out)
	for _, l := range sample {
		fmt.Fprintln(out, "app log:", l)
	}
	return c.report(out)
}
