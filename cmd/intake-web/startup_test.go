package main

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var demoPasswordLine = regexp.MustCompile(`(?m)^  sign in as demo, password (\S+) \(shown only now`)

// TestStartUpOutputEndsWithWhereToGo: the start-up output's last lines say
// where the app is, where the clinician area is and, on the first start,
// the demo clinician's password, which signs in there and is in no log
// line. A later start on the same database says how to sign in without it.
func TestStartUpOutputEndsWithWhereToGo(t *testing.T) {
	t.Parallel()
	p := startProc(t)
	waitFor(t, "the demo clinician's password", func() bool { return demoPasswordLine.MatchString(p.log()) })
	out := p.log()
	tail := out[strings.Index(out, readyLine):]
	if want := readyLine + p.url + "\n  clinician area: " + p.url + "/clinician\n  sign in as demo, password "; !strings.HasPrefix(tail, want) {
		t.Errorf("the start-up output does not end with where to go:\n%s", out)
	}
	password := demoPasswordLine.FindStringSubmatch(out)[1]
	if before := out[:strings.Index(out, readyLine)]; strings.Contains(before, password) {
		t.Errorf("the demo password is in the log:\n%s", before)
	}
	if strings.Count(out, password) != 1 {
		t.Errorf("the demo password is said %d times", strings.Count(out, password))
	}
	// It signs in.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res := postForm(t, c, p.url+"/clinician/signin", url.Values{"_csrf": {csrfToken(t, c, p.url)}, "username": {"demo"}, "password": {password}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/clinician" {
		t.Errorf("signing in with the demo password: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}

	// Again on the same database: the password is not shown, and the
	// output says how to get a new one.
	db := filepath.Join(p.cmd.Dir, "app.db")
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.exited
	again := startProc(t, "DATABASE_PATH="+db)
	waitFor(t, "how to sign in", func() bool {
		return strings.Contains(again.log(), "  sign in as demo: its password was shown at its first start")
	})
	if strings.Contains(again.log(), password) || !strings.Contains(again.log(), "clinician area: "+again.url+"/clinician") {
		t.Errorf("a second start:\n%s", again.log())
	}
}
