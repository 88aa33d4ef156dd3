package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres/pgtest"
)

// deadline bounds every wait on the database in these tests.
const deadline = 15 * time.Second

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		t.Fatalf("no %s within %v", what, deadline)
		var zero T
		return zero
	}
}

// waitListening polls pg_stat_activity until a Listen connection of this
// database sits idle after its last LISTEN.
func waitListening(t *testing.T, db *postgres.DB) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	stop := time.After(deadline)
	for {
		var n int
		if err := db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1 AND state = 'idle'
			AND query LIKE 'LISTEN %'`+` AND query LIKE '%'||$2||'%'`,
			postgres.ListenApplicationName, postgres.ChannelIntakeChanged).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		select {
		case <-tick.C:
		case <-stop:
			t.Fatalf("Listen not listening within %v", deadline)
		}
	}
}

// A second store's Listen hears the first's appends and intake changes,
// comes back after its connection is killed (saying so), and stops with
// its context.
func TestListen(t *testing.T) {
	a, url := openDB(t)
	b := openURL(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	turnEvents := make(chan string, 16)
	changed := make(chan string, 16)
	reconnected := make(chan struct{}, 16)
	done := make(chan error, 1)
	returned := false
	go func() {
		done <- b.Listen(ctx, postgres.Notifications{
			TurnEvents:    func(key string, last int64) { turnEvents <- fmt.Sprint(key, "@", last) },
			IntakeChanged: func(p []byte) { changed <- string(p) },
			Reconnected:   func() { reconnected <- struct{}{} },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if returned {
			return
		}
		select {
		case <-done:
		case <-time.After(deadline):
			t.Errorf("Listen did not return within %v of its context's end", deadline)
		}
	})
	waitListening(t, a)

	evs := []bff.Event{{ID: 1, Name: "queued", Data: []byte(`{}`)}, {ID: 2, Name: "delta", Data: []byte(`{"text":"a"}`)}}
	if err := a.AppendTurnEvents(ctx, "in_1/1", evs); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, turnEvents, "turn events notification"); got != "in_1/1@2" {
		t.Fatalf("turn events notification %q, want in_1/1@2", got)
	}
	// A retried append inserts nothing and wakes nobody: the intake change
	// sent after it is the next notification.
	if err := a.AppendTurnEvents(ctx, "in_1/1", evs); err != nil {
		t.Fatal(err)
	}
	if err := a.NotifyIntakeChanged(ctx, []byte(`{"intake_id":"in_1"}`)); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, changed, "intake change"); got != `{"intake_id":"in_1"}` {
		t.Fatalf("intake change %q", got)
	}
	select {
	case got := <-turnEvents:
		t.Fatalf("a retried append notified %q", got)
	case <-reconnected:
		t.Fatal("Reconnected called on the first connection")
	default:
	}
	if err := a.NotifyIntakeChanged(ctx, bytes.Repeat([]byte("x"), postgres.MaxNotifyPayload)); err == nil {
		t.Fatal("a payload of 8000 bytes was accepted")
	}

	// Kill the listening connection: Listen reconnects and says so.
	var killed int
	if err := a.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, postgres.ListenApplicationName).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listeners, %v", killed, err)
	}
	recv(t, reconnected, "Reconnected call")
	if err := a.AppendTurnEvents(ctx, "in_1/1", []bff.Event{{ID: 3, Name: "final", Data: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, turnEvents, "turn events notification after reconnecting"); got != "in_1/1@3" {
		t.Fatalf("after reconnecting: %q, want in_1/1@3", got)
	}

	cancel()
	err := recv(t, done, "Listen's return")
	returned = true
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Listen returned %v", err)
	}
}

// Replicas starting at once on a fresh database: every Open succeeds and
// each migration is applied once.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	url := pgtest.URL(t)
	const replicas = 6
	dbs := make([]*postgres.DB, replicas)
	errs := make([]error, replicas)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			<-start
			dbs[i], errs[i] = postgres.Open(context.Background(), url, nil)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		t.Cleanup(func() { _ = dbs[i].Close() })
	}
	var rows, versions int
	if err := dbs[0].Pool().QueryRow(context.Background(),
		`SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&rows, &versions); err != nil {
		t.Fatal(err)
	}
	if rows < 1 || rows != versions {
		t.Fatalf("schema_migrations has %d rows for %d versions", rows, versions)
	}
	// The advisory lock is released: another Open does not wait for it.
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	again, err := postgres.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = again.Close()
}

