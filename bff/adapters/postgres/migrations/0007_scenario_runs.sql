-- 0007: scenario runs (bff.ScenarioRunStore): a batch run of a suite of
-- synthetic patients, leased to the replica playing it like a pending turn,
-- its items (one vignette, one repeat each) and the clinicians' verdicts on
-- the vignettes two runs disagree about. As SQLite's 0010.
--
-- not_before, finished_at and lease_until are NULL when unset (a zero time).

CREATE TABLE scenario_runs (
	id          text        NOT NULL PRIMARY KEY,
	suite       jsonb       NOT NULL,
	repeats     integer     NOT NULL,
	label       text        NOT NULL DEFAULT '',
	target      text        NOT NULL DEFAULT '',
	started_by  text        NOT NULL,
	state       text        NOT NULL CHECK (state IN ('queued', 'active', 'waiting', 'done', 'cancelled')),
	items       integer     NOT NULL DEFAULT 0,
	played      integer     NOT NULL DEFAULT 0,
	turns_used  integer     NOT NULL DEFAULT 0,
	estimate    integer     NOT NULL DEFAULT 0,
	not_before  timestamptz,
	note        text        NOT NULL DEFAULT '',
	created_at  timestamptz NOT NULL,
	updated_at  timestamptz NOT NULL,
	finished_at timestamptz,
	release     text        NOT NULL DEFAULT '',
	lease_owner text        NOT NULL DEFAULT '',
	lease_until timestamptz,
	-- The suite's name, and the scores so far (scenarios.Summary, NULL
	-- before an item played): what the list of runs shows without reading
	-- suites or items.
	suite_name  text        NOT NULL DEFAULT '',
	summary     jsonb
);

-- ScenarioRuns, newest first.
CREATE INDEX scenario_runs_created ON scenario_runs (created_at, id);
-- ClaimScenarioRun: only the runs not ended, oldest first.
CREATE INDEX scenario_runs_claim ON scenario_runs (created_at, id)
	WHERE state IN ('queued', 'active', 'waiting');

CREATE TABLE scenario_items (
	run_id       text        NOT NULL REFERENCES scenario_runs (id) ON DELETE CASCADE,
	seq          integer     NOT NULL CHECK (seq >= 0),
	vignette_id  text        NOT NULL,
	title        text        NOT NULL DEFAULT '',
	repeat       integer     NOT NULL,
	state        text        NOT NULL CHECK (state IN ('pending', 'playing', 'done', 'failed')),
	encounter_id text        NOT NULL DEFAULT '',
	turns        jsonb       NOT NULL DEFAULT 'null',
	result       jsonb,
	handoff      bytea, -- the service's JSON, byte for byte
	updated_at   timestamptz NOT NULL,
	CONSTRAINT scenario_items_pkey PRIMARY KEY (run_id, seq)
);

CREATE TABLE scenario_adjudications (
	id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	vignette_id text        NOT NULL,
	verdict     text        NOT NULL,
	gold        text        NOT NULL DEFAULT '',
	note        text        NOT NULL DEFAULT '',
	by_name     text        NOT NULL, -- the clinician (BY is a keyword)
	at          timestamptz NOT NULL,
	base_run    text        NOT NULL DEFAULT '',
	head_run    text        NOT NULL DEFAULT ''
);
