package web

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// fakeListener answers Accept from a script of errors, then a connection.
type fakeListener struct {
	net.Listener
	errs []error
}

func (f *fakeListener) Accept() (net.Conn, error) {
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return nil, err
	}
	c, _ := net.Pipe()
	return c, nil
}

func TestAcceptRetriesResourceErrorsWithBackoff(t *testing.T) {
	t.Parallel()
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	var errs []error
	for range 10 {
		errs = append(errs, emfile)
	}
	errs = append(errs, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)})
	l := newRetryListener(&fakeListener{errs: errs}, 1<<20, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var slept []time.Duration
	l.sleep = func(d time.Duration) { slept = append(slept, d) }
	c, err := l.Accept()
	if err != nil || c == nil {
		t.Fatalf("Accept: %v", err)
	}
	c.Close()
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(slept, want) {
		t.Fatalf("backoff %v, want %v", slept, want)
	}
	if l.failures.Load() != 11 || !l.failedWithin(time.Minute) {
		t.Fatalf("failures %d, recent %v", l.failures.Load(), l.failedWithin(time.Minute))
	}
}

func TestAcceptReturnsOtherErrors(t *testing.T) {
	t.Parallel()
	l := newRetryListener(&fakeListener{errs: []error{net.ErrClosed}}, 1<<20, slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.sleep = func(time.Duration) { t.Fatal("slept on a closed listener") }
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept: %v", err)
	}
}

// An event stream hands its connection over (hijacked: fasthttp no longer
// counts it), yet it still holds its place under the connection cap: one
// more connection is answered 503, and a place frees when the stream ends.
func TestHijackedStreamsCountAgainstTheConnectionCap(t *testing.T) {
	t.Parallel()
	s := &Server{cfg: Config{Limits: Limits{WriteTimeout: 5 * time.Second}}, log: slog.New(slog.DiscardHandler)}
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Server().KeepHijackedConns = true
	hold := make(chan struct{})
	app.Get("/s", func(c *fiber.Ctx) error {
		s.stream(c, "test", func() {}, func(es *eventStream) {
			es.write("data: hello\n\n")
			<-hold
		})
		return nil
	})
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newRetryListener(raw, 1, slog.New(slog.DiscardHandler))
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	addr := raw.Addr().String()

	streamConn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer streamConn.Close()
	_ = streamConn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(streamConn, "GET /s HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(streamConn)
	if res, err := http.ReadResponse(br, nil); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the stream: %v %v", res, err)
	}
	statusOf := func() int {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(c, "GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a second connection: %v", err)
		}
		return res.StatusCode
	}
	if got := statusOf(); got != http.StatusServiceUnavailable {
		t.Fatalf("a connection beyond the cap while a stream is open: %d, want 503", got)
	}
	close(hold) // the stream ends and closes its connection
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
	streamConn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for ln.Open() != 0 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if got := statusOf(); got != http.StatusNotFound {
		t.Fatalf("a connection after the stream ended: %d, want 404", got)
	}
}

// overLimitServer is a Fiber app with a 4 KiB body limit behind the
// listener, as routes() builds it.
func overLimitServer(t *testing.T, ln *retryListener) string {
	t.Helper()
	app := fiber.New(fiber.Config{DisableStartupMessage: true, BodyLimit: 4 << 10})
	app.Post("/", func(c *fiber.Ctx) error { return c.SendString("taken") })
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return ln.Addr().String()
}

// A body over the limit is answered 413 before the server reads it. The
// client, which sends the whole body before it reads, still gets that
// answer and a clean end: never a reset that destroys the answer. Without
// the lingering close the write or the read fails with "connection reset
// by peer" (the kernel resets a socket closed with unread bytes).
func TestOverLimitBodyGetsTheAnswerNotAReset(t *testing.T) {
	t.Parallel()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := overLimitServer(t, newRetryListener(raw, 100, slog.New(slog.DiscardHandler)))
	for _, size := range []int{300 << 10, 2 << 20} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		head := "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n"
		if _, err := c.Write(append([]byte(head), make([]byte, size)...)); err != nil {
			t.Fatalf("%d bytes: sending the body: %v", size, err)
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%d bytes: reading the answer: %v", size, err)
		}
		if _, err := io.ReadAll(res.Body); err != nil {
			t.Fatalf("%d bytes: reading the answer's body: %v", size, err)
		}
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("%d bytes: status %d, want 413", size, res.StatusCode)
		}
		c.Close()
	}
}

// The lingering is bounded: a client that goes on sending is cut off after
// lingerBytes, one that neither sends nor closes after lingerTime, and
// either way its connection's place is given back.
func TestLingeringCloseIsBounded(t *testing.T) {
	t.Parallel()
	start := func(t *testing.T, bytes int64, wait time.Duration) (*retryListener, net.Conn) {
		raw, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln := newRetryListener(raw, 100, slog.New(slog.DiscardHandler))
		ln.lingerBytes, ln.lingerTime = bytes, wait
		c, err := net.Dial("tcp", overLimitServer(t, ln))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10737418240\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		return ln, c
	}
	placeGivenBack := func(t *testing.T, ln *retryListener) {
		deadline := time.Now().Add(10 * time.Second)
		for ln.Open() != 0 && time.Now().Before(deadline) {
			runtime.Gosched()
		}
		if n := ln.Open(); n != 0 {
			t.Fatalf("%d connections still hold a place", n)
		}
	}
	t.Run("in bytes", func(t *testing.T) {
		ln, c := start(t, 64<<10, time.Hour)
		// Send until the server gives up: well past lingerBytes plus what
		// the kernel's buffers hold, and never the 10 GB announced.
		chunk := make([]byte, 64<<10)
		sent := 0
		for ; sent < 256<<20; sent += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				break
			}
		}
		if sent >= 256<<20 {
			t.Fatal("the server read 256 MiB of an over-limit body")
		}
		placeGivenBack(t, ln)
	})
	t.Run("in time", func(t *testing.T) {
		ln, _ := start(t, 1<<40, 50*time.Millisecond)
		placeGivenBack(t, ln) // the client neither sends nor closes
	})
}
