-- 0011: a scenario item may play its vignette under a variation of how the
-- patient speaks (bff/scenarios/variations); '' is the vignette as written,
-- which every item recorded before this migration played. As Postgres's 0008.
ALTER TABLE scenario_items ADD COLUMN variation TEXT NOT NULL DEFAULT '';
