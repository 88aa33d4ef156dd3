-- 0011: the engine questions each scenario run asked, as the simulated
-- patient read them, and the reviewers' decisions on them per release. As
-- SQLite's 0013.
CREATE TABLE scenario_readings (
	run_id   text        NOT NULL REFERENCES scenario_runs (id) ON DELETE CASCADE,
	release  text        NOT NULL,
	question text        NOT NULL,
	seen_at  timestamptz NOT NULL,
	data     jsonb       NOT NULL,
	CONSTRAINT scenario_readings_pkey PRIMARY KEY (run_id, release, question)
);
CREATE INDEX scenario_readings_release ON scenario_readings (release, seen_at);

CREATE TABLE reading_reviews (
	id       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	release  text        NOT NULL,
	question text        NOT NULL,
	decision text        NOT NULL CHECK (decision IN ('confirmed', 'corrected', 'unanswerable')),
	reading  jsonb       NOT NULL,
	concept  text        NOT NULL DEFAULT '',
	inverse  boolean     NOT NULL DEFAULT false,
	note     text        NOT NULL DEFAULT '',
	by_name  text        NOT NULL,
	at       timestamptz NOT NULL
);
CREATE INDEX reading_reviews_release ON reading_reviews (release, id);
