-- 0014: a run that replays another's items after a reading was reviewed
-- names that run and the question (bff.ScenarioRun.ReplayOf). As
-- Postgres's 0012.
ALTER TABLE scenario_runs ADD COLUMN replay_of TEXT NOT NULL DEFAULT '';
ALTER TABLE scenario_runs ADD COLUMN replay_question TEXT NOT NULL DEFAULT '';
