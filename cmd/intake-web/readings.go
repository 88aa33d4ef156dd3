package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/services/scenarioruns"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

const readingsUsage = `usage: intake-web scenarios readings export -release R [-o FILE] [-db FILE]
       intake-web scenarios readings import FILE [-db FILE]

export writes the reviewed readings in force for engine release R (the
question, the decision, the concept and whether the question asks its
opposite, the note, who decided and when) as YAML, to FILE or standard
output, for a team to keep under version control. import adds a file's
decisions to the release it names, each recorded in the audit log under
"cli:" and your login; a file with any fault adds nothing, and the error
names its line and field. The database is DATABASE_PATH (or DATABASE_URL),
or -db FILE; the running app uses what an import adds from its next run.
Exits 1 when it failed, 2 on a usage error.`

// readingsCommand runs `intake-web scenarios readings ...` and returns the
// exit status.
func readingsCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
		fmt.Fprintln(stderr, readingsUsage)
		return 0
	}
	if len(args) == 0 || (args[0] != "export" && args[0] != "import") {
		if len(args) > 0 {
			fmt.Fprintf(stderr, "intake-web scenarios readings: unknown verb %q\n", args[0])
		}
		fmt.Fprintln(stderr, readingsUsage)
		return 2
	}
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web:", err)
		return 1
	}
	verb := args[0]
	fs := flag.NewFlagSet("scenarios readings "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, readingsUsage)
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.DatabasePath, "db", cfg.DatabasePath, "SQLite database file (DATABASE_PATH)")
	release := fs.String("release", "", "export: the engine release")
	out := fs.String("o", "", "export: write to this file instead of standard output")
	rest, status, ok := parseAnywhere(fs, args[1:]) // flags before or after the file name
	if !ok {
		return status
	}
	switch {
	case verb == "export" && (*release == "" || len(rest) != 0):
		fmt.Fprintln(stderr, "intake-web scenarios readings export: -release is needed, and no other argument")
		return 2
	case verb == "import" && (len(rest) != 1 || *release != "" || *out != ""):
		fmt.Fprintln(stderr, "intake-web scenarios readings import: one FILE is needed (the release is the file's)")
		return 2
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
	svc, err := scenarioruns.New(scenarioruns.Deps{Store: db, Audit: db, Target: scenarioruns.TargetSandbox})
	if err != nil {
		fmt.Fprintln(stderr, "intake-web:", err)
		return 1
	}
	if verb == "export" {
		file, err := svc.ExportReviews(ctx, *release)
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
	}
	rel, n, err := svc.ImportReviews(ctx, cliActor(getenv), data)
	if err != nil {
		fmt.Fprintf(stderr, "intake-web: %s: %s Nothing was imported.\n", rest[0], cliMessage(err))
		return 1
	}
	fmt.Fprintf(stdout, "%d reviewed readings of release %s imported from %s.\n", n, rel, rest[0])
	return 0
}

// cliMessage is err for the person at the terminal: our errors' message,
// any other as it is (a file that cannot be written).
func cliMessage(err error) string {
	if bff.ErrorCode(err) == bff.EINTERNAL {
		return err.Error()
	}
	return bff.ErrorMessage(err)
}
