package accounts

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// SSOConfig is single sign-on's part of the account service.
type SSOConfig struct {
	Provider bff.IdentityProvider
	Links    bff.SSOLinkStore
	// RoleMap maps a value of the provider's roles claim to the app's roles
	// (OIDC_ROLE_MAP); nil = each of the app's roles (bff.AllRoles) maps from
	// its own name.
	RoleMap map[string][]string
	// LocalPasswords: local accounts sign in with their passwords too.
	LocalPasswords bool
}

// appRoles are the app's roles by name, as a provider's roles claim maps
// to them (bff.AllRoles).
func appRoles() []string {
	var out []string
	for _, r := range bff.AllRoles() {
		out = append(out, string(r))
	}
	return out
}

// FlowLifetime is how long a person may take at the provider.
const FlowLifetime = 10 * time.Minute

// SSO is bff.SSOService: clinicians signing in through the OpenID Provider.
//
// An account is found by the provider's issuer and subject (bff.SSOLinkStore),
// never by the username the provider sends: usernames can be changed or
// chosen at some providers, and signing in as whoever holds a name would
// let anyone who gets that name there take the account here. A first
// sign-in makes the account, linked to the subject, when no account has the
// username; when a local account has it, the sign-in is refused and
// audited, and whoever runs the app links the two if they are the same
// person (intake-web clinician link, LinkSSO), after which the subject
// alone signs in.
type SSO struct {
	s       *Service
	p       bff.IdentityProvider
	links   bff.SSOLinkStore
	roleMap map[string][]string
	local   bool
}

var _ bff.SSOService = (*SSO)(nil)

// SSO returns the single sign-on service over the account service.
func (s *Service) SSO(cfg SSOConfig) *SSO {
	rm := cfg.RoleMap
	if rm == nil {
		rm = map[string][]string{}
		for _, r := range appRoles() {
			rm[r] = []string{r}
		}
	}
	return &SSO{s: s, p: cfg.Provider, links: cfg.Links, roleMap: rm, local: cfg.LocalPasswords}
}

// ProviderName names the provider.
func (o *SSO) ProviderName() string { return o.p.Name() }

// LocalPasswords reports whether local passwords sign in too.
func (o *SSO) LocalPasswords() bool { return o.local }

// Start begins a sign-in: a fresh state, nonce and PKCE verifier, kept by
// the caller in the browser's session until the provider sends it back.
func (o *SSO) Start(ctx context.Context, next string) (string, *bff.SSOFlow, error) {
	f := &bff.SSOFlow{State: random(), Nonce: random(), Verifier: random(), Next: next, Started: o.s.now()}
	u, err := o.p.AuthURL(ctx, f.State, f.Nonce, f.Verifier)
	if err != nil {
		return "", nil, err
	}
	return u, f, nil
}

// random is 32 random bytes, base64url: a state, a nonce, or a PKCE
// verifier (43 characters, RFC 7636's shortest).
func random() string {
	return base64.RawURLEncoding.EncodeToString(randomBytes(32))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b
}

var errorCodeShape = regexp.MustCompile(`^[a-z_]{1,40}$`)

