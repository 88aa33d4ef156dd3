// Command benchrun plays the built-in suite as the app's durable scenario
// run (bff/services/scenarioruns on a fresh SQLite file, through a pacer at the
// key's rate with the daily quotas off) against a service at -url, for
// scripts/bench-scenarios. It stops when the run is done or after
// -window, and prints the wall time, the items at once, the most items
// seen in flight, and the turns and items played.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/services/scenarioruns"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

func main() {
	url := flag.String("url", "", "the service's base URL")
	rate := flag.Int("rate", 6, "the key's requests a minute")
	window := flag.Duration("window", 0, "stop after this long (0: when the run is done)")
	parallel := flag.Int("parallel", app.DefaultScenarioParallel, "the most items at once (SCENARIO_PARALLEL)")
	flag.Parse()
	key := os.Getenv("INTAKE_API_KEY")
	if *url == "" || key == "" {
		log.Fatal("-url and INTAKE_API_KEY are required")
	}
	dir, err := os.MkdirTemp("", "benchrun")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "app.db"), quiet)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	// The key as the app configures it: RATE requests a minute, the daily
	// quotas off (PACER_TURNS_PER_DAY=-1, PACER_INTAKES_PER_DAY=-1).
	cfg := app.Defaults()
	cfg.PacerPerMinute, cfg.TurnsPerDay, cfg.IntakesPerDay, cfg.ScenarioParallel = *rate, -1, -1, *parallel
	p := pacer.New(pacer.Config{Rules: cfg.KeyRules()})
	client, err := intakeapi.New(intakeapi.Config{BaseURL: *url, APIKey: key, Gate: p, Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	s, err := scenarioruns.New(scenarioruns.Deps{Store: db, Audit: db, Client: client, Target: scenarioruns.TargetService,
		PerMinute: cfg.PacerPerMinute, Parallel: cfg.ScenarioParallel, Replica: "bench", Logger: quiet,
		// no daily quota: the estimate's finish is the key's pace
		TurnsToday: func(context.Context) (int, int, error) { return p.Stats().TurnsUsed, cfg.TurnsPerDay, nil }})
	if err != nil {
		log.Fatal(err)
	}
	r, est, err := s.StartRun(ctx, "bench", bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1})
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { s.Serve(sctx); close(served) }()
	most := 0
	for {
		time.Sleep(2 * time.Second)
		pr, err := s.Progress(ctx, r.ID)
		if err != nil {
			log.Fatal(err)
		}
		most = max(most, len(pr.Playing))
		if pr.Run.State.Ended() || (*window > 0 && time.Since(start) >= *window) {
			stop()
			<-served
			fmt.Printf("app run: %s after %s, %d at once (estimate), at most %d seen in flight, %d of %d items played, %d turns, estimated finish %s\n",
				pr.Run.State, time.Since(start).Round(time.Second), est.Parallel, most, pr.Run.Played, pr.Run.Items, pr.Run.TurnsUsed,
				est.Finish.Sub(start).Round(time.Second))
			return
		}
	}
}
