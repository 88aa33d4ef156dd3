package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff/adapters/postgres/pgtest"
	"github.com/clinical-intake/intake-web/intakeservice"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

// turnLease is the lease the replicas run on: the default, so that a
// takeover within seconds can only come from the replicas' presence
// (bff.ReplicaPresence), never from the lease running out.
const turnLease = "30s"

// takeOverLine is what a replica logs when it takes a turn over, and
// goneReplica the reason it gives when the owner's presence went (not its
// lease, which runs for turnLease: a takeover by lease would pass every
// deadline here too, so the tests ask for this reason).
const (
	takeOverLine = "taking over a turn left pending"
	goneReplica  = "its replica is gone"
)

// replicaMessage is the patient's first message: the rules engine answers
// it with a reply of some twenty words, streamed over several seconds.
const replicaMessage = "I have had a sore throat for three days"

// TestReplicasTakeOverATurnMidStream is issue #12's test: two app processes
// on one PostgreSQL database and one sandbox key. A patient posts a turn to
// A and follows it on B; A is killed (SIGKILL) mid-turn; B takes the turn
// over and settles it from the service's handoff, never sending it again.
// The conversation holds every message once, the engine ran once, and the
// events B delivered have strictly increasing ids across reconnections.
// Issue #26: B takes over within seconds, long before A's 30 s lease ends.
func TestReplicasTakeOverATurnMidStream(t *testing.T) {
	t.Parallel()
	s := startReplicas(t, nil)
	s.takeOverMidStream("killed (SIGKILL)", func() { s.kill() })
}

// TestReplicasTakeOverFromAReplicaCutFromTheDatabase: A's connections to
// PostgreSQL go through a TCP proxy that the test cuts mid-turn (A's
// process lives on, but reaches the database no more). B takes the turn
// over within seconds and settles it once; A, reconnected afterwards,
// neither settles it nor sends it again.
func TestReplicasTakeOverFromAReplicaCutFromTheDatabase(t *testing.T) {
	t.Parallel()
	var cut *tcpProxy
	s := startReplicas(t, func(dbURL string) string {
		cut = startTCPProxy(t, dbURL)
		return cut.url
	})
	s.takeOverMidStream("cut from PostgreSQL", func() {
		s.checkAlive()
		cut.cut()
	})
	cut.heal()
	s.a.alive("its database connection came back")
	if strings.Contains(s.a.log(), takeOverLine) {
		t.Errorf("A took a turn over:\n%s", s.a.log())
	}
}

// TestReplicasLeaveAPausedReplicaItsTurn: A is stopped (SIGSTOP, as a long
// pause would) mid-turn for longer than the presence grace but less than
// the lease; its connections stay open, so B leaves the turn to it, and A,
// resumed, finishes it alone: the engine ran once, B took nothing over.
func TestReplicasLeaveAPausedReplicaItsTurn(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := startReplicas(t, nil)
	eventsURL := s.sendFirstMessage()
	paused := false
	seen, _, err := s.browser.follow(ctx, s.b.url+eventsURL, 0, func(ev sseEvent, seen []sseEvent) bool {
		if ev.Name == "delta" && !paused {
			paused = true
			s.checkAlive()
			if err := s.a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			// B looks every 500 ms and takes a gone replica's turns
			// after a 2 s grace: 6 s is eight looks past it (and far
			// below the lease), so B would have taken the turn by now if
			// a pause looked like death.
			s.waitTakeOverChance(ctx, 6*time.Second)
			if err := s.a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
		}
		return false
	})
	if err != nil || !paused {
		t.Fatalf("%v (paused %v); events %v", err, paused, names(seen))
	}
	if strings.Contains(s.b.log(), takeOverLine) {
		t.Fatalf("B took the paused replica's turn over:\n%s", s.b.log())
	}
	checkIDs(t, seen)
	if last := seen[len(seen)-1]; last.Name != "final" {
		t.Fatalf("the turn settled %s: %s", last.Name, last.Data)
	}
	if st := s.sandbox.Service.Stats(); st.EngineRuns != 1 || st.Requests["turn"] != 1 {
		t.Errorf("the sandbox ran the engine %d times on %d turn requests; want 1 and 1", st.EngineRuns, st.Requests["turn"])
	}
}

