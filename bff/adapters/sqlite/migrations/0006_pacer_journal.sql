-- 0006: the pacer's journal, so a restart keeps the rolling window of
-- upstream requests, today's quota counts, a Retry-After pause and a quota
-- the service reported spent (bff/adapters/pacer.Journal). Appended on each grant
-- (one small insert before the request goes), refund, pause and spent quota;
-- read back at start; rows older than two days are pruned.

CREATE TABLE pacer_journal (
	id    INTEGER NOT NULL PRIMARY KEY,
	at    TEXT    NOT NULL,
	event TEXT    NOT NULL CHECK (event IN ('grant', 'refund', 'pause', 'spent')),
	quota TEXT    NOT NULL CHECK (quota IN ('', 'turns', 'intakes')),
	until TEXT    -- pause and spent only
) STRICT;

CREATE INDEX pacer_journal_at ON pacer_journal (at);
CREATE INDEX pacer_journal_until ON pacer_journal (until) WHERE until IS NOT NULL;
