-- 0016: the clinical safety case (#39): the hazard log's versions and the
-- release decisions with the evidence they froze; appended, never changed
-- (triggers refuse an update or a delete). As SQLite's 0018.
CREATE TABLE hazard_log_versions (
	version integer     NOT NULL PRIMARY KEY CHECK (version > 0),
	log     jsonb       NOT NULL,
	by_name text        NOT NULL,
	at      timestamptz NOT NULL,
	note    text        NOT NULL DEFAULT ''
);

CREATE TABLE safety_decisions (
	id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	release     text        NOT NULL,
	voice       text        NOT NULL DEFAULT '',
	verdict     text        NOT NULL CHECK (verdict IN ('approve', 'approve_with_conditions', 'reject')),
	conditions  text        NOT NULL DEFAULT '',
	reasoning   text        NOT NULL,
	by_name     text        NOT NULL,
	at          timestamptz NOT NULL,
	log_version integer     NOT NULL REFERENCES hazard_log_versions (version),
	hash        text        NOT NULL,
	snapshot    jsonb       NOT NULL
);
CREATE INDEX safety_decisions_subject ON safety_decisions (release, voice, id);

CREATE FUNCTION safety_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '% is appended, never changed', TG_TABLE_NAME;
END;
$$;
CREATE TRIGGER hazard_log_versions_kept BEFORE UPDATE OR DELETE ON hazard_log_versions
	FOR EACH ROW EXECUTE FUNCTION safety_append_only();
CREATE TRIGGER safety_decisions_kept BEFORE UPDATE OR DELETE ON safety_decisions
	FOR EACH ROW EXECUTE FUNCTION safety_append_only();
