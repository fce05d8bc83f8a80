-- Tables added by this upgrade get what every table of the extension has
-- (sql/parts/90_security.sql): no PUBLIC privilege, row-level security
-- with the tenant policy, registration with pg_dump, the TRUNCATE guard.
DO $security$
DECLARE
	rel pg_catalog.regclass;
BEGIN
	FOR rel IN
		SELECT c.oid::pg_catalog.regclass
		  FROM pg_catalog.pg_class c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
		   AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
		   AND NOT EXISTS (SELECT FROM pg_catalog.pg_policy p
		                    WHERE p.polrelid OPERATOR(pg_catalog.=) c.oid
		                      AND p.polname OPERATOR(pg_catalog.=) 'tenant_isolation')
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %s FROM PUBLIC', rel);
		EXECUTE pg_catalog.format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', rel);
		EXECUTE pg_catalog.format(
			'CREATE POLICY tenant_isolation ON %s FOR SELECT'
			' USING (tenant OPERATOR(pg_catalog.=) worklist.visible_tenant())', rel);
		PERFORM pg_catalog.pg_extension_config_dump(rel, '');
		EXECUTE pg_catalog.format(
			'CREATE TRIGGER guard_truncate BEFORE TRUNCATE ON %s'
			' FOR EACH STATEMENT EXECUTE FUNCTION worklist.guard_truncate()', rel);
	END LOOP;
END
$security$;
