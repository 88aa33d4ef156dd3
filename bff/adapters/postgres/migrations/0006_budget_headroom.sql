-- A waiting call granted only while the window keeps this many slots free
-- after it (Call.Headroom, a scenario run's calls): while the window is too
-- full for it, the waiters behind it do not count it ahead of them.
ALTER TABLE budget_waiters ADD COLUMN headroom integer NOT NULL DEFAULT 0;
