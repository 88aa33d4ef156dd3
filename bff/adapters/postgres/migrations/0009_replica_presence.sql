-- Replicas that hold a presence (bff.ReplicaPresence): a session-level
-- advisory lock per replica, on a connection of its own. A row says the
-- replica took part; the lock, absent from pg_locks, says it is gone.
CREATE TABLE replica_presence (
    name  text PRIMARY KEY,
    since timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX turns_pending_owner ON turns (lease_owner) WHERE status IN ('queued', 'streaming');
