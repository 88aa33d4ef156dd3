-- 0012: a run that replays another's items after a reading was reviewed
-- names that run and the question (bff.ScenarioRun.ReplayOf). As SQLite's
-- 0014.
ALTER TABLE scenario_runs ADD COLUMN replay_of text NOT NULL DEFAULT '';
ALTER TABLE scenario_runs ADD COLUMN replay_question text NOT NULL DEFAULT '';
