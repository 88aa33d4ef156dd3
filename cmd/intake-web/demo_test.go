package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// The embedded sandbox keeps the spec's limits by default and has none in
// demo mode; startSandbox says which it kept.
func TestEmbeddedSandboxLimits(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		demo bool
		want app.SandboxLimits
	}{
		{false, app.SandboxLimits{PerMinute: 6, TurnsPerDay: 100, IntakesPerDay: 100}},
		{true, app.SandboxLimits{}},
	} {
		sb, limits, err := startSandbox(context.Background(), log, false, tc.demo)
		if err != nil {
			t.Fatal(err)
		}
		if limits != tc.want {
			t.Errorf("demo %v: limits %+v, want %+v", tc.demo, limits, tc.want)
		}
		// Ten intakes at once: the seventh request of a minute is refused
		// with the spec's limits, none in demo mode.
		var statuses []int
		for range 10 {
			req, _ := http.NewRequest("POST", sb.URL+"/v1/intakes", nil)
			req.Header.Set("Authorization", "Bearer "+sb.Service.Key())
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses = append(statuses, res.StatusCode)
		}
		sb.Close()
		if slices.Contains(statuses, http.StatusTooManyRequests) != !tc.demo {
			t.Errorf("demo %v: ten creations answered %v", tc.demo, statuses)
		}
	}
}

// runToExit runs intake-web with env and returns its log and exit error;
// the test fails if it is still running after timeout.
func runToExit(t *testing.T, timeout time.Duration, env ...string) (string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envAsMain+"=1",
		"LISTEN_ADDR=127.0.0.1:0", "DATABASE_PATH="+filepath.Join(dir, "app.db"),
		"INTAKE_BASE_URL=", "INTAKE_API_KEY=", "INTAKE_API_KEY_FILE=", "SHUTDOWN_GRACE=2s")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("intake-web %v was still running after %s:\n%s", env, timeout, out)
	}
	return string(out), err
}

// The app refuses to start when its pacing is off but its upstream is the
// embedded sandbox with the spec's limits; DEMO=1 (or -demo) with a real
// upstream is refused too.
func TestRefusesPacingPastTheEmbeddedSandbox(t *testing.T) {
	t.Parallel()
	out, err := runToExit(t, 30*time.Second, "PACER_PER_MINUTE=-1")
	if err == nil || !strings.Contains(out, "PACER_PER_MINUTE=-1 (no limit) must not exceed the embedded sandbox's limit of 6 requests a minute") ||
		!strings.Contains(out, "start with -demo (DEMO=1)") || strings.Contains(out, readyLine) {
		t.Errorf("PACER_PER_MINUTE=-1 on the embedded sandbox: %v\n%s", err, out)
	}
	out, err = runToExit(t, 30*time.Second, "DEMO=1", "INTAKE_BASE_URL=http://127.0.0.1:1", "INTAKE_API_KEY=k")
	if err == nil || !strings.Contains(out, "DEMO (-demo) lifts the embedded sandbox's limits") || strings.Contains(out, readyLine) {
		t.Errorf("DEMO=1 with a real upstream: %v\n%s", err, out)
	}
}

// DEMO=1 lifts the embedded sandbox's limits and the app's pacing
// together, says so in the log, and a burst of intakes past the spec's six
// requests a minute goes through without a 429 and without waiting in
// the pacer. (With only one half lifted, either the app refuses to start,
// above, or the seventh request waits most of a minute in the pacer and
// its no-JavaScript request times out here.)
func TestDemoSwitchLiftsBothLimits(t *testing.T) {
	t.Parallel()
	p := startProc(t, "DEMO=1")
	for _, want := range []string{"DEMO MODE (-demo, DEMO=1)", "demo mode: no rate limit, no daily quotas"} {
		if !strings.Contains(p.log(), want) {
			t.Errorf("the log does not say %q:\n%s", want, p.log())
		}
	}
	// Four intakes of one message each: eight upstream requests (each
	// intake is created with its first turn).
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 40 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	for i := range 4 {
		csrf := csrfToken(t, c, p.url)
		res := postForm(t, c, p.url+"/intakes", url.Values{"_csrf": {csrf}, "synthetic": {"on"}, "submission_id": {"s" + strconv.Itoa(i)}})
		intake := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(intake, "/intakes/iw_") {
			t.Fatalf("start intake %d: %d to %q", i, res.StatusCode, intake)
		}
		res = postForm(t, c, p.url+intake+"/turns", url.Values{"_csrf": {csrf}, "message": {"I have had a sore throat for 3 days"},
			"submission_id": {"t" + strconv.Itoa(i)}})
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("message %d: %d", i, res.StatusCode)
		}
	}
	metrics := get(t, c, p.url+"/metrics")
	if n := metricSum(metrics, `intake_web_upstream_request_seconds_count{`, `op="turn"`); n < 4 {
		t.Errorf("%v upstream turns, want 4:\n%s", n, metrics)
	}
	if n := metricSum(metrics, `intake_web_upstream_request_seconds_count{`, `status="429"`); n != 0 {
		t.Errorf("%v upstream answers were 429", n)
	}
	if s := metricSum(metrics, `intake_web_pacer_wait_seconds_sum`, ""); s > 1 {
		t.Errorf("calls waited %.1f s in the pacer in demo mode", s)
	}
}

var csrfMeta = regexp.MustCompile(`name="csrf-token" content="([0-9a-f]+)"`)

func csrfToken(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	m := csrfMeta.FindStringSubmatch(get(t, c, base+"/"))
	if m == nil {
		t.Fatal("no csrf-token meta on the start page")
	}
	return m[1]
}

func get(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func postForm(t *testing.T, c *http.Client, u string, form url.Values) *http.Response {
	t.Helper()
	res, err := c.PostForm(u, form)
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// metricSum adds the values of the Prometheus text lines starting with
// prefix and containing label.
func metricSum(text, prefix, label string) float64 {
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) || !strings.Contains(line, label) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}
