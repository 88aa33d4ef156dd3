package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/playwright-community/playwright-go"
)

// setupHint ends every error about a missing tool: the test never skips.
const setupHint = "run scripts/e2e-setup from the repository root first (scripts/test does it): it installs Caddy, Chromium and the Playwright driver"

// TestCaddyInFrontOfTwoReplicas runs scripts/Caddyfile, as scripts/replicas
// and scripts/compose.yaml do, in front of two replicas on one PostgreSQL and one
// sandbox, and a browser (Chromium) through it:
//   - a replica that says it is not ready (/readyz 503: its database cut
//     off) stops getting requests, and gets them again once ready;
//   - a patient's reply streams through Caddy fragment by fragment;
//   - the replica running the turn is killed mid-reply, and the page
//     finishes the reply through the other: no gap, no duplicate, the
//     message sent once.
func TestCaddyInFrontOfTwoReplicas(t *testing.T) {
	t.Parallel()
	caddy, err := exec.LookPath("caddy")
	if err != nil {
		t.Fatalf("caddy is not installed: %s", setupHint)
	}
	browser := launchChromium(t)
	var cutA *tcpProxy
	s := startReplicas(t, func(dbURL string) string {
		cutA = startTCPProxy(t, dbURL)
		return cutA.url
	})
	front := startCaddy(t, caddy, s.a.addr, s.b.addr)

	t.Run("a replica not ready gets no requests", func(t *testing.T) {
		cutA.cut()
		waitFor(t, "A's /readyz to say not ready", func() bool { return status(s.a.url+"/readyz") == http.StatusServiceUnavailable })
		// Caddy checks /readyz every second: within a few, every request
		// goes to B. Then 20 more must all go to B.
		waitFor(t, "Caddy to send 10 requests in a row to B", func() bool { return probes(t, front, s, 10) == "bbbbbbbbbb" })
		if got := probes(t, front, s, 20); got != strings.Repeat("b", 20) {
			t.Fatalf("requests through Caddy while A was not ready (a: A, b: B, -: no replica's answer): %s", got)
		}
		cutA.heal()
		waitFor(t, "A to get requests again once ready", func() bool { return strings.Contains(probes(t, front, s, 4), "a") })
	})

	t.Run("a reply streams and survives its replica", func(t *testing.T) {
		page := newBrowserPage(t, browser)
		_, err := page.Goto(front + "/")
		must(t, err, "open the start page through Caddy")
		// Age and sex given: the first reply is some twenty words.
		must(t, page.GetByLabel("Age", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill("34"), "fill Age")
		_, err = page.GetByLabel("Sex", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).SelectOption(playwright.SelectOptionValues{Values: &[]string{"female"}})
		must(t, err, "select Sex")
		must(t, page.GetByLabel("This is a synthetic scenario").Check(), "tick synthetic")
		must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Start intake"}).Click(), "start the intake")
		must(t, page.WaitForURL("**/intakes/*"), "the intake page")
		s.intakeID = page.URL()[strings.LastIndex(page.URL(), "/")+1:]
		// Record every state of the pending reply with its time.
		_, err = page.Evaluate(`() => {
			window.__replies = [];
			const note = () => {
				const el = document.querySelector('#pending [data-reply]');
				const text = el ? el.textContent : null;
				const last = window.__replies[window.__replies.length - 1];
				if (text && (!last || last.text !== text)) window.__replies.push({t: performance.now(), text});
			};
			new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true});
		}`)
		must(t, err, "observe the reply")
		must(t, page.GetByLabel("Your message", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(replicaMessage), "type the message")
		must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Send", Exact: playwright.Bool(true)}).Click(), "send")

		// Streamed, not buffered: the reply grows on the page over time
		// while it is still pending (fragments come every 400 ms).
		_, err = page.Evaluate(`async () => {
			const end = performance.now() + 30000;
			for (;;) {
				const r = window.__replies;
				if (r.length >= 3 && r[r.length - 1].t - r[0].t >= 300 && document.querySelector('#pending')) return;
				if (performance.now() > end) throw new Error('the reply did not stream: ' + JSON.stringify(r));
				await new Promise((ok) => setTimeout(ok, 20));
			}
		}`)
		must(t, err, "the reply streams fragment by fragment through Caddy")

		// Kill the replica that runs the turn.
		owner := s.leaseOwner(context.Background())
		victim, survivor := s.a, s.b
		if strings.HasPrefix(owner, "replica-b") {
			victim, survivor = s.b, s.a
		}
		if err := victim.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-victim.exited
		killed := time.Now()
		t.Logf("killed %s, which ran the turn, mid-reply", owner)

		must(t, page.Locator("#pending").WaitFor(playwright.LocatorWaitForOptions{
			State: playwright.WaitForSelectorStateDetached, Timeout: playwright.Float(60000),
		}), "the reply completes after its replica was killed")
		t.Logf("the page had the whole reply %v after the kill", time.Since(killed).Round(10*time.Millisecond))

		reply := s.reply(context.Background())
		conv, err := page.GetByRole("log", playwright.PageGetByRoleOptions{Name: "Conversation"}).TextContent()
		must(t, err, "read the conversation")
		if n := strings.Count(conv, reply); reply == "" || n != 1 {
			t.Fatalf("the conversation shows the reply %d times, want once (no gap, no duplicate); reply %q:\n%s", n, reply, conv)
		}
		if n := strings.Count(conv, replicaMessage); n != 1 {
			t.Fatalf("the conversation shows the message %d times, want once:\n%s", n, conv)
		}
		states, err := page.Evaluate(`() => window.__replies.map((r) => r.text)`)
		must(t, err, "read the reply's states")
		for _, st := range states.([]any) {
			if !strings.HasPrefix(reply, st.(string)) {
				t.Fatalf("the page showed %q while streaming: not the start of the reply %q (a gap or a duplicate)", st, reply)
			}
		}
		if st := s.sandbox.Service.Stats(); st.EngineRuns != 1 || st.Requests["turn"] != 1 {
			t.Errorf("the sandbox ran the engine %d times on %d turn requests; want 1 and 1", st.EngineRuns, st.Requests["turn"])
		}
		survivor.alive("the other replica was killed")
	})
}

// probes sends n requests through Caddy to a path that names them, and
// returns which replica logged each: "a" or "b", or "-" where no
// replica answered (a 404 of its own is what a probe gets).
func probes(t *testing.T, front string, s *replicas, n int) string {
	t.Helper()
	var out strings.Builder
	for i := range n {
		path := fmt.Sprintf("/probe-%d", time.Now().UnixNano()+int64(i))
		code := status(front + path)
		line := `path=` + path + ` `
		got := byte('-') // no answer from a replica: Caddy's own error, or none
		// A replica logs the request as it ends: give its line a moment.
		for deadline := time.Now().Add(2 * time.Second); code == http.StatusNotFound && got == '-' && time.Now().Before(deadline); {
			switch {
			case strings.Contains(s.a.log(), line):
				got = 'a'
			case strings.Contains(s.b.log(), line):
				got = 'b'
			default:
				time.Sleep(10 * time.Millisecond)
			}
		}
		out.WriteByte(got)
	}
	return out.String()
}

// status is the answer's status to a GET, 0 when there was none.
func status(u string) int {
	client := &http.Client{Timeout: 5 * time.Second}
	res, err := client.Get(u)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// waitFor polls cond every 50 ms for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leaseOwner reads which replica holds the first turn.
func (s *replicas) leaseOwner(ctx context.Context) string {
	var owner string
	if err := s.query(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT lease_owner FROM turns WHERE intake_id = $1 AND idx = 1`, s.intakeID).Scan(&owner)
	}); err != nil {
		s.t.Fatalf("the turn's lease: %v", err)
	}
	return owner
}

// reply reads the first turn's settled reply.
func (s *replicas) reply(ctx context.Context) string {
	var reply string
	if err := s.query(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT reply FROM turns WHERE intake_id = $1 AND idx = 1 AND status = 'completed'`, s.intakeID).Scan(&reply)
	}); err != nil {
		s.t.Fatalf("the turn's reply: %v", err)
	}
	return reply
}

// startCaddy runs scripts/Caddyfile on a free loopback port in front of the
// replicas, until the test ends; it returns Caddy's URL.
func startCaddy(t *testing.T, caddy string, replicas ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	cmd := exec.Command(caddy, "run", "--config", filepath.Join(moduleRoot(t), "scripts", "Caddyfile"), "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), fmt.Sprint("INTAKE_WEB_PORT=", port), "INTAKE_WEB_BIND=127.0.0.1",
		"INTAKE_WEB_REPLICAS="+strings.Join(replicas, " "), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("caddy's log:\n%s", log.String())
		}
	})
	u := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitFor(t, "Caddy to answer", func() bool {
		select {
		case <-exited:
			t.Fatalf("caddy exited:\n%s", log.String())
		default:
		}
		return status(u+"/healthz") == http.StatusOK
	})
	return u
}

