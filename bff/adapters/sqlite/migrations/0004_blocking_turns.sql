-- A turn sent without JavaScript runs as a blocking call with an
-- Idempotency-Key; a restart settles it by sending it again with the key.
ALTER TABLE turns ADD COLUMN blocking INTEGER NOT NULL DEFAULT 0 CHECK (blocking IN (0, 1));
