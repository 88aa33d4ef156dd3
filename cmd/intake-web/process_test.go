package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app/apptest"
)

// The tests here run the real binary: this test executable re-runs itself
// as intake-web (TestMain), so a crash is a child process exiting, never the
// test binary dying, and the open-file limit can be set for the child alone.
const (
	envAsMain  = "INTAKE_WEB_TEST_AS_MAIN"
	envNoFile  = "INTAKE_WEB_TEST_NOFILE"     // soft and hard open-file limit of the child
	envHogFile = "INTAKE_WEB_TEST_HOG_FILES"  // descriptors the child holds open before it starts
	envArgs    = "INTAKE_WEB_TEST_ARGS"       // the child's arguments, separated by \x1f
	readyLine  = "intake-web is ready: open " // printed by run
)

func TestMain(m *testing.M) {
	// Passwords are hashed at bcrypt's least cost here and in the child
	// processes (main.go's tune): the real cost takes seconds a hash under
	// the race detector, and nothing here tests the cost.
	tune = func(c *app.Config) { c.BcryptCost = bcrypt.MinCost }
	if os.Getenv(envAsMain) == "1" {
		if n, _ := strconv.ParseUint(os.Getenv(envNoFile), 10, 64); n > 0 {
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				fmt.Fprintln(os.Stderr, "setrlimit:", err)
				os.Exit(3)
			}
		}
		// Descriptors held by "other parts of the process", to run it out of
		// files while it serves: they stay open until it exits.
		if n, _ := strconv.Atoi(os.Getenv(envHogFile)); n > 0 {
			for range n {
				// A raw descriptor: an *os.File would be closed by its finalizer.
				if _, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0); err != nil {
					fmt.Fprintln(os.Stderr, "hog files:", err)
					os.Exit(3)
				}
			}
		}
		os.Args = os.Args[:1]
		if a := os.Getenv(envArgs); a != "" {
			os.Args = append(os.Args, strings.Split(a, "\x1f")...)
		}
		main()
		os.Exit(0)
	}
	// The tests here wait on child processes, replies streamed at the
	// sandbox's pace, and timeouts: six at a time.
	apptest.RaiseParallel(6)
	os.Exit(m.Run())
}

// proc is intake-web running as a child process, with the embedded sandbox.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	addr   string
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan struct{}
	err    error // the exit status, once exited is closed
}

func startProc(t *testing.T, env ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := &proc{t: t, exited: make(chan struct{})}
	p.cmd = exec.Command(exe)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), envAsMain+"=1",
		"LISTEN_ADDR=127.0.0.1:0", "DATABASE_PATH="+filepath.Join(dir, "app.db"),
		"INTAKE_BASE_URL=", "INTAKE_API_KEY=", "INTAKE_API_KEY_FILE=", "SHUTDOWN_GRACE=2s")
	p.cmd.Env = append(p.cmd.Env, env...)
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if i := strings.Index(line, readyLine); i >= 0 {
				ready <- strings.TrimSpace(line[i+len(readyLine):])
			}
		}
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("intake-web's log:\n%s", p.log())
		}
	})
	select {
	case p.url = <-ready:
		p.addr = strings.TrimPrefix(p.url, "http://")
	case <-p.exited:
		t.Fatalf("intake-web exited before it was ready (%v):\n%s", p.err, p.log())
	case <-time.After(60 * time.Second):
		t.Fatalf("intake-web was not ready within 60 s:\n%s", p.log())
	}
	return p
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// alive fails the test unless the process still runs and answers /healthz
// on a fresh connection.
func (p *proc) alive(after string) {
	p.t.Helper()
	select {
	case <-p.exited:
		p.t.Fatalf("after %s: intake-web exited (%v)", after, p.err)
	default:
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get(p.url + "/healthz")
	if err != nil {
		p.t.Fatalf("after %s: /healthz: %v", after, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		p.t.Fatalf("after %s: /healthz answered %d", after, res.StatusCode)
	}
}

var statusLine = regexp.MustCompile(`^HTTP/1\.[01] (\d{3}) `)

// exchange sends payload on a new connection (then half-closes it when
// closeWrite) and returns the status of the first response, 0 when the
// server closed without one.
func exchange(t *testing.T, addr string, payload []byte, closeWrite bool, wait time.Duration) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(wait))
	// The server may answer (and close) before all of a large payload is
	// sent: a failed write is fine, the answer is what counts.
	go func() {
		_, _ = conn.Write(payload)
		if closeWrite {
			_ = conn.(*net.TCPConn).CloseWrite()
		}
	}()
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return 0
	}
	m := statusLine.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("not an HTTP status line: %q", line)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
