package web

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// streamApp serves s.stream at /s on a real listener (app.Test cannot
// follow a hijacked connection), behind a middleware that sets a cookie
// after the handler returned, as the session middleware does.
func streamApp(t *testing.T, keep bool, run func(es *eventStream)) (addr string, released <-chan struct{}) {
	t.Helper()
	s := &Server{cfg: Config{Limits: Limits{WriteTimeout: 5 * time.Second}}, log: slog.New(slog.DiscardHandler)}
	rel := make(chan struct{})
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Server().KeepHijackedConns = keep
	app.Use(func(c *fiber.Ctx) error {
		err := c.Next()
		c.Cookie(&fiber.Cookie{Name: "after", Value: "next"})
		return err
	})
	app.Get("/s", func(c *fiber.Ctx) error {
		s.stream(c, "test", func() { close(rel) }, run)
		return nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return ln.Addr().String(), rel
}

func getStream(t *testing.T, addr string) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET /s HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body) // fails on a chunked body without its last chunk
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the stream: %v, want the connection closed (EOF)", err)
	}
	return res, string(body)
}

// The stream is a chunked text/event-stream response whose headers carry
// what the middleware set after the handler, each write arriving whole,
// ended properly, the session's slot given back.
func TestEventStreamIsAChunkedResponseOnTheHijackedConnection(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "fasthttp closes", true: "kept hijacked connection"}[keep], func(t *testing.T) {
			testChunkedStream(t, keep)
		})
	}
}

func testChunkedStream(t *testing.T, keep bool) {
	long := strings.Repeat("x", 3*keepBuf) // larger than the kept buffer
	addr, released := streamApp(t, keep, func(es *eventStream) {
		for _, s := range []string{"retry: 2000\n: ok\n\n", "", "data: " + long + "\n\n", ": heartbeat\n\n"} {
			if !es.write(s) {
				t.Error("write failed")
			}
		}
	})
	res, body := getStream(t, addr)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("status %d, headers %v", res.StatusCode, res.Header)
	}
	if len(res.TransferEncoding) != 1 || res.TransferEncoding[0] != "chunked" {
		t.Fatalf("transfer encoding %v, want chunked", res.TransferEncoding)
	}
	if !strings.Contains(res.Header.Get("Set-Cookie"), "after=next") {
		t.Fatalf("the cookie the middleware set after the handler is missing: %v", res.Header)
	}
	if !res.Close {
		t.Fatal("the response does not say the connection closes after it")
	}
	if want := "retry: 2000\n: ok\n\ndata: " + long + "\n\n: heartbeat\n\n"; body != want {
		t.Fatalf("body %q, want %q", body, want)
	}
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream slot was not released")
	}
}

// A panic while streaming is recovered (it would kill the process) and the
// slot is still given back.
func TestEventStreamPanicIsRecovered(t *testing.T) {
	t.Parallel()
	addr, released := streamApp(t, true, func(es *eventStream) {
		es.write(": ok\n\n")
		panic("boom")
	})
	res, body := getStream(t, addr)
	if res.StatusCode != 200 || body != ": ok\n\n" {
		t.Fatalf("status %d body %q", res.StatusCode, body)
	}
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream slot was not released")
	}
}
