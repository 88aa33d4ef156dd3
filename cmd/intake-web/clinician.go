package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"strings"

	"golang.org/x/term"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/oidc"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

const clinicianUsage = `usage:
  intake-web clinician add USERNAME      # the password is read from a prompt, or from stdin
  intake-web clinician passwd USERNAME   # a new password, read the same way; it lifts the sign-in lock too
  intake-web clinician unlock USERNAME   # lift the lock that failed sign-ins put on it, at once
  intake-web clinician list              # each account, active or disabled, locked or not, and its roles
  intake-web clinician disable USERNAME
  intake-web clinician grant USERNAME ROLES    # give roles (comma-separated), keeping those it has
  intake-web clinician revoke USERNAME ROLES   # take roles away; its sessions lose them at their next request
  intake-web clinician link USERNAME SUBJECT   # single sign-on: the provider's subject (sub) signs in as this account
  intake-web clinician reset-totp USERNAME     # remove its second factor and recovery codes (a lost phone)
With -generate, add and passwd make up a password and print it (once) instead of reading one.
With -roles ROLES, add gives the new account those roles (default: reviewer).
The roles: reviewer (worklist, handoffs, reviews, FHIR, audit log), scenario_runner (scenario
runs, readings, variations, comparisons), administrator (sandbox faults, the audit log, anyone's
sessions), safety_officer (the clinical safety officer: the safety case, and alone records a
release decision); all is every one.
The database is DATABASE_PATH (or DATABASE_URL), or -db FILE (before or after the verb); the
running app sees each change at once. The audit log has every change, under "cli:" and your login.`

// clinicianVerb reports whether verb is one of the command's, and how
// many usernames it takes.
func clinicianVerb(verb string) (names int, ok bool) {
	switch verb {
	case "add", "passwd", "disable", "unlock", "reset-totp":
		return 1, true
	case "grant", "revoke":
		return 2, true
	case "list":
		return 0, true
	case "link":
		return 2, true
	}
	return 0, false
}

// clinicianArgs says what verb, taking n names, takes.
func clinicianArgs(verb string, n int) string {
	switch {
	case n == 0:
		return "no argument"
	case n == 1:
		return "one USERNAME"
	case verb == "link":
		return "a USERNAME and a SUBJECT"
	}
	return "a USERNAME and ROLES"
}

