-- 0018: the clinical safety case (#39): the hazard log's versions, each
-- the whole log as JSON (bff.HazardLogVersion), and the release decisions
-- with the evidence they froze (bff.SafetyDecision). Both are appended and
-- never changed: triggers refuse an update or a delete, so a signed
-- snapshot stays as it was signed. As Postgres's 0016.
CREATE TABLE hazard_log_versions (
	version INTEGER NOT NULL PRIMARY KEY CHECK (version > 0),
	log     TEXT    NOT NULL CHECK (json_valid(log)),
	by_name TEXT    NOT NULL,
	at      TEXT    NOT NULL,
	note    TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE safety_decisions (
	id          INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
	release     TEXT    NOT NULL,
	voice       TEXT    NOT NULL DEFAULT '',
	verdict     TEXT    NOT NULL CHECK (verdict IN ('approve', 'approve_with_conditions', 'reject')),
	conditions  TEXT    NOT NULL DEFAULT '',
	reasoning   TEXT    NOT NULL,
	by_name     TEXT    NOT NULL,
	at          TEXT    NOT NULL,
	log_version INTEGER NOT NULL REFERENCES hazard_log_versions (version),
	hash        TEXT    NOT NULL,
	snapshot    TEXT    NOT NULL CHECK (json_valid(snapshot))
) STRICT;
CREATE INDEX safety_decisions_subject ON safety_decisions (release, voice, id);

CREATE TRIGGER hazard_log_versions_kept BEFORE UPDATE ON hazard_log_versions
BEGIN SELECT RAISE(ABORT, 'a hazard log version is never changed'); END;
CREATE TRIGGER hazard_log_versions_not_deleted BEFORE DELETE ON hazard_log_versions
BEGIN SELECT RAISE(ABORT, 'a hazard log version is never deleted'); END;
CREATE TRIGGER safety_decisions_kept BEFORE UPDATE ON safety_decisions
BEGIN SELECT RAISE(ABORT, 'a safety decision is never changed'); END;
CREATE TRIGGER safety_decisions_not_deleted BEFORE DELETE ON safety_decisions
BEGIN SELECT RAISE(ABORT, 'a safety decision is never deleted'); END;
