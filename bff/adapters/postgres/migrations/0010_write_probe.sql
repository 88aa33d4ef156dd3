-- One row the app rewrites to learn whether the database can be written (a
-- full disk, a server refusing writes): its readiness says so.
CREATE TABLE write_probe (
    id integer PRIMARY KEY,
    at timestamptz NOT NULL
);
