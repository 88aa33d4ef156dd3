-- 0016: a second factor for clinician accounts, and the index of signed-in
-- clinicians' sessions.
--
-- totp_secret is the TOTP secret sealed by the account service (AES-256-GCM
-- under the "totp" key of the secrets table): NULL when none is enrolled.
-- totp_step is the last 30-second step a code was accepted for (replays of
-- it, or of an older one, are refused).
ALTER TABLE clinicians ADD COLUMN totp_secret BLOB;
ALTER TABLE clinicians ADD COLUMN totp_step INTEGER NOT NULL DEFAULT 0;

-- Single-use recovery codes: SHA-256 of a per-code random salt and the
-- code (random, 80 bits: see bff/services/accounts/totp.go for why not
-- bcrypt).
CREATE TABLE clinician_recovery_codes (
	username TEXT    NOT NULL REFERENCES clinicians (username) ON DELETE CASCADE,
	id       INTEGER NOT NULL,
	salt     BLOB    NOT NULL,
	hash     BLOB    NOT NULL,
	used     INTEGER NOT NULL DEFAULT 0 CHECK (used IN (0, 1)),
	PRIMARY KEY (username, id)
) STRICT;

-- Signed-in clinicians' sessions, beside scs's sessions table (token is
-- its key): id is the token's public id (bff.SessionID). No foreign key: a
-- session outlives nothing it names, and is pruned when it expires.
CREATE TABLE clinician_sessions (
	id           TEXT NOT NULL PRIMARY KEY,
	token        TEXT NOT NULL UNIQUE,
	username     TEXT NOT NULL,
	device       TEXT NOT NULL,
	address      TEXT NOT NULL,
	signed_in_at TEXT NOT NULL,
	last_seen    TEXT NOT NULL,
	expires_at   TEXT NOT NULL
) STRICT;

CREATE INDEX clinician_sessions_user ON clinician_sessions (username, last_seen);
CREATE INDEX clinician_sessions_expiry ON clinician_sessions (expires_at);
