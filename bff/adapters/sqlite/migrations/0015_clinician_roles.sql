-- 0015: roles of clinician accounts (bff.Role): what each may do in the
-- clinician area. An account holds any number of them; a row per role.
--
-- Every account that exists when this runs gets every role, so an upgrade
-- takes nothing away from anyone: narrow them afterwards with
-- intake-web clinician revoke.

CREATE TABLE clinician_roles (
	username TEXT NOT NULL REFERENCES clinicians (username) ON DELETE CASCADE,
	role     TEXT NOT NULL CHECK (role IN ('reviewer', 'scenario_runner', 'administrator')),
	PRIMARY KEY (username, role)
) STRICT, WITHOUT ROWID;

INSERT INTO clinician_roles (username, role)
	SELECT c.username, r.role FROM clinicians c
	CROSS JOIN (SELECT 'reviewer' AS role UNION ALL SELECT 'scenario_runner' UNION ALL SELECT 'administrator') r;
