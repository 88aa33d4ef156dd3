-- 0015: single sign-on. Which OpenID Provider subject signs in as which
-- clinician account (bff.SSOLinkStore): an account is found by the
-- provider's issuer and subject, never by a username the provider sends.
-- One subject per account and one account per subject. As Postgres's 0013.
CREATE TABLE sso_links (
	issuer    TEXT NOT NULL,
	subject   TEXT NOT NULL,
	username  TEXT NOT NULL UNIQUE REFERENCES clinicians (username) ON DELETE CASCADE,
	linked_at TEXT NOT NULL,
	PRIMARY KEY (issuer, subject)
) STRICT;
