package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a Service listening on a loopback port.
type Server struct {
	URL     string // base URL, e.g. http://127.0.0.1:41234
	Service *Service
	http    *http.Server
}

// Start serves a new Service on 127.0.0.1 at a free port until ctx ends or
// Close is called.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	return Listen(ctx, "127.0.0.1:0", cfg)
}

// Protocols is what the sandbox's server speaks: HTTP/1.1, and HTTP/2
// without TLS to a client that starts with it (the app's client does, to
// carry thousands of streaming turns on a few connections).
func Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// Listen serves a new Service on addr.
func Listen(ctx context.Context, addr string, cfg Config) (*Server, error) {
	svc, err := New(cfg)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: listen on %s: %w", addr, err)
	}
	s := &Server{
		URL:     "http://" + ln.Addr().String(),
		Service: svc,
		// No write timeout: a turn may stream for up to 240 s.
		http: &http.Server{Handler: svc, ReadHeaderTimeout: 10 * time.Second, Protocols: Protocols()},
	}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			svc.log.Error("sandbox server stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		s.Close()
	}()
	return s, nil
}

// Close stops the server at once, cutting open streams.
func (s *Server) Close() {
	s.Service.Close()
	_ = s.http.Close()
}

// Shutdown stops taking requests and waits for running ones (streams stop
// waiting at once) until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Service.Close()
	return s.http.Shutdown(ctx)
}
