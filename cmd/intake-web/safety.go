package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
	"github.com/clinical-intake/intake-web/bff/services/safetycase"
	"github.com/clinical-intake/intake-web/bff/services/scenarioruns"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/templates"
	"github.com/clinical-intake/intake-web/web"
)

const safetyUsage = `usage: intake-web safety report -release R [-voice V] -o FILE [-fail-on unmet-controls] [-chromium PATH] [-db FILE]
       intake-web safety export [-version N] [-o FILE] [-db FILE]
       intake-web safety import FILE [-note TEXT] [-db FILE]

report writes the clinical safety case report of engine release R (and
voice V, as the release page names it): the decision in force with the
evidence it froze, or a draft on the evidence now. FILE ending in .pdf is
printed by headless Chromium (-chromium, else CHROMIUM, else chromium on
PATH); .html writes the page itself. -fail-on unmet-controls exits 1 when
a control of the report is not met or has no evidence, naming each: for CI.
export writes a version of the hazard log (the latest by default) as YAML;
import saves a file as the next version, recorded in the audit log under
"cli:" and your login (a file with any fault saves nothing, and the error
names its line and field). The database is DATABASE_PATH (or DATABASE_URL),
or -db FILE. Exits 1 when it failed, 2 on a usage error.`

// safetyCommand runs `intake-web safety ...` and returns the exit status.
func safetyCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		fmt.Fprintln(stderr, safetyUsage)
		return 0
	}
	verbs := []string{"report", "export", "import"}
	if len(args) == 0 || !slices.Contains(verbs, args[0]) {
		if len(args) > 0 {
			fmt.Fprintf(stderr, "intake-web safety: unknown verb %q\n", args[0])
		}
		fmt.Fprintln(stderr, safetyUsage)
		return 2
	}
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web:", err)
		return 1
	}
	verb := args[0]
	fs := flag.NewFlagSet("safety "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, safetyUsage)
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.DatabasePath, "db", cfg.DatabasePath, "SQLite database file (DATABASE_PATH)")
	release := fs.String("release", "", "report: the engine release")
	voice := fs.String("voice", "", "report: the engine's voice (voice_profile), as the release page names it")
	out := fs.String("o", "", "report, export: the file to write (report: .pdf or .html)")
	failOn := fs.String("fail-on", "", "report: unmet-controls exits 1 when a control is not met or has no evidence")
	chromium := fs.String("chromium", getenv("CHROMIUM"), "report: the Chromium to print the PDF with (CHROMIUM)")
	version := fs.Int("version", 0, "export: the version of the log (0: the latest)")
	note := fs.String("note", "", "import: what changed")
	rest, status, ok := parseAnywhere(fs, args[1:]) // flags before or after the file name
	if !ok {
		return status
	}
	usage := func(msg string) int {
		fmt.Fprintln(stderr, "intake-web safety "+verb+": "+msg)
		return 2
	}
	switch {
	case verb == "report" && (*release == "" || *out == "" || len(rest) != 0):
		return usage("-release and -o are needed, and no other argument")
	case verb == "report" && *failOn != "" && *failOn != "unmet-controls":
		return usage("-fail-on takes unmet-controls")
	case verb == "report" && !strings.HasSuffix(*out, ".pdf") && !strings.HasSuffix(*out, ".html"):
		return usage("-o names a .pdf or .html file")
	case verb == "export" && len(rest) != 0:
		return usage("takes no argument")
	case verb == "import" && len(rest) != 1:
		return usage("one FILE is needed")
	}
	var data []byte
	if verb == "import" { // read before the database is opened: a missing file changes nothing
		if data, err = os.ReadFile(rest[0]); err != nil {
			fmt.Fprintln(stderr, "intake-web:", err)
			return 1
		}
	}
	ctx := context.Background()
	db, err := app.OpenDatabase(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(stderr, "intake-web:", err)
		return 1
	}
	defer db.Close()
	runs, err := scenarioruns.New(scenarioruns.Deps{Store: db, Audit: db, Target: scenarioruns.TargetSandbox})
	if err != nil {
		fmt.Fprintln(stderr, "intake-web:", err)
		return 1
	}
	svc, err := safetycase.New(safetycase.Deps{Store: db, Runs: db, Scenarios: runs})
	if err != nil {
		fmt.Fprintln(stderr, "intake-web:", err)
		return 1
	}
	switch verb {
	case "export":
		file, err := svc.ExportLog(ctx, *version)
		if err == nil && *out != "" {
			err = os.WriteFile(*out, file, 0o644)
		} else if err == nil {
			_, err = stdout.Write(file)
		}
		if err != nil {
			fmt.Fprintln(stderr, "intake-web:", cliMessage(err))
			return 1
		}
		return 0
	case "import":
		v, err := svc.ImportLog(ctx, cliActor(getenv), data, *note)
		if err != nil {
			fmt.Fprintf(stderr, "intake-web: %s: %s Nothing was saved.\n", rest[0], cliMessage(err))
			return 1
		}
		fmt.Fprintf(stdout, "%s saved as version %d of the hazard log.\n", rest[0], v.Version)
		return 0
	}
	sub := safety.Subject{Release: *release, Voice: *voice}
	rep, err := svc.Report(ctx, sub)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web:", cliMessage(err))
		return 1
	}
	page, err := reportHTML(ctx, rep)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web:", err)
		return 1
	}
	if strings.HasSuffix(*out, ".html") {
		err = os.WriteFile(*out, page, 0o644)
	} else {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err = printPDF(pctx, *chromium, page, *out)
		cancel()
	}
	if err != nil {
		fmt.Fprintln(stderr, "intake-web:", err)
		return 1
	}
	e := rep.Evaluation
	state := "a draft: no decision recorded"
	if rep.Decision != nil {
		state = fmt.Sprintf("%s by %s on %s", rep.Decision.Verdict.Label(), rep.Decision.By, rep.Decision.At.UTC().Format(time.DateOnly))
	}
	fmt.Fprintf(stdout, "%s: the safety case report of %s (%s): %d controls, %d met, %d not met, %d without evidence, %d resting on recorded tests; evidence %s.\n",
		*out, sub, state, e.Controls, e.Met, e.Unmet, e.NoEvidence, e.Recorded, e.Hash)
	if *failOn == "unmet-controls" {
		if unmet := e.UnmetControls(); len(unmet) > 0 {
			for _, c := range unmet {
				fmt.Fprintf(stderr, "unmet control %s %s (%s)\n", c.ID, c.Title, c.State.Label())
				for _, ch := range c.Checks {
					if ch.State == safety.Unmet || ch.State == safety.NoEvidence {
						fmt.Fprintf(stderr, "  %s: %s\n", ch.Description, ch.Figure)
						for i, f := range ch.Failing {
							if i == 10 {
								fmt.Fprintf(stderr, "    and %d more (the run's page lists them)\n", len(ch.Failing)-i)
								break
							}
							fmt.Fprintf(stderr, "    run %s item %d (%s): %s\n", f.Run, f.Seq, f.VignetteID, f.Why)
						}
					}
				}
			}
			fmt.Fprintf(stderr, "intake-web: %d controls not met (-fail-on unmet-controls)\n", len(unmet))
			return 1
		}
	}
	return 0
}

// reportHTML renders the report page as the app serves it (same view,
// same template), without the app's navigation.
func reportHTML(ctx context.Context, r *bff.SafetyReport) ([]byte, error) {
	l := templates.Layout{Title: "Clinical safety case report: " + r.Subject.String()}
	var b bytes.Buffer
	if err := templates.SafetyReportPageView(web.SafetyReportView(l, r, "#")).Render(ctx, &b); err != nil {
		return nil, fmt.Errorf("render the report: %w", err)
	}
	return b.Bytes(), nil
}

// findChromium is the Chromium to print with: path when given, else the
// first of the usual names on PATH; a clear error when there is none.
func findChromium(path string) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("no Chromium at %s (-chromium or CHROMIUM): %w", path, err)
		}
		return path, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := lookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found to print the PDF (looked for chromium, chromium-browser and google-chrome on PATH): install Debian's chromium (scripts/e2e-setup does), name one with -chromium or CHROMIUM, or write .html instead")
}
