-- 0002: the scs session table, exactly as
-- github.com/alexedwards/scs/sqlite3store expects it (expiry is a julianday).

CREATE TABLE sessions (
	token  TEXT PRIMARY KEY,
	data   BLOB NOT NULL,
	expiry REAL NOT NULL
);

CREATE INDEX sessions_expiry_idx ON sessions (expiry);