// Two replicas asking for a secret at once get the same one.
func TestSecretSharedByReplicas(t *testing.T) {
	a, url := openDB(t)
	b := openURL(t, url)
	var (
		keys [2][]byte
		errs [2]error
		wg   sync.WaitGroup
	)
	start := make(chan struct{})
	for i, db := range []*postgres.DB{a, b} {
		wg.Go(func() {
			<-start
			keys[i], errs[i] = db.Secret(context.Background(), "csrf", 32)
		})
	}
	close(start)
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if len(keys[0]) != 32 || !bytes.Equal(keys[0], keys[1]) {
		t.Fatalf("keys differ or have the wrong size: %x, %x", keys[0], keys[1])
	}
	if again, err := a.Secret(context.Background(), "csrf", 32); err != nil || !bytes.Equal(again, keys[0]) {
		t.Fatalf("the secret changed: %x (%v)", again, err)
	}
	if other, err := a.Secret(context.Background(), "other", 16); err != nil || len(other) != 16 || bytes.Equal(other, keys[0][:16]) {
		t.Fatalf("another name's secret %x (%v)", other, err)
	}
}

// The session store keeps, expires, lists and deletes sessions.
func TestSessionStore(t *testing.T) {
	db, _ := openDB(t)
	s := postgres.NewSessionStoreWithCleanup(db, 0)
	ctx := context.Background()
	now := time.Now()
	if err := s.CommitCtx(ctx, "live", []byte("a"), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCtx(ctx, "live", []byte("b"), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCtx(ctx, "dead", []byte("c"), now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if b, ok, err := s.FindCtx(ctx, "live"); err != nil || !ok || string(b) != "b" {
		t.Fatalf("Find(live) = %q, %t, %v", b, ok, err)
	}
	if _, ok, err := s.FindCtx(ctx, "dead"); err != nil || ok {
		t.Fatalf("Find(dead) = %t, %v", ok, err)
	}
	if all, err := s.AllCtx(ctx); err != nil || len(all) != 1 || string(all["live"]) != "b" {
		t.Fatalf("All = %q, %v", all, err)
	}
	if n, err := s.DeleteExpired(ctx); err != nil || n != 1 {
		t.Fatalf("DeleteExpired = %d, %v", n, err)
	}
	if err := s.DeleteCtx(ctx, "live"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Find("live"); err != nil || ok {
		t.Fatalf("Find after Delete = %t, %v", ok, err)
	}
	// The cleanup goroutine stops, by StopCleanup or by Close.
	c := postgres.NewSessionStoreWithCleanup(db, time.Hour)
	c.StopCleanup()
	c.StopCleanup()
	d := postgres.NewSessionStore(db)
	_ = d
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// 20 replicas' requests create a turn on one intake at once: one turn,
// every other request a pending conflict, never an internal error.
func TestConcurrentCreateTurn(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	in := &bff.Intake{ID: "in_race", Owner: "o", CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour), UpdatedAt: time.Now(), Status: bff.StatusOpen}
	if err := db.CreateIntake(ctx, in); err != nil {
		t.Fatal(err)
	}
	const n = 20
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = db.CreateTurn(ctx, &bff.Turn{IntakeID: "in_race", SubmissionID: fmt.Sprint("s", i), Message: "hi"})
		})
	}
	close(start)
	wg.Wait()
	var created int
	for i, err := range errs {
		switch {
		case err == nil:
			created++
		case bff.ErrorCode(err) != bff.ECONFLICT || bff.ErrorMessage(err) != bff.MsgTurnPending:
			t.Errorf("request %d: %v", i, err)
		}
	}
	pending, err := db.PendingTurns(ctx)
	if err != nil || created != 1 || len(pending) != 1 {
		t.Fatalf("%d created, %d pending (%v); want 1 and 1", created, len(pending), err)
	}
}