// moduleRoot is the repository's root (where go.mod is).
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// launchChromium starts the Playwright driver and Debian's Chromium as the
// e2e suite does (e2e/harness_test.go), stopped when the test ends.
func launchChromium(t *testing.T) playwright.Browser {
	t.Helper()
	root := moduleRoot(t)
	driver := os.Getenv("PLAYWRIGHT_DRIVER_PATH")
	if driver == "" {
		driver = filepath.Join(root, ".cache", "playwright-driver")
	}
	chromium := os.Getenv("E2E_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/lib/chromium/chromium-headless-shell" // scripts/e2e-setup
	}
	for _, p := range []string{chromium, filepath.Join(driver, "node"), filepath.Join(driver, "package", "cli.js")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: %s", p, setupHint)
		}
	}
	pw, err := playwright.Run(&playwright.RunOptions{DriverDirectory: driver, SkipInstallBrowsers: true, Stdout: os.Stderr})
	if err != nil {
		t.Fatalf("start the Playwright driver in %s: %v; %s", driver, err, setupHint)
	}
	t.Cleanup(func() { _ = pw.Stop() })
	browser, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(chromium),
		Headless:       playwright.Bool(true),
		Args: []string{"--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync"},
	})
	if err != nil {
		t.Fatalf("launch %s: %v; %s", chromium, err, setupHint)
	}
	t.Cleanup(func() { _ = browser.Close() })
	return browser
}

func newBrowserPage(t *testing.T, browser playwright.Browser) playwright.Page {
	t.Helper()
	ctx, err := browser.NewContext()
	must(t, err, "new browser context")
	t.Cleanup(func() { _ = ctx.Close() })
	ctx.SetDefaultTimeout(30000)
	page, err := ctx.NewPage()
	must(t, err, "new page")
	return page
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
