-- A role that is not the owner can do nothing outside the verbs: every
-- table, sequence and other object of the extension is listed from the
-- catalog and attacked with every statement that could read or change it,
-- first with no privilege (as documented), then with every
-- table privilege granted (as a careless owner might).  The data is the
-- same afterwards, and the verbs still work for that role.
BEGIN;
-- the attacker's GRANTs only warn that nothing was granted
SET LOCAL client_min_messages = error;
\ir security_calls.psql
SELECT plan(15);

CREATE ROLE sec_np;
CREATE ROLE sec_np_other;
SELECT worklist.grant_tenant('sec_np', 'sec_np', 'service');
SELECT worklist.grant_tenant('sec_np_other', 'sec_np_other', 'service');
SELECT pg_temp.sec_fixture('sec_np');
SELECT pg_temp.sec_fixture('sec_np_other');
RESET worklist.tenant;

-- Every row of the extension's tables, as the owner sees them.
CREATE FUNCTION pg_temp.sec_all_rows() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	rel regclass;
	one text;
	all_rows text := '';
BEGIN
	FOR rel IN SELECT c.oid FROM pg_class c
	            WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind = 'r'
	            ORDER BY c.relname LOOP
		EXECUTE format('SELECT string_agg(t::text, E''\n'' ORDER BY t::text) FROM %s t', rel) INTO one;
		all_rows := all_rows || rel::text || E':\n' || coalesce(one, '') || E'\n';
	END LOOP;
	RETURN all_rows || (SELECT last_value::text FROM worklist.fence_seq);
END
$$;
CREATE TEMP TABLE sec_snapshot AS SELECT pg_temp.sec_all_rows() AS before;

-- One row of each table as it stands in the tenant (to insert again).
DO $rows$
DECLARE
	rel text;
