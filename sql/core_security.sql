-- Privileges, row-level security, pg_dump registration, search_path.
\set SHOW_CONTEXT never

-- Every table: tenant-keyed, RLS on, a policy, no PUBLIC privilege, and
-- registered for pg_dump.
SELECT c.relname,
       c.relrowsecurity AS rls,
       EXISTS (SELECT FROM pg_attribute a
                WHERE a.attrelid = c.oid AND a.attname = 'tenant' AND NOT a.attisdropped) AS tenant_keyed,
       (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid) AS policies,
       c.relacl IS NULL OR NOT EXISTS (SELECT FROM aclexplode(c.relacl) x WHERE x.grantee = 0) AS no_public,
       c.oid = ANY (e.extconfig) AS dumped
  FROM pg_class c, pg_extension e
 WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind IN ('r', 'p')
   AND e.extname = 'worklist'
 ORDER BY 1;

-- Every sequence: no PUBLIC privilege, registered for pg_dump.
SELECT c.relname,
       c.relacl IS NULL OR NOT EXISTS (SELECT FROM aclexplode(c.relacl) x WHERE x.grantee = 0) AS no_public,
       c.oid = ANY (e.extconfig) AS dumped
  FROM pg_class c, pg_extension e
 WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind = 'S'
   AND e.extname = 'worklist'
 ORDER BY 1;

-- Functions PUBLIC may not execute.
SELECT p.oid::regprocedure AS not_for_public
  FROM pg_proc p
 WHERE p.pronamespace = 'worklist'::regnamespace
   AND NOT has_function_privilege('public', p.oid, 'EXECUTE')
 ORDER BY p.oid::regprocedure::text;

-- No SECURITY DEFINER function without a pinned search_path.
SELECT p.oid::regprocedure AS unpinned_definer
  FROM pg_proc p
 WHERE p.pronamespace = 'worklist'::regnamespace AND p.prosecdef
   AND NOT EXISTS (SELECT FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%');

-- Every function and type of the schema belongs to the extension.
SELECT count(*) AS strays
  FROM pg_proc p
 WHERE p.pronamespace = 'worklist'::regnamespace
   AND NOT EXISTS (SELECT FROM pg_depend d
                    WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e');

-- A role bound to the tenant (as service) can reach the verbs but cannot
-- write a table, even after being granted the privilege: the policies
-- admit reads only.
CREATE ROLE wl_mallory;
SELECT worklist.grant_tenant('default', 'wl_mallory', 'service');
GRANT CREATE ON SCHEMA public TO wl_mallory;
SET ROLE wl_mallory;
SELECT (worklist.sweep()).denied;
INSERT INTO worklist.task (tenant, id, case_id, roles) VALUES ('default', 'x', 'c', '{r}');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT INSERT, UPDATE, DELETE, SELECT ON worklist.task TO wl_mallory;
INSERT INTO worklist.task (tenant, id, case_id, roles) VALUES ('default', 'x', 'c', '{r}');
SET ROLE wl_mallory;
INSERT INTO worklist.task (tenant, id, case_id, roles) VALUES ('default', 'y', 'c', '{r}');
\echo :LAST_ERROR_SQLSTATE
UPDATE worklist.task SET priority = 9;
DELETE FROM worklist.task;
RESET ROLE;
SELECT id, priority FROM worklist.task ORDER BY id;
-- ... nor with every privilege: no emptying the table, and no trigger of
-- its own (the verbs run as the owner, so such a trigger would too).
GRANT ALL ON worklist.task TO wl_mallory;
CREATE FUNCTION public.wl_mallory_trigger() RETURNS trigger LANGUAGE plpgsql
	AS $$BEGIN RETURN NEW; END$$;
SET ROLE wl_mallory;
TRUNCATE worklist.task;
\echo :LAST_ERROR_SQLSTATE
CREATE TRIGGER mine BEFORE INSERT ON worklist.task
	FOR EACH ROW EXECUTE FUNCTION public.wl_mallory_trigger();
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE public.wl_mallory_probe (tenant text, id text,
	FOREIGN KEY (tenant, id) REFERENCES worklist.task (tenant, id));
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE public.wl_mallory_probe (tenant text, id text);
ALTER TABLE public.wl_mallory_probe
	ADD FOREIGN KEY (tenant, id) REFERENCES worklist.task (tenant, id);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP TABLE public.wl_mallory_probe;
SELECT count(*) AS mallory_triggers FROM pg_trigger WHERE tgname = 'mine';
SELECT id FROM worklist.task ORDER BY id;
DROP FUNCTION public.wl_mallory_trigger();
REVOKE ALL ON worklist.task FROM wl_mallory;

-- search_path hijack: an "=" for text that is always true, and lookalike
-- functions, first on the path, change nothing.
CREATE SCHEMA evil;
CREATE FUNCTION evil.always(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.always);
CREATE FUNCTION evil.visible_tenant() RETURNS text LANGUAGE sql AS $$SELECT 'default'$$;
CREATE FUNCTION evil.now() RETURNS timestamptz LANGUAGE sql AS $$SELECT 'epoch'::timestamptz$$;
GRANT USAGE ON SCHEMA evil TO PUBLIC;
INSERT INTO worklist.task (tenant, id, case_id, roles) VALUES ('other', 'x', 'c', '{r}');
SET search_path = evil, pg_catalog, public;
SELECT 'a'::text = 'b'::text AS hijacked_operator_works;
SET worklist.tenant = 'default';
SELECT worklist.erase_tenant() AS erased_default_only;
RESET search_path;
SELECT tenant, id FROM worklist.task ORDER BY 1, 2;
SET worklist.tenant = 'other';
SELECT worklist.erase_tenant();
RESET worklist.tenant;
DROP SCHEMA evil CASCADE;
REVOKE CREATE ON SCHEMA public FROM wl_mallory;
SELECT worklist.revoke_tenant('default', 'wl_mallory');
DROP ROLE wl_mallory;
