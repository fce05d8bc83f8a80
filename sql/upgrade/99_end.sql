
-- Give the objects this update created again the privileges an operator
-- had set on the ones they replace (saved by 00_begin.sql).  Written
-- straight into the catalog, as what an operator did, not as the
-- extension's initial privileges: pg_dump keeps telling the two apart.
DO $restore$
DECLARE
	entry record;
	kind text;
	ident text;
BEGIN
	FOR entry IN
		SELECT s.key, s.value
		  FROM pg_catalog.jsonb_each_text(
		           pg_catalog.current_setting('worklist_upgrade.acl')::pg_catalog.jsonb) s
	LOOP
		kind := pg_catalog.split_part(entry.key, ' ', 1);
		ident := pg_catalog.substr(entry.key, pg_catalog.length(kind) OPERATOR(pg_catalog.+) 2);
		IF kind OPERATOR(pg_catalog.=) 'function' THEN
			UPDATE pg_catalog.pg_proc p SET proacl = entry.value::pg_catalog.aclitem[]
			 WHERE p.pronamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
			   AND p.proname OPERATOR(pg_catalog.=) pg_catalog.split_part(ident, '.', 2);
		ELSE
			UPDATE pg_catalog.pg_class c SET relacl = entry.value::pg_catalog.aclitem[]
			 WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(ident);
		END IF;
	END LOOP;
END
$restore$;
