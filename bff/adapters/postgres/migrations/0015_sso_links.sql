-- 0013: single sign-on. Which OpenID Provider subject signs in as which
-- clinician account (bff.SSOLinkStore): an account is found by the
-- provider's issuer and subject, never by a username the provider sends.
-- One subject per account and one account per subject. As SQLite's 0015.
CREATE TABLE sso_links (
	issuer    text        NOT NULL,
	subject   text        NOT NULL,
	username  text COLLATE "C" NOT NULL UNIQUE REFERENCES clinicians (username) ON DELETE CASCADE,
	linked_at timestamptz NOT NULL,
	PRIMARY KEY (issuer, subject)
);
