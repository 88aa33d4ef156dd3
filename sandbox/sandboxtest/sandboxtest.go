// Package sandboxtest serves the sandbox to a test over in-memory
// connections (net.Pipe) instead of a loopback socket, so the test can run
// inside a testing/synctest bubble: a goroutine waiting on a real socket is
// not "durably blocked", so the bubble's fake clock would never move, while
// one waiting on a pipe is. Outside a bubble it works the same, on real time.
package sandboxtest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox"
)

// Server is a sandbox Service reachable through Client.
type Server struct {
	// URL is the base URL to give the client ("http://sandbox.test"); the
	// host is never resolved, Client dials the service in memory.
	URL     string
	Service *sandbox.Service
	// Client reaches Service and nothing else: pass it as
	// intakeapi.Config.HTTPClient, and use it for the test's own requests.
	Client *http.Client
}

// Start serves a new Service for cfg until the test ends. Inside a bubble,
// call it inside the bubble: its goroutines then belong to the bubble and
// are stopped by a Cleanup before the bubble ends.
func Start(tb testing.TB, cfg sandbox.Config) *Server {
	tb.Helper()
	svc, err := sandbox.New(cfg)
	if err != nil {
		tb.Fatalf("sandboxtest: %v", err)
	}
	ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	// No timeouts, as sandbox.Listen: a turn may stream for a long time.
	srv := &http.Server{Handler: svc}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	tr := &http.Transport{DialContext: ln.dial, MaxIdleConnsPerHost: 64}
	tb.Cleanup(func() {
		svc.Close() // running streams stop waiting
		tr.CloseIdleConnections()
		_ = srv.Close() // the listener and every connection
		<-served
	})
	return &Server{URL: "http://sandbox.test", Service: svc, Client: &http.Client{Transport: tr}}
}

// pipeListener hands the server one end of a net.Pipe per dial.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("sandboxtest: the sandbox is closed")
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "sandbox.test" }
