package apptest

import (
	"net"
	"testing"

	"github.com/clinical-intake/intake-web/bff/adapters/oidc/oidctest"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// WithSSO configures the app for single sign-on through p, as
// docs/operations.md says to: its listening port is chosen here, because
// the redirect URL registered at the provider names it. localPasswords
// false turns local passwords off.
func WithSSO(t testing.TB, p *oidctest.Provider, localPasswords bool) func(*app.Config) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pick a port: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return func(c *app.Config) {
		c.ListenAddr = addr
		c.OIDC = app.OIDC{Issuer: p.URL, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
			RedirectURL: "http://" + addr + "/clinician/sso/callback", ProviderName: "Test IdP",
			NoLocalPasswords: !localPasswords}
	}
}
