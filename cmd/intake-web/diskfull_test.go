package main

import (
	"errors"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// TestAFullDiskIsSaidPlainly runs the app on SQLite on a 2 MiB tmpfs that
// the test fills: starting an intake and sending a message then answer 503
// with a page saying nothing was sent, what was typed kept in the form;
// /readyz says not ready and why; the log says it once, not once a
// request; and once space is freed the app serves again by itself.
func TestAFullDiskIsSaidPlainly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("mounting a tmpfs is not permitted here (%v): run as root, as CI does, to test a full disk", err)
		}
		t.Fatalf("mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	p := startProc(t, "DEMO=1", "DATABASE_PATH="+filepath.Join(dir, "app.db"))
	br := newReplicaBrowser(t)

	// An intake, started while there is room.
	startForm := func(history string) url.Values {
		start := br.get(p.url + "/") // a new submission id each time
		return url.Values{
			"_csrf":         {hiddenField(t, start.body, `action="/intakes"`, "_csrf")},
			"submission_id": {hiddenField(t, start.body, `action="/intakes"`, "submission_id")},
			"age":           {"34"}, "sex": {"female"}, "history": {history}, "synthetic": {"on"},
		}
	}
	created := br.post(p.url+"/intakes", startForm(""))
	if created.status != http.StatusOK || !strings.HasPrefix(created.url.Path, "/intakes/") {
		t.Fatalf("start an intake: %d at %s", created.status, created.url)
	}
	intake := created.url.String()

	filler := fill(t, dir)
	const message = "My throat has been sore since Monday"
	const history = "Penicillin allergy (rash)"
	for range 3 {
		sent := br.post(intake+"/turns", url.Values{
			"_csrf":         {hiddenField(t, created.body, `class="message-form"`, "_csrf")},
			"submission_id": {hiddenField(t, created.body, `class="message-form"`, "submission_id")},
			"message":       {message},
		})
		checkCannotSave(t, "a message", sent, message)
		again := br.post(p.url+"/intakes", startForm(history))
		checkCannotSave(t, "the start form", again, history)
	}
	code, ready := readyz(t, p)
	if code != http.StatusServiceUnavailable || !strings.Contains(ready, "cannot save: disk full") {
		t.Fatalf("/readyz on a full disk: %d %s", code, ready)
	}
	if n := strings.Count(p.log(), "the database cannot save"); n != 1 {
		t.Fatalf("the log says the database cannot save %d times for 6 refused requests, want once:\n%s", n, p.log())
	}

	// Space comes back: the app is ready again by itself, and saves.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for code, _ := readyz(t, p); code != http.StatusOK; code, ready = readyz(t, p) {
		if time.Now().After(deadline) {
			t.Fatalf("not ready 20 s after space was freed: %d %s", code, ready)
		}
		time.Sleep(100 * time.Millisecond)
	}
	shown := br.get(intake)
	if strings.Contains(shown.body, html.EscapeString(message)+"</") {
		t.Fatalf("a message refused on the full disk is in the conversation:\n%s", shown.body)
	}
	sent := br.post(intake+"/turns", url.Values{
		"_csrf":         {hiddenField(t, shown.body, `class="message-form"`, "_csrf")},
		"submission_id": {hiddenField(t, shown.body, `class="message-form"`, "submission_id")},
		"message":       {message},
	})
	if sent.status != http.StatusOK || !strings.Contains(sent.body, html.EscapeString(message)) {
		t.Fatalf("the message once space was back: %d:\n%s", sent.status, sent.body)
	}
	if !strings.Contains(p.log(), "the database can save again") {
		t.Errorf("the log does not say the database can save again:\n%s", p.log())
	}
}

// checkCannotSave requires the 503 page saying nothing was sent, with the
// typed text kept in the form.
func checkCannotSave(t *testing.T, what string, pg page, typed string) {
	t.Helper()
	if pg.status != http.StatusServiceUnavailable {
		t.Fatalf("%s on a full disk: %d, want 503:\n%s", what, pg.status, pg.body)
	}
	if !strings.Contains(pg.body, html.EscapeString(bff.MsgCannotSave)) {
		t.Fatalf("%s on a full disk: the page does not say it cannot save:\n%s", what, pg.body)
	}
	kept := html.EscapeString(typed) + "</textarea>"
	if !strings.Contains(pg.body, ">"+kept) && !strings.Contains(pg.body, ">\n"+kept) {
		t.Fatalf("%s on a full disk: what was typed (%q) is not kept in the form:\n%s", what, typed, pg.body)
	}
}

// fill writes a file in dir until its filesystem is full, and returns it.
func fill(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return name
			}
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
}
