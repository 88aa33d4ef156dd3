-- 0003: the clinician area: accounts, reviews of handoffs, the audit log.
--
-- Times and booleans as in 0001. Usernames are compared exactly (BINARY):
-- the service lower-cases them before they reach the store.

CREATE TABLE clinicians (
	username      TEXT    NOT NULL PRIMARY KEY,
	password_hash BLOB    NOT NULL, -- bcrypt
	disabled      INTEGER NOT NULL CHECK (disabled IN (0, 1)),
	created_at    TEXT    NOT NULL
) STRICT;

-- A handoff may be reviewed more than once; its reviews go with the intake.
CREATE TABLE reviews (
	id          INTEGER NOT NULL PRIMARY KEY,
	intake_id   TEXT    NOT NULL REFERENCES intakes (id) ON DELETE CASCADE,
	clinician   TEXT    NOT NULL,
	note        TEXT    NOT NULL,
	reviewed_at TEXT    NOT NULL
) STRICT;

CREATE INDEX reviews_intake_reviewed ON reviews (intake_id, reviewed_at);

-- The audit log outlives anything it names: no foreign keys. AUTOINCREMENT
-- so an id is never handed out twice.
CREATE TABLE audit (
	id        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
	at        TEXT    NOT NULL,
	actor     TEXT    NOT NULL,
	action    TEXT    NOT NULL,
	intake_id TEXT    NOT NULL,
	detail    TEXT    NOT NULL
) STRICT;

CREATE INDEX audit_intake ON audit (intake_id);

-- Append-only: rows are inserted, never changed or removed. REPLACE deletes
-- the clashing row without firing DELETE triggers (recursive_triggers is
-- off), so an insert onto an existing id is refused as well.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
	SELECT RAISE(ABORT, 'audit log is append-only');
END;

CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
	SELECT RAISE(ABORT, 'audit log is append-only');
END;

CREATE TRIGGER audit_no_replace BEFORE INSERT ON audit
WHEN EXISTS (SELECT 1 FROM audit WHERE id = NEW.id)
BEGIN
	SELECT RAISE(ABORT, 'audit log is append-only');
END;
