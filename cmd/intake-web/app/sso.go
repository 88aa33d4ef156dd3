package app

import (
	"fmt"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/oidc"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
)

// singleSignOn builds single sign-on from the configuration: nil when
// OIDC_ISSUER_URL is unset. The provider is read at the first sign-in, not
// here: a provider that is down does not stop the app from starting.
func (a *App) singleSignOn() (bff.SSOService, error) {
	o := a.cfg.OIDC
	if o.Issuer == "" {
		return nil, nil
	}
	rp, err := oidc.New(oidc.Config{
		Name: o.ProviderName, Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		RedirectURL: o.RedirectURL, PostLogoutURL: o.postLogoutURL(),
		UsernameClaim: o.UsernameClaim, RolesClaim: o.RolesClaim, Now: a.cfg.Now,
		Logger: a.log.With("component", "oidc"),
	})
	if err != nil {
		return nil, fmt.Errorf("single sign-on: %w", err)
	}
	a.log.Info("single sign-on on", "issuer", o.Issuer, "client_id", o.ClientID, "local_passwords", !o.NoLocalPasswords)
	return a.accounts.SSO(accounts.SSOConfig{Provider: rp, Links: a.db, RoleMap: o.RoleMap, LocalPasswords: !o.NoLocalPasswords}), nil
}
