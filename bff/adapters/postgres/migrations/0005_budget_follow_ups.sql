-- A waiting intake creation is followed at once by its first turn: the
-- place shown to callers behind it counts both (Call.FollowUps).
ALTER TABLE budget_waiters ADD COLUMN follow_ups integer NOT NULL DEFAULT 0;

-- Follow-ups granted callers announced that have not come yet: each counts
-- in the place shown to lower priorities until it comes or expires.
CREATE TABLE budget_follow_ups (
    id       bigserial   PRIMARY KEY,
    until_at timestamptz NOT NULL
);

-- A follow-up waits in its announcer's place among follow-ups: ord is the
-- announcement's id for follow-ups, empty (the waiter's own id) otherwise.
ALTER TABLE budget_waiters ADD COLUMN ord bigint;
