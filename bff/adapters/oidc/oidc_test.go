package oidc_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/oidc"
	"github.com/clinical-intake/intake-web/bff/adapters/oidc/oidctest"
)

var alice = oidctest.User{Username: "alice", Password: "alice-password", Email: "alice@example.test", Roles: []string{"reviewer", "other"}}

func newProvider(t *testing.T, p *oidctest.Provider, mod func(*oidc.Config)) *oidc.Provider {
	t.Helper()
	cfg := oidc.Config{Name: "Test IdP", Issuer: p.URL, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		RedirectURL: "http://127.0.0.1:1/clinician/sso/callback", PostLogoutURL: "http://127.0.0.1:1/clinician/signin"}
	if mod != nil {
		mod(&cfg)
	}
	rp, err := oidc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// code signs alice in at the provider and returns the code it sends back,
// with the flow's secrets.
func code(t *testing.T, p *oidctest.Provider, rp *oidc.Provider) (code, verifier, nonce string) {
	t.Helper()
	verifier, nonce = oauth2.GenerateVerifier(), "nonce-"+oauth2.GenerateVerifier()
	u, err := rp.AuthURL(context.Background(), "state-1", nonce, verifier)
	if err != nil {
		t.Fatal(err)
	}
	back := p.SignIn(t, u, alice.Username, alice.Password)
	if back.Query().Get("state") != "state-1" || back.Query().Get("code") == "" {
		t.Fatalf("the provider sent back %s", back)
	}
	return back.Query().Get("code"), verifier, nonce
}

func TestSignInThroughTheProvider(t *testing.T) {
	p := oidctest.Start(t, alice)
	rp := newProvider(t, p, nil)
	c, v, n := code(t, p, rp)
	id, err := rp.Exchange(context.Background(), c, v, n)
	if err != nil {
		t.Fatalf("Exchange: %v", err)
	}
	if id.Issuer != p.URL || id.Subject != "sub-alice" || id.Username != "alice" || !slices.Equal(id.Roles, alice.Roles) || id.IDToken == "" {
		t.Fatalf("identity = %+v", id)
	}
	// A nested roles claim, as Keycloak puts realm roles.
	rp = newProvider(t, p, func(c *oidc.Config) { c.RolesClaim = "realm_access.roles"; c.UsernameClaim = "email" })
	c, v, n = code(t, p, rp)
	if id, err = rp.Exchange(context.Background(), c, v, n); err != nil || !slices.Equal(id.Roles, alice.Roles) || id.Username != alice.Email {
		t.Fatalf("nested claims: %+v, %v", id, err)
	}
	end, err := rp.EndSessionURL(context.Background(), id.IDToken)
	if err != nil || !strings.HasPrefix(end, p.URL+"/") || !strings.Contains(end, "id_token_hint=") || !strings.Contains(end, "post_logout_redirect_uri=") {
		t.Fatalf("EndSessionURL = %q, %v", end, err)
	}
}

// TestRefusals: every ID token or code that must not sign anyone in is
// refused with EUNAUTHORIZED, saying which check failed.
func TestRefusals(t *testing.T) {
	p := oidctest.Start(t, alice)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	key, kid := p.Key()
	for _, tc := range []struct {
		name   string
		tamper func(map[string]any) (*rsa.PrivateKey, string)
		nonce  func(string) string // the nonce the app expects
		twice  bool                // redeem the code a second time
		want   string
	}{
		{name: "another issuer", want: "issued by another provider",
			tamper: func(c map[string]any) (*rsa.PrivateKey, string) { c["iss"] = "http://127.0.0.1:1"; return nil, "" }},
		{name: "another audience", want: "issued to another application",
			tamper: func(c map[string]any) (*rsa.PrivateKey, string) { c["aud"] = []string{"someone-else"}; return nil, "" }},
		{name: "expired", want: "has expired",
			tamper: func(c map[string]any) (*rsa.PrivateKey, string) {
				c["exp"] = time.Now().Add(-time.Minute).Unix()
				c["iat"] = time.Now().Add(-time.Hour).Unix()
				return nil, ""
			}},
		{name: "unknown key", want: "signature does not match",
			tamper: func(map[string]any) (*rsa.PrivateKey, string) { return other, "key-2" }},
		{name: "unknown key with the known key's id", want: "signature does not match",
			tamper: func(map[string]any) (*rsa.PrivateKey, string) { return other, kid }},
		{name: "wrong nonce", want: "nonce is not this sign-in's",
			nonce: func(n string) string { return n + "x" }},
		{name: "nonce changed at the provider", want: "nonce is not this sign-in's",
			tamper: func(c map[string]any) (*rsa.PrivateKey, string) { c["nonce"] = "forged"; return key, kid }},
		{name: "replayed code", twice: true, want: "refused the sign-in code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := newProvider(t, p, nil)
			c, v, n := code(t, p, rp)
			p.Tamper(tc.tamper)
			defer p.Tamper(nil)
			if tc.nonce != nil {
				n = tc.nonce(n)
			}
			if tc.twice {
				if _, err := rp.Exchange(context.Background(), c, v, n); err != nil {
					t.Fatalf("first exchange: %v", err)
				}
			}
			id, err := rp.Exchange(context.Background(), c, v, n)
			if bff.ErrorCode(err) != bff.EUNAUTHORIZED || !strings.Contains(bff.ErrorMessage(err), tc.want) {
				t.Fatalf("Exchange = %+v, %v; want EUNAUTHORIZED saying %q", id, err, tc.want)
			}
		})
	}
}

// TestPKCE: a code redeemed with another verifier (a stolen code played in
// another browser's flow) is refused by the provider.
func TestPKCE(t *testing.T) {
	p := oidctest.Start(t, alice)
	rp := newProvider(t, p, nil)
	c, _, n := code(t, p, rp)
	if _, err := rp.Exchange(context.Background(), c, oauth2.GenerateVerifier(), n); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
		t.Fatalf("Exchange with another verifier: %v", err)
	}
}

// TestProviderDown: an unreachable provider is EUNAVAILABLE, and the
// provider is read again once it answers.
func TestProviderDown(t *testing.T) {
	rp, err := oidc.New(oidc.Config{Issuer: "http://127.0.0.1:1", ClientID: "x", RedirectURL: "http://127.0.0.1:2/cb"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rp.AuthURL(context.Background(), "s", "n", "v"); bff.ErrorCode(err) != bff.EUNAVAILABLE {
		t.Fatalf("AuthURL with the provider down: %v", err)
	}
}
