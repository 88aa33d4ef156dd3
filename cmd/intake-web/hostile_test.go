package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// leakMark is sent inside cookies and malformed requests; it must never
// appear in the app's log.
const leakMark = "LEAKMARK7f3a"

// TestHostileRequests sends each kind of malformed, oversized or endless
// request to one running intake-web, checks the status it answers, and after
// each that the same process still answers /healthz. The table in
// docs/operations.md lists the same cases.
func TestHostileRequests(t *testing.T) {
	t.Parallel()
	p := startProc(t, "HTTP_READ_TIMEOUT=1s", "HTTP_IDLE_TIMEOUT=2s")
	big := func(n int) string { return strings.Repeat("a", n) }
	req := func(lines ...string) []byte { return []byte(strings.Join(lines, "\r\n") + "\r\n\r\n") }
	form := "age=&sex=&history=" + big(300<<10) + "&synthetic=on"
	tls := []byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03}
	tls = append(tls, bytes.Repeat([]byte{0x5a}, 160)...)

	cases := []struct {
		name       string
		payload    []byte
		closeWrite bool
		want       []int // any of these; 0: the server closes without answering
	}{
		{"GET /static", req("GET /static HTTP/1.1", "Host: x"), false, []int{404}},
		{"GET /static/", req("GET /static/ HTTP/1.1", "Host: x"), false, []int{404}},
		{"GET /static/js", req("GET /static/js HTTP/1.1", "Host: x"), false, []int{404}},
		{"GET /static/css/", req("GET /static/css/ HTTP/1.1", "Host: x"), false, []int{404}},
		{"GET /static/../go.mod", req("GET /static/../go.mod HTTP/1.1", "Host: x"), false, []int{404}},
		{"GET /static/css/app.css (a real file)", req("GET /static/css/app.css HTTP/1.1", "Host: x"), false, []int{200}},
		{"5 KB cookie", req("GET / HTTP/1.1", "Host: x", "Cookie: c="+leakMark+big(5<<10)), false, []int{200}},
		{"40 KB cookie", req("GET / HTTP/1.1", "Host: x", "Cookie: c="+leakMark+big(40<<10)), false, []int{431}},
		{"junk session cookie", req("GET / HTTP/1.1", "Host: x", "Cookie: intake_session="+leakMark+big(300)), false, []int{200}},
		{"10 KB URL", req("GET /"+big(200)+leakMark+big(10<<10)+" HTTP/1.1", "Host: x"), false, []int{404}}, // logged up to 128 bytes
		{"40 KB URL", req("GET /"+leakMark+big(40<<10)+" HTTP/1.1", "Host: x"), false, []int{431}},
		{"100 KB Last-Event-ID", req("GET /intakes/x/turns/1/events HTTP/1.1", "Host: x", "Last-Event-ID: "+big(100<<10)), false, []int{431}},
		{"3,000 small headers", req(append([]string{"GET / HTTP/1.1", "Host: x"}, strings.Split(strings.Repeat("X-A: b\n", 3000), "\n")[:3000]...)...), false, []int{431}},
		{"300 KB form to /intakes", []byte(fmt.Sprintf("POST /intakes HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", len(form), form)), false, []int{413}},
		{"300 KB chunked form to /intakes", []byte(fmt.Sprintf("POST /intakes HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(form), form)), false, []int{413}},
		{"300 KB form to the sign-in", []byte(fmt.Sprintf("POST /clinician/signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", len(form), form)), false, []int{413}},
		{"2 MB form to /intakes", []byte(fmt.Sprintf("POST /intakes HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", 2<<20, big(2<<20))), false, []int{413}},
		{"Content-Length of 10 GB", req("POST /intakes HTTP/1.1", "Host: x", "Content-Length: 10737418240"), false, []int{413}},
		{"a form without a CSRF token", req("POST /intakes HTTP/1.1", "Host: x", "Content-Type: application/x-www-form-urlencoded", "Content-Length: 0"), false, []int{403}},
		{"garbage request line", []byte("\x00\x01\x02" + leakMark + " garbage\r\n\r\n"), false, []int{400}},
		{"HTTP/0.9 request", []byte("GET /\r\n\r\n"), false, []int{200, 400}},
		{"unknown method", req("BREW / HTTP/1.1", "Host: x"), false, []int{400, 404, 405}},
		{"header line without a colon", req("GET / HTTP/1.1", "Host: x", leakMark+"nocolon"), false, []int{400, 408}},
		{"NUL in a header", req("GET / HTTP/1.1", "Host: x", "X-A: a\x00b"), false, []int{200}},
		{"Content-Length not a number", req("POST /intakes HTTP/1.1", "Host: x", "Content-Length: abc"), false, []int{400}},
		{"negative Content-Length", req("POST /intakes HTTP/1.1", "Host: x", "Content-Length: -5"), false, []int{400}},
		{"bad chunk size", []byte("POST /intakes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + leakMark + "\r\n0\r\n\r\n"), false, []int{400}},
		{"TLS handshake on the plain port", tls, false, []int{400, 408}},
		{"invalid UTF-8 and NUL in the path", req("GET /intakes/%00%ff%fe HTTP/1.1", "Host: x"), false, []int{404}},
		{"half a request line, then close", []byte("GET /hea"), true, []int{0, 400}},
		{"half the headers, then close", []byte("GET / HTTP/1.1\r\nHost: x\r\nX-A: "), true, []int{0, 400}},
		{"half a body, then close", []byte("POST /intakes HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nage="), true, []int{0, 400}},
		{"half the headers, then silence", []byte("GET / HTTP/1.1\r\nHost: x\r\n"), false, []int{408}},
		{"half a body, then silence", []byte("POST /intakes HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nage="), false, []int{408}},
	}
	for _, tc := range cases {
		got := exchange(t, p.addr, tc.payload, tc.closeWrite, 10*time.Second)
		if !slices.Contains(tc.want, got) {
			t.Errorf("%s: status %d, want one of %v", tc.name, got, tc.want)
		}
		p.alive(tc.name)
	}

	t.Run("a connection that stays idle past the idle timeout", func(t *testing.T) {
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// The server closes it (after a 408 at most) within the timeouts.
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(conn)
		if err != nil {
			t.Fatalf("the idle connection was not closed: %v", err)
		}
		if len(got) > 0 && !strings.HasPrefix(string(got), "HTTP/1.1 408") {
			t.Errorf("on an idle connection the server sent %.60q", got)
		}
		p.alive("an idle connection")
	})

	t.Run("100 pipelined requests on one connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		go func() { _, _ = conn.Write(bytes.Repeat([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"), 100)) }()
		var buf bytes.Buffer
		chunk := make([]byte, 32<<10)
		for strings.Count(buf.String(), "HTTP/1.1 200") < 100 {
			n, err := conn.Read(chunk)
			if err != nil {
				t.Fatalf("after %d answers: %v", strings.Count(buf.String(), "HTTP/1.1 200"), err)
			}
			buf.Write(chunk[:n])
		}
		p.alive("pipelined requests")
	})

	t.Run("200 slow connections at once", func(t *testing.T) {
		// Slowloris: each sends half its headers and waits. The read timeout
		// frees them; meanwhile the app keeps answering others.
		var wg sync.WaitGroup
		for range 200 {
			wg.Go(func() {
				exchange(t, p.addr, []byte("GET / HTTP/1.1\r\nHost: x\r\n"), false, 10*time.Second)
			})
		}
		p.alive("200 slow connections, while they wait")
		wg.Wait()
		p.alive("200 slow connections")
	})

	if strings.Contains(p.log(), leakMark) {
		t.Errorf("the log contains bytes a client sent (%s)", leakMark)
	}
}
