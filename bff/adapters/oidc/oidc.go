// Package oidc is bff.IdentityProvider on an OpenID Provider: the
// authorization code flow with PKCE (S256), state and nonce, the ID token
// verified against the provider's published keys (JWKS) with
// github.com/coreos/go-oidc/v3, the code redeemed with golang.org/x/oauth2.
//
// The provider's discovery document is read at the first sign-in, not at
// start-up, and read again after a failure: an identity provider that is
// down when the app starts does not keep the app down, and local accounts
// (when allowed) still sign in.
package oidc

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/clinical-intake/intake-web/bff"
)

// Config is the app's registration at the provider.
type Config struct {
	Name         string // shown on the sign-in button; "" = "your organisation"
	Issuer       string // the issuer URL; its /.well-known/openid-configuration is read
	ClientID     string
	ClientSecret string // never logged
	RedirectURL  string // the app's /clinician/sso/callback as the provider knows it
	// PostLogoutURL is where the provider's end-session endpoint sends the
	// browser back to (the app's sign-in page); "" = the provider's choice.
	PostLogoutURL string
	// Scopes asked for beyond openid; nil = profile and email.
	Scopes []string
	// UsernameClaim and RolesClaim name the ID token's claims, a dotted
	// path for a nested one ("realm_access.roles"); "" =
	// preferred_username and roles.
	UsernameClaim, RolesClaim string
	HTTPClient                *http.Client // nil = one with a 10 s timeout
	Now                       func() time.Time
	Logger                    *slog.Logger
}

// Provider is bff.IdentityProvider.
type Provider struct {
	cfg  Config
	http *http.Client
	log  *slog.Logger

	mu sync.Mutex
	d  *discovered // nil until the discovery document was read
}

// discovered is what the discovery document gives.
type discovered struct {
	oauth      oauth2.Config
	verifier   *gooidc.IDTokenVerifier
	endSession string // "" when the provider publishes none
}

var _ bff.IdentityProvider = (*Provider)(nil)

// New returns the provider; it reads nothing yet.
func New(cfg Config) (*Provider, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, errors.New("oidc: the issuer, the client id and the redirect URL are required")
	}
	if cfg.Name == "" {
		cfg.Name = "your organisation"
	}
	if cfg.Scopes == nil {
		cfg.Scopes = []string{"profile", "email"}
	}
	if cfg.UsernameClaim == "" {
		cfg.UsernameClaim = "preferred_username"
	}
	if cfg.RolesClaim == "" {
		cfg.RolesClaim = "roles"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Provider{cfg: cfg, http: hc, log: cfg.Logger}, nil
}

// Name is the provider as a person knows it.
func (p *Provider) Name() string { return p.cfg.Name }

// Issuer is the configured issuer URL.
func (p *Provider) Issuer() string { return p.cfg.Issuer }

// discover reads the discovery document once it can.
func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.d != nil {
		return p.d, nil
	}
	// The keys are fetched later with this client too (go-oidc keeps the
	// context's values, not its cancellation).
	ctx = gooidc.ClientContext(ctx, p.http)
	prov, err := gooidc.NewProvider(ctx, p.cfg.Issuer)
	if err != nil {
		p.log.Warn("read the identity provider's discovery document", "issuer", p.cfg.Issuer, "err", err)
		return nil, &bff.Error{Code: bff.EUNAVAILABLE, RetryAfter: 30 * time.Second,
			Message: fmt.Sprintf("%s cannot be reached right now, so single sign-on cannot start. Please try again in a minute.", p.cfg.Name)}
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := prov.Claims(&extra); err != nil {
		return nil, fmt.Errorf("oidc: discovery document: %w", err)
	}
	d := &discovered{
		oauth: oauth2.Config{
			ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, RedirectURL: p.cfg.RedirectURL,
			Endpoint: prov.Endpoint(), Scopes: append([]string{gooidc.ScopeOpenID}, p.cfg.Scopes...),
		},
		verifier:   prov.Verifier(&gooidc.Config{ClientID: p.cfg.ClientID, Now: p.cfg.Now}),
		endSession: extra.EndSession,
	}
	p.d = d
	return d, nil
}

