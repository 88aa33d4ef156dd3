package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// patientScript is what each simulated patient says, turn by turn (a sore
// throat intake that stays open for several turns).
var patientScript = []string{
	"I have had a sore throat for 3 days",
	"I am 34 years old",
	"Female",
	"No",
	"No",
	"No",
}

func message(turn int) string {
	if turn < len(patientScript) {
		return patientScript[turn]
	}
	return "No"
}

type pacingTurn struct {
	queued  []queuedEvent
	sent    time.Time // POST /turns
	started time.Time // the "started" event read (the pacer let it go)
	final   string    // the settling event's name and status: "final/completed"
	err     error
}

type queuedEvent struct {
	Position    int `json:"position"`
	WaitSeconds int `json:"wait_seconds"`
}

type pacingPatient struct {
	intake  string // the app path /intakes/enc_...
	created time.Duration
	turns   []pacingTurn
	err     error
}

func runPacing(ctx context.Context, args []string, out io.Writer, verbose bool) error {
	fs := flag.NewFlagSet("pacing", flag.ContinueOnError)
	patients := fs.Int("patients", 20, "simulated patients, all at once")
	turns := fs.Int("turns", 2, "turns each patient sends")
	rpm := fs.Int("rpm", 6, "the sandbox's per-minute limit and the app's pacer")
	fragment := fs.Duration("fragment-delay", 150*time.Millisecond, "sandbox pause between fragments")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *patients < 1 || *turns < 1 || *rpm < 1 {
		return fmt.Errorf("-patients, -turns and -rpm must be positive")
	}
	requests := *patients * (1 + *turns)
	expected := time.Duration(float64(requests) / float64(*rpm) * float64(61*time.Second))
	fmt.Fprintf(out, "pacing: %d patients x (1 create + %d turns) = %d upstream requests at %d/min: about %s\n",
		*patients, *turns, requests, *rpm, expected.Round(time.Second))
	ctx, cancel := context.WithTimeout(ctx, expected*3/2+5*time.Minute)
	defer cancel()

	st, err := startStack(ctx, stackConfig{
		rpm: *rpm, turnsPerDay: 100, intakesPerDay: 100, fragmentDelay: *fragment,
		pacerPerMinute: *rpm, verbose: verbose,
	})
	if err != nil {
		return err
	}
	defer st.Close()
	tr := newTransport(*patients)
	defer tr.CloseIdleConnections()

	began := time.Now()
	results := make([]pacingPatient, *patients)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = pacingRun(ctx, st, tr, *turns) })
	}
	wg.Wait()
	total := time.Since(began)
	patientStatuses := st.rec.statusCounts()
	stats := st.sb.Stats()

	// Verify against the sandbox's own record. These reads count toward its
	// limit like any other; the sandbox clock is moved on a minute every
	// few reads so verification needs no real waiting (the patients are done).
	var c checks
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	reads := 0
	read := func(path string, v any) error {
		if reads%max(*rpm-1, 1) == 0 { // the patients' last requests are still in the window at first
			st.offset.Add(int64(61 * time.Second))
		}
		reads++
		return sandboxGet(ctx, hc, st.sbURL, path, v)
	}
	var (
		queuedEvents, queuedTurns, maxPos, maxWait, sumPos, sumWait int
		startWaits, creates                                         []time.Duration
		completed                                                   int
	)
	for pi, p := range results {
		if p.err != nil {
			c.expect(false, "patient %d: %v", pi, p.err)
		}
		creates = append(creates, p.created)
		sent := 0
		for ti, t := range p.turns {
			if t.err != nil {
				c.expect(false, "patient %d turn %d: %v", pi, ti+1, t.err)
				continue
			}
			sent++
			c.expect(t.final == "final/completed", "patient %d turn %d ended %q", pi, ti+1, t.final)
			if t.final == "final/completed" {
				completed++
			}
			if len(t.queued) > 0 {
				queuedTurns++
			}
			for _, q := range t.queued {
				queuedEvents++
				sumPos += q.Position
				sumWait += q.WaitSeconds
				maxPos, maxWait = max(maxPos, q.Position), max(maxWait, q.WaitSeconds)
			}
			if !t.started.IsZero() {
				startWaits = append(startWaits, t.started.Sub(t.sent))
			}
		}
		if p.intake == "" {
			continue
		}
		id := strings.TrimPrefix(p.intake, "/intakes/")
		var sum struct {
			TurnCount int `json:"turn_count"`
		}
		var h struct {
			Conversation []struct {
				Role, Text string
			} `json:"conversation"`
		}
		if err := read("/v1/intakes/"+id, &sum); err != nil {
			c.expect(false, "patient %d: sandbox summary: %v", pi, err)
			continue
		}
		if err := read("/v1/intakes/"+id+"/handoff", &h); err != nil {
			c.expect(false, "patient %d: sandbox handoff: %v", pi, err)
			continue
		}
		var said []string
		for _, m := range h.Conversation {
			if m.Role == "patient" {
				said = append(said, m.Text)
			}
		}
		want := make([]string, sent)
		for i := range want {
			want[i] = message(i)
		}
		c.expect(sum.TurnCount == sent, "patient %d: sandbox turn_count %d, app sent %d", pi, sum.TurnCount, sent)
		c.expect(slices.Equal(said, want), "patient %d: sandbox conversation %q, sent %q", pi, said, want)
	}
	c.expect(stats.Requests["turn"] == *patients**turns, "sandbox served %d turn requests, want %d", stats.Requests["turn"], *patients**turns)
	c.expect(stats.EngineRuns == *patients**turns, "sandbox ran the engine %d times, want %d", stats.EngineRuns, *patients**turns)
	c.expect(stats.Requests["create"] == *patients, "sandbox served %d creates, want %d", stats.Requests["create"], *patients)
	c.expect(patientStatuses[http.StatusTooManyRequests] == 0, "the sandbox answered %d requests with 429", patientStatuses[http.StatusTooManyRequests])
	warn, errs, sample := st.logSummary()

	cs, ss := summarize(creates), summarize(startWaits)
	avg := func(sum, n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", float64(sum)/float64(n))
	}
	fmt.Fprintf(out, "\n### pacing (%s, GOMAXPROCS %d)\n\n", time.Now().Format("2006-01-02"), gomaxprocs())
	t := table{head: []string{"metric", "value"}}
	t.add("patients x turns", fmt.Sprintf("%d x %d (+1 create each)", *patients, *turns))
	t.add("limit (sandbox RPM = app pacer)", fmt.Sprintf("%d/min", *rpm))
	t.add("total duration", total.Round(time.Second))
	t.add("turns completed (final/completed)", fmt.Sprintf("%d / %d", completed, *patients**turns))
	t.add("turns failed or refused", *patients**turns-completed)
	t.add("429 answered by the sandbox", patientStatuses[http.StatusTooManyRequests])
	t.add("sandbox requests (create / turn / engine runs)", fmt.Sprintf("%d / %d / %d", stats.Requests["create"], stats.Requests["turn"], stats.EngineRuns))
	t.add("turns that saw a queued event", fmt.Sprintf("%d / %d", queuedTurns, *patients**turns))
	t.add("queued events", queuedEvents)
	t.add("queue position max / avg", fmt.Sprintf("%d / %s", maxPos, avg(sumPos, queuedEvents)))
	t.add("reported wait max / avg", fmt.Sprintf("%d s / %s s", maxWait, avg(sumWait, queuedEvents)))
	t.add("measured turn wait (POST to started) max / avg", fmt.Sprintf("%s / %s", ss.maxd.Round(100*time.Millisecond), ss.avg.Round(100*time.Millisecond)))
	t.add("intake create (POST /intakes) max / avg", fmt.Sprintf("%s / %s", cs.maxd.Round(100*time.Millisecond), cs.avg.Round(100*time.Millisecond)))
	t.add("app log warnings / errors", fmt.Sprintf("%d / %d", warn, errs))
	t.print(out)
	for _, s := range sample {
		fmt.Fprintln(out, "app log:", s)
	}
	return c.report(out)
}