BEGIN
	FOR rel IN SELECT c.relname FROM pg_class c
	            WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind = 'r' LOOP
		EXECUTE format('CREATE TEMP TABLE %I AS SELECT * FROM worklist.%I WHERE tenant = ''sec_np'' LIMIT 1',
		               'sec_row_' || rel, rel);
		-- a table the fixture leaves empty still gets a row to try
		-- (the tenant's, every other column NULL)
		EXECUTE format('INSERT INTO %1$I (tenant) SELECT ''sec_np'' WHERE NOT EXISTS (SELECT FROM %1$I)',
		               'sec_row_' || rel);
		EXECUTE format('GRANT SELECT ON %I TO sec_np', 'sec_row_' || rel);
	END LOOP;
END
$rows$;

-- Statements against each table ($t), each sequence ($s) and the
-- extension's other objects.
CREATE TEMP TABLE sec_attack (kind text, stmt text);
INSERT INTO sec_attack VALUES
	('table', 'SELECT pg_catalog.count(*)::pg_catalog.text FROM $t'),
	('table', 'INSERT INTO $t SELECT * FROM pg_temp.$row'),
	('table', 'WITH x AS (UPDATE $t SET tenant = tenant RETURNING 1) SELECT pg_catalog.count(*)::pg_catalog.text FROM x'),
	('table', 'WITH x AS (DELETE FROM $t RETURNING 1) SELECT pg_catalog.count(*)::pg_catalog.text FROM x'),
	('table', 'TRUNCATE $t'),
	('table', 'LOCK TABLE $t IN ACCESS EXCLUSIVE MODE'),
	('table', 'SELECT pg_catalog.count(*)::pg_catalog.text FROM (SELECT FROM $t FOR UPDATE) x'),
	('table', 'ALTER TABLE $t DISABLE ROW LEVEL SECURITY'),
	('table', 'ALTER TABLE $t NO FORCE ROW LEVEL SECURITY'),
	('table', 'ALTER TABLE $t DISABLE TRIGGER ALL'),
	('table', 'ALTER TABLE $t ADD COLUMN sec_extra int'),
	('table', 'ALTER TABLE $t OWNER TO sec_np'),
	('table', 'CREATE POLICY sec_open ON $t USING (true)'),
	('table', 'DROP POLICY tenant_isolation ON $t'),
	('table', 'CREATE INDEX ON $t (tenant)'),
	('table', 'CREATE TRIGGER sec_mine BEFORE INSERT ON $t FOR EACH ROW EXECUTE FUNCTION pg_temp.sec_trigger()'),
	('table', 'CREATE RULE sec_rule AS ON INSERT TO $t DO INSTEAD NOTHING'),
	('table', 'REINDEX TABLE $t'),
	('table', 'CLUSTER $t USING ' || '$pkey'),
	('table', 'DROP TABLE $t'),
	('table', 'GRANT SELECT ON $t TO PUBLIC'),
	('sequence', 'SELECT pg_catalog.nextval(''$s'')::pg_catalog.text'),
	('sequence', 'SELECT pg_catalog.setval(''$s'', 1)::pg_catalog.text'),
	('sequence', 'SELECT last_value::pg_catalog.text FROM $s'),
	('sequence', 'ALTER SEQUENCE $s RESTART'),
	('sequence', 'DROP SEQUENCE $s'),
	('other', 'CREATE TABLE worklist.sec_mine (tenant text)'),
	('other', 'CREATE FUNCTION worklist.sec_mine() RETURNS int LANGUAGE sql AS ''SELECT 1'''),
	('other', 'CREATE OR REPLACE FUNCTION worklist.visible_tenant() RETURNS text LANGUAGE sql AS ''SELECT ''''sec_np_other'''''''),
	('other', 'ALTER FUNCTION worklist.claim(text, text, text[]) SECURITY DEFINER'),
	('other', 'ALTER FUNCTION worklist.visible_tenant() OWNER TO sec_np'),
	('other', 'ALTER TYPE worklist.task_state ADD VALUE ''sec_mine'''),
	('other', 'ALTER SCHEMA worklist RENAME TO sec_mine'),
	('other', 'DROP SCHEMA worklist CASCADE'),
	('other', 'ALTER EXTENSION worklist UPDATE'),
	('other', 'ALTER EXTENSION worklist ADD TABLE pg_temp.sec_row_task'),
	('other', 'DROP EXTENSION worklist'),
	('other', 'ALTER EVENT TRIGGER worklist_guard_ddl DISABLE'),
	('other', 'DROP VIEW worklist.sweeper_status'),
	('other', 'SELECT worklist.guard_ddl()');

CREATE FUNCTION pg_temp.sec_trigger() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;

CREATE FUNCTION pg_temp.sec_attacks() RETURNS TABLE (target text, stmt text, code text, result text)
LANGUAGE sql AS $$
	SELECT c.oid::regclass::text, s, t.code, t.result
	  FROM pg_class c
	  JOIN sec_attack a ON a.kind = CASE c.relkind WHEN 'r' THEN 'table' WHEN 'S' THEN 'sequence' END
	  CROSS JOIN LATERAL replace(replace(replace(replace(a.stmt, '$t', c.oid::regclass::text),
	                                             '$s', c.oid::regclass::text),
	                                     '$row', quote_ident('sec_row_' || c.relname)),
	                             '$pkey', quote_ident(c.relname || '_pkey')) s
	  CROSS JOIN LATERAL pg_temp.sec_try(s, NULL, 'sec_np', 'sec_np') t
	 WHERE c.relnamespace = 'worklist'::regnamespace
	UNION ALL
	SELECT 'worklist', a.stmt, t.code, t.result
	  FROM sec_attack a, pg_temp.sec_try(a.stmt, NULL, 'sec_np', 'sec_np') t
	 WHERE a.kind = 'other'
$$;

-- With no privilege at all.
CREATE TEMP TABLE sec_bare AS SELECT * FROM pg_temp.sec_attacks();
SELECT cmp_ok((SELECT count(DISTINCT target) FROM sec_bare)::int, '>=', 9,
	'every table and sequence of the extension was attacked');
SELECT is_empty($$SELECT target, stmt, code, result FROM sec_bare WHERE code <> '42501'$$,
	'with no privilege, every statement is refused with 42501');
SELECT is(pg_temp.sec_all_rows(), (SELECT before FROM sec_snapshot), 'and nothing changed');

-- With every table privilege.  (COPY FROM is tested in
-- sql/hostile_copy.sql: it needs a client.)
GRANT ALL ON ALL TABLES IN SCHEMA worklist TO sec_np;
CREATE TEMP TABLE sec_granted AS SELECT * FROM pg_temp.sec_attacks();
SELECT is_empty($$
	SELECT target, stmt, code, result FROM sec_granted
	 WHERE stmt LIKE 'INSERT%' AND code <> '42501'$$,
	'granted INSERT, a row still cannot be added: no policy admits it');
SELECT is_empty($$
	SELECT target, stmt, code, result FROM sec_granted
	 WHERE stmt ~ '^WITH x AS \((UPDATE|DELETE)' AND NOT (code = 'ok' AND result = '0' OR code = '42501')$$,
	'granted UPDATE and DELETE, no row is changed or removed');
SELECT is_empty($$
	SELECT target, stmt, code, result FROM sec_granted
	 WHERE stmt ~ '^(TRUNCATE|CREATE TRIGGER|ALTER|CREATE POLICY|DROP|CREATE INDEX|CREATE RULE|REINDEX|CLUSTER)'
	   AND code <> '42501'$$,
	'granted everything, a table still cannot be emptied, altered, dropped or given a trigger');
-- (the rows of the role's own tenant, as the owner counts them)
CREATE FUNCTION pg_temp.sec_own_rows(rel text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM %s WHERE tenant = ''sec_np''', rel::regclass) INTO n;
	RETURN n;
END
$$;
SELECT is_empty($$
	SELECT target, stmt, code, result FROM sec_granted
	 WHERE stmt LIKE 'SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.%'
	   AND code = 'ok' AND result::bigint <> pg_temp.sec_own_rows(target)$$,
	'granted SELECT, a table shows only the role''s own tenant');
SELECT is_empty($$
	SELECT target, stmt, code, result FROM sec_granted
	 WHERE target IN ('worklist', 'worklist.fence_seq') AND code <> '42501'$$,
	'the fence sequence, the schema, the extension, its types and functions stay out of reach');
SELECT is(pg_temp.sec_all_rows(), (SELECT before FROM sec_snapshot), 'and nothing changed');

-- Granted SELECT, a role reads its own tenant's rows and no other's.  (A
-- GRANT it attempted above changed nothing: PUBLIC still has no privilege,
-- checked at the end.)
SELECT is((SELECT result FROM pg_temp.sec_try('SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.task',
                                              NULL, 'sec_np', 'sec_np_other')), '0',
	'another tenant''s tasks are invisible to it');
SELECT is((SELECT result FROM pg_temp.sec_try('SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.task',
                                              NULL, 'sec_np', 'sec_np')), '2',
	'its own are visible');

-- The verbs still work for it, and are the only way its rows change.
SELECT is((SELECT code FROM pg_temp.sec_try($$SELECT (worklist.open_task('sec_new', 'c', '{r}')).state::pg_catalog.text$$,
                                            NULL, 'sec_np', 'sec_np')), 'ok',
	'the role can still open a task through the verb');
SELECT is((SELECT result FROM pg_temp.sec_try($$SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.queue('{r}')$$,
                                              NULL, 'sec_np', 'sec_np')), '1',
	'and list its queue');

-- Privileges as documented.
SELECT is_empty($$
	SELECT c.oid::regclass FROM pg_class c
	 WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind IN ('r', 'S')
	   AND EXISTS (SELECT FROM aclexplode(c.relacl) x WHERE x.grantee = 0)$$,
	'PUBLIC has no privilege on any table or sequence');
SELECT is(ARRAY(SELECT p.proname::text FROM pg_proc p
                 WHERE p.pronamespace = 'worklist'::regnamespace
                   AND NOT has_function_privilege('public', p.oid, 'EXECUTE')
                   AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
                 ORDER BY 1),
	ARRAY['erase_tenant', 'kept_statements', 'metrics_states', 'metrics_sweeper',
	      'metrics_tenants', 'set_state', 'start_sweeper', 'sweeper_status', 'take_over'],
	'PUBLIC may execute every verb but the operator verbs (and the sweeper status and the metrics, for pg_monitor)');

SELECT * FROM finish();
ROLLBACK;