// TestReplicasFollowATurnFromItsStartOnAnotherReplica: the load balancer
// sends the browser's event stream to B the moment A took the message,
// before A logged any event. B's stream waits for them and delivers the
// reply as it streams, in that one stream: ending it would make the
// browser wait for the retry hint (2 s) and get the reply's start at once.
func TestReplicasFollowATurnFromItsStartOnAnotherReplica(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := startReplicas(t, nil)
	eventsURL := s.sendFirstMessage()
	seen, streams, err := s.browser.follow(ctx, s.b.url+eventsURL, 0, nil)
	if err != nil {
		t.Fatalf("%v; events %v", err, names(seen))
	}
	if streams != 1 || seen[len(seen)-1].Name != "final" {
		t.Fatalf("B delivered %v over %d streams, want the whole turn in one", names(seen), streams)
	}
	if n := strings.Count(strings.Join(names(seen), " "), "delta"); n < 3 {
		t.Fatalf("B delivered %d deltas (%v), want the reply fragment by fragment", n, names(seen))
	}
	checkIDs(t, seen)
}

// TestReplicasRestartedUnderTheSameNameSettleTheLastRunsTurns: one
// replica on PostgreSQL, with a fixed REPLICA_NAME (as a container
// restarted in place has), is killed mid-turn and started again under the
// same name. The new run settles the turn within seconds (the last run's
// presence is gone), rather than renewing a lease nothing runs.
func TestReplicasRestartedUnderTheSameNameSettleTheLastRunsTurns(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := &replicas{t: t, dbURL: pgtest.URL(t), sandbox: startReplicaSandbox(t), browser: newReplicaBrowser(t)}
	env := []string{
		"INTAKE_BASE_URL=" + s.sandbox.URL, "INTAKE_API_KEY=" + s.sandbox.Service.Key(),
		"TURN_LEASE=" + turnLease, "PACER_PER_MINUTE=-1", "REPLICA_NAME=replica-a", "DATABASE_URL=" + s.dbURL,
	}
	s.a = startProc(t, env...)
	s.waitPresent("replica-a")
	eventsURL := s.sendFirstMessage()
	seen, _, err := s.browser.follow(ctx, s.a.url+eventsURL, 0, func(ev sseEvent, seen []sseEvent) bool {
		return ev.Name == "delta"
	})
	if err != nil || indexOf(seen, "delta") < 0 {
		t.Fatalf("no delta from A (%v): %v", err, names(seen))
	}
	if err := s.a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.a.exited
	killed := time.Now()
	again := startProc(t, env...)
	for s.turnStatus(ctx) != "completed" {
		select {
		case <-ctx.Done():
			t.Fatalf("the turn was not settled by the restarted replica (status %q):\n%s", s.turnStatus(context.Background()), again.log())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Logf("settled %v after the kill, by the replica restarted under the same name", time.Since(killed).Round(10*time.Millisecond))
	if !strings.Contains(again.log(), goneReplica) {
		t.Errorf("the restarted replica settled the turn, but not because the last run's presence went:\n%s", again.log())
	}
	if st := s.sandbox.Service.Stats(); st.EngineRuns != 1 || st.Requests["turn"] != 1 {
		t.Errorf("the sandbox ran the engine %d times on %d turn requests; want 1 and 1", st.EngineRuns, st.Requests["turn"])
	}
}

// takeOverMidStream sends the first message on A and follows the reply on
// B; at B's first delta it interrupts A (how says how), then requires B to
// take the turn over and settle it once, with ids strictly increasing.
func (s *replicas) takeOverMidStream(how string, interrupt func()) {
	t := s.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	eventsURL := s.sendFirstMessage()
	var at time.Time
	seen, streams, err := s.browser.follow(ctx, s.b.url+eventsURL, 0, func(ev sseEvent, seen []sseEvent) bool {
		if ev.Name == "delta" && at.IsZero() {
			if indexOf(seen, "completed") >= 0 {
				t.Fatalf("the reply was complete before A could be interrupted: make the sandbox slower (events %v)", names(seen))
			}
			interrupt()
			at = time.Now()
			t.Logf("A %s after event %d (%s) reached B", how, ev.ID, ev.Name)
		}
		return false
	})
	if err != nil {
		s.diagnose()
		t.Fatalf("%v; events %v", err, names(seen))
	}
	if at.IsZero() {
		t.Fatalf("B relayed no delta before the turn settled: events %v", names(seen))
	}
	t.Logf("events on B: %v over %d stream(s); settled %v after A was %s (lease %s)",
		names(seen), streams, time.Since(at).Round(10*time.Millisecond), how, turnLease)
	checkIDs(t, seen)
	s.checkSettledOnce(ctx, seen[len(seen)-1])
}

// TestReplicasContinueEventIDsAfterTakeOver follows the turn on A, as a
// browser the load balancer sent there; A is killed mid-turn, and the
// browser reconnects, with Last-Event-ID, to B only once B has taken the
// turn over: B never mirrored the turn, so the ids it continues with come
// from the event log alone. The browser sees each event once, in order.
//
// It guards against ids reused after a takeover: were events A's browser
// saw never logged (A hands them to its followers at once, to the log
// within 100 ms), B would number its events after the last logged one,
// reusing those ids, and the browser's Last-Event-ID would hide B's final
// event.
func TestReplicasContinueEventIDsAfterTakeOver(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s := startReplicas(t, nil)
	eventsURL := s.sendFirstMessage()

	killed := false
	seenOnA, _, err := s.browser.follow(ctx, s.a.url+eventsURL, 0, func(ev sseEvent, seen []sseEvent) bool {
		if ev.Name == "delta" {
			if indexOf(seen, "completed") >= 0 {
				t.Fatalf("the reply was complete before A could be killed: make the sandbox slower (events %v)", names(seen))
			}
			s.kill()
			killed = true
		}
		return killed // A is gone: stop following it
	})
	if err != nil || !killed {
		t.Fatalf("A relayed no delta before the turn settled (%v): events %v", err, names(seenOnA))
	}
	last := seenOnA[len(seenOnA)-1]
	// Wait, polling the database, until B has taken the turn over and
	// settled it; then its events are all in B's memory and the log.
	for s.turnStatus(ctx) != "completed" {
		select {
		case <-ctx.Done():
			t.Fatalf("the turn was not completed within the deadline (status %q):\n%s", s.turnStatus(ctx), s.b.log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	// A settled turn's events replay at once: a few seconds is plenty.
	onB, cancelB := context.WithTimeout(ctx, 5*time.Second)
	defer cancelB()
	seenOnB, streams, err := s.browser.follow(onB, s.b.url+eventsURL, last.ID, nil)
	if err != nil {
		t.Fatalf("after A was killed: %v. A's browser saw %v; the turn's event log holds %v; B delivered %v",
			err, names(seenOnA), s.loggedEvents(ctx), names(seenOnB))
	}
	seen := append(seenOnA[:len(seenOnA):len(seenOnA)], seenOnB...)
	t.Logf("events on A: %v; then on B after Last-Event-ID %d: %v over %d stream(s)", names(seenOnA), last.ID, names(seenOnB), streams)
	checkIDs(t, seen)
	s.checkSettledOnce(ctx, seen[len(seen)-1])
}

// replicas is the scenario both tests share: a sandbox, one PostgreSQL
// database, replicas A and B on them, and one patient's browser.
type replicas struct {
	t        *testing.T
	dbURL    string
	sandbox  *sandbox.Server
	a, b     *proc
	browser  *replicaBrowser
	intakeID string
}

// startReplicas starts the sandbox and the two replicas; viaA, if set,
// gives the database URL replica A uses instead of the database's own.
func startReplicas(t *testing.T, viaA func(dbURL string) string) *replicas {
	t.Helper()
	s := &replicas{t: t, dbURL: pgtest.URL(t), sandbox: startReplicaSandbox(t), browser: newReplicaBrowser(t)}
	env := []string{
		"INTAKE_BASE_URL=" + s.sandbox.URL, "INTAKE_API_KEY=" + s.sandbox.Service.Key(),
		"TURN_LEASE=" + turnLease, "PACER_PER_MINUTE=-1",
	}
	urlA := s.dbURL
	if viaA != nil {
		urlA = viaA(s.dbURL)
	}
	s.a = startProc(t, append(env, "REPLICA_NAME=replica-a", "DATABASE_URL="+urlA)...)
	s.b = startProc(t, append(env, "REPLICA_NAME=replica-b", "DATABASE_URL="+s.dbURL)...)
	s.waitPresent("replica-a", "replica-b")
	return s
}

// waitPresent waits until each replica named (by REPLICA_NAME) has taken
// its presence: a replica takes it in the background as it starts serving,
// and a turn begun before then is taken over when its lease runs out (30
// s), not when the presence goes, which is what the tests here check. On a
// loaded machine the first turn can come first.
func (s *replicas) waitPresent(names ...string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range names {
		for {
			var n int
			if err := s.query(ctx, func(conn *pgx.Conn) error {
				// A run's presence row is written once it holds the lock.
				return conn.QueryRow(ctx, `SELECT count(*) FROM replica_presence WHERE name LIKE $1`, name+".%").Scan(&n)
			}); err != nil {
				s.t.Fatalf("the presence of %s: %v", name, err)
			}
			if n > 0 {
				break
			}
			select {
			case <-ctx.Done():
				s.t.Fatalf("%s took no presence within 30 s", name)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// checkAlive fails the test if B took the turn over while A was alive.
func (s *replicas) checkAlive() {
	s.t.Helper()
	if strings.Contains(s.b.log(), takeOverLine) {
		s.t.Fatalf("B took the turn over while A was alive and connected:\n%s", s.b.log())
	}
}

// waitTakeOverChance gives B's presence watch d to take the turn, polling
// the turn's lease owner in the database: it returns early, failing the
// test, if B takes it.
func (s *replicas) waitTakeOverChance(ctx context.Context, d time.Duration) {
	s.t.Helper()
	until := time.Now().Add(d)
	for time.Now().Before(until) {
		var owner string
		if err := s.query(ctx, func(conn *pgx.Conn) error {
			return conn.QueryRow(ctx, `SELECT lease_owner FROM turns WHERE intake_id = $1 AND idx = 1`, s.intakeID).Scan(&owner)
		}); err != nil {
			s.t.Fatalf("the turn's lease: %v", err)
		}
		if !strings.HasPrefix(owner, "replica-a.") && owner != "" {
			s.t.Fatalf("the paused replica's turn went to %q", owner)
		}
		select {
		case <-ctx.Done():
			s.t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sendFirstMessage starts an intake on A (the start page, its form with the
// CSRF token, the redirect) and posts the first message to A as the page's
// script does; it returns the turn's events URL.
func (s *replicas) sendFirstMessage() string {
	t, br := s.t, s.browser
	t.Helper()
	start := br.get(s.a.url + "/")
	if start.status != http.StatusOK {
		t.Fatalf("start page on A: %d", start.status)
	}
	created := br.post(s.a.url+"/intakes", url.Values{
		"_csrf":         {hiddenField(t, start.body, `action="/intakes"`, "_csrf")},
		"submission_id": {hiddenField(t, start.body, `action="/intakes"`, "submission_id")},
		"age":           {"34"}, "sex": {"female"}, "history": {""}, "synthetic": {"on"},
	})
	intakePath := created.url.Path
	if created.status != http.StatusOK || !strings.HasPrefix(intakePath, "/intakes/") {
		t.Fatalf("start form on A: %d at %s:\n%s", created.status, created.url, created.body)
	}
	s.intakeID = strings.TrimPrefix(intakePath, "/intakes/")
	const composer = `class="message-form"`
	csrf := hiddenField(t, created.body, composer, "_csrf")
	sent := br.post(s.a.url+intakePath+"/turns", url.Values{
		"_csrf": {csrf}, "submission_id": {hiddenField(t, created.body, composer, "submission_id")}, "message": {replicaMessage},
	}, "Accept", "application/json", "X-CSRF-Token", csrf)
	if sent.status != http.StatusAccepted {
		t.Fatalf("message on A: %d:\n%s", sent.status, sent.body)
	}
	eventsURL := jsonField(t, sent.body, "events_url")
	if eventsURL != intakePath+"/turns/1/events" {
		t.Fatalf("events_url %q", eventsURL)
	}
	return eventsURL
}

// kill sends A SIGKILL (no shutdown, nothing flushed) mid-turn, and waits
// for it to be gone.
func (s *replicas) kill() {
	t := s.t
	t.Helper()
	s.checkAlive()
	if err := s.a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.a.exited
}

// follow reads a turn's events as EventSource does until a final or failed
// event: a stream that ends without one is opened again after the server's
// retry hint (at most 250 ms here) with Last-Event-ID. on, if set, sees each
// event with those so far, and may stop the following (the stream is then
// closed). It returns the events and how many streams it opened, and an
// error when ctx ended first.
func (br *replicaBrowser) follow(ctx context.Context, u string, lastID int64, on func(ev sseEvent, seen []sseEvent) (stop bool)) ([]sseEvent, int, error) {
	t := br.t
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // closes the stream when the caller stops
	var seen []sseEvent
	for opened := 1; ; opened++ {
		events, retry, err := br.openEvents(ctx, u, lastID)
		if err != nil {
			t.Fatalf("follow %s: %v (events so far: %v)", u, err, names(seen))
		}
		for ev := range events {
			seen = append(seen, ev)
			if ev.ID != 0 {
				lastID = ev.ID
			}
			if on != nil && on(ev, seen) {
				return seen, opened, nil
			}
			if ev.Name == "final" || ev.Name == "failed" {
				return seen, opened, nil
			}
		}
		select {
		case <-time.After(min(*retry, 250*time.Millisecond)):
		case <-ctx.Done():
			return seen, opened, fmt.Errorf("no final or failed event from %s within the deadline, over %d stream(s) from Last-Event-ID %d", u, opened, lastID)
		}
	}
}

// checkIDs requires every event to have an id, strictly increasing: none
// repeated, none going back.
func checkIDs(t *testing.T, seen []sseEvent) {
	t.Helper()
	for i, ev := range seen {
		if ev.ID <= 0 || (i > 0 && ev.ID <= seen[i-1].ID) {
			t.Fatalf("event %d (%s) has id %d after %d: ids must strictly increase; events %v", i, ev.Name, ev.ID, seen[max(i-1, 0)].ID, names(seen))
		}
	}
}

// checkSettledOnce checks the outcome after A died: B (and not A) took the
// turn over and settled it final; the service's handoff holds the message
// once and its reply; the engine ran once; B's page shows the message once
// and the reply; the turn is completed in the database.
func (s *replicas) checkSettledOnce(ctx context.Context, settled sseEvent) {
	t := s.t
	t.Helper()
	if settled.Name != "final" {
		t.Fatalf("the turn settled %s, want final (it landed upstream): %s", settled.Name, settled.Data)
	}
	if !strings.Contains(s.b.log(), takeOverLine) || strings.Contains(s.a.log(), takeOverLine) {
		t.Errorf("B did not take the turn over (or A did):\nA:\n%s\nB:\n%s", s.a.log(), s.b.log())
	} else if !strings.Contains(s.b.log(), goneReplica) {
		t.Errorf("B took the turn over, but not because A's presence went (its lease ran out?):\n%s", s.b.log())
	}

	// The service's record: the encounter, from the app's database.
	conn, err := pgx.Connect(ctx, s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var encounter string
	if err := conn.QueryRow(ctx, `SELECT encounter_id FROM intakes WHERE id = $1`, s.intakeID).Scan(&encounter); err != nil {
		t.Fatalf("encounter of %s: %v", s.intakeID, err)
	}
	handoff := readHandoff(ctx, t, s.sandbox, encounter)
	var patient, reply []string
	for _, m := range handoff.Conversation {
		switch m.Role {
		case intakeservice.RolePatient:
			patient = append(patient, m.Text)
		case intakeservice.RoleAssistant:
			reply = append(reply, m.Text)
		}
	}
	if len(patient) != 1 || patient[0] != replicaMessage || len(reply) != 1 || reply[0] == "" {
		t.Errorf("the handoff's conversation: patient %q, assistant %q; want the message once and one reply", patient, reply)
	}
	if st := s.sandbox.Service.Stats(); st.EngineRuns != 1 || st.Requests["turn"] != 1 {
		t.Errorf("the sandbox ran the engine %d times on %d turn requests; want 1 and 1 (one patient message)", st.EngineRuns, st.Requests["turn"])
	}

	// The conversation page on B: the message once, and the reply.
	shown := s.browser.get(s.b.url + "/intakes/" + s.intakeID)
	if shown.status != http.StatusOK {
		t.Fatalf("the intake on B: %d", shown.status)
	}
	if n := strings.Count(shown.body, html.EscapeString(replicaMessage)); n != 1 {
		t.Errorf("the intake page on B shows the patient's message %d times, want once:\n%s", n, shown.body)
	}
	if len(reply) == 0 || !strings.Contains(shown.body, html.EscapeString(reply[0])) {
		t.Errorf("the intake page on B lacks the reply %q:\n%s", reply, shown.body)
	}
	if status := s.turnStatus(ctx); status != "completed" {
		t.Errorf("the turn in the database is %q, want completed", status)
	}
}

// turnStatus reads the first turn's status from the database.
func (s *replicas) turnStatus(ctx context.Context) string {
	var status string
	if err := s.query(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT status FROM turns WHERE intake_id = $1 AND idx = 1`, s.intakeID).Scan(&status)
	}); err != nil {
		s.t.Fatalf("the turn's status: %v", err)
	}
	return status
}

// diagnose logs where a turn that stopped short stands: its status and
// logged events in the database, what the database's sessions wait on, the
// goroutines of this process (the sandbox serves from it), and those of
// both replicas (SIGQUIT: Go prints every goroutine to the log the test
// shows on failure). A stall seen once under CI's load (B relayed
// "started" and nothing more for 90 s) left no trace in the logs.
func (s *replicas) diagnose() {
	t := s.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.Logf("diagnosis: the turn's status %q; its logged events %v", s.turnStatus(ctx), s.loggedEvents(ctx))
	if err := s.query(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT pid, datname, coalesce(application_name, ''), state,
				coalesce(wait_event_type || ':' || wait_event, ''), now() - xact_start, left(query, 160)
			FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)
		if err != nil {
			return err
		}
		var (
			pid                     int
			db, app, state, wait, q string
			xact                    *time.Duration
		)
		_, err = pgx.ForEachRow(rows, []any{&pid, &db, &app, &state, &wait, &xact, &q}, func() error {
			t.Logf("diagnosis: backend %d %s %q %s wait %q in transaction %v: %s", pid, db, app, state, wait, xact, q)
			return nil
		})
		return err
	}); err != nil {
		t.Logf("diagnosis: the database's sessions: %v", err)
	}
	var buf strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	t.Logf("diagnosis: this process's goroutines:\n%s", buf.String())
	for _, p := range []*proc{s.a, s.b} {
		select {
		case <-p.exited:
			continue
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
	}
}

// loggedEvents lists the first turn's events in the database's event log.
func (s *replicas) loggedEvents(ctx context.Context) []string {
	var out []string
	if err := s.query(ctx, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, `SELECT id, name FROM turn_events WHERE key = $1 ORDER BY id`, s.intakeID+"/1")
		if err != nil {
			return err
		}
		var ev sseEvent
		_, err = pgx.ForEachRow(rows, []any{&ev.ID, &ev.Name}, func() error {
			out = append(out, names([]sseEvent{ev})...)
			return nil
		})
		return err
	}); err != nil {
		s.t.Fatalf("the turn's event log: %v", err)
	}
	return out
}

// query runs fn on a connection of its own to the app's database.
func (s *replicas) query(ctx context.Context, fn func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, s.dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return fn(conn)
}

// startReplicaSandbox serves the sandbox in this test process, apart from
// both replicas, with no rate limits (the replicas do not pace either) and
// a reply slow enough to kill a replica mid-stream. Its record (Stats)
// counts the engine's runs; the sandbox serves no such count over HTTP.
func startReplicaSandbox(t *testing.T) *sandbox.Server {
	t.Helper()
	eng, err := rules.New()
	if err != nil {
		t.Fatal(err)
	}
	cfg := sandbox.DefaultConfig()
	cfg.Keys = []string{sandbox.GenerateKey(cfg.KeyPrefix)}
	cfg.Engine = eng
	cfg.RPM, cfg.TurnsPerDay, cfg.IntakesPerDay = 0, 0, 0
	cfg.FirstTokenDelay, cfg.FragmentDelay = 200*time.Millisecond, 400*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := sandbox.Start(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Service.Close()
		cancel()
	})
	return srv
}

// readHandoff reads an encounter's handoff from the sandbox with the key.
func readHandoff(ctx context.Context, t *testing.T, sb *sandbox.Server, encounter string) intakeservice.Handoff {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sb.URL+"/v1/intakes/"+url.PathEscape(encounter)+"/handoff", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+sb.Service.Key())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("handoff of %s: %d", encounter, res.StatusCode)
	}
	var h intakeservice.Handoff
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
		t.Fatalf("handoff of %s: %v", encounter, err)
	}
	return h
}

func names(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Name
		if ev.ID != 0 {
			out[i] = ev.Name + "#" + strconv.FormatInt(ev.ID, 10)
		}
	}
	return out
}

func indexOf(evs []sseEvent, name string) int {
	for i, ev := range evs {
		if ev.Name == name {
			return i
		}
	}
	return -1
}
