-- 0001: intakes, their turns and their handoffs.
--
-- Times are UTC text in one fixed-width layout
-- (2006-01-02T15:04:05.000000000Z), so they sort as text and round-trip to
-- the nanosecond. Booleans are 0/1. Optional state stays NULL, never ''.

CREATE TABLE intakes (
	id                TEXT    NOT NULL PRIMARY KEY,
	owner             TEXT    NOT NULL,
	created_at        TEXT    NOT NULL,
	expires_at        TEXT    NOT NULL,
	updated_at        TEXT    NOT NULL,
	status            TEXT    NOT NULL,
	turn_count        INTEGER NOT NULL DEFAULT 0,
	terminal          INTEGER NOT NULL DEFAULT 0 CHECK (terminal IN (0, 1)),
	urgent            INTEGER NOT NULL DEFAULT 0 CHECK (urgent IN (0, 1)),
	safety_status     TEXT    NOT NULL DEFAULT '',
	disposition       TEXT    NOT NULL DEFAULT '',
	disposition_label TEXT    NOT NULL DEFAULT '',
	active_protocol   TEXT    NOT NULL DEFAULT '',
	age_years         INTEGER,
	sex               TEXT    NOT NULL DEFAULT '',
	history           TEXT    NOT NULL DEFAULT '',
	service_release   TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX intakes_owner_created ON intakes (owner, created_at);
CREATE INDEX intakes_created ON intakes (created_at);

CREATE TABLE turns (
	intake_id         TEXT    NOT NULL REFERENCES intakes (id) ON DELETE CASCADE,
	idx               INTEGER NOT NULL CHECK (idx >= 1),
	submission_id     TEXT    NOT NULL,
	message           TEXT    NOT NULL,
	status            TEXT    NOT NULL CHECK (status IN ('queued', 'streaming', 'completed', 'failed')),
	reply             TEXT    NOT NULL DEFAULT '',
	choices           TEXT    NOT NULL DEFAULT 'null' CHECK (json_valid(choices)),
	terminal          INTEGER NOT NULL DEFAULT 0 CHECK (terminal IN (0, 1)),
	urgent            INTEGER NOT NULL DEFAULT 0 CHECK (urgent IN (0, 1)),
	safety_status     TEXT,
	disposition       TEXT,
	disposition_label TEXT,
	error_code        TEXT    NOT NULL DEFAULT '',
	error_message     TEXT    NOT NULL DEFAULT '',
	service_release   TEXT    NOT NULL DEFAULT '',
	created_at        TEXT    NOT NULL,
	completed_at      TEXT,
	PRIMARY KEY (intake_id, idx),
	UNIQUE (intake_id, submission_id)
) STRICT;

-- At most one turn per intake is still producing its reply.
CREATE UNIQUE INDEX turns_one_pending ON turns (intake_id)
	WHERE status IN ('queued', 'streaming');

-- PendingTurns after a restart: only the few unsettled rows are indexed.
CREATE INDEX turns_pending_created ON turns (created_at)
	WHERE status IN ('queued', 'streaming');

CREATE TABLE handoffs (
	intake_id       TEXT    NOT NULL PRIMARY KEY REFERENCES intakes (id) ON DELETE CASCADE,
	json            BLOB    NOT NULL, -- the service's object, byte for byte
	terminal        INTEGER NOT NULL DEFAULT 0 CHECK (terminal IN (0, 1)),
	fetched_at      TEXT    NOT NULL,
	service_release TEXT    NOT NULL DEFAULT ''
) STRICT;
