package web

import (
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// eventStream is one browser event stream being written. It owns the
// connection (hijacked from fasthttp) and writes each event as one HTTP/1.1
// chunk in one write: no bufio.Writer, no pipe, no extra goroutine.
type eventStream struct {
	conn    net.Conn
	timeout time.Duration
	buf     []byte // one chunk being written; dropped when an event made it large
	release func() // gives the stream's slot back
	s       *Server
	ended   sync.Once
}

// end writes the last chunk, closes the connection and gives the stream's
// slot back, once.
func (e *eventStream) end() {
	e.ended.Do(func() {
		e.send([]byte("0\r\n\r\n")) // the last chunk, after a panic too
		e.conn.Close()
		e.release()
		e.s.streams.Done()
	})
}

// keepBuf is the largest chunk buffer kept between writes: heartbeats and
// deltas fit; a settling event's rendered fragments are written once.
const keepBuf = 512

// write sends s as one chunk; false means the browser is gone. Each write
// pushes the connection's write deadline forward: a browser that stops
// reading is dropped after the write timeout instead of holding the stream
// for ever, while a stream that keeps flowing (events or heartbeats) is
// never cut.
func (e *eventStream) write(s string) bool {
	if s == "" {
		return true // an empty chunk would end the response
	}
	b := strconv.AppendInt(e.buf[:0], int64(len(s)), 16)
	b = append(b, "\r\n"...)
	b = append(b, s...)
	b = append(b, "\r\n"...)
	if cap(b) <= keepBuf {
		e.buf = b
	} else {
		e.buf = nil
	}
	return e.send(b)
}

func (e *eventStream) send(b []byte) bool {
	if err := e.conn.SetWriteDeadline(time.Now().Add(e.timeout)); err != nil {
		return false
	}
	_, err := e.conn.Write(b)
	return err == nil
}

// stream answers c with an event stream written by run on the hijacked
// connection, after the handler and the middleware have returned: the
// response headers (with any cookie the middleware set on the way out) are
// written first, then the chunks run writes, then the last chunk. The
// connection closes after the stream (Connection: close). Everything run
// needs must be captured before: it must not touch c (Fiber reuses it). A
// panic in run would kill the process (it runs outside Fiber's handlers),
// so it is recovered here; release (the session's stream slot) is given
// back however run ends.
//
// One goroutine per stream: fasthttp's worker goes back to its pool at the
// hijack. By default fasthttp runs the hijack handler on a goroutine of its
// own and holds the connection's read buffer (ReadBufferSize, 16 KiB) and
// request context until it returns; when the server keeps hijacked
// connections (fasthttp's KeepHijackedConns), the handler hands the
// connection to the stream's own goroutine and returns at once, so both go
// back to their pools and the stream holds only the connection.
func (s *Server) stream(c *fiber.Ctx, what string, release func(), run func(es *eventStream)) {
	s.streamHandedOn(c, what, release, func(es *eventStream) {
		defer es.end()
		run(es)
	})
}

// streamHandedOn is stream for a start that may return before the stream
// ends, having handed es on to whoever writes next (a goroutine started
// when there is something to write, which recovers its own panics): the
// stream ends when es.end is called. An idle stream then holds no
// goroutine, only its connection and what start kept.
func (s *Server) streamHandedOn(c *fiber.Ctx, what string, release func(), start func(es *eventStream)) {
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	fc := c.Context()
	fc.Response.Header.SetContentLength(-1) // chunked
	fc.Response.Header.SetConnectionClose()
	fc.HijackSetNoResponse(true)
	timeout := s.cfg.Limits.WriteTimeout
	kept := c.App().Server().KeepHijackedConns // set before serving, never after
	s.streams.Add(1)                           // Shutdown waits for it to write its retry hint
	fc.Hijack(func(conn net.Conn) {
		// fasthttp keeps fc (and its response headers, with what the
		// middleware added on the way out) until this handler returns.
		head := fc.Response.Header.Header()
		if !kept {
			// fasthttp closes conn when this returns: wait for the end.
			ended := make(chan struct{})
			s.runStream(conn, head, timeout, what, func() { release(); close(ended) }, start)
			<-ended
			return
		}
		if u, ok := conn.(interface{ UnsafeConn() net.Conn }); ok {
			conn = u.UnsafeConn() // the wrapper reads from the buffer fasthttp takes back
		}
		head = append([]byte(nil), head...)
		go s.runStream(conn, head, timeout, what, release, start)
	})
}

// runStream writes head to conn, then runs start; es.end writes the last
// chunk and closes conn.
func (s *Server) runStream(conn net.Conn, head []byte, timeout time.Duration, what string, release func(), start func(es *eventStream)) {
	es := &eventStream{conn: conn, timeout: timeout, release: release, s: s}
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("event stream panic", "stream", what, "panic", v, "stack", string(debug.Stack()))
			es.end()
		}
	}()
	if !es.send(head) {
		es.end()
		return
	}
	start(es)
}
