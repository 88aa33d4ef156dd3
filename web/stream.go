package web

import (
	"bufio"
	"net"
	"runtime/debug"
	"time"

	"github.com/gofiber/fiber/v2"
)

// eventStream is one browser event stream being written.
type eventStream struct {
	w       *bufio.Writer
	conn    net.Conn
	timeout time.Duration
}

// write sends s and flushes; false means the browser is gone. Each write
// pushes the connection's write deadline forward: a browser that stops
// reading is dropped after the write timeout instead of holding the stream
// (and its goroutines) for ever, while a stream that keeps flowing (events
// or heartbeats) is never cut.
func (e *eventStream) write(s string) bool {
	if e.conn != nil {
		_ = e.conn.SetWriteDeadline(time.Now().Add(e.timeout))
	}
	if _, err := e.w.WriteString(s); err != nil {
		return false
	}
	return e.w.Flush() == nil
}

// stream answers c with an event stream written by run, after the handler
// returns. Everything run needs must be captured before: it must not touch
// c: Fiber reuses it for the next request. A panic in run would kill the process (it
// runs outside Fiber's handlers), so it is recovered here; release (the
// session's stream slot) is given back however run ends.
func (s *Server) stream(c *fiber.Ctx, what string, release func(), run func(es *eventStream)) {
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	conn := c.Context().Conn()
	timeout := s.cfg.Limits.WriteTimeout
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer release()
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("event stream panic", "stream", what, "panic", v, "stack", string(debug.Stack()))
			}
		}()
		run(&eventStream{w: w, conn: conn, timeout: timeout})
	})
}
