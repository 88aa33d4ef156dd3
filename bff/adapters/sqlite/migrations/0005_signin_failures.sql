-- 0005: failed clinician sign-ins, so their limits survive a restart (and are
-- shared by every process on the database). key is "u:"+username or
-- "a:"+client address, both bounded by the service before they get here.
-- Rows older than the window (15 minutes) are pruned by the service.

CREATE TABLE signin_failures (
	id  INTEGER NOT NULL PRIMARY KEY,
	key TEXT    NOT NULL,
	at  TEXT    NOT NULL
) STRICT;

CREATE INDEX signin_failures_key_at ON signin_failures (key, at);
CREATE INDEX signin_failures_at ON signin_failures (at);
