// Package e2e drives the whole app (web server, relay, store, the sandbox
// upstream) with a real browser: Debian's Chromium through playwright-go,
// offline. Run scripts/e2e-setup once first (scripts/test does it).
package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// wantDriverVersion is what playwright-go v0.5200.1 accepts (run.go,
// playwrightCliVersion); package.json pins playwright-core to it.
const wantDriverVersion = "Version 1.52.0"

// expectTimeout bounds every auto-waiting expectation. A reply streams in
// about a second; this leaves room for a loaded 2-core machine.
const expectTimeout = 15 * time.Second

var (
	pw      *playwright.Playwright
	browser playwright.Browser
	expect  playwright.PlaywrightAssertions
	axeJS   string // the source of axe.min.js
	// artifactsDir holds the screenshots of each page state (git-ignored).
	artifactsDir string
)

func TestMain(m *testing.M) {
	code, err := runSuite(m)
	if err != nil {
		fmt.Fprintf(os.Stderr, "\ne2e: %v\n\n", err)
		fmt.Println("FAIL")
		os.Exit(1)
	}
	os.Exit(code)
}

// setupHint ends every error about a missing piece of the toolchain.
const setupHint = "run scripts/e2e-setup from the repository root first (scripts/test does it); the e2e suite never skips"

func runSuite(m *testing.M) (int, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return 0, err
	}
	driverDir := envOr("PLAYWRIGHT_DRIVER_PATH", filepath.Join(root, ".cache", "playwright-driver"))
	chromium := envOr("E2E_CHROMIUM", "/usr/lib/chromium/chromium-headless-shell") // scripts/e2e-setup says why the shell
	axePath := envOr("E2E_AXE_JS", filepath.Join(root, "node_modules", "axe-core", "axe.min.js"))
	artifactsDir = filepath.Join(root, "e2e", "artifacts")

	if err := checkToolchain(driverDir, chromium); err != nil {
		return 0, err
	}
	src, err := os.ReadFile(axePath)
	if err != nil {
		return 0, fmt.Errorf("axe-core is missing (%v): %s", err, setupHint)
	}
	axeJS = string(src)
	if err := os.MkdirAll(artifactsDir, 0o755); err != nil {
		return 0, err
	}

	pw, err = playwright.Run(&playwright.RunOptions{
		DriverDirectory:     driverDir,
		SkipInstallBrowsers: true,
		Verbose:             false,
		Stdout:              os.Stderr,
	})
	if err != nil {
		return 0, fmt.Errorf("starting the playwright driver in %s: %w; %s", driverDir, err, setupHint)
	}
	defer func() { _ = pw.Stop() }()

	browser, err = pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(chromium),
		Headless:       playwright.Bool(true),
		Args: []string{
			"--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
		},
	})
	if err != nil {
		return 0, fmt.Errorf("launching %s: %w; %s", chromium, err, setupHint)
	}
	defer func() { _ = browser.Close() }()

	expect = playwright.NewPlaywrightAssertions(float64(expectTimeout.Milliseconds()))
	return m.Run(), nil
}

