-- 0009: the worklist at scale. Its order (group, then updated_at newest
-- first, then id descending) and its filters run in SQL on indexes.
--
-- reviewed_at is the intake's latest review time, kept by a trigger on
-- reviews in the same transaction as the review itself, so no store method
-- has to remember it. wl_group is the worklist group (bff.WorkGroup):
-- 0 urgent, 1 closed awaiting review, 2 open, 3 expired, 4 reviewed. It is a
-- virtual generated column (computed from the row, never written), so it
-- cannot disagree with the fields it comes from. An open intake past
-- expires_at stays in group 2 until it is marked expired: the worklist does
-- that before reading a page, finding them with intakes_open_expiry.

ALTER TABLE intakes ADD COLUMN reviewed_at TEXT;

UPDATE intakes SET reviewed_at = (SELECT MAX(r.reviewed_at) FROM reviews r WHERE r.intake_id = intakes.id);

CREATE TRIGGER reviews_latest AFTER INSERT ON reviews BEGIN
	UPDATE intakes SET reviewed_at = NEW.reviewed_at
	WHERE id = NEW.intake_id AND (reviewed_at IS NULL OR reviewed_at < NEW.reviewed_at);
END;

ALTER TABLE intakes ADD COLUMN wl_group INTEGER GENERATED ALWAYS AS (CASE
	WHEN reviewed_at IS NOT NULL THEN 4
	WHEN urgent = 1 THEN 0
	WHEN status = 'closed' OR terminal = 1 THEN 1
	WHEN status = 'open' THEN 2
	ELSE 3 END) VIRTUAL;

-- One index per filter's equality prefix, each ending in the page order.
CREATE INDEX intakes_worklist ON intakes (wl_group, updated_at DESC, id DESC);
CREATE INDEX intakes_worklist_status ON intakes (status, wl_group, updated_at DESC, id DESC);
CREATE INDEX intakes_worklist_urgent ON intakes (urgent, wl_group, updated_at DESC, id DESC);
CREATE INDEX intakes_worklist_status_urgent ON intakes (status, urgent, wl_group, updated_at DESC, id DESC);

-- Open intakes by expiry: the few that just passed their two hours.
CREATE INDEX intakes_open_expiry ON intakes (expires_at) WHERE status = 'open';
