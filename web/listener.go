package web

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// retryListener keeps accepting through resource errors. fasthttp's serve
// loop treats any accept error but a timeout as permanent and returns, so
// with the file limit reached (EMFILE) the listener would stop for good while
// the process stays up. Like net/http's Server.Serve, it backs off from 5 ms
// to 1 s on such errors and tries again; it also remembers when accepting
// last failed, for /readyz.
//
// It also counts open connections and refuses those beyond max with a 503:
// fasthttp's own cap (Concurrency) stops counting a connection once an event
// stream hijacks it, and streams are most of what stays open.
type retryListener struct {
	net.Listener
	max        int64        // open connections allowed
	open       atomic.Int64 // open connections, streams included
	log        *slog.Logger
	lastFailed atomic.Int64 // unix nanoseconds of the last resource error
	failures   atomic.Int64
	sleep      func(time.Duration) // time.Sleep; tests count the backoff
	// A lingering close reads and discards at most lingerBytes, for at most
	// lingerTime, before the socket is closed (countedConn.Close).
	lingerBytes int64
	lingerTime  time.Duration
}

func newRetryListener(ln net.Listener, max int, log *slog.Logger) *retryListener {
	return &retryListener{Listener: ln, max: int64(max), log: log, sleep: time.Sleep,
		lingerBytes: lingerBytes, lingerTime: lingerTime}
}

// busy is the whole answer to a connection beyond the cap.
const busy = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 41\r\n\r\nThe service is busy. Try again shortly.\r\n"

func (l *retryListener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			if l.open.Add(1) > l.max {
				l.open.Add(-1)
				_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
				_, _ = c.Write([]byte(busy))
				_ = c.Close()
				continue
			}
			return &countedConn{Conn: c, l: l}, nil
		}
		if !retryable(err) {
			return nil, err
		}
		if delay == 0 {
			delay = 5 * time.Millisecond
		} else if delay *= 2; delay > time.Second {
			delay = time.Second
		}
		l.lastFailed.Store(time.Now().UnixNano())
		if n := l.failures.Add(1); n == 1 || n%100 == 0 {
			// errno only: the error text is the kernel's, not the client's.
			l.log.Error("accepting connections failed; retrying", "err", err, "failures", n, "retry_in", delay)
		}
		l.sleep(delay)
	}
}

// retryable reports accept errors that pass: out of file descriptors or
// memory, or a connection that died in the backlog.
func retryable(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// failedWithin reports whether accepting failed in the last d.
func (l *retryListener) failedWithin(d time.Duration) bool {
	last := l.lastFailed.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < d
}

// countedConn gives its place back when closed (once), and closes by
// lingering.
type countedConn struct {
	net.Conn
	l      *retryListener
	closed atomic.Bool
}

// A lingering close reads and discards at most this much, for at most this
// long, before the socket is closed. 8 MiB covers any upload a person can
// make by mistake (the suite form's JavaScript refuses files over its limit
// before sending); a client that sends more, or more slowly, gets the reset.
const (
	lingerBytes = 8 << 20
	lingerTime  = 5 * time.Second
)

// Close half-closes the connection and lingers: fasthttp answers a body over
// BodyLimit with a 413 before reading the body, then closes. Closing a socket
// whose receive buffer still holds unread bytes makes the kernel send a reset,
// which can destroy the answer before the client has read it (measured: a
// 300 KiB upload saw "connection reset by peer" 4 runs in 5, a 2 MB one 10 in
// 10). Like net/http's lingering close, which fasthttp lacks, the answer is
// followed by a FIN, and what the client still sends is read and thrown away
// until it closes its side, up to lingerBytes or lingerTime. That happens on
// its own goroutine so the server's worker is free at once; the connection
// keeps its place against the cap until it is really closed.
func (c *countedConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return net.ErrClosed
	}
	hc, ok := c.Conn.(interface{ CloseWrite() error })
	if !ok || hc.CloseWrite() != nil {
		defer c.l.open.Add(-1)
		return c.Conn.Close()
	}
	go c.linger()
	return nil
}

func (c *countedConn) linger() {
	defer c.l.open.Add(-1)
	defer c.Conn.Close()
	if c.Conn.SetReadDeadline(time.Now().Add(c.l.lingerTime)) != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, c.Conn, c.l.lingerBytes)
}

// Open counts the open connections.
func (l *retryListener) Open() int64 { return l.open.Load() }
