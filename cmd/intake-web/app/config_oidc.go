package app

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/clinical-intake/intake-web/bff"
)

// secretOpt is a string option whose value -h never shows.
func secretOpt(env, help string, dst *string) option {
	return option{env, help, func(v string) error { *dst = v; return nil }, func() string { return "" }}
}

// roleMapOpt reads "value=role;value=role": each value of the provider's
// roles claim (split at its last "=", so a value may hold "=" and ",", as
// an LDAP group's name does) gives one of the app's roles; a value given
// twice gives both.
func roleMapOpt(env, help string, dst *map[string][]string) option {
	return option{env, help, func(v string) error {
		m := map[string][]string{}
		for pair := range strings.SplitSeq(v, ";") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			i := strings.LastIndexByte(pair, '=')
			if i <= 0 {
				return fmt.Errorf("must be value=role pairs separated by semicolons (%q has no value=role)", pair)
			}
			value, role := strings.TrimSpace(pair[:i]), strings.TrimSpace(pair[i+1:])
			if !slices.Contains(bff.AllRoles(), bff.Role(role)) {
				return fmt.Errorf("maps %q to %q, which is not one of the app's roles (%s)", value, role, bff.RoleList("or"))
			}
			if !slices.Contains(m[value], role) {
				m[value] = append(m[value], role)
			}
		}
		if len(m) == 0 {
			return errors.New("must map at least one value to a role")
		}
		*dst = m
		return nil
	}, func() string { return "" }}
}

// fromEnv reads the client secret's file and OIDC_LOCAL_PASSWORDS.
func (o *OIDC) fromEnv() []error {
	var errs []error
	if o.secretFile != "" {
		if o.ClientSecret != "" {
			errs = append(errs, errors.New("set OIDC_CLIENT_SECRET or OIDC_CLIENT_SECRET_FILE, not both"))
		}
		b, err := os.ReadFile(o.secretFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("OIDC_CLIENT_SECRET_FILE: %w", err))
		}
		o.ClientSecret = strings.TrimSpace(string(b))
	}
	if o.localPasswords != nil {
		o.NoLocalPasswords = !*o.localPasswords
	}
	return errs
}

// check validates single sign-on's settings: all of the registration or
// none of it.
func (o *OIDC) check() []error {
	if o.Issuer == "" {
		if o.ClientID != "" || o.ClientSecret != "" || o.RedirectURL != "" || o.NoLocalPasswords {
			return []error{errors.New("OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URL and OIDC_LOCAL_PASSWORDS=0 need OIDC_ISSUER_URL (single sign-on is off without it)")}
		}
		return nil
	}
	var errs []error
	if u, err := url.Parse(o.Issuer); err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))) {
		errs = append(errs, fmt.Errorf("OIDC_ISSUER_URL must be an https URL (http only on loopback, for tests), got %q", o.Issuer))
	}
	if o.ClientID == "" {
		errs = append(errs, errors.New("OIDC_CLIENT_ID is required with OIDC_ISSUER_URL"))
	}
	if o.ClientSecret == "" {
		errs = append(errs, errors.New("OIDC_CLIENT_SECRET (or OIDC_CLIENT_SECRET_FILE) is required with OIDC_ISSUER_URL: the app is a confidential client"))
	}
	if u, err := url.Parse(o.RedirectURL); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Path != "/clinician/sso/callback" {
		errs = append(errs, fmt.Errorf("OIDC_REDIRECT_URL must be this app's http(s) URL ending in /clinician/sso/callback, got %q", o.RedirectURL))
	}
	return errs
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// postLogoutURL is the app's sign-in page beside the redirect URL: where
// the provider's end-session endpoint sends the browser back.
func (o *OIDC) postLogoutURL() string {
	u, err := url.Parse(o.RedirectURL)
	if err != nil {
		return ""
	}
	u.Path, u.RawQuery = "/clinician/signin", ""
	return u.String()
}
