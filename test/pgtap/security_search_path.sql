-- search_path hijack changes nothing: a schema first on the path with an
-- "=" (and every other comparison) that always answers true, aggregates
-- and functions named like the ones the verbs use but answering wrong,
-- lookalike tables, and temporary tables and functions of the same names
-- in pg_temp.  Every function of the schema (the list comes from pg_proc)
-- answers the same under each hostile path as under a clean one; the
-- row-level-security policies and the trigger guard hold too; and any
-- SECURITY DEFINER function pins its search_path.
BEGIN;
\ir security_calls.psql
SELECT plan(11);

SELECT pg_temp.sec_fixture('sec_sp');
SELECT pg_temp.sec_fixture('sec_sp_other');
RESET worklist.tenant;

CREATE SCHEMA sec_evil;
GRANT USAGE ON SCHEMA sec_evil TO PUBLIC;

-- Comparisons that always hold, for every type the verbs compare.
DO $ops$
DECLARE
	t text;
	op text;
BEGIN
	FOREACH t IN ARRAY ARRAY['text', 'bigint', 'integer', 'timestamptz', 'boolean', 'oid',
	                         'interval', 'jsonb', 'text[]', 'anyenum'] LOOP
		EXECUTE format('CREATE FUNCTION sec_evil.always(%s, %s) RETURNS boolean'
		               ' LANGUAGE sql IMMUTABLE AS ''SELECT true''', t, t);
		FOREACH op IN ARRAY ARRAY['=', '<>', '<', '<=', '>', '>='] LOOP
			EXECUTE format('CREATE OPERATOR sec_evil.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = sec_evil.always)',
			               op, t, t);
		END LOOP;
	END LOOP;
	EXECUTE 'CREATE OPERATOR sec_evil.&& (LEFTARG = text[], RIGHTARG = text[], FUNCTION = sec_evil.always)';
	EXECUTE 'CREATE OPERATOR sec_evil.@> (LEFTARG = text[], RIGHTARG = text[], FUNCTION = sec_evil.always)';
END
$ops$;

