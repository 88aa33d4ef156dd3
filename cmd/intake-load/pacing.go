package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
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
	intake  string // the app path /intakes/iw_... (the encounter is upstream's)
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
	replicas := fs.Int("replicas", 1, "apps in front of the sandbox; more than one share PostgreSQL (patient i uses replica i mod N)")
	dbURL := fs.String("database-url", "", "PostgreSQL for the replicas (empty: a throwaway cluster with scripts/pg-cluster)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *patients < 1 || *turns < 1 || *rpm < 1 || *replicas < 1 {
		return fmt.Errorf("-patients, -turns, -rpm and -replicas must be positive")
	}
	requests := *patients * (1 + *turns)
	expected := time.Duration(float64(requests) / float64(*rpm) * float64(61*time.Second))
	fmt.Fprintf(out, "pacing: %d patients x (1 create + %d turns) = %d upstream requests at %d/min: about %s\n",
		*patients, *turns, requests, *rpm, expected.Round(time.Second))
	ctx, cancel := context.WithTimeout(ctx, expected*3/2+5*time.Minute)
	defer cancel()

	st, err := startStack(ctx, stackConfig{
		rpm: *rpm, turnsPerDay: 100, intakesPerDay: 100, fragmentDelay: *fragment,
		pacerPerMinute: *rpm, verbose: verbose, replicas: *replicas, databaseURL: *dbURL,
	})
	if err != nil {
		return err
	}
	defer st.Close()
	store := "SQLite"
	if st.dbURL != "" {
		store = "one PostgreSQL database (the key's budget shared through it)"
	}
	fmt.Fprintf(out, "stack: %d replica(s) in this process, each its own listener and REPLICA_NAME, on %s\n", len(st.apps), store)
	tr := newTransport(*patients)
	defer tr.CloseIdleConnections()

	began := time.Now()
	results := make([]pacingPatient, *patients)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = pacingRun(ctx, st.apps[i%len(st.apps)].URL, tr, *turns) })
	}
	wg.Wait()
	total := time.Since(began)
	statuses := st.rec.statusCounts()
	posts := st.rec.postLog()
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
		queuedEvents, maxPos, maxWait int
		startLatency, turnWaits       []time.Duration
		completed, started            int
	)
	waited := map[string][]queuedEvent{} // "patient p turn t" -> its queued events
	for pi, p := range results {
		if p.err != nil {
			c.expect(false, "patient %d (replica %d): %v", pi, pi%len(st.apps), p.err)
		}
		if p.intake != "" {
			started++
			startLatency = append(startLatency, p.created)
		}
		for ti, t := range p.turns {
			if t.err != nil {
				c.expect(false, "patient %d turn %d: %v", pi, ti+1, t.err)
				continue
			}
			c.expect(t.final == "final/completed", "patient %d turn %d ended %q", pi, ti+1, t.final)
			if t.final == "final/completed" {
				completed++
			}
			if len(t.queued) > 0 {
				waited[fmt.Sprintf("patient %d turn %d", pi, ti+1)] = t.queued
			}
			for _, q := range t.queued {
				queuedEvents++
				maxPos, maxWait = max(maxPos, q.Position), max(maxWait, q.WaitSeconds)
			}
			if !t.started.IsZero() {
				turnWaits = append(turnWaits, t.started.Sub(t.sent))
			}
		}
	}
	ls := summarize(startLatency)
	c.expect(started == *patients, "%d / %d intakes started", started, *patients)
	// Starting records the intake only (upstream creation waits with the
	// first turn), so it is answered at once even with the queue full.
	c.expect(ls.maxd < time.Second, "slowest start took %s, want well under a second", ls.maxd)
	c.expect(completed == *patients**turns, "%d / %d turns completed", completed, *patients**turns)

	// The app's intake ids are its own; the encounters are the sandbox's.
	// Every encounter must hold exactly the turns one patient sent.
	want := make([]string, *turns)
	for i := range want {
		want[i] = message(i)
	}
	encounters := st.rec.encounters()
	c.expect(len(encounters) == *patients, "the sandbox saw turns on %d encounters, want %d", len(encounters), *patients)
	for _, id := range encounters {
		var sum struct {
			TurnCount int `json:"turn_count"`
		}
		var h struct {
			Conversation []struct {
				Role, Text string
			} `json:"conversation"`
		}
		if err := read("/v1/intakes/"+id, &sum); err != nil {
			c.expect(false, "encounter %s: sandbox summary: %v", id, err)
			continue
		}
		if err := read("/v1/intakes/"+id+"/handoff", &h); err != nil {
			c.expect(false, "encounter %s: sandbox handoff: %v", id, err)
			continue
		}
		var said []string
		for _, m := range h.Conversation {
			if m.Role == "patient" {
				said = append(said, m.Text)
			}
		}
		c.expect(sum.TurnCount == *turns, "encounter %s: sandbox turn_count %d, want %d", id, sum.TurnCount, *turns)
		c.expect(slices.Equal(said, want), "encounter %s: sandbox conversation %q, want %q", id, said, want)
	}
	c.expect(stats.Requests["create"] == *patients, "sandbox served %d creates, want %d", stats.Requests["create"], *patients)
	c.expect(stats.Requests["turn"] == *patients**turns, "sandbox served %d turn requests, want %d", stats.Requests["turn"], *patients**turns)
	c.expect(stats.EngineRuns == *patients**turns, "sandbox ran the engine %d times, want %d", stats.EngineRuns, *patients**turns)
	c.expect(statuses[http.StatusTooManyRequests] == 0, "the sandbox answered %d requests with 429", statuses[http.StatusTooManyRequests])
	refused := 0
	for _, p := range posts {
		if p.status >= 400 {
			refused++
		}
	}
	c.expect(refused == 0, "the sandbox refused %d creates or turns", refused)
	most, perMinute := maxInWindow(posts, time.Minute)
	c.expect(most <= *rpm, "%d creates and turns reached the sandbox within one minute, limit %d", most, *rpm)

	increased, moved := queueMotion(waited)
	for _, s := range increased {
		c.expect(false, "queue position went up: %s", s)
	}
	// Where the rises were: a first turn waits twice (the create, then the
	// turn), later turns once.
	firstRose := 0
	for _, s := range increased {
		if strings.Contains(s, " turn 1:") {
			firstRose++
		}
	}
	c.expect(len(waited) == 0 || moved > 0, "none of the %d turns that waited saw its position or wait go down", len(waited))
	c.expect(len(waited) > 0 || *patients*(1+*turns) <= *rpm, "no turn was shown a queue position though %d requests exceed %d/min", *patients*(1+*turns), *rpm)
	warn, errs, sample := st.logSummary()

	ws := summarize(turnWaits)
	fmt.Fprintf(out, "\n### pacing (%s, GOMAXPROCS %d)\n\n", time.Now().Format("2006-01-02"), gomaxprocs())
	t := table{head: []string{"metric", "value"}}
	t.add("patients x turns", fmt.Sprintf("%d x %d (+1 create each)", *patients, *turns))
	t.add("replicas", fmt.Sprintf("%d (%s)", len(st.apps), store))
	t.add("limit (sandbox RPM = app budget)", fmt.Sprintf("%d/min", *rpm))
	t.add("wall time", total.Round(time.Second))
	t.add("intakes started", fmt.Sprintf("%d / %d", started, *patients))
	t.add("start latency (POST /intakes) p50 / max", fmt.Sprintf("%s / %s", ls.p50.Round(time.Millisecond), ls.maxd.Round(time.Millisecond)))
	t.add("turns completed (final/completed)", fmt.Sprintf("%d / %d", completed, *patients**turns))
	t.add("429 answered by the sandbox", statuses[http.StatusTooManyRequests])
	t.add("sandbox requests (create / turn / engine runs)", fmt.Sprintf("%d / %d / %d", stats.Requests["create"], stats.Requests["turn"], stats.EngineRuns))
	t.add("most creates+turns in any 60 s / achieved per minute", fmt.Sprintf("%d / %.2f", most, perMinute))
	t.add("turns shown a queue position / moving", fmt.Sprintf("%d / %d", len(waited), moved))
	t.add("turns whose shown position rose (first turns / later turns)", fmt.Sprintf("%d (%d / %d)", len(increased), firstRose, len(increased)-firstRose))
	t.add("queued events; position max; shown wait max", fmt.Sprintf("%d; %d; %d s", queuedEvents, maxPos, maxWait))
	t.add("turn wait (POST to started) p50 / max", fmt.Sprintf("%s / %s", ws.p50.Round(time.Second), ws.maxd.Round(time.Second)))
	t.add("app log warnings / errors", fmt.Sprintf("%d / %d", warn, errs))
	t.print(out)
	// A few of the longest waits, as the patient saw them (position/wait).
	names := slices.Collect(maps.Keys(waited))
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(waited[b]), len(waited[a])), strings.Compare(a, b))
	})
	for _, n := range names[:min(3, len(names))] {
		fmt.Fprintf(out, "queue shown to %s: %s\n", n, formatQueued(waited[n]))
	}
	for _, s := range sample {
		fmt.Fprintln(out, "app log:", s)
	}
	return c.report(out)
}

// pacingRun is one patient: create an intake, then send each turn and
// follow its events to the settling one.
func pacingRun(ctx context.Context, appURL string, tr http.RoundTripper, turns int) pacingPatient {
	var p pacingPatient
	b, err := newBrowser(appURL, tr)
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
