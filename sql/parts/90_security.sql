-- worklist: privileges, row-level security, pg_dump registration
--
-- Applied to every table and sequence of the schema, so one added later
-- cannot be forgotten.  A test checks the result against the catalog.

DO $security$
DECLARE
	rel pg_catalog.regclass;
BEGIN
	FOR rel IN
		SELECT c.oid::pg_catalog.regclass
		  FROM pg_catalog.pg_class c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
		   AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %s FROM PUBLIC', rel);
		EXECUTE pg_catalog.format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', rel);
		EXECUTE pg_catalog.format(
			'CREATE POLICY tenant_isolation ON %s FOR SELECT'
			' USING (tenant OPERATOR(pg_catalog.=) worklist.visible_tenant())', rel);
		PERFORM pg_catalog.pg_extension_config_dump(rel, '');
	END LOOP;
	FOR rel IN
		SELECT c.oid::pg_catalog.regclass
		  FROM pg_catalog.pg_class c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
		   AND c.relkind OPERATOR(pg_catalog.=) 'S'
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON SEQUENCE %s FROM PUBLIC', rel);
		PERFORM pg_catalog.pg_extension_config_dump(rel, '');
	END LOOP;
END
$security$;

-- Operator verbs: the owner grants EXECUTE on these to whom it chooses.
REVOKE EXECUTE ON FUNCTION worklist.grant_tenant(text, regrole) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.revoke_tenant(text, regrole) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.erase_tenant() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.binding_changed() FROM PUBLIC;

-- Everybody may reach the verbs; nothing else in the schema grants PUBLIC
-- anything.
GRANT USAGE ON SCHEMA worklist TO PUBLIC;
