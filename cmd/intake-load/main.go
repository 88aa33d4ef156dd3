// Command intake-load drives the app and the sandbox, both started in this
// process, over loopback HTTP and prints the results as Markdown tables:
//
//	go run ./cmd/intake-load relay  [-n 1000] [-fragment-delay 20ms] [-first-token 1s] [-hold 90s] [-settle 25s]
//	go run ./cmd/intake-load render [-c 32] [-d 10s] [-turns 40]
//	go run ./cmd/intake-load pacing [-patients 20] [-turns 2] [-rpm 6]
//	go run ./cmd/intake-load hotpath [-phases memory,latency,send,held-inflight,held-queued] [-n 1000] [-send-n 100] [-profile FILE]
//	intake-load serve [-first-token 1s] [-fragment-delay 20ms] [-upstream URL | -sandbox-only] [-pacer N]   (hotpath's child process)
//
// relay compares per-fragment latency of browser streams relayed by the app
// with direct streaming turns to the sandbox, side by side, and measures the
// memory and goroutines of each open browser stream; render measures the
// chat page; pacing runs patients against the sandbox's real rate limit
// through the app's pacer. It exits 1 when a correctness check fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "intake-load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	scenario := "relay"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		scenario, args = args[0], args[1:]
	}
	verbose := false
	for i, a := range args {
		if a == "-v" || a == "--v" {
			verbose, args = true, append(args[:i:i], args[i+1:]...)
			break
		}
	}
	fmt.Fprintf(out, "intake-load %s %v (%s, %s/%s, GOMAXPROCS %d)\n", scenario, args, runtime.Version(), runtime.GOOS, runtime.GOARCH, gomaxprocs())
	var err error
	switch scenario {
	case "relay":
		err = runRelay(ctx, args, out, verbose)
	case "render":
		err = runRender(ctx, args, out, verbose)
	case "pacing":
		err = runPacing(ctx, args, out, verbose)
	case "hotpath":
		err = runHotpath(ctx, args, out, verbose)
	case "serve":
		err = runServe(ctx, args, out, verbose)
	default:
		err = fmt.Errorf("unknown scenario %q: use relay, render, pacing or hotpath (add -v for the app's warnings)", scenario)
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func gomaxprocs() int { return runtime.GOMAXPROCS(0) }

// raiseFileLimit lifts the soft RLIMIT_NOFILE to at least need (up to the
// hard limit) and returns the limit in force.
func raiseFileLimit(need uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur >= need {
		return lim.Cur, nil
	}
	lim.Cur = min(need, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	return lim.Cur, nil
}
