package web

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"
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
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	var errs []error
	for range 10 {
		errs = append(errs, emfile)
	}
	errs = append(errs, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)})
	l := newRetryListener(&fakeListener{errs: errs}, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
	l := newRetryListener(&fakeListener{errs: []error{net.ErrClosed}}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.sleep = func(time.Duration) { t.Fatal("slept on a closed listener") }
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept: %v", err)
	}
}
