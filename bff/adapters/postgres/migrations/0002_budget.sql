-- The upstream key's request budget, shared by every replica (bff/adapters/postgres
-- budget.go). Every decision is taken under one transaction-scoped advisory
-- lock, so these tables need no row locks of their own. Depends on no other
-- migration.

-- One row per request let go: the rolling window counts sent_at, the daily
-- quotas count the rows of a UTC day that are not refunded.
CREATE TABLE budget_grants (
    id       bigserial   PRIMARY KEY,
    sent_at  timestamptz NOT NULL,
    quota    text        NOT NULL DEFAULT '' CHECK (quota IN ('', 'turns', 'intakes')),
    day      date        NOT NULL, -- the UTC day of sent_at
    replica  text        NOT NULL,
    refunded boolean     NOT NULL DEFAULT false
);
CREATE INDEX budget_grants_sent_at ON budget_grants (sent_at);
CREATE INDEX budget_grants_day ON budget_grants (day, quota) WHERE NOT refunded;

-- Callers waiting for a grant, on any replica. id is the arrival order; a
-- waiter whose heartbeat is older than the budget's StaleAfter is dropped
-- (its replica died or lost the database).
CREATE TABLE budget_waiters (
    id          bigserial   PRIMARY KEY,
    priority    integer     NOT NULL,
    enqueued_at timestamptz NOT NULL,
    replica     text        NOT NULL,
    heartbeat   timestamptz NOT NULL
);
CREATE INDEX budget_waiters_order ON budget_waiters (priority DESC, id);
CREATE INDEX budget_waiters_heartbeat ON budget_waiters (heartbeat);

-- Holds that end at a time: 'pause' (a Retry-After, every call) and
-- 'spent:turns' / 'spent:intakes' (the service reported the quota spent).
CREATE TABLE budget_holds (
    name     text        PRIMARY KEY,
    until_at timestamptz NOT NULL
);
