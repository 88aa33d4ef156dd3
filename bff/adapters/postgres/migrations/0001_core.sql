-- 0001: the whole schema of the SQLite store as of its migration 0008
-- (intakes with encounter ids, turns with leases, handoffs, clinicians,
-- reviews, the audit log, failed sign-ins, the pacer's journal, secrets),
-- plus the scs sessions and the turns' event log that several replicas need.
--
-- Times are timestamptz (microseconds: PostgreSQL's precision). Optional
-- state stays NULL where the SQLite store keeps NULL, never ''.

CREATE TABLE intakes (
	id                text        NOT NULL PRIMARY KEY,
	owner             text        NOT NULL,
	encounter_id      text        NOT NULL DEFAULT '',
	created_at        timestamptz NOT NULL,
	expires_at        timestamptz NOT NULL,
	updated_at        timestamptz NOT NULL,
	status            text        NOT NULL,
	turn_count        integer     NOT NULL DEFAULT 0,
	terminal          boolean     NOT NULL DEFAULT false,
	urgent            boolean     NOT NULL DEFAULT false,
	safety_status     text        NOT NULL DEFAULT '',
	disposition       text        NOT NULL DEFAULT '',
	disposition_label text        NOT NULL DEFAULT '',
	active_protocol   text        NOT NULL DEFAULT '',
	age_years         integer,
	sex               text        NOT NULL DEFAULT '',
	history           text        NOT NULL DEFAULT '',
	service_release   text        NOT NULL DEFAULT '',
	seq               bigint      GENERATED ALWAYS AS IDENTITY -- insertion order, SQLite's rowid
);

CREATE INDEX intakes_owner_created ON intakes (owner, created_at);
CREATE INDEX intakes_created ON intakes (created_at);
CREATE UNIQUE INDEX intakes_encounter ON intakes (encounter_id) WHERE encounter_id <> '';

CREATE TABLE turns (
	intake_id         text        NOT NULL REFERENCES intakes (id) ON DELETE CASCADE,
	idx               integer     NOT NULL CHECK (idx >= 1),
	submission_id     text        NOT NULL,
	message           text        NOT NULL,
	status            text        NOT NULL CHECK (status IN ('queued', 'streaming', 'completed', 'failed')),
	reply             text        NOT NULL DEFAULT '',
	choices           jsonb       NOT NULL DEFAULT 'null',
	terminal          boolean     NOT NULL DEFAULT false,
	urgent            boolean     NOT NULL DEFAULT false,
	safety_status     text,
	disposition       text,
	disposition_label text,
	error_code        text        NOT NULL DEFAULT '',
	error_message     text        NOT NULL DEFAULT '',
	service_release   text        NOT NULL DEFAULT '',
	created_at        timestamptz NOT NULL,
	completed_at      timestamptz,
	blocking          boolean     NOT NULL DEFAULT false,
	lease_owner       text        NOT NULL DEFAULT '',
	lease_until       timestamptz,
	seq               bigint      GENERATED ALWAYS AS IDENTITY, -- insertion order, SQLite's rowid
	CONSTRAINT turns_pkey PRIMARY KEY (intake_id, idx),
	CONSTRAINT turns_submission UNIQUE (intake_id, submission_id)
);

-- At most one turn per intake is still producing its reply.
CREATE UNIQUE INDEX turns_one_pending ON turns (intake_id)
	WHERE status IN ('queued', 'streaming');

-- PendingTurns and ClaimStaleTurns: only the few unsettled rows are indexed.
CREATE INDEX turns_pending_created ON turns (created_at)
	WHERE status IN ('queued', 'streaming');
CREATE INDEX turns_pending_lease ON turns (lease_until)
	WHERE status IN ('queued', 'streaming');
CREATE INDEX turns_opening ON turns (intake_id) WHERE idx = 1;

CREATE TABLE handoffs (
	intake_id       text        NOT NULL PRIMARY KEY REFERENCES intakes (id) ON DELETE CASCADE,
	json            bytea       NOT NULL, -- the service's object, byte for byte
	terminal        boolean     NOT NULL DEFAULT false,
	fetched_at      timestamptz NOT NULL,
	service_release text        NOT NULL DEFAULT ''
);

-- Usernames are compared exactly (the service lower-cases them) and ordered
-- by bytes, as in SQLite.
CREATE TABLE clinicians (
	username      text COLLATE "C" NOT NULL PRIMARY KEY,
	password_hash bytea       NOT NULL, -- bcrypt
	disabled      boolean     NOT NULL,
	created_at    timestamptz NOT NULL
);

CREATE TABLE reviews (
	id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	intake_id   text        NOT NULL REFERENCES intakes (id) ON DELETE CASCADE,
	clinician   text        NOT NULL,
	note        text        NOT NULL,
	reviewed_at timestamptz NOT NULL
);

CREATE INDEX reviews_intake_reviewed ON reviews (intake_id, reviewed_at);

-- The audit log outlives anything it names: no foreign keys. Ids come from
-- a sequence: never handed out twice.
CREATE TABLE audit (
	id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at        timestamptz NOT NULL,
	actor     text        NOT NULL,
	action    text        NOT NULL,
	intake_id text        NOT NULL,
	detail    text        NOT NULL
);

CREATE INDEX audit_intake ON audit (intake_id);

-- Append-only: rows are inserted, never changed, removed or truncated.
CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'audit log is append-only';
END
$$;

CREATE TRIGGER audit_no_update BEFORE UPDATE OR DELETE ON audit
	FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
	FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();

CREATE TABLE signin_failures (
	id  bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	key text        NOT NULL,
	at  timestamptz NOT NULL
);

CREATE INDEX signin_failures_key_at ON signin_failures (key, at);
CREATE INDEX signin_failures_at ON signin_failures (at);

CREATE TABLE pacer_journal (
	id    bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at    timestamptz NOT NULL,
	event text        NOT NULL CHECK (event IN ('grant', 'refund', 'pause', 'spent')),
	quota text        NOT NULL CHECK (quota IN ('', 'turns', 'intakes')),
	until timestamptz -- pause and spent only
);

CREATE INDEX pacer_journal_at ON pacer_journal (at);
CREATE INDEX pacer_journal_until ON pacer_journal (until) WHERE until IS NOT NULL;

-- Keys the app generates once (the CSRF signing key): never shown or logged.
CREATE TABLE secrets (
	name       text        NOT NULL PRIMARY KEY,
	value      bytea       NOT NULL,
	created_at timestamptz NOT NULL
);

-- The scs sessions, as github.com/alexedwards/scs/pgxstore lays them out.
CREATE TABLE sessions (
	token  text        PRIMARY KEY,
	data   bytea       NOT NULL,
	expiry timestamptz NOT NULL
);

CREATE INDEX sessions_expiry_idx ON sessions (expiry);

-- Each turn's stream events (bff.TurnEventLog), so any replica's browsers
-- follow a turn another replica runs. key is bff.TurnKey.
CREATE TABLE turn_events (
	key  text   NOT NULL,
	id   bigint NOT NULL CHECK (id >= 1),
	name text   NOT NULL,
	data bytea  NOT NULL,
	at   timestamptz NOT NULL DEFAULT now(), -- for pruning old turns' events
	PRIMARY KEY (key, id)
);