// Finish completes a sign-in: the state first (before anything is sent to
// the provider), the flow's age, the provider's own refusal, then the code
// and the ID token (the provider adapter), then the account.
func (o *SSO) Finish(ctx context.Context, flow *bff.SSOFlow, cb bff.SSOCallback, address string) (*bff.SSOSignIn, error) {
	name := o.p.Name()
	refuse := func(code, detail, format string, args ...any) error {
		bff.Record(ctx, o.s.audit, o.s.log, o.s.now(), "sso", bff.AuditSSORefused, "", detail+" (from "+bounded(address, 64)+")")
		return bff.Errorf(code, format, args...)
	}
	if flow == nil {
		return nil, refuse(bff.EUNAUTHORIZED, "refused: no sign-in in progress in this browser",
			"No sign-in with %s was in progress in this browser, or it was used already. Please start again.", name)
	}
	if cb.State == "" || subtle.ConstantTimeCompare([]byte(cb.State), []byte(flow.State)) != 1 {
		return nil, refuse(bff.EUNAUTHORIZED, "refused: the state sent back is not this browser's sign-in's",
			"This answer from %s does not belong to the sign-in started in this browser. Please start again.", name)
	}
	if o.s.now().Sub(flow.Started) > FlowLifetime {
		return nil, refuse(bff.EUNAUTHORIZED, "refused: the sign-in took over "+minutes(FlowLifetime),
			"The sign-in with %s took longer than %s. Please start again.", name, minutes(FlowLifetime))
	}
	if cb.Error != "" {
		code := cb.Error
		if !errorCodeShape.MatchString(code) {
			code = "an error"
		}
		return nil, refuse(bff.EUNAUTHORIZED, "refused by the provider: "+code,
			"%s did not sign you in (%s). If you should have access, ask whoever runs your organisation's sign-in to assign you to this app.", name, code)
	}
	if cb.Code == "" {
		return nil, refuse(bff.EUNAUTHORIZED, "refused: no code sent back", "%s sent no sign-in code back. Please start again.", name)
	}
	id, err := o.p.Exchange(ctx, cb.Code, flow.Verifier, flow.Nonce)
	if err != nil {
		if bff.ErrorCode(err) == bff.EUNAUTHORIZED {
			return nil, refuse(bff.EUNAUTHORIZED, "refused: "+bff.ErrorMessage(err), "%s", bff.ErrorMessage(err))
		}
		return nil, err
	}
	who := "subject " + bounded(id.Subject, 128) + " at " + id.Issuer
	roles := o.mapRoles(id.Roles)
	if len(roles) == 0 {
		return nil, refuse(bff.EFORBIDDEN, "refused: "+who+" has no role in this app (roles claim: "+bounded(strings.Join(id.Roles, ","), 200)+")",
			"Your account at %s gives you no role in this app. Ask whoever runs your organisation's sign-in to give you one of its roles for this app.", name)
	}
	username, created, err := o.account(ctx, id, roles)
	if err != nil {
		if c := bff.ErrorCode(err); c == bff.EFORBIDDEN {
			return nil, refuse(c, "refused: "+who+": "+bff.ErrorMessage(err), "%s", bff.ErrorMessage(err))
		}
		return nil, err
	}
	c, err := o.s.clinicians.Clinician(ctx, username)
	if err != nil {
		return nil, err
	}
	if c.Disabled {
		return nil, refuse(bff.EFORBIDDEN, "refused: "+who+": account "+username+" is disabled",
			"Your account here (%s) is disabled. Ask whoever runs this app.", username)
	}
	if err := o.applyRoles(ctx, c, roles); err != nil {
		return nil, err
	}
	detail := "via " + name + ", " + who + "; roles " + strings.Join(roles, ",")
	if created {
		detail += "; account created"
	}
	bff.Record(ctx, o.s.audit, o.s.log, o.s.now(), username, bff.AuditSSOSignIn, "", detail)
	return &bff.SSOSignIn{Clinician: c, Roles: roles, IDToken: id.IDToken, Created: created}, nil
}

// account finds the account linked to id's subject, or makes it: EFORBIDDEN
// when the provider sends no usable username, or a local account not
// linked to this subject has it.
func (o *SSO) account(ctx context.Context, id *bff.SSOIdentity, roles []string) (username string, created bool, err error) {
	for range 2 { // a concurrent first sign-in of the same person may make it first
		username, err = o.links.SSOLink(ctx, id.Issuer, id.Subject)
		if err == nil {
			return username, false, nil
		} else if bff.ErrorCode(err) != bff.ENOTFOUND {
			return "", false, err
		}
		username, ok := ssoUsername(id.Username)
		if !ok {
			return "", false, bff.Errorf(bff.EFORBIDDEN,
				"%s sent no username this app can use (%q: a username is 3 to 32 lower-case letters, digits, dots, dashes or underscores; an e-mail address gives the part before @). Ask whoever runs this app to check OIDC_USERNAME_CLAIM.",
				o.p.Name(), bounded(id.Username, 64))
		}
		if _, err := o.s.clinicians.Clinician(ctx, username); err == nil {
			return "", false, bff.Errorf(bff.EFORBIDDEN,
				"An account named %s exists here and is not linked to your %s sign-in. If it is yours, ask whoever runs this app to link it (intake-web clinician link; the audit log names your sign-in).",
				username, o.p.Name())
		} else if bff.ErrorCode(err) != bff.ENOTFOUND {
			return "", false, err
		}
		c := &bff.Clinician{Username: username, CreatedAt: o.s.now(), Roles: asRoles(roles)} // no password: SSO only
		err = o.links.CreateLinkedClinician(ctx, c, id.Issuer, id.Subject)
		if err == nil {
			return username, true, nil
		} else if bff.ErrorCode(err) != bff.ECONFLICT {
			return "", false, err
		}
	}
	return "", false, fmt.Errorf("sso: the account of %s could neither be found nor made", id.Subject)
}

