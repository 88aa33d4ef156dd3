-- 0010: scenario runs (bff.ScenarioRunStore): a batch run of a suite of
-- synthetic patients, leased to the process playing it like a pending turn,
-- its items (one vignette, one repeat each) and the clinicians' verdicts on
-- the vignettes two runs disagree about.
--
-- Times are UTC text as in 0001; not_before, finished_at and lease_until are
-- NULL when unset (a zero time). JSON columns hold encoding/json's output.

CREATE TABLE scenario_runs (
	id          TEXT    NOT NULL PRIMARY KEY,
	suite       TEXT    NOT NULL CHECK (json_valid(suite)),
	repeats     INTEGER NOT NULL,
	label       TEXT    NOT NULL DEFAULT '',
	target      TEXT    NOT NULL DEFAULT '',
	started_by  TEXT    NOT NULL,
	state       TEXT    NOT NULL CHECK (state IN ('queued', 'active', 'waiting', 'done', 'cancelled')),
	items       INTEGER NOT NULL DEFAULT 0,
	played      INTEGER NOT NULL DEFAULT 0,
	turns_used  INTEGER NOT NULL DEFAULT 0,
	estimate    INTEGER NOT NULL DEFAULT 0,
	not_before  TEXT,
	note        TEXT    NOT NULL DEFAULT '',
	created_at  TEXT    NOT NULL,
	updated_at  TEXT    NOT NULL,
	finished_at TEXT,
	release     TEXT    NOT NULL DEFAULT '',
	lease_owner TEXT    NOT NULL DEFAULT '',
	lease_until TEXT,
	-- The suite's name, and the scores so far (scenarios.Summary as JSON,
	-- NULL before an item played): what the list of runs shows without
	-- reading suites or items.
	suite_name  TEXT    NOT NULL DEFAULT '',
	summary     TEXT    CHECK (summary IS NULL OR json_valid(summary))
) STRICT;

-- ScenarioRuns, newest first.
CREATE INDEX scenario_runs_created ON scenario_runs (created_at, id);
-- ClaimScenarioRun: only the runs not ended, oldest first.
CREATE INDEX scenario_runs_claim ON scenario_runs (created_at, id)
	WHERE state IN ('queued', 'active', 'waiting');

CREATE TABLE scenario_items (
	run_id       TEXT    NOT NULL REFERENCES scenario_runs (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL CHECK (seq >= 0),
	vignette_id  TEXT    NOT NULL,
	title        TEXT    NOT NULL DEFAULT '',
	repeat       INTEGER NOT NULL,
	state        TEXT    NOT NULL CHECK (state IN ('pending', 'playing', 'done', 'failed')),
	encounter_id TEXT    NOT NULL DEFAULT '',
	turns        TEXT    NOT NULL DEFAULT 'null' CHECK (json_valid(turns)),
	result       TEXT    CHECK (result IS NULL OR json_valid(result)),
	handoff      BLOB,
	updated_at   TEXT    NOT NULL,
	PRIMARY KEY (run_id, seq)
) STRICT;

CREATE TABLE scenario_adjudications (
	id          INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
	vignette_id TEXT    NOT NULL,
	verdict     TEXT    NOT NULL,
	gold        TEXT    NOT NULL DEFAULT '',
	note        TEXT    NOT NULL DEFAULT '',
	by_name     TEXT    NOT NULL, -- the clinician (BY is a keyword)
	at          TEXT    NOT NULL,
	base_run    TEXT    NOT NULL DEFAULT '',
	head_run    TEXT    NOT NULL DEFAULT ''
) STRICT;