// AuthURL is the provider's authorization URL for one sign-in: the code
// flow with state, nonce and the verifier's S256 challenge.
func (p *Provider) AuthURL(ctx context.Context, state, nonce, verifier string) (string, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return d.oauth.AuthCodeURL(state, gooidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// Exchange redeems the code with the PKCE verifier and verifies the ID
// token: signature (the provider's published keys), issuer, audience,
// expiry (go-oidc), the authorized party when there are several audiences,
// and the nonce (here: go-oidc leaves it to the caller).
func (p *Provider) Exchange(ctx context.Context, code, verifier, nonce string) (*bff.SSOIdentity, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := d.oauth.Exchange(gooidc.ClientContext(ctx, p.http), code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// The provider answered and refused: a used or expired code,
			// another client's, a verifier that does not match.
			p.log.Warn("the identity provider refused the code", "status", re.Response.StatusCode, "provider_error", re.ErrorCode, "description", re.ErrorDescription)
			return nil, refused("%s refused the sign-in code (it may have been used already, or expired)", p.cfg.Name)
		}
		p.log.Warn("redeem the sign-in code", "err", err)
		return nil, &bff.Error{Code: bff.EUNAVAILABLE, RetryAfter: 30 * time.Second,
			Message: fmt.Sprintf("%s cannot be reached right now. Please sign in again in a minute.", p.cfg.Name)}
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, refused("%s sent no ID token", p.cfg.Name)
	}
	idt, err := d.verifier.Verify(ctx, raw)
	if err != nil {
		p.log.Warn("ID token refused", "err", err)
		return nil, refused("%s", tokenFault(err))
	}
	if len(idt.Audience) > 1 {
		var azp struct {
			AZP string `json:"azp"`
		}
		if err := idt.Claims(&azp); err != nil || azp.AZP != p.cfg.ClientID {
			return nil, refused("the ID token was issued to another application (its authorized party is not this app)")
		}
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return nil, refused("the ID token's nonce is not this sign-in's")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, refused("the ID token's claims do not decode")
	}
	username, _ := claimAt(claims, p.cfg.UsernameClaim).(string)
	return &bff.SSOIdentity{
		Issuer: idt.Issuer, Subject: idt.Subject, Username: username,
		Roles: stringsOf(claimAt(claims, p.cfg.RolesClaim)), IDToken: raw,
	}, nil
}

// EndSessionURL is the provider's end-session endpoint with the ID token as
// hint and the way back, or "" when the discovery document has none.
func (p *Provider) EndSessionURL(ctx context.Context, idToken string) (string, error) {
	d, err := p.discover(ctx)
	if err != nil || d.endSession == "" {
		return "", err
	}
	u, err := url.Parse(d.endSession)
	if err != nil {
		return "", fmt.Errorf("oidc: end_session_endpoint: %w", err)
	}
	q := u.Query()
	q.Set("client_id", p.cfg.ClientID)
	if idToken != "" {
		q.Set("id_token_hint", idToken)
	}
	if p.cfg.PostLogoutURL != "" {
		q.Set("post_logout_redirect_uri", p.cfg.PostLogoutURL)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func refused(format string, args ...any) error {
	return bff.Errorf(bff.EUNAUTHORIZED, "Single sign-on refused: "+format+".", args...)
}

// tokenFault says in words which check an ID token failed (go-oidc's
// errors are plain strings, but for expiry).
func tokenFault(err error) string {
	var exp *gooidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &exp):
		return "the ID token has expired"
	case strings.Contains(msg, "different provider"):
		return "the ID token was issued by another provider"
	case strings.Contains(msg, "audience"):
		return "the ID token was issued to another application"
	case strings.Contains(msg, "signature"), strings.Contains(msg, "malformed"), strings.Contains(msg, "signing"):
		return "the ID token's signature does not match the provider's published keys"
	}
	return "the ID token did not pass verification"
}

// claimAt is the claim at a dotted path ("realm_access.roles"), nil when
// absent. A claim whose own name has a dot is found as it is first.
func claimAt(claims map[string]any, path string) any {
	if v, ok := claims[path]; ok {
		return v
	}
	var cur any = claims
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// stringsOf is a claim's strings: one string, or the strings of a list.
func stringsOf(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