-- Functions and aggregates named like the ones the verbs call, wrong.
CREATE FUNCTION sec_evil.now() RETURNS timestamptz LANGUAGE sql AS $$SELECT 'epoch'::timestamptz$$;
CREATE FUNCTION sec_evil.nextval(regclass) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint';
CREATE FUNCTION sec_evil.setval(regclass, bigint) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint';
CREATE FUNCTION sec_evil.current_setting(text) RETURNS text LANGUAGE sql AS $$SELECT 'sec_sp_other'$$;
CREATE FUNCTION sec_evil.visible_tenant() RETURNS text LANGUAGE sql AS $$SELECT 'sec_sp_other'$$;
CREATE FUNCTION sec_evil.jsonb_build_object(VARIADIC text[]) RETURNS jsonb LANGUAGE sql AS $$SELECT '{"evil": true}'::jsonb$$;
CREATE FUNCTION sec_evil.unnest(anyarray) RETURNS SETOF anyelement LANGUAGE sql AS 'SELECT NULL WHERE false';
CREATE FUNCTION sec_evil.enum_range(anyenum) RETURNS anyarray LANGUAGE sql AS 'SELECT ARRAY[$1]';
CREATE FUNCTION sec_evil.pg_has_role(name, oid, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE AGGREGATE sec_evil.max(bigint) (SFUNC = int8smaller, STYPE = bigint);
CREATE AGGREGATE sec_evil.min(text) (SFUNC = text_larger, STYPE = text);
CREATE AGGREGATE sec_evil.min(timestamptz) (SFUNC = timestamptz_larger, STYPE = timestamptz);
CREATE AGGREGATE sec_evil.count(*) (SFUNC = int8inc, STYPE = bigint, INITCOND = '1000');

-- Lookalike tables, in the schema and in pg_temp, holding rows of the
-- tenant the verbs will run in.
DO $tables$
DECLARE
	rel text;
BEGIN
	FOR rel IN SELECT c.relname FROM pg_class c
	            WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind = 'r' LOOP
		EXECUTE format('CREATE TABLE sec_evil.%I (LIKE worklist.%I INCLUDING DEFAULTS)', rel, rel);
		EXECUTE format('CREATE TEMP TABLE %I (LIKE worklist.%I INCLUDING DEFAULTS)', rel, rel);
	END LOOP;
END
$tables$;
INSERT INTO pg_temp.run_claim (tenant, project, session, run, holder, fence, expires_at)
VALUES ('sec_sp', 'sec_p', 'sec_s', 'sec_r', 'mallory', 9223372036854775807, 'infinity');
INSERT INTO sec_evil.task (tenant, id, case_id, roles, state)
VALUES ('sec_sp', 'sec_task', 'c', '{r}', 'completed');
INSERT INTO pg_temp.task (tenant, id, case_id, roles, state)
VALUES ('sec_sp', 'sec_free', 'c', '{r}', 'open');

-- Temporary functions of the same names (never found unqualified, but
-- they must not be reached either).
CREATE FUNCTION pg_temp.now() RETURNS timestamptz LANGUAGE sql AS $$SELECT 'epoch'::timestamptz$$;
CREATE FUNCTION pg_temp.nextval(regclass) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint';
CREATE FUNCTION pg_temp.visible_tenant() RETURNS text LANGUAGE sql AS $$SELECT 'sec_sp_other'$$;

-- The hijack is live for anybody who uses these paths.
SELECT is((pg_temp.sec_try($$SELECT ('a'::pg_catalog.text = 'b'::pg_catalog.text)::pg_catalog.text$$,
                          'sec_evil, pg_catalog', NULL, NULL)).result,
	'true', 'under the hostile path "a" = "b"');
SELECT is((pg_temp.sec_try($$SELECT (now() OPERATOR(pg_catalog.=) 'epoch'::pg_catalog.timestamptz
                                    AND max(x) OPERATOR(pg_catalog.=) 1 AND count(*) OPERATOR(pg_catalog.=) 1002)::pg_catalog.text
                             FROM (VALUES (1::pg_catalog.int8), (2::pg_catalog.int8)) v(x)$$,
                          'sec_evil, pg_catalog', NULL, NULL)).result,
	'true', 'and now(), max() and count() answer wrong');

-- Every function, with the hostile paths first (so statements a backend
-- prepares at its first call are prepared under them), then a clean path,
-- then the hostile paths again.  A claim mints a new fence each time, a
-- rotation makes a new channel each time, and the counters of stats() and
-- the sweeper's status move between calls, so those are masked.
CREATE FUNCTION pg_temp.sec_mask(verb text, result text) RETURNS text LANGUAGE sql AS $$
	SELECT CASE verb
	       WHEN 'claim_run' THEN regexp_replace(result, '^\((\w+),\d+,', '(\1,#,')
	       WHEN 'stats' THEN regexp_replace(result, '"counters": \{[^}]*\}', '"counters": #')
	       WHEN 'sweeper_status' THEN '#'
	       WHEN 'rotate_channel' THEN regexp_replace(result, '^worklist_[0-9a-f]{32}$', 'worklist_#')
	       ELSE result END
$$;
CREATE TEMP TABLE sec_paths (ord int, path text);
INSERT INTO sec_paths VALUES
	(1, 'sec_evil, pg_catalog, public'),
	(2, 'pg_temp, sec_evil, pg_catalog, public'),
	(3, 'clean'),
	(4, 'sec_evil, pg_catalog, public'),
	(5, 'pg_temp, sec_evil, pg_catalog, public');
CREATE TEMP TABLE sec_results AS
SELECT v.verb, p.ord, p.path, t.code, pg_temp.sec_mask(v.verb, t.result) AS result
  FROM sec_verbs v, sec_paths p,
       pg_temp.sec_try(pg_temp.sec_call(v.oid),
                       CASE WHEN p.path <> 'clean' THEN p.path END, NULL, 'sec_sp') t
 ORDER BY v.verb, p.ord;

SELECT cmp_ok((SELECT count(DISTINCT verb) FROM sec_results)::int, '>=', 35,
	'every function of the schema was called');
SELECT is((SELECT count(*) FROM sec_results WHERE path = 'clean' AND code = 'ok')::int,
          (SELECT count(*) FROM sec_verbs)::int,
	'every call succeeds under the clean path');
SELECT is_empty($$
	SELECT h.verb, h.path, h.code, h.result, c.code AS clean_code, c.result AS clean_result
	  FROM sec_results h JOIN sec_results c ON c.verb = h.verb AND c.path = 'clean'
	 WHERE h.path <> 'clean' AND (h.code, h.result) IS DISTINCT FROM (c.code, c.result)$$,
	'every function answers the same under each hostile path');

-- Row-level security under a hostile path: the policy still calls
-- worklist.visible_tenant() with pg_catalog's "=".
CREATE ROLE sec_sp_reader;
SELECT worklist.grant_tenant('sec_sp', 'sec_sp_reader', 'service');
GRANT SELECT ON ALL TABLES IN SCHEMA worklist TO sec_sp_reader;
SELECT is((pg_temp.sec_try('SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.task',
                          'sec_evil, pg_catalog, public', 'sec_sp_reader', 'sec_sp_nobody')).result,
	'0', 'a granted reader sees no row of another tenant under a hostile path');
SELECT is((pg_temp.sec_try($$SELECT pg_catalog.string_agg(DISTINCT t.tenant, ',') FROM worklist.task t$$,
                          'pg_temp, sec_evil, pg_catalog, public', 'sec_sp_reader', 'sec_sp')).result,
	'sec_sp', 'and only its own tenant''s rows in its own tenant');

-- The guard against foreign triggers holds under a hostile path.
CREATE FUNCTION public.sec_sp_trigger() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
GRANT ALL ON worklist.task TO sec_sp_reader;
SELECT is((pg_temp.sec_try($$CREATE TRIGGER sec_sp_mine BEFORE INSERT ON worklist.task
                              FOR EACH ROW EXECUTE FUNCTION public.sec_sp_trigger()$$,
                           'sec_evil, pg_catalog, public', 'sec_sp_reader', 'sec_sp')).code,
	'42501', 'a role granted TRIGGER still cannot put a trigger on a table under a hostile path');

-- SECURITY DEFINER functions, if any, pin their search_path; so does every
-- function of the extension that is not written in C.
SELECT is_empty($$
	SELECT p.oid::regprocedure FROM pg_proc p
	  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'worklist'
	 WHERE p.prosecdef
	   AND NOT EXISTS (SELECT FROM unnest(p.proconfig) c
	                    WHERE c IN ('search_path=pg_catalog, pg_temp', 'search_path=pg_catalog'))$$,
	'every SECURITY DEFINER function of the extension pins search_path to pg_catalog');
SELECT is_empty($$
	SELECT p.oid::regprocedure FROM pg_proc p
	  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
	  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'worklist'
	 WHERE p.prolang NOT IN (SELECT oid FROM pg_language WHERE lanname IN ('c', 'internal'))
	   AND p.prokind <> 'a'
	   AND NOT EXISTS (SELECT FROM unnest(p.proconfig) c
	                    WHERE c IN ('search_path=pg_catalog, pg_temp', 'search_path=pg_catalog'))$$,
	'every function of the extension not written in C pins search_path to pg_catalog');
SELECT is_empty($$
	SELECT p.oid::regprocedure FROM pg_proc p
	 WHERE p.pronamespace = 'worklist'::regnamespace
	   AND NOT EXISTS (SELECT FROM pg_depend d
	                    WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')$$,
	'no function in the schema that the extension did not create');

SELECT * FROM finish();
ROLLBACK;
