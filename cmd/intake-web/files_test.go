package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// keepAlive opens a connection, sends one GET and reads its answer's
// status, leaving the connection open. The status is 0 when none came in
// time (the connection waits in the listen backlog).
func keepAlive(t *testing.T, addr, path string, wait time.Duration) (net.Conn, int) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	_ = conn.SetDeadline(time.Now().Add(wait))
	if _, err := conn.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		return conn, 0
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return conn, 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	_ = conn.SetDeadline(time.Time{})
	return conn, res.StatusCode
}

func readyz(t *testing.T, p *proc) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get(p.url + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// With a 512-file limit the connection cap is 256 (512 less the reserve):
// near it /readyz says saturated, beyond it connections get 503, and once
// the idle connections go the app serves as before.
func TestConnectionCapAtTheFileLimit(t *testing.T) {
	t.Parallel()
	p := startProc(t, envNoFile+"=512", "HTTP_IDLE_TIMEOUT=5m")
	if !strings.Contains(p.log(), "max_connections=256") {
		t.Fatalf("the cap was not lowered to the file limit:\n%s", p.log())
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 240 {
		c, status := keepAlive(t, p.addr, "/healthz", 10*time.Second)
		conns = append(conns, c)
		if status != http.StatusOK {
			t.Fatalf("connection %d below the cap: status %d", len(conns), status)
		}
	}
	if status, body := readyz(t, p); status != http.StatusServiceUnavailable || !strings.Contains(body, "saturated") {
		t.Errorf("/readyz near the cap: %d %s", status, body)
	}
	refused := 0
	for range 60 {
		c, status := keepAlive(t, p.addr, "/healthz", 10*time.Second)
		conns = append(conns, c)
		if status == http.StatusServiceUnavailable {
			refused++
		} else if status != http.StatusOK {
			t.Fatalf("beyond the cap: status %d", status)
		}
	}
	if refused == 0 {
		t.Error("300 connections and none refused at a cap of 256")
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	waitReady(t, p)
	p.alive("connections beyond the cap")
}

// Out of file descriptors (here held by "other parts" of the process, so the
// cap does not help): accepting fails, is retried with backoff, and the app
// serves again once descriptors are free. fasthttp alone stops accepting for
// good at the first EMFILE.
func TestAcceptRecoversFromFileExhaustion(t *testing.T) {
	t.Parallel()
	p := startProc(t, envNoFile+"=512", envHogFile+"=400", "HTTP_IDLE_TIMEOUT=5m")
	var conns []net.Conn
	answered := 0
	for range 200 {
		c, status := keepAlive(t, p.addr, "/healthz", 2*time.Second)
		conns = append(conns, c)
		if status == http.StatusOK {
			answered++
		}
		if status == 0 {
			break // the descriptors are spent: this one waits in the backlog
		}
	}
	if answered == len(conns) {
		t.Fatalf("all %d connections were served: the test did not exhaust the descriptors", answered)
	}
	for _, c := range conns {
		c.Close()
	}
	waitReady(t, p)
	p.alive("running out of file descriptors")
	if !strings.Contains(p.log(), "accepting connections failed; retrying") {
		t.Errorf("no accept failure was logged:\n%s", p.log())
	}
}

// waitReady polls /readyz until it answers 200 (the accept failure is
// remembered for 5 s).
func waitReady(t *testing.T, p *proc) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, body := readyz(t, p)
		if status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d after the load went: %s", status, body)
		}
		time.Sleep(200 * time.Millisecond) // polling a child process: no fake clock reaches it
	}
}
