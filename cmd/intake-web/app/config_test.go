package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnvDefaults(t *testing.T) {
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.ListenAddr != "127.0.0.1:8080" || c.DatabasePath != "intake-web.db" || c.ShutdownGrace != 30*time.Second ||
		c.ClinicianIdle != 30*time.Minute || c.UpstreamURL != "" || c.APIKey != "" || c.CookieSecure != nil ||
		c.PacerPerMinute != 0 || c.Limits.MaxConnections != 0 {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestFromEnvOverrides(t *testing.T) {
	c, err := FromEnv(env(map[string]string{
		"LISTEN_ADDR": ":9000", "DATABASE_PATH": "/data/app.db", "PUBLIC_URL": "https://intake.example",
		"COOKIE_SECURE": "false", "INTAKE_BASE_URL": "https://svc.example", "INTAKE_API_KEY": "k",
		"PACER_PER_MINUTE": "-1", "PACER_TURNS_PER_DAY": "500", "PACER_INTAKES_PER_DAY": "200",
		"SHUTDOWN_GRACE": "5s", "CLINICIAN_IDLE": "10m",
		"HTTP_MAX_CONNECTIONS": "100", "HTTP_MAX_HEADER_BYTES": "8192", "HTTP_MAX_BODY_BYTES": "131072",
		"HTTP_READ_TIMEOUT": "5s", "HTTP_WRITE_TIMEOUT": "30s", "HTTP_IDLE_TIMEOUT": "20s",
		"STREAMS_PER_SESSION": "4", "INTAKES_PER_HOUR": "3", "INTAKES_PER_HOUR_PER_ADDRESS": "9", "TURNS_PER_MINUTE": "5",
	}))
	if err != nil {
		t.Fatal(err)
	}
	l := c.Limits
	if c.ListenAddr != ":9000" || c.DatabasePath != "/data/app.db" || c.PublicURL != "https://intake.example" ||
		c.CookieSecure == nil || *c.CookieSecure || c.UpstreamURL != "https://svc.example" || c.APIKey != "k" ||
		c.PacerPerMinute != -1 || c.TurnsPerDay != 500 || c.IntakesPerDay != 200 ||
		c.ShutdownGrace != 5*time.Second || c.ClinicianIdle != 10*time.Minute ||
		l.MaxConnections != 100 || l.MaxHeaderBytes != 8192 || l.MaxBodyBytes != 131072 ||
		l.ReadTimeout != 5*time.Second || l.WriteTimeout != 30*time.Second || l.IdleTimeout != 20*time.Second ||
		l.StreamsPerSession != 4 || l.IntakesPerHour != 3 || l.IntakesPerHourPerAddress != 9 || l.TurnsPerMinute != 5 {
		t.Fatalf("overrides: %+v", c)
	}
	if err := c.check(); err != nil {
		t.Fatalf("check: %v", err)
	}
}

// Every bad value is reported at once, each naming its variable and rule.
func TestFromEnvBadValues(t *testing.T) {
	bad := map[string]string{
		"COOKIE_SECURE": "maybe", "PACER_PER_MINUTE": "six", "SHUTDOWN_GRACE": "-1s", "CLINICIAN_IDLE": "soon",
		"HTTP_MAX_CONNECTIONS": "3", "HTTP_MAX_HEADER_BYTES": "100", "HTTP_READ_TIMEOUT": "0s",
		"TURNS_PER_MINUTE": "0", "STREAMS_PER_SESSION": "x",
	}
	_, err := FromEnv(env(bad))
	if err == nil {
		t.Fatal("no error")
	}
	for name := range bad {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
	for _, rule := range []string{"true or false", "at least 16", "positive duration", "whole number"} {
		if !strings.Contains(err.Error(), rule) {
			t.Errorf("the error does not say %q: %v", rule, err)
		}
	}
}

func TestAPIKeyFromFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(f, []byte("cis_sb_0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := FromEnv(env(map[string]string{"INTAKE_API_KEY_FILE": f}))
	if err != nil || c.APIKey != "cis_sb_0123" {
		t.Fatalf("key %q, %v", c.APIKey, err)
	}
	if _, err := FromEnv(env(map[string]string{"INTAKE_API_KEY_FILE": f, "INTAKE_API_KEY": "x"})); err == nil {
		t.Error("both a key and a key file: no error")
	}
	if _, err := FromEnv(env(map[string]string{"INTAKE_API_KEY_FILE": f + ".missing"})); err == nil {
		t.Error("a missing key file: no error")
	}
}

func TestCheckRefusesIncompleteConfig(t *testing.T) {
	c := Defaults()
	err := c.check()
	if err == nil || !strings.Contains(err.Error(), "INTAKE_BASE_URL") || !strings.Contains(err.Error(), "INTAKE_API_KEY") {
		t.Fatalf("no upstream: %v", err)
	}
	c.UpstreamURL, c.APIKey, c.PublicURL = "ftp://x", "k", "not a url"
	err = c.check()
	if err == nil || !strings.Contains(err.Error(), "http(s) URL") || !strings.Contains(err.Error(), "PUBLIC_URL") {
		t.Fatalf("bad URLs: %v", err)
	}
}

func TestScenarioSettings(t *testing.T) {
	c, err := FromEnv(env(map[string]string{"SCENARIO_TARGET": "service", "SCENARIO_PATIENT_RESERVE": "40"}))
	if err != nil || c.ScenarioTarget != "service" || c.PatientReserve != 40 {
		t.Fatalf("%v: target %q, reserve %d", err, c.ScenarioTarget, c.PatientReserve)
	}
	if d, _ := FromEnv(env(nil)); d.PatientReserve != DefaultPatientReserve {
		t.Errorf("default reserve %d, want %d", d.PatientReserve, DefaultPatientReserve)
	}
	if c, err := FromEnv(env(map[string]string{"SCENARIO_PARALLEL": "8"})); err != nil || c.ScenarioParallel != 8 {
		t.Errorf("SCENARIO_PARALLEL=8: %v, %d", err, c.ScenarioParallel)
	}
	if d, _ := FromEnv(env(nil)); d.ScenarioParallel != DefaultScenarioParallel {
		t.Errorf("default parallel %d, want %d", d.ScenarioParallel, DefaultScenarioParallel)
	}
	if _, err := FromEnv(env(map[string]string{"SCENARIO_PARALLEL": "0"})); err == nil || !strings.Contains(err.Error(), "SCENARIO_PARALLEL") {
		t.Errorf("no items at once: %v", err)
	}
	if _, err := FromEnv(env(map[string]string{"SCENARIO_PATIENT_RESERVE": "-1"})); err == nil || !strings.Contains(err.Error(), "SCENARIO_PATIENT_RESERVE") {
		t.Errorf("a negative reserve: %v", err)
	}
	c, _ = FromEnv(env(map[string]string{"INTAKE_BASE_URL": "https://svc.example", "INTAKE_API_KEY": "k", "SCENARIO_TARGET": "prod"}))
	if err := c.check(); err == nil || !strings.Contains(err.Error(), "SCENARIO_TARGET must be sandbox or service") {
		t.Errorf("an unknown target: %v", err)
	}
	if c, err := FromEnv(env(map[string]string{"SCENARIO_VOICE": "conversational"})); err != nil || c.ScenarioVoice != "conversational" {
		t.Errorf("the conversational voice: %v, %q", err, c.ScenarioVoice)
	}
	if _, err := FromEnv(env(map[string]string{"SCENARIO_VOICE": "chatty"})); err == nil || !strings.Contains(err.Error(), `SCENARIO_VOICE must be one of plain, conversational, `) || !strings.Contains(err.Error(), `got "chatty"`) {
		t.Errorf("an unknown voice: %v", err)
	}
}

func TestDemoSwitch(t *testing.T) {
	c, err := FromEnv(env(map[string]string{"DEMO": "1"}))
	if err != nil || !c.Demo {
		t.Fatalf("DEMO=1: demo %v, %v", c.Demo, err)
	}
	if c.PacerPerMinute != 0 || c.TurnsPerDay != 0 || c.IntakesPerDay != 0 {
		t.Errorf("DEMO alone changed the pacing before the sandbox was started: %+v", c)
	}
	c.ApplyDemo()
	if c.PacerPerMinute >= 0 || c.TurnsPerDay >= 0 || c.IntakesPerDay >= 0 {
		t.Errorf("ApplyDemo left a pacing or a quota on: %d a minute, %d turns, %d intakes", c.PacerPerMinute, c.TurnsPerDay, c.IntakesPerDay)
	}
	c.UpstreamURL, c.APIKey, c.Embedded = "http://127.0.0.1:1", "k", true // a limitless embedded sandbox
	if err := c.check(); err != nil {
		t.Errorf("demo against a limitless embedded sandbox: %v", err)
	}
	c.Embedded = false
	if err := c.check(); err == nil || !strings.Contains(err.Error(), "DEMO (-demo)") || !strings.Contains(err.Error(), "embedded sandbox") {
		t.Errorf("demo against a real upstream: %v", err)
	}
	if _, err := FromEnv(env(map[string]string{"DEMO": "please"})); err == nil ||
		!strings.Contains(err.Error(), "DEMO") || !strings.Contains(err.Error(), "must be 1 or 0") {
		t.Errorf("DEMO=please: %v", err)
	}
}

// The spec's limits on the embedded sandbox with the app's pacing off (or
// looser) is refused at start: the sandbox would answer 429 and every
// intake would pause. A real upstream is not checked (a raised key).
func TestPacingMustFitTheEmbeddedSandbox(t *testing.T) {
	spec := SandboxLimits{PerMinute: 6, TurnsPerDay: 100, IntakesPerDay: 100}
	base := func() Config {
		c := Defaults()
		c.UpstreamURL, c.APIKey, c.Embedded, c.SandboxLimits = "http://127.0.0.1:1", "k", true, spec
		return c
	}
	c := base()
	if err := c.check(); err != nil {
		t.Fatalf("the default pacing against the spec's limits: %v", err)
	}
	for _, tc := range []struct {
		env  string
		set  func(*Config)
		want string
	}{
		{"PACER_PER_MINUTE", func(c *Config) { c.PacerPerMinute = -1 }, "PACER_PER_MINUTE=-1 (no limit) must not exceed the embedded sandbox's limit of 6 requests a minute"},
		{"PACER_PER_MINUTE", func(c *Config) { c.PacerPerMinute = 7 }, "PACER_PER_MINUTE=7 (7) must not exceed"},
		{"PACER_TURNS_PER_DAY", func(c *Config) { c.TurnsPerDay = -1 }, "PACER_TURNS_PER_DAY=-1 (no limit) must not exceed the embedded sandbox's limit of 100 turns a day"},
		{"PACER_INTAKES_PER_DAY", func(c *Config) { c.IntakesPerDay = 101 }, "PACER_INTAKES_PER_DAY=101 (101) must not exceed the embedded sandbox's limit of 100 intakes a day"},
	} {
		c := base()
		tc.set(&c)
		err := c.check()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "-demo (DEMO=1)") {
			t.Errorf("%s: %v", tc.env, err)
		}
		c.Embedded = false
		if err := c.check(); err != nil {
			t.Errorf("%s against a real upstream: %v", tc.env, err)
		}
	}
	c = base()
	c.PacerPerMinute, c.TurnsPerDay, c.IntakesPerDay = 3, 50, 50 // stricter than the sandbox: fine
	if err := c.check(); err != nil {
		t.Errorf("a stricter pacing: %v", err)
	}
	c = base()
	c.ApplyDemo() // demo's pacing against the spec's limits: the sandbox half is missing
	if err := c.check(); err == nil || !strings.Contains(err.Error(), "PACER_PER_MINUTE") {
		t.Errorf("demo pacing against the spec's limits: %v", err)
	}
}

func TestTrustedProxies(t *testing.T) {
	c, err := FromEnv(env(map[string]string{"TRUSTED_PROXIES": "127.0.0.1, 10.1.2.3/8,::1"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.1/32", "10.0.0.0/8", "::1/128"}
	if len(c.TrustedProxies) != len(want) {
		t.Fatalf("TrustedProxies %v, want %v", c.TrustedProxies, want)
	}
	for i, p := range c.TrustedProxies {
		if p.String() != want[i] {
			t.Errorf("TrustedProxies[%d] = %s, want %s", i, p, want[i])
		}
	}
	if d, _ := FromEnv(env(nil)); len(d.TrustedProxies) != 0 {
		t.Errorf("trusted by default: %v", d.TrustedProxies)
	}
	for _, bad := range []string{"caddy", "127.0.0.1,", "10.0.0.0/33"} {
		if _, err := FromEnv(env(map[string]string{"TRUSTED_PROXIES": bad})); err == nil || !strings.Contains(err.Error(), "TRUSTED_PROXIES") {
			t.Errorf("TRUSTED_PROXIES=%q: %v", bad, err)
		}
	}
}

// With other replicas, each run of the process leases under a name of its
// own (a restart under the same REPLICA_NAME must not renew its dead
// run's leases); alone, under the replica's name.
func TestEachRunOfAReplicaLeasesUnderItsOwnName(t *testing.T) {
	a, b := processName("replica-a", true), processName("replica-a", true)
	if a == b || !strings.HasPrefix(a, "replica-a.") || !strings.HasPrefix(b, "replica-a.") {
		t.Errorf("two runs of replica-a lease under %q and %q", a, b)
	}
	if got := processName("replica-a", false); got != "replica-a" {
		t.Errorf("alone: %q, want replica-a", got)
	}
}

// TestREADMEListsEveryVariable: the README's configuration table has a row
// for each variable of the configuration's table (options, which intake-web
// -h prints), and no other.
func TestREADMEListsEveryVariable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Configuration\n")
	end := strings.Index(text[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README.md has no Configuration section")
	}
	rows := regexp.MustCompile("(?m)^\\| `([A-Z_]+)`").FindAllStringSubmatch(text[start:start+1+end], -1)
	inREADME := map[string]bool{}
	for _, r := range rows {
		inREADME[r[1]] = true
	}
	for _, v := range Variables() {
		if !inREADME[v.Name] {
			t.Errorf("README.md's configuration table has no row for %s", v.Name)
		}
		delete(inREADME, v.Name)
	}
	for name := range inREADME {
		t.Errorf("README.md's configuration table lists %s, which the app does not read", name)
	}
}

// SAFETY_OFFICERS named the officers before the role did: set, the app
// refuses to start and says how to grant the role, rather than start with
// nobody able to decide and no word why.
func TestSafetyOfficersIsRefusedWithTheWayToTheRole(t *testing.T) {
	_, err := FromEnv(env(map[string]string{"SAFETY_OFFICERS": "dr.cso"}))
	if err == nil || !strings.Contains(err.Error(), "SAFETY_OFFICERS") ||
		!strings.Contains(err.Error(), "intake-web clinician grant USERNAME safety_officer") {
		t.Fatalf("SAFETY_OFFICERS set: %v", err)
	}
	if _, err := FromEnv(env(map[string]string{})); err != nil {
		t.Fatalf("unset: %v", err)
	}
}
