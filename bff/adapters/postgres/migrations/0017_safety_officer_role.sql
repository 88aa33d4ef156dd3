-- 0017: the clinical safety officer's role (bff.RoleSafetyOfficer), as the
-- SQLite store's 0019: clinician_roles' CHECK takes safety_officer. Every
-- row stays; nobody is given the new role: whoever runs the app grants it
-- (intake-web clinician grant USERNAME safety_officer).

ALTER TABLE clinician_roles DROP CONSTRAINT clinician_roles_role_check;
ALTER TABLE clinician_roles ADD CONSTRAINT clinician_roles_role_check
	CHECK (role IN ('reviewer', 'scenario_runner', 'administrator', 'safety_officer'));