// checkToolchain fails early and clearly where playwright-go would give a
// generic error (and would create a missing driver directory empty).
func checkToolchain(driverDir, chromium string) error {
	if _, err := os.Stat(chromium); err != nil {
		return fmt.Errorf("chromium is missing at %s: %s", chromium, setupHint)
	}
	node := filepath.Join(driverDir, "node")
	cli := filepath.Join(driverDir, "package", "cli.js")
	for _, p := range []string{node, cli} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("the playwright driver directory %s is incomplete (%s missing): %s", driverDir, p, setupHint)
		}
	}
	out, err := exec.Command(node, cli, "--version").Output()
	if got := strings.TrimSpace(string(out)); err != nil || got != wantDriverVersion {
		return fmt.Errorf("%s --version printed %q (err %v), want %q: %s", cli, got, err, wantDriverVersion, setupHint)
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// newPage opens a fresh browser context (its own cookies, so its own
// session) and a page in it. Uncaught page errors fail the test; console
// errors are logged. On failure a screenshot is saved under e2e/artifacts.
func newPage(t *testing.T, opts ...playwright.BrowserNewContextOptions) playwright.Page {
	t.Helper()
	var o playwright.BrowserNewContextOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Viewport == nil {
		o.Viewport = &playwright.Size{Width: 1024, Height: 800}
	}
	bctx, err := browser.NewContext(o)
	if err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	bctx.SetDefaultTimeout(float64(expectTimeout.Milliseconds()))
	page, err := bctx.NewPage()
	if err != nil {
		t.Fatalf("new page: %v", err)
	}
	var mu sync.Mutex
	var pageErrors []string
	page.OnPageError(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		pageErrors = append(pageErrors, err.Error())
	})
	page.OnConsole(func(m playwright.ConsoleMessage) {
		if m.Type() == "error" {
			t.Logf("browser console error on %s: %s", page.URL(), m.Text())
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			shot(t, page, "failure-"+safeName(t.Name()))
		}
		mu.Lock()
		errs := pageErrors
		mu.Unlock()
		for _, e := range errs {
			t.Errorf("uncaught error in the page: %s", e)
		}
		_ = bctx.Close()
	})
	return page
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string { return unsafeChars.ReplaceAllString(s, "_") }

// shot saves a full-page screenshot as e2e/artifacts/<name>.png.
func shot(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	path := filepath.Join(artifactsDir, name+".png")
	if _, err := page.Screenshot(playwright.PageScreenshotOptions{
		Path:     playwright.String(path),
		FullPage: playwright.Bool(true),
	}); err != nil {
		t.Errorf("screenshot %s: %v", path, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// must fails the test at once on an expectation or action error.
func must(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		HTML    string `json:"html"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

// audit runs axe-core on the page as it is now and fails the test on any
// violation, of any impact: every page passes them all (the last moderate
// one, two landmarks of one name on the run page, is mended), and a logged
// one was read by nobody.
func audit(t *testing.T, page playwright.Page, state string) {
	t.Helper()
	vs, err := axeViolations(page)
	if err != nil {
		t.Fatalf("axe-core on %s: %v", state, err)
	}
	for _, v := range vs {
		var nodes []string
		for _, n := range v.Nodes {
			nodes = append(nodes, fmt.Sprintf("\n    %v %s\n      %s", n.Target, n.HTML, strings.ReplaceAll(n.Summary, "\n", "\n      ")))
		}
		t.Errorf("axe (%s) %s violation %s: %s%s", state, v.Impact, v.ID, v.Help, strings.Join(nodes, ""))
	}
}

// axeViolations runs axe-core on the page. axe is evaluated through the
// DevTools protocol, which a page's Content-Security-Policy does not
// govern, so the app's own CSP stays enforced in every test (no BypassCSP).
func axeViolations(page playwright.Page) ([]axeViolation, error) {
	s, err := evalString(page, `async (src) => {
		if (!window.axe) { (0, eval)(src); }
		const r = await window.axe.run(document, {resultTypes: ['violations']});
		return JSON.stringify(r.violations);
	}`, axeJS)
	if err != nil {
		return nil, err
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(s), &vs); err != nil {
		return nil, err
	}
	return vs, nil
}

var errNotString = errors.New("not a string")

// waitJS waits until the JavaScript function predicate(arg) returns a truthy
// value in the page and returns that value. Playwright's WaitForFunction
// compiles its predicate with eval inside the page, which the app's CSP
// rightly refuses; page.Evaluate is not governed by the page's CSP, so the
// polling loop runs inside one Evaluate call (on animation frames, no sleep).
func waitJS(page playwright.Page, predicate string, arg any) (any, error) {
	return page.Evaluate(`async ([src, arg, timeout]) => {
		const predicate = (0, eval)('(' + src + ')');
		const end = performance.now() + timeout;
		for (;;) {
			const v = await predicate(arg);
			if (v) return v;
			if (performance.now() > end) throw new Error('timed out after ' + timeout + ' ms waiting for ' + src);
			await new Promise((r) => requestAnimationFrame(r));
		}
	}`, []any{predicate, arg, expectTimeout.Milliseconds()})
}

// evalString evaluates js in the page and returns its string result.
func evalString(page playwright.Page, js string, arg ...any) (string, error) {
	v, err := page.Evaluate(js, arg...)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: %T", errNotString, v)
	}
	return s, nil
}
