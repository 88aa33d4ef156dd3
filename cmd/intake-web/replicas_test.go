package main

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff/postgres/pgtest"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
	"github.com/clinical-intake/intake-web/sandbox/wire"
)

// turnLease is the lease the replicas run on: they renew every lease/3 and
// sweep as often, so a dead replica's turn is taken over within about 4/3
// of it. 1 s passed too, even under -race; 2 s leaves A's renewals a
// margin on a loaded machine (B must not take the turn while A lives).
const turnLease = "2s"

// takeOverLine is what a replica logs when it takes a turn over.
const takeOverLine = "taking over a turn left pending"

// TestReplicasTakeOverATurnMidStream is issue #12's test: two app processes
// on one PostgreSQL database and one sandbox key. A patient posts a turn to
// A and follows it on B; A is killed (SIGKILL) mid-turn; B takes the turn
// over and settles it from the service's handoff, never sending it again.
// The conversation holds every message once, the engine ran once, and the
// events B delivered have strictly increasing ids across reconnections.
func TestReplicasTakeOverATurnMidStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dbURL := pgtest.URL(t)
	sb := startReplicaSandbox(t)

	env := []string{
		"DATABASE_URL=" + dbURL, "INTAKE_BASE_URL=" + sb.URL, "INTAKE_API_KEY=" + sb.Service.Key(),
		"TURN_LEASE=" + turnLease, "PACER_PER_MINUTE=-1",
	}
	a := startProc(t, append(env, "REPLICA_NAME=replica-a")...)
	b := startProc(t, append(env, "REPLICA_NAME=replica-b")...)

	// The start page and form on A, the conversation page it redirects to.
	br := newReplicaBrowser(t)
	start := br.get(a.url + "/")
	if start.status != http.StatusOK {
		t.Fatalf("start page on A: %d", start.status)
	}
	created := br.post(a.url+"/intakes", url.Values{
		"_csrf":         {hiddenField(t, start.body, `action="/intakes"`, "_csrf")},
		"submission_id": {hiddenField(t, start.body, `action="/intakes"`, "submission_id")},
		"age":           {"34"}, "sex": {"female"}, "history": {""}, "synthetic": {"on"},
	})
	intakePath := created.url.Path
	if created.status != http.StatusOK || !strings.HasPrefix(intakePath, "/intakes/") {
		t.Fatalf("start form on A: %d at %s:\n%s", created.status, created.url, created.body)
	}
	intakeID := strings.TrimPrefix(intakePath, "/intakes/")

	// The first message, posted to A as the page's script does.
	const message = "I have had a sore throat for three days"
	composer := `class="message-form"`
	csrf := hiddenField(t, created.body, composer, "_csrf")
	sent := br.post(a.url+intakePath+"/turns", url.Values{
		"_csrf": {csrf}, "submission_id": {hiddenField(t, created.body, composer, "submission_id")}, "message": {message},
	}, "Accept", "application/json", "X-CSRF-Token", csrf)
	if sent.status != http.StatusAccepted {
		t.Fatalf("message on A: %d:\n%s", sent.status, sent.body)
	}
	eventsURL := jsonField(t, sent.body, "events_url")
	if eventsURL != intakePath+"/turns/1/events" {
		t.Fatalf("events_url %q", eventsURL)
	}

	// Follow the turn on B until it settles; kill A at the first delta B
	// relays. A stream that ends without a settling event is reopened with
	// Last-Event-ID, as EventSource does.
	var seen []sseEvent
	var last int64
	var killedAt time.Time
	killed, opened := false, 0
	var settled *sseEvent
	for settled == nil {
		opened++
		events, retry, err := br.openEvents(ctx, b.url+eventsURL, last)
		if err != nil {
			t.Fatalf("follow the turn on B: %v (events so far: %v)", err, names(seen))
		}
		for ev := range events {
			seen = append(seen, ev)
			if ev.ID != 0 {
				last = ev.ID
			}
			if ev.Name == "delta" && !killed {
				if i := indexOf(seen, "completed"); i >= 0 {
					t.Fatalf("the reply was complete before A could be killed: make the sandbox slower (events %v)", names(seen))
				}
				if strings.Contains(b.log(), takeOverLine) {
					t.Fatalf("B took the turn over while A was alive: the lease (%s) is too short for this machine", turnLease)
				}
				if err := a.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown, no flush
					t.Fatal(err)
				}
				<-a.exited
				killed, killedAt = true, time.Now()
				t.Logf("killed A after event %d (%s) reached B", ev.ID, ev.Name)
			}
			if ev.Name == "final" || ev.Name == "failed" {
				settled = &seen[len(seen)-1]
			}
		}
		if settled != nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the turn did not settle on B within the deadline; events %v", names(seen))
		}
		// EventSource waits the server's retry hint before reconnecting.
		select {
		case <-time.After(min(*retry, 250*time.Millisecond)):
		case <-ctx.Done():
		}
	}
	if !killed {
		t.Fatalf("B relayed no delta before the turn settled: events %v", names(seen))
	}
	t.Logf("events on B: %v over %d stream(s); settled %v after A was killed (lease %s)",
		names(seen), opened, time.Since(killedAt).Round(10*time.Millisecond), turnLease)

	// Every event B sent has an id, strictly increasing, none twice.
	for i, ev := range seen {
		if ev.ID <= 0 || (i > 0 && ev.ID <= seen[i-1].ID) {
			t.Fatalf("event %d (%s) has id %d after %d: ids must strictly increase; events %v", i, ev.Name, ev.ID, seen[max(i-1, 0)].ID, names(seen))
		}
	}
	if settled.Name != "final" {
		t.Fatalf("the turn settled %s, want final (it landed upstream): %s", settled.Name, settled.Data)
	}
	if !strings.Contains(b.log(), takeOverLine) || strings.Contains(a.log(), takeOverLine) {
		t.Errorf("B did not take the turn over (or A did):\nA:\n%s\nB:\n%s", a.log(), b.log())
	}

	// The service's record: the encounter, from the app's database.
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var encounter string
	if err := conn.QueryRow(ctx, `SELECT encounter_id FROM intakes WHERE id = $1`, intakeID).Scan(&encounter); err != nil {
		t.Fatalf("encounter of %s: %v", intakeID, err)
	}
	handoff := readHandoff(ctx, t, sb, encounter)
	var patient, reply []string
	for _, m := range handoff.Conversation {
		switch m.Role {
		case wire.RolePatient:
			patient = append(patient, m.Text)
		case wire.RoleAssistant:
			reply = append(reply, m.Text)
		}
	}
	if len(patient) != 1 || patient[0] != message || len(reply) != 1 || reply[0] == "" {
		t.Fatalf("the handoff's conversation: patient %q, assistant %q; want the message once and one reply", patient, reply)
	}
	if st := sb.Service.Stats(); st.EngineRuns != 1 || st.Requests["turn"] != 1 {
		t.Fatalf("the sandbox ran the engine %d times on %d turn requests; want 1 and 1 (one patient message)", st.EngineRuns, st.Requests["turn"])
	}

	// The conversation page on B: the message once, and the reply.
	shown := br.get(b.url + intakePath)
	if shown.status != http.StatusOK {
		t.Fatalf("the intake on B: %d", shown.status)
	}
	if n := strings.Count(shown.body, html.EscapeString(message)); n != 1 {
		t.Errorf("the intake page on B shows the patient's message %d times, want once:\n%s", n, shown.body)
	}
	if !strings.Contains(shown.body, html.EscapeString(reply[0])) {
		t.Errorf("the intake page on B lacks the reply %q:\n%s", reply[0], shown.body)
	}
	var status string
	if err := conn.QueryRow(ctx, `SELECT status FROM turns WHERE intake_id = $1 AND idx = 1`, intakeID).Scan(&status); err != nil || status != "completed" {
		t.Errorf("the turn in the database: %q, %v; want completed", status, err)
	}
}

// startReplicaSandbox serves the sandbox in this test process, apart from
// both replicas, with no rate limits (the replicas do not pace either) and
// a reply slow enough to kill a replica mid-stream: its record (Stats)
// counts the engine's runs.
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
func readHandoff(ctx context.Context, t *testing.T, sb *sandbox.Server, encounter string) wire.Handoff {
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
	var h wire.Handoff
	if res.StatusCode != http.StatusOK {
		t.Fatalf("handoff of %s: %d", encounter, res.StatusCode)
	}
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