// ssoUsername is the account name a username claim gives: lower-cased, an
// e-mail address (Entra ID's upn) its part before @, and then the rule of
// every account's name.
func ssoUsername(claim string) (string, bool) {
	u := strings.ToLower(strings.TrimSpace(claim))
	if at := strings.IndexByte(u, '@'); at >= 0 {
		u = u[:at]
	}
	return u, len(u) <= bff.MaxUsernameChars && usernameShape.MatchString(u)
}

// mapRoles maps the roles claim's values to the app's roles, each once, in
// bff.AllRoles' order.
func (o *SSO) mapRoles(claim []string) []string {
	var out []string
	for _, v := range claim {
		for _, r := range o.roleMap[v] {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	order := appRoles()
	slices.SortFunc(out, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return out
}

// applyRoles gives the account c the roles its claim maps to, at every
// sign-in (the provider is the truth for an SSO account's roles: a role
// taken away there is gone here at the next sign-in), and sets them on c.
func (o *SSO) applyRoles(ctx context.Context, c *bff.Clinician, roles []string) error {
	want := asRoles(roles)
	if slices.Equal(bff.NormalRoles(c.Roles), want) {
		return nil
	}
	if err := o.s.clinicians.SetClinicianRoles(ctx, c.Username, want); err != nil {
		return err
	}
	c.Roles = want
	return nil
}

// asRoles is role names as the core's roles, in their order.
func asRoles(names []string) []bff.Role {
	var out []bff.Role
	for _, n := range names {
		out = append(out, bff.Role(n))
	}
	return bff.NormalRoles(out)
}

// LinkSSO links the provider's subject to the existing local account
// username (intake-web clinician link), audited under actor: from then on
// that subject signs in as the account. ENOTFOUND for no such account;
// EINVALID (field "subject") when the subject is empty or linked to another
// account, or the account is linked already.
func (o *SSO) LinkSSO(ctx context.Context, actor, username, subject string) error {
	username = strings.ToLower(strings.TrimSpace(username))
	subject = strings.TrimSpace(subject)
	if subject == "" || len(subject) > 255 {
		return bff.Invalid("subject", "A subject is the provider's sub claim: 1 to 255 characters.")
	}
	err := o.links.LinkSSO(ctx, o.p.Issuer(), subject, username, o.s.now())
	switch bff.ErrorCode(err) {
	case "":
	case bff.ENOTFOUND:
		return bff.Errorf(bff.ENOTFOUND, "No clinician is named %s.", username)
	case bff.ECONFLICT:
		return bff.Invalid("subject", "Either %s is linked to a sign-in already, or this subject signs in as another account.", username)
	default:
		return err
	}
	bff.Record(ctx, o.s.audit, o.s.log, o.s.now(), actor, bff.AuditSSOLink, "", "account "+username+" linked to subject "+subject+" at "+o.p.Issuer())
	return nil
}

// EndSessionURL is the provider's end-session URL, or "" (none published,
// or the provider unreachable: the app's own sign-out has happened anyway).
func (o *SSO) EndSessionURL(ctx context.Context, idToken string) string {
	u, err := o.p.EndSessionURL(ctx, idToken)
	if err != nil {
		o.s.log.Warn("the provider's end-session URL", "err", err)
		return ""
	}
	return u
}

// bounded cuts s to n bytes of valid UTF-8, for an audit line.
func bounded(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
