// Command benchproxy sits between the app and a sandbox in the scenario
// benchmark (scripts/bench-scenarios) and counts what reaches the service:
// every request, and every turn the engine ran (a 200 that was not an
// idempotent replay). On SIGTERM or SIGINT it prints the counts, the time
// from the first request to the last, the requests of the busiest and of
// the quietest full minute (stamped when they arrive), and the requests a
// minute while items were still to start (from the first request to the
// last intake created): the span in which the run could fill the key.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on")
	target := flag.String("target", "", "the sandbox's URL")
	addrFile := flag.String("addr-file", "", "write the proxy's URL here once it listens")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil || *target == "" {
		log.Fatal("-target: the sandbox's URL is required")
	}
	var mu sync.Mutex
	var requests, turns, refused int
	var first, last, lastCreate time.Time
	var stamps []time.Time
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // requests cut short when the run stops
	proxy.ModifyResponse = func(resp *http.Response) error {
		mu.Lock()
		defer mu.Unlock()
		if resp.StatusCode == http.StatusTooManyRequests {
			refused++
		}
		if resp.Request.Method == http.MethodPost && strings.HasSuffix(resp.Request.URL.Path, "/turns") &&
			resp.StatusCode == http.StatusOK && resp.Header.Get("x-service-idempotent-replay") != "true" {
			turns++
		}
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stamp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		requests++
		stamps = append(stamps, now)
		if first.IsZero() {
			first = now
		}
		last = now
		if r.Method == http.MethodPost && r.URL.Path == "/v1/intakes" {
			lastCreate = now
		}
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: stamp, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte("http://"+ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	go func() { _ = srv.Serve(ln) }()
	<-ctx.Done()
	_ = srv.Close()
	mu.Lock()
	defer mu.Unlock()
	span := last.Sub(first)
	busiest, quietest := 0, -1
	for start := first; !start.Add(time.Minute).After(last); start = start.Add(10 * time.Second) {
		n := 0
		for _, t := range stamps {
			if !t.Before(start) && t.Before(start.Add(time.Minute)) {
				n++
			}
		}
		busiest = max(busiest, n)
		if quietest < 0 || n < quietest {
			quietest = n
		}
	}
	filling := 0
	for _, t := range stamps {
		if !t.After(lastCreate) {
			filling++
		}
	}
	fill := lastCreate.Sub(first)
	fmt.Printf("requests %d, turns driven %d, 429s %d, first to last %s, per minute %.1f requests and %.1f turns, full minutes (10 s steps): busiest %d, quietest %d requests; until the last intake was created (%s): %.1f requests a minute\n",
		requests, turns, refused, span.Round(time.Second), float64(requests)/span.Minutes(), float64(turns)/span.Minutes(), busiest, quietest,
		fill.Round(time.Second), float64(filling)/fill.Minutes())
}
