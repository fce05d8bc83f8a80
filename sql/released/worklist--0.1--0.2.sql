-- worklist 0.1 -> 0.2

\echo Use "ALTER EXTENSION worklist UPDATE TO '0.2'" to load this file. \quit

-- The DDL guard also refuses foreign keys into the extension's tables to
-- anybody but the owner and superusers (a role granted REFERENCES could
-- otherwise probe which ids exist in any tenant and block erase_tenant).
CREATE OR REPLACE FUNCTION worklist.guard_ddl() RETURNS event_trigger
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $guard$
DECLARE
	cmd record;
	nsp pg_catalog.oid := 'worklist'::pg_catalog.regnamespace;
BEGIN
	IF EXISTS (SELECT FROM pg_catalog.pg_roles r
	            WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER AND r.rolsuper)
	   OR pg_catalog.pg_has_role(CURRENT_USER,
	          (SELECT n.nspowner FROM pg_catalog.pg_namespace n
	            WHERE n.oid OPERATOR(pg_catalog.=) nsp), 'USAGE')
	THEN
		RETURN;
	END IF;
	FOR cmd IN SELECT * FROM pg_catalog.pg_event_trigger_ddl_commands() LOOP
		IF cmd.object_type OPERATOR(pg_catalog.=) 'trigger'
		   AND EXISTS (SELECT FROM pg_catalog.pg_trigger t
		                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
		                WHERE t.oid OPERATOR(pg_catalog.=) cmd.objid
		                  AND c.relnamespace OPERATOR(pg_catalog.=) nsp)
		THEN
			RAISE EXCEPTION 'permission denied to create trigger on a table of extension "worklist"'
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = 'The verbs run as the owner of the extension; only that owner may add triggers to its tables.';
		END IF;
		IF cmd.object_type OPERATOR(pg_catalog.=) 'table'
		   AND EXISTS (SELECT FROM pg_catalog.pg_constraint k
		                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) k.confrelid
		                WHERE k.conrelid OPERATOR(pg_catalog.=) cmd.objid
		                  AND k.contype OPERATOR(pg_catalog.=) 'f'
		                  AND c.relnamespace OPERATOR(pg_catalog.=) nsp)
		THEN
			RAISE EXCEPTION 'permission denied to reference a table of extension "worklist"'
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = 'A foreign key into its tables would reveal which ids exist in any tenant and block erase_tenant.';
		END IF;
	END LOOP;
END
$guard$;
DROP EVENT TRIGGER worklist_guard_triggers;
CREATE EVENT TRIGGER worklist_guard_ddl ON ddl_command_end
	WHEN TAG IN ('CREATE TRIGGER', 'CREATE TABLE', 'ALTER TABLE')
	EXECUTE FUNCTION worklist.guard_ddl();

-- Analyze the task table after as many changes as it has rows: under a busy
-- queue the default rate analyzed it every few seconds, and ANALYZE's
-- snapshot keeps claim_next from marking the dead entries claims leave at
-- the head of task_claimable.
ALTER TABLE worklist.task SET (autovacuum_analyze_scale_factor = 1);
