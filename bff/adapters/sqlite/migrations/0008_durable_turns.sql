-- 0008: durable turns (issue #12). An intake's id in this app is apart from
-- the service's encounter id (filled once the intake exists upstream; older
-- intakes used the encounter id as their own). A pending turn is a job
-- leased to the process running it: lease_owner and lease_until (UTC text as
-- in 0001, NULL when not leased).

ALTER TABLE intakes ADD COLUMN encounter_id TEXT NOT NULL DEFAULT '';
UPDATE intakes SET encounter_id = id;
CREATE UNIQUE INDEX intakes_encounter ON intakes (encounter_id) WHERE encounter_id <> '';

ALTER TABLE turns ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE turns ADD COLUMN lease_until TEXT;

-- ClaimStaleTurns: only the few unsettled rows are indexed.
CREATE INDEX turns_pending_lease ON turns (lease_until)
	WHERE status IN ('queued', 'streaming');
