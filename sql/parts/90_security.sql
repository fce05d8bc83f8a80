-- worklist: privileges, row-level security, pg_dump registration
--
-- Applied to every table and sequence of the schema, so one added later
-- cannot be forgotten.  A test checks the result against the catalog.

-- Emptying a table is refused to everybody but the owner, whatever the
-- owner granted (a grant of ALL includes TRUNCATE).
CREATE FUNCTION worklist.guard_truncate() RETURNS trigger
	AS 'MODULE_PATHNAME', 'wl_guard_truncate'
	LANGUAGE C;

-- The verbs run as the owner, so a trigger put on one of the tables by
-- another role (one granted TRIGGER, say by a grant of ALL) would run with
-- the owner's rights whenever a verb fires it; and a foreign key into one
-- of the tables (REFERENCES is part of ALL too) would let its owner probe
-- which ids exist in any tenant and block erase_tenant.  Only the owner
-- and superusers may create either.
CREATE FUNCTION worklist.guard_ddl() RETURNS event_trigger
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
CREATE EVENT TRIGGER worklist_guard_ddl ON ddl_command_end
	WHEN TAG IN ('CREATE TRIGGER', 'CREATE TABLE', 'ALTER TABLE')
	EXECUTE FUNCTION worklist.guard_ddl();

-- @always
-- Every table is private to the extension, under row-level security and
-- dumped; every sequence private and dumped.  Applied to whatever does not
-- have it yet, so every update script runs it again for the tables it adds.
DO $security$
DECLARE
	rel pg_catalog.regclass;
	typ pg_catalog.regtype;
BEGIN
	FOR rel IN
		SELECT c.oid::pg_catalog.regclass
		  FROM pg_catalog.pg_class c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
		   AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
		   AND NOT c.relrowsecurity
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
	FOR rel IN
		SELECT c.oid::pg_catalog.regclass
		  FROM pg_catalog.pg_class c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
		   AND c.relkind OPERATOR(pg_catalog.=) 'S'
		   AND NOT EXISTS (SELECT FROM pg_catalog.pg_extension e
		                    WHERE e.extname OPERATOR(pg_catalog.=) 'worklist'
		                      AND c.oid OPERATOR(pg_catalog.=) ANY (e.extconfig))
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON SEQUENCE %s FROM PUBLIC', rel);
		PERFORM pg_catalog.pg_extension_config_dump(rel, '');
	END LOOP;
	-- Nobody but the owner may build objects of their own on the
	-- extension's types: a column, a composite or a function of another
	-- role that uses one would make an update that changes the type fail.
	-- The verbs, casts and values of these types work for everybody all the
	-- same.  (Arrays follow their element type.)
	FOR typ IN
		SELECT t.oid::pg_catalog.regtype
		  FROM pg_catalog.pg_type t
		 WHERE t.typnamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
		   AND NOT (t.typelem OPERATOR(pg_catalog.<>) 0
		            AND t.typsubscript OPERATOR(pg_catalog.=) 'pg_catalog.array_subscript_handler'::pg_catalog.regproc)
	LOOP
		EXECUTE pg_catalog.format('REVOKE USAGE ON TYPE %s FROM PUBLIC', typ);
	END LOOP;
END
$security$;
-- @end

-- Operator verbs: the owner grants EXECUTE on these to whom it chooses.
-- (grant_tenant and revoke_tenant are executable by PUBLIC: they refuse
-- every caller that is not admin of the tenant named.)
REVOKE EXECUTE ON FUNCTION worklist.erase_tenant() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.binding_changed() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.guard_truncate() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.guard_ddl() FROM PUBLIC;
-- @since 0.4
REVOKE EXECUTE ON FUNCTION worklist.update_task(text, int, timestamptz) FROM PUBLIC;
-- @end

-- Everybody may reach the verbs; nothing else in the schema grants PUBLIC
-- anything.
-- @always
-- In an update, granting what the schema already has rewrites its row,
-- which tells every backend that the version it cached for this database
-- is stale: the library serves the previous release's schema until the
-- update commits, and its own from then on (src/spi.c, wl_owner).
GRANT USAGE ON SCHEMA worklist TO PUBLIC;
-- @end
