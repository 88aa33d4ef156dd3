-- 0008: a scenario item may play its vignette under a variation of how the
-- patient speaks (bff/scenarios/variations); '' is the vignette as written,
-- which every item recorded before this migration played. As SQLite's 0011.
ALTER TABLE scenario_items ADD COLUMN variation text NOT NULL DEFAULT '';
