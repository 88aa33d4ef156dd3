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

-- The page order's index, and one partial index per filter's equality
-- part (status, urgent, both), each in page order. Partial, not prefixed
-- with status and urgent as in SQLite: PostgreSQL's planner takes the
-- smaller index that already has the order, and with (status, ...) it
-- preferred the whole-table index with status as a filter, which reads
-- every row of the groups before the first match (status and wl_group are
-- correlated, which it cannot know). A partial index is both smaller and
-- exact. The queries name the status as a literal, so its predicate is
-- provable for any plan, generic ones included.
--
-- Ids compare byte-wise (COLLATE "C"), as in SQLite and in the Go cursor's
-- order, whatever the database's collation; the queries say COLLATE "C"
-- too, or these indexes would not give their order.
CREATE INDEX intakes_worklist ON intakes (wl_group, updated_at DESC, (id COLLATE "C") DESC);
CREATE INDEX intakes_worklist_open ON intakes (wl_group, updated_at DESC, (id COLLATE "C") DESC)
	WHERE status = 'open';
CREATE INDEX intakes_worklist_closed ON intakes (wl_group, updated_at DESC, (id COLLATE "C") DESC)
	WHERE status = 'closed';
CREATE INDEX intakes_worklist_expired ON intakes (wl_group, updated_at DESC, (id COLLATE "C") DESC)
	WHERE status = 'expired';
CREATE INDEX intakes_worklist_urgent ON intakes (wl_group, updated_at DESC, (id COLLATE "C") DESC)
	WHERE urgent;
CREATE INDEX intakes_worklist_open_urgent ON intakes (wl_group, updated_at DESC, (id COLLATE "C") DESC)
	WHERE status = 'open' AND urgent;
CREATE INDEX intakes_worklist_closed_urgent ON intakes (wl_group, updated_at DESC, (id COLLATE "C") DESC)
	WHERE status = 'closed' AND urgent;
CREATE INDEX intakes_worklist_expired_urgent ON intakes (wl_group, updated_at DESC, (id COLLATE "C") DESC)
	WHERE status = 'expired' AND urgent;

-- Open intakes by expiry: the few that just passed their two hours.
CREATE INDEX intakes_open_expiry ON intakes (expires_at) WHERE status = 'open';
