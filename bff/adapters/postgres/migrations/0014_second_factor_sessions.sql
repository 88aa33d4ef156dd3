-- 0014: a second factor for clinician accounts, and the index of signed-in
-- clinicians' sessions, as the SQLite store's 0016.
ALTER TABLE clinicians ADD COLUMN totp_secret bytea;          -- sealed; NULL: none enrolled
ALTER TABLE clinicians ADD COLUMN totp_step bigint NOT NULL DEFAULT 0;

CREATE TABLE clinician_recovery_codes (
	username text COLLATE "C" NOT NULL REFERENCES clinicians (username) ON DELETE CASCADE,
	id       integer NOT NULL,
	salt     bytea   NOT NULL,
	hash     bytea   NOT NULL,
	used     boolean NOT NULL DEFAULT false,
	PRIMARY KEY (username, id)
);

CREATE TABLE clinician_sessions (
	id           text        NOT NULL PRIMARY KEY,
	token        text        NOT NULL UNIQUE,
	username     text COLLATE "C" NOT NULL,
	device       text        NOT NULL,
	address      text        NOT NULL,
	signed_in_at timestamptz NOT NULL,
	last_seen    timestamptz NOT NULL,
	expires_at   timestamptz NOT NULL
);

CREATE INDEX clinician_sessions_user ON clinician_sessions (username, last_seen);
CREATE INDEX clinician_sessions_expiry ON clinician_sessions (expires_at);
