-- 0012: one row the app rewrites to learn whether the database can be
-- written (a full disk, a read-only file): its readiness says so.
CREATE TABLE write_probe (
	id INTEGER NOT NULL PRIMARY KEY,
	at TEXT NOT NULL
) STRICT;
