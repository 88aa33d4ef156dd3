package bff

import (
	"context"
	"time"
)

// Single sign-on: clinicians signing in through their organisation's OpenID
// Provider (Entra ID, Keycloak, Okta...) with the authorization code flow,
// PKCE, state and nonce (docs/operations.md, "Single sign-on").

// Audited single sign-on actions (IntakeID is "").
const (
	AuditSSOSignIn  = "sso_sign_in"        // Detail: the provider, the subject, the roles; created or linked
	AuditSSORefused = "sso_sign_in_failed" // Detail: why, with the subject when the token was good
	AuditSSOLink    = "sso_link"           // an account linked to a provider's subject
)

// SSOFlow is one sign-in's secrets while the browser is at the provider:
// kept in the browser's server-side session from Start to Finish, used once.
type SSOFlow struct {
	State    string // sent to the provider and compared when it comes back
	Nonce    string // sent to the provider and compared with the ID token's
	Verifier string // PKCE: its S256 challenge went to the provider
	Next     string // the clinician page to land on
	Started  time.Time
}

// SSOCallback is what the provider sent back to the redirect URL.
type SSOCallback struct {
	State, Code string
	// Error and ErrorDescription: the provider refused (the person
	// cancelled, or is not assigned to the app).
	Error, ErrorDescription string
}

// SSOIdentity is who a verified ID token says signed in.
type SSOIdentity struct {
	Issuer, Subject string
	Username        string   // the username claim's value, as sent ("" when absent)
	Roles           []string // the roles claim's values, as sent
	IDToken         string   // the raw token, for the end-session hint: never logged
}

// IdentityProvider is an OpenID Provider (bff/adapters/oidc).
//
// Error contract: Exchange returns an *Error EUNAUTHORIZED, with a message
// safe to show, when the provider refuses the code (used, expired, another
// client's, a PKCE verifier that does not match) or the ID token fails
// verification: its signature against the provider's published keys, its
// issuer, audience, expiry, or nonce. An unreachable provider (at Exchange,
// AuthURL or EndSessionURL) is EUNAVAILABLE. Anything else is internal.
// Methods honour ctx.
type IdentityProvider interface {
	// Name is the provider as a person knows it ("Keycloak").
	Name() string
	// Issuer is the issuer URL the provider is configured with.
	Issuer() string
	// AuthURL is the provider's authorization URL for one sign-in.
	AuthURL(ctx context.Context, state, nonce, verifier string) (string, error)
	// Exchange redeems code with the PKCE verifier and verifies the ID
	// token, whose nonce must be nonce.
	Exchange(ctx context.Context, code, verifier, nonce string) (*SSOIdentity, error)
	// EndSessionURL is the provider's end-session URL for a sign-out that
	// comes back to the app's sign-in page, or "" when its discovery
	// document has none.
	EndSessionURL(ctx context.Context, idToken string) (string, error)
}

// SSOSignIn is a finished single sign-on.
type SSOSignIn struct {
	Clinician *Clinician
	Roles     []string // the app's roles the provider's claim maps to
	IDToken   string
	Created   bool // the account was made at this sign-in
}

// SSOService signs clinicians in through the OpenID Provider.
type SSOService interface {
	// ProviderName names the provider for the sign-in button.
	ProviderName() string
	// LocalPasswords reports whether local passwords sign in too.
	LocalPasswords() bool
	// Start begins a sign-in that lands on next: the URL to send the
	// browser to, and the flow to keep until it comes back. EUNAVAILABLE
	// when the provider cannot be reached.
	Start(ctx context.Context, next string) (authURL string, flow *SSOFlow, err error)
	// Finish completes the sign-in of flow (nil: the session holds none)
	// with what the provider sent back. EUNAUTHORIZED, message safe to
	// show, for a state that is not the flow's, an expired flow, a refusal
	// by the provider, a code or ID token refused; EFORBIDDEN for an
	// account that is disabled, maps to no role, or cannot be matched to an
	// account here. Every sign-in and refusal is audited.
	Finish(ctx context.Context, flow *SSOFlow, cb SSOCallback, address string) (*SSOSignIn, error)
	// EndSessionURL is where a signed-out clinician may end their session
	// at the provider too, coming back to the sign-in page; "" when the
	// provider publishes no end-session endpoint.
	EndSessionURL(ctx context.Context, idToken string) string
}

// SSOLinkStore keeps which provider subject signs in as which account.
// Error contract as for the other stores (ENOTFOUND, ECONFLICT as *Error;
// anything else internal); methods honour ctx.
type SSOLinkStore interface {
	// SSOLink returns the username linked to the issuer's subject;
	// ENOTFOUND if none.
	SSOLink(ctx context.Context, issuer, subject string) (string, error)
	// LinkSSO links the issuer's subject to the existing account username;
	// ENOTFOUND for no such account, ECONFLICT when the subject or the
	// account is linked already.
	LinkSSO(ctx context.Context, issuer, subject, username string, at time.Time) error
	// CreateLinkedClinician inserts c linked to the issuer's subject, both
	// or neither; ECONFLICT when the username is taken or the subject is
	// linked already.
	CreateLinkedClinician(ctx context.Context, c *Clinician, issuer, subject string) error
}
