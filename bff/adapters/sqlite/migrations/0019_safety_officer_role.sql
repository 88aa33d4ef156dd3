-- 0019: the clinical safety officer's role (bff.RoleSafetyOfficer), as the
-- PostgreSQL store's 0017: clinician_roles' CHECK takes safety_officer.
--
-- SQLite cannot change a CHECK in place: the table is rebuilt with the
-- wider one and every row copied, inside this migration's transaction.
-- Nobody is given the new role: whoever runs the app grants it
-- (intake-web clinician grant USERNAME safety_officer).

CREATE TABLE clinician_roles_0019 (
	username TEXT NOT NULL REFERENCES clinicians (username) ON DELETE CASCADE,
	role     TEXT NOT NULL CHECK (role IN ('reviewer', 'scenario_runner', 'administrator', 'safety_officer')),
	PRIMARY KEY (username, role)
) STRICT, WITHOUT ROWID;

INSERT INTO clinician_roles_0019 (username, role) SELECT username, role FROM clinician_roles;

DROP TABLE clinician_roles;

ALTER TABLE clinician_roles_0019 RENAME TO clinician_roles;
