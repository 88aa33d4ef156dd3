-- 0007: keys the app generates once and keeps across restarts (and, on a
-- shared database, across processes): the CSRF cookie signing key. Never
-- shown, never logged.
CREATE TABLE secrets (
	name       TEXT NOT NULL PRIMARY KEY,
	value      BLOB NOT NULL,
	created_at TEXT NOT NULL
) STRICT;
