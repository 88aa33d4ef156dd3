-- 0013: roles of clinician accounts (bff.Role), as the SQLite store's 0015:
-- a row per role an account holds.
--
-- Every account that exists when this runs gets every role, so an upgrade
-- takes nothing away from anyone: narrow them afterwards with
-- intake-web clinician revoke.

CREATE TABLE clinician_roles (
	username text COLLATE "C" NOT NULL REFERENCES clinicians (username) ON DELETE CASCADE,
	role     text NOT NULL CHECK (role IN ('reviewer', 'scenario_runner', 'administrator')),
	PRIMARY KEY (username, role)
);

INSERT INTO clinician_roles (username, role)
	SELECT c.username, r.role FROM clinicians c
	CROSS JOIN (VALUES ('reviewer'), ('scenario_runner'), ('administrator')) AS r (role);
