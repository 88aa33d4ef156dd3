-- 0013: the engine questions each scenario run asked, as the simulated
-- patient read them (one row per run, release and normal question; the
-- rest as JSON, bff.ScenarioReading), and the reviewers' decisions on them,
-- per release, appended (the latest per question is in force). As
-- Postgres's 0011.
CREATE TABLE scenario_readings (
	run_id   TEXT NOT NULL REFERENCES scenario_runs (id) ON DELETE CASCADE,
	release  TEXT NOT NULL,
	question TEXT NOT NULL,
	seen_at  TEXT NOT NULL,
	data     TEXT NOT NULL CHECK (json_valid(data)),
	PRIMARY KEY (run_id, release, question)
) STRICT;
CREATE INDEX scenario_readings_release ON scenario_readings (release, seen_at);

CREATE TABLE reading_reviews (
	id       INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
	release  TEXT    NOT NULL,
	question TEXT    NOT NULL,
	decision TEXT    NOT NULL CHECK (decision IN ('confirmed', 'corrected', 'unanswerable')),
	reading  TEXT    NOT NULL CHECK (json_valid(reading)),
	concept  TEXT    NOT NULL DEFAULT '',
	inverse  INTEGER NOT NULL DEFAULT 0,
	note     TEXT    NOT NULL DEFAULT '',
	by_name  TEXT    NOT NULL,
	at       TEXT    NOT NULL
) STRICT;
CREATE INDEX reading_reviews_release ON reading_reviews (release, id);
