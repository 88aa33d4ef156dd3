-- 0003: the worklist at scale, as the SQLite store's 0009_worklist.sql. Its
-- order (group, then updated_at newest first, then id descending) and its
-- filters run in SQL on indexes.
--
-- reviewed_at is the intake's latest review time, kept by a trigger on
-- reviews in the review's own transaction, so no store method has to
-- remember it. wl_group is the worklist group (bff.WorkGroup): 0 urgent,
-- 1 closed awaiting review, 2 open, 3 expired, 4 reviewed. It is a stored
-- generated column (PostgreSQL 15 has no virtual ones): computed on every
-- write of the row, never written by the store, so it cannot disagree with
-- the fields it comes from. An open intake past expires_at stays in group 2
-- until it is marked expired: the worklist does that before reading a page,
-- finding them with intakes_open_expiry.

ALTER TABLE intakes ADD COLUMN reviewed_at timestamptz;

UPDATE intakes i SET reviewed_at = r.latest
	FROM (SELECT intake_id, max(reviewed_at) AS latest FROM reviews GROUP BY intake_id) r
	WHERE r.intake_id = i.id;

-- The row lock the UPDATE takes orders concurrent reviews of one intake: the
-- later one re-reads the row and keeps the larger time.
CREATE FUNCTION reviews_latest() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE intakes SET reviewed_at = NEW.reviewed_at
	WHERE id = NEW.intake_id AND (reviewed_at IS NULL OR reviewed_at < NEW.reviewed_at);
	RETURN NULL;
END
$$;

CREATE TRIGGER reviews_latest AFTER INSERT ON reviews
	FOR EACH ROW EXECUTE FUNCTION reviews_latest();

ALTER TABLE intakes ADD COLUMN wl_group smallint NOT NULL GENERATED ALWAYS AS (CASE
	WHEN reviewed_at IS NOT NULL THEN 4
	WHEN urgent THEN 0
	WHEN status = 'closed' OR terminal THEN 1
	WHEN status = 'open' THEN 2
	ELSE 3 END) STORED;

-- One index per filter's equality prefix, each ending in the page order.
-- Ids compare byte-wise (COLLATE "C"), as in SQLite and in the Go cursor's
-- order, whatever the database's collation; the queries say COLLATE "C" too,
-- or these indexes would not apply.
CREATE INDEX intakes_worklist ON intakes (wl_group, updated_at DESC, (id COLLATE "C") DESC);
CREATE INDEX intakes_worklist_status ON intakes (status, wl_group, updated_at DESC, (id COLLATE "C") DESC);
CREATE INDEX intakes_worklist_urgent ON intakes (urgent, wl_group, updated_at DESC, (id COLLATE "C") DESC);
CREATE INDEX intakes_worklist_status_urgent ON intakes (status, urgent, wl_group, updated_at DESC, (id COLLATE "C") DESC);

-- Open intakes by expiry: the few that just passed their two hours.
CREATE INDEX intakes_open_expiry ON intakes (expires_at) WHERE status = 'open';
