-- worklist: upgrade from 0.3 to 0.4
--
-- Assembled by the Makefile (sql/upgrade.awk) from two kinds of pieces,
-- taken in the order of their file names, a piece of sql/upgrade/ before
-- the part of sql/parts/ of the same name:
--   sql/upgrade/*.sql   what changes objects that 0.3 already has (ALTER,
--                       DROP, moving rows), written only here;
--   sql/parts/*.sql     the blocks marked "-- @since 0.4" ... "-- @end"
--                       (objects new in 0.4, written only there, where a
--                       fresh install takes them from too) and the blocks
--                       marked "-- @always" ... "-- @end" (what every
--                       update applies again, such as the privileges).

\echo Use "ALTER EXTENSION worklist UPDATE TO '0.4'" to load this file. \quit

-- What this update drops and creates again (a view or a function whose
-- signature changes).  Before anything changes: refuse, naming each one
-- and its owner, when an object of another role depends on one of them
-- (dropping it would fail half-way, or take that object along), and keep
-- the privileges an operator changed on them, so that 99_end.sql gives
-- them back to the new objects (a REVOKE EXECUTE stays in force).
DO $replaced$
DECLARE
	replaced CONSTANT text[] := ARRAY[
		'function worklist.claim_next(text, text[])',
		'function worklist.write_checkpoint(text, text, text, text, jsonb, bigint, text, timestamptz, timestamptz, text, timestamptz, timestamptz, timestamptz)',
		'function worklist.list_durable_runs(text, text, text, worklist.park_state[], boolean, integer, text, timestamptz)'
	]::text[];
	item text;
	kind text;
	ident text;
	obj pg_catalog.oid;
	cls pg_catalog.oid;
	acl pg_catalog.aclitem[];
	initial pg_catalog.aclitem[];
	saved pg_catalog.jsonb := '{}';
	blockers text[] := '{}';
BEGIN
	FOREACH item IN ARRAY replaced LOOP
		kind := pg_catalog.split_part(item, ' ', 1);
		ident := pg_catalog.substr(item, pg_catalog.length(kind) OPERATOR(pg_catalog.+) 2);
		IF kind OPERATOR(pg_catalog.=) 'function' THEN
			obj := pg_catalog.to_regprocedure(ident);
			cls := 'pg_catalog.pg_proc'::pg_catalog.regclass;
			SELECT p.proacl INTO acl FROM pg_catalog.pg_proc p WHERE p.oid OPERATOR(pg_catalog.=) obj;
			-- the new function is found by name: keep it free of arguments
			ident := pg_catalog.split_part(ident, '(', 1);
		ELSE
			obj := pg_catalog.to_regclass(ident);
			cls := 'pg_catalog.pg_class'::pg_catalog.regclass;
			SELECT c.relacl INTO acl FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) obj;
		END IF;
		IF obj IS NULL THEN
			RAISE EXCEPTION 'extension "worklist" lacks % %', kind, ident
				USING ERRCODE = 'object_not_in_prerequisite_state';
		END IF;
		SELECT i.initprivs INTO initial FROM pg_catalog.pg_init_privs i
		 WHERE i.classoid OPERATOR(pg_catalog.=) cls AND i.objoid OPERATOR(pg_catalog.=) obj
		   AND i.objsubid OPERATOR(pg_catalog.=) 0;
		IF acl IS DISTINCT FROM initial THEN
			saved := saved OPERATOR(pg_catalog.||)
				pg_catalog.jsonb_build_object(kind OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) ident,
											  acl::text);
		END IF;
		blockers := blockers OPERATOR(pg_catalog.||) ARRAY(
			SELECT pg_catalog.format('%s (owner %s) depends on %s %s', o.what,
									 pg_catalog.quote_ident(COALESCE(r.rolname, '?')), kind, ident)
			  FROM pg_catalog.pg_depend d
			  CROSS JOIN LATERAL (
				SELECT CASE WHEN d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
				            THEN (SELECT 'view ' OPERATOR(pg_catalog.||) w.ev_class::pg_catalog.regclass::text
				                    FROM pg_catalog.pg_rewrite w WHERE w.oid OPERATOR(pg_catalog.=) d.objid)
				            ELSE pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) END AS what,
				       CASE d.classid
				            WHEN 'pg_catalog.pg_rewrite'::pg_catalog.regclass THEN
				                (SELECT w.ev_class FROM pg_catalog.pg_rewrite w WHERE w.oid OPERATOR(pg_catalog.=) d.objid)
				            WHEN 'pg_catalog.pg_trigger'::pg_catalog.regclass THEN
				                (SELECT t.tgrelid FROM pg_catalog.pg_trigger t WHERE t.oid OPERATOR(pg_catalog.=) d.objid)
				            WHEN 'pg_catalog.pg_policy'::pg_catalog.regclass THEN
				                (SELECT p.polrelid FROM pg_catalog.pg_policy p WHERE p.oid OPERATOR(pg_catalog.=) d.objid)
				            WHEN 'pg_catalog.pg_attrdef'::pg_catalog.regclass THEN
				                (SELECT a.adrelid FROM pg_catalog.pg_attrdef a WHERE a.oid OPERATOR(pg_catalog.=) d.objid)
				            WHEN 'pg_catalog.pg_constraint'::pg_catalog.regclass THEN
				                (SELECT k.conrelid FROM pg_catalog.pg_constraint k WHERE k.oid OPERATOR(pg_catalog.=) d.objid)
				            WHEN 'pg_catalog.pg_class'::pg_catalog.regclass THEN d.objid
				       END AS rel) o
			  LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) CASE
				  WHEN o.rel IS NOT NULL THEN
				      (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) o.rel)
				  WHEN d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass THEN
				      (SELECT p.proowner FROM pg_catalog.pg_proc p WHERE p.oid OPERATOR(pg_catalog.=) d.objid)
				  WHEN d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_type'::pg_catalog.regclass THEN
				      (SELECT t.typowner FROM pg_catalog.pg_type t WHERE t.oid OPERATOR(pg_catalog.=) d.objid)
				  END
			 WHERE d.refclassid OPERATOR(pg_catalog.=) cls AND d.refobjid OPERATOR(pg_catalog.=) obj
			   AND d.deptype OPERATOR(pg_catalog.=) ANY ('{n,a}'::pg_catalog."char"[])
			   -- the extension's own objects are replaced along with it
			   AND NOT EXISTS (
				SELECT FROM pg_catalog.pg_depend e
				 WHERE e.deptype OPERATOR(pg_catalog.=) 'e'
				   AND e.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
				   AND ((e.classid OPERATOR(pg_catalog.=) d.classid AND e.objid OPERATOR(pg_catalog.=) d.objid)
				        OR (e.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
				            AND e.objid OPERATOR(pg_catalog.=) o.rel)))
			 ORDER BY 1);
	END LOOP;
	IF pg_catalog.cardinality(blockers) OPERATOR(pg_catalog.>) 0 THEN
		RAISE EXCEPTION 'cannot update extension "worklist": objects of other roles depend on what the update replaces'
			USING ERRCODE = 'dependent_objects_still_exist',
				  DETAIL = pg_catalog.array_to_string(blockers, E';\n'),
				  HINT = 'Drop these objects (or change them so that they do not use the extension''s objects), update the extension, then create them again.';
	END IF;
	PERFORM pg_catalog.set_config('worklist_upgrade.acl', saved::text, true);
END
$replaced$;