// pacingRun is one patient: create an intake, then send each turn and
// follow its events to the settling one.
func pacingRun(ctx context.Context, st *stack, tr http.RoundTripper, turns int) pacingPatient {
	var p pacingPatient
	b, err := newBrowser(st.app.URL, tr)
	if err != nil {
		p.err = err
		return p
	}
	start := time.Now()
	if p.intake, err = b.start(ctx); err != nil {
		p.err = err
		return p
	}
	p.created = time.Since(start)
	for i := range turns {
		t := pacingTurn{sent: time.Now()}
		t.final, t.err = followTurn(ctx, b, p.intake, message(i), &t)
		p.turns = append(p.turns, t)
		if t.err != nil {
			break
		}
	}
	return p
}

func followTurn(ctx context.Context, b *browser, intake, msg string, t *pacingTurn) (string, error) {
	ev, err := b.sendTurn(ctx, intake, msg)
	if err != nil {
		return "", err
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	s, err := b.events(sctx, ev)
	if err != nil {
		return "", err
	}
	defer s.Close()
	for {
		e, err := s.Next()
		if err != nil {
			return "", fmt.Errorf("events: %w", err)
		}
		switch e.Name {
		case "queued":
			var q queuedEvent
			if err := json.Unmarshal([]byte(e.Data), &q); err != nil {
				return "", fmt.Errorf("queued event %q: %w", e.Data, err)
			}
			t.queued = append(t.queued, q)
		case "started":
			t.started = e.At
		case "final", "failed":
			var d struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal([]byte(e.Data), &d)
			return e.Name + "/" + d.Status, nil
		}
	}
}
