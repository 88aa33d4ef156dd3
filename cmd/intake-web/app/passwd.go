package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/accounts"
	"github.com/clinical-intake/intake-web/bff/postgres"
	"github.com/clinical-intake/intake-web/bff/sqlite"
)

// AccountsDB is the app's database as the command line's clinician
// commands use it (OpenDatabase).
type AccountsDB interface {
	bff.ClinicianStore
	bff.AuditStore
	Close() error
}

// ErrNoSuchClinician is returned by SetClinicianPassword for an unknown
// username.
var ErrNoSuchClinician = errors.New("no such clinician")

// SetClinicianPassword replaces a clinician's password (bcrypt at cost,
// 0 meaning the account service's 12) in db, which OpenDatabase opened. The
// password follows the account service's rules (accounts.MinPasswordChars
// to 72 bytes). It tells whether the account is disabled: a new password
// does not enable it.
//
// It writes the clinicians table itself because bff.ClinicianStore has no
// password update yet; this package is the one that knows both adapters.
// The update belongs in bff/accounts and the stores (with storetest's
// cases) when that code is next open: then this becomes a call.
func SetClinicianPassword(ctx context.Context, db AccountsDB, username, password string, cost int) (disabled bool, err error) {
	username = strings.ToLower(strings.TrimSpace(username))
	if n := utf8.RuneCountInString(password); n < accounts.MinPasswordChars || len(password) > 72 {
		return false, fmt.Errorf("password: a password is %d to 72 characters long (bcrypt's limit), got %d", accounts.MinPasswordChars, n)
	}
	c, err := db.Clinician(ctx, username)
	if bff.ErrorCode(err) == bff.ENOTFOUND {
		return false, fmt.Errorf("%w named %q", ErrNoSuchClinician, username)
	} else if err != nil {
		return false, err
	}
	if cost == 0 {
		cost = 12
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return false, fmt.Errorf("hash password: %w", err)
	}
	var n int64
	switch db := db.(type) {
	case *sqlite.DB:
		res, err := db.SQL().ExecContext(ctx, `UPDATE clinicians SET password_hash = ? WHERE username = ?`, hash, username)
		if err != nil {
			return false, fmt.Errorf("set the password: %w", err)
		}
		n, _ = res.RowsAffected()
	case *postgres.DB:
		tag, err := db.Pool().Exec(ctx, `UPDATE clinicians SET password_hash = $1 WHERE username = $2`, hash, username)
		if err != nil {
			return false, fmt.Errorf("set the password: %w", err)
		}
		n = tag.RowsAffected()
	default:
		return false, fmt.Errorf("set the password: no password update for the database %T", db)
	}
	if n != 1 {
		return false, fmt.Errorf("%w named %q", ErrNoSuchClinician, username)
	}
	return c.Disabled, nil
}