// clinicianCommand manages clinician accounts in the app's database. The
// password never comes from a flag (it would sit in shell history and ps).
func clinicianCommand(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	cfg, err := fromEnv(getenv)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("intake-web clinician", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DatabasePath, "db", cfg.DatabasePath, "SQLite database file (DATABASE_PATH)")
	generate := fs.Bool("generate", false, "add, passwd: make up a password and print it instead of reading one")
	roleList := fs.String("roles", string(bff.RoleReviewer), "add: the new account's roles, comma-separated")
	fs.Usage = func() { fmt.Fprintln(stderr, clinicianUsage) }
	// Flags may come before the verb, after it or after its argument
	// (intake-web clinician add NAME -db FILE): parse, take one word, parse
	// again. A word after "--" is never a flag.
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return flagError(err)
		}
		left := fs.Args()
		if used := len(args) - len(left); used > 0 && args[used-1] == "--" {
			rest = append(rest, left...)
			break
		}
		if len(left) == 0 {
			break
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
	// A verb the command does not know, or the wrong number of names, is
	// refused before the database is opened (or created).
	if len(rest) == 0 {
		return &usageError{msg: "clinician: a verb is needed", usage: clinicianUsage}
	}
	if n, ok := clinicianVerb(rest[0]); !ok {
		return &usageError{msg: fmt.Sprintf("clinician: unknown verb %q", rest[0]), usage: clinicianUsage}
	} else if len(rest)-1 != n {
		return &usageError{msg: fmt.Sprintf("clinician %s takes %s", rest[0], clinicianArgs(rest[0], n)), usage: clinicianUsage}
	}
	// Roles are read before the database is opened too.
	var roles []bff.Role
	switch rest[0] {
	case "add":
		roles, err = bff.ParseRoles(*roleList)
	case "grant", "revoke":
		roles, err = bff.ParseRoles(rest[2])
		if err == nil && len(roles) == 0 {
			err = bff.Invalid("roles", "Name at least one role: %s (or all).", bff.RoleList("or"))
		}
	}
	if err != nil {
		return &usageError{msg: "clinician " + rest[0] + ": " + refusal(err).Error(), usage: clinicianUsage}
	}
	ctx := context.Background()
	db, err := app.OpenDatabase(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer db.Close()
	svc := accounts.New(accounts.Deps{Clinicians: db, Audit: db, SignInFailures: db, BcryptCost: cfg.BcryptCost})
	actor := cliActor(getenv)

	// newPassword reads the password, or makes one up with -generate (then
	// printed once, after it is stored).
	newPassword := func() (string, error) {
		if *generate {
			return rand.Text(), nil // 26 base32 characters: 130 bits
		}
		return readPassword(stdin, stderr)
	}
	switch rest[0] {
	case "add":
		password, err := newPassword()
		if err != nil {
			return err
		}
		c, err := svc.AddClinician(ctx, actor, rest[1], password, roles)
		if err != nil {
			return refusal(err)
		}
		fmt.Fprintf(stdout, "clinician %s added; roles: %s\n", c.Username, bff.RoleNames(c.Roles))
		if *generate {
			fmt.Fprintf(stdout, "password (shown only now): %s\n", password)
		}
	case "passwd":
		password, err := newPassword()
		if err != nil {
			return err
		}
		c, lock, err := svc.SetPassword(ctx, actor, rest[1], password)
		if err != nil {
			return refusal(err)
		}
		fmt.Fprintf(stdout, "clinician %s has a new password\n", c.Username)
		if *generate {
			fmt.Fprintf(stdout, "password (shown only now): %s\n", password)
		}
		if lock.Locked() {
			fmt.Fprintf(stdout, "its sign-in lock is lifted (it had %s)\n", lock)
		}
		if c.Disabled {
			fmt.Fprintf(stdout, "the account is disabled: it still cannot sign in\n")
		}
	case "list":
		cs, err := svc.Clinicians(ctx)
		if err != nil {
			return err
		}
		for _, c := range cs {
			state := "active"
			if c.Disabled {
				state = "disabled"
			}
			locked := ""
			if lock, err := svc.LockOf(ctx, c.Username); err != nil {
				return err
			} else if lock.Locked() {
				locked = "; " + lock.String() + " (intake-web clinician unlock " + c.Username + ")"
			}
			factor := ""
			if c.HasSecondFactor() {
				factor = "; second factor on"
			}
			fmt.Fprintf(stdout, "%-32s %-8s created %s; roles: %s%s%s\n", c.Username, state, c.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), bff.RoleNames(c.Roles), factor, locked)
		}
		if len(cs) == 0 {
			fmt.Fprintln(stdout, "no clinicians")
		}
	case "unlock":
		lock, err := svc.Unlock(ctx, actor, rest[1])
		if err != nil {
			return refusal(err)
		}
		if lock.Locked() {
			fmt.Fprintf(stdout, "clinician %s unlocked (it had %s): it may sign in now\n", strings.ToLower(rest[1]), lock)
		} else {
			fmt.Fprintf(stdout, "clinician %s was not locked (%s in the window)\n", strings.ToLower(rest[1]), lock)
		}
		fmt.Fprintln(stdout, "(a network address's lock, after failed sign-ins from it under any usernames, is not an account's: it ends by itself)")
	case "grant", "revoke":
		change := svc.GrantRoles
		if rest[0] == "revoke" {
			change = svc.RevokeRoles
		}
		c, err := change(ctx, actor, rest[1], roles)
		if err != nil {
			return refusal(err)
		}
		fmt.Fprintf(stdout, "clinician %s now has roles: %s\n", c.Username, bff.RoleNames(c.Roles))
	case "reset-totp":
		had, err := svc.ResetTOTP(ctx, actor, rest[1])
		if err != nil {
			return refusal(err)
		}
		name := strings.ToLower(strings.TrimSpace(rest[1]))
		if !had {
			fmt.Fprintf(stdout, "clinician %s had no second factor\n", name)
		} else {
			fmt.Fprintf(stdout, "clinician %s's second factor and recovery codes are removed: they sign in with their password and set up a new one at /clinician/second-factor\n", name)
		}
	case "disable":
		if err := svc.DisableClinician(ctx, actor, rest[1]); err != nil {
			if bff.ErrorCode(err) == bff.ENOTFOUND {
				return fmt.Errorf("no clinician named %s", rest[1])
			}
			return err
		}
		fmt.Fprintf(stdout, "clinician %s disabled; their sessions lose access at their next request\n", rest[1])
	case "link":
		return linkSSO(ctx, cfg, svc, db, actor, rest[1], rest[2], stdout)
	}
	return nil
}

// linkSSO links the OpenID Provider's subject to a local account (the
// provider is OIDC_ISSUER_URL): docs/operations.md, "Single sign-on".
func linkSSO(ctx context.Context, cfg app.Config, svc *accounts.Service, links bff.SSOLinkStore, actor, username, subject string, stdout io.Writer) error {
	o := cfg.OIDC
	if o.Issuer == "" {
		return errors.New("clinician link: single sign-on is off: set OIDC_ISSUER_URL (and the rest of the app's OIDC_ settings)")
	}
	rp, err := oidc.New(oidc.Config{Name: o.ProviderName, Issuer: o.Issuer, ClientID: o.ClientID, RedirectURL: o.RedirectURL})
	if err != nil {
		return fmt.Errorf("clinician link: %w", err)
	}
	if err := svc.SSO(accounts.SSOConfig{Provider: rp, Links: links}).LinkSSO(ctx, actor, username, subject); err != nil {
		return refusal(err)
	}
	fmt.Fprintf(stdout, "clinician %s linked to subject %s at %s: that sign-in now opens this account\n", strings.ToLower(username), subject, o.Issuer)
	return nil
}

// readPassword prompts twice without echo on a terminal; otherwise it reads
// the first line of stdin (for scripts: printf '%s\n' "$PW" | intake-web ...).
func readPassword(stdin io.Reader, stderr io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, "Password: ")
		p1, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		fmt.Fprint(stderr, "Again: ")
		p2, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		if string(p1) != string(p2) {
			return "", errors.New("the passwords do not match")
		}
		return string(p1), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// refusal is the account service's refusal in words, after the field it is
// about ("password: A password is 12 to 72 characters long …").
func refusal(err error) error {
	var be *bff.Error
	if errors.As(err, &be) && be.Field != "" {
		return fmt.Errorf("%s: %s", be.Field, be.Message)
	}
	return errors.New(bff.ErrorMessage(err))
}

// cliActor is who the audit log says made an account change with this
// command: "cli:" and the operating system's user (a username has no
// colon, so it is never taken for a clinician's).
func cliActor(getenv func(string) string) string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if n := cmp.Or(getenv("USER"), getenv("LOGNAME")); n != "" {
		name = n
	}
	return "cli:" + name
}
