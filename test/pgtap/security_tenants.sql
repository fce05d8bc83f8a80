-- A role bound to tenant A cannot reach tenant B by setting
-- worklist.tenant: not through any function of the schema (the list comes
-- from pg_proc), not through the tables it was granted SELECT on, not
-- through the view; and B's rows are the same afterwards.  COPY is tested
-- in sql/hostile_copy.sql, where its output can be shown.
BEGIN;
\ir security_calls.psql
SELECT plan(19);

CREATE ROLE sec_a;
CREATE ROLE sec_b;
CREATE ROLE sec_a_member IN ROLE sec_a;
SELECT worklist.grant_tenant('sec_a', 'sec_a', 'admin');
SELECT worklist.grant_tenant('sec_b', 'sec_b', 'admin');
SELECT pg_temp.sec_fixture('sec_a');
SELECT pg_temp.sec_fixture('sec_b');
RESET worklist.tenant;

-- More than the documentation grants it: EXECUTE on every function but the
-- two that bind tenants (take_over, set_state and erase_tenant included)
-- and SELECT on every table, so that only the tenant binding stands
-- between sec_a and tenant B.
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA worklist TO sec_a;
REVOKE EXECUTE ON FUNCTION worklist.grant_tenant(text, regrole, worklist.binding_kind),
	worklist.revoke_tenant(text, regrole) FROM sec_a;
GRANT SELECT ON ALL TABLES IN SCHEMA worklist TO sec_a;
REVOKE SELECT ON worklist.sweeper_status FROM sec_a;

-- Every row of tenant B, as the owner sees it.
CREATE FUNCTION pg_temp.sec_rows(tenant text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	rel regclass;
	one text;
	all_rows text := '';
BEGIN
	FOR rel IN
		SELECT c.oid FROM pg_class c
		 WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind = 'r'
		   AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant')
		 ORDER BY c.relname
	LOOP
		EXECUTE format('SELECT string_agg(t::text, E''\n'' ORDER BY t::text) FROM %s t WHERE t.tenant = $1', rel)
		   INTO one USING tenant;
		all_rows := all_rows || rel::text || E':\n' || coalesce(one, '') || E'\n';
	END LOOP;
	RETURN all_rows;
END
$$;
CREATE TEMP TABLE sec_snapshot AS SELECT pg_temp.sec_rows('sec_b') AS before;

-- Every function, called by sec_a with worklist.tenant = 'sec_b'.
CREATE TEMP TABLE sec_attempt AS
SELECT v.verb, t.code, t.result
  FROM sec_verbs v, pg_temp.sec_try(pg_temp.sec_call(v.oid), NULL, 'sec_a', 'sec_b') t;

SELECT cmp_ok((SELECT count(*) FROM sec_attempt)::int, '>=', 35,
	'every function of the schema was called');
SELECT is_empty($$
	SELECT verb, code, result FROM sec_attempt
	 WHERE verb NOT IN ('visible_tenant', 'sweeper_status', 'administers', 'bindings') AND code <> '42501'$$,
	'every verb refuses a role bound to another tenant with 42501');
SELECT is_empty($$
	SELECT verb, result FROM sec_attempt
	 WHERE code = '42501' AND verb NOT IN ('grant_tenant', 'revoke_tenant')
	   AND verb NOT LIKE 'metrics\_%'
	   AND result <> 'permission denied for tenant "sec_b"'$$,
	'and says only that the tenant is not the caller''s');
-- The metrics read no tenant setting: they refuse every role outside
-- pg_monitor, whatever it was granted, and say so.
SELECT is(ARRAY(SELECT verb || ': ' || result FROM sec_attempt
                 WHERE verb LIKE 'metrics\_%' ORDER BY verb),
	ARRAY['metrics_states: permission denied for function metrics_states',
	      'metrics_sweeper: permission denied for function metrics_sweeper',
	      'metrics_tenants: permission denied for function metrics_tenants'],
	'the metrics refuse sec_a although it was granted EXECUTE on them');
SELECT is((SELECT t.code FROM pg_temp.sec_try($$SELECT worklist.grant_tenant('sec_b', 'sec_a')::pg_catalog.text$$,
                                              NULL, 'sec_a', 'sec_a') t),
	'42501', 'sec_a cannot bind tenant B to itself');
SELECT is((SELECT result FROM sec_attempt WHERE verb = 'visible_tenant'), NULL,
	'visible_tenant() names no tenant to that role');
SELECT is((SELECT result FROM sec_attempt WHERE verb = 'administers'), 'false',
	'administers() says it administers no other tenant');
SELECT is((SELECT result FROM sec_attempt WHERE verb = 'bindings'), '(sec_a,sec_a,admin)',
	'bindings() shows its own tenant''s binding, and nothing of tenant B''s');
SELECT is(pg_temp.sec_rows('sec_b'), (SELECT before FROM sec_snapshot),
	'tenant B''s rows are unchanged');

-- The same calls in sec_a's own tenant are not refused for privilege, so
-- what refused them above was the binding of tenant B.
SELECT is_empty($$
	SELECT v.verb, t.code, t.result
	  FROM sec_verbs v, pg_temp.sec_try(pg_temp.sec_call(v.oid), NULL, 'sec_a', 'sec_a') t
	 WHERE t.code = '42501' AND v.verb NOT IN ('grant_tenant', 'revoke_tenant')
	   AND v.verb NOT LIKE 'metrics\_%'$$,
	'in its own tenant no verb refuses sec_a');
SELECT is_empty($$
	SELECT v.verb, t.code, t.result
	  FROM sec_verbs v, pg_temp.sec_try(pg_temp.sec_call(v.oid), NULL, 'sec_a_member', 'sec_a') t
	 WHERE t.code = '42501' AND v.verb NOT IN ('grant_tenant', 'revoke_tenant')
	   AND v.verb NOT LIKE 'metrics\_%'$$,
	'nor a member of sec_a');

-- Direct reads: row-level security shows sec_a nothing of tenant B in any
-- table, and in its own tenant only its own rows.
CREATE TEMP TABLE sec_reads AS
SELECT c.relname, b.result AS as_b, a.result AS as_a, o.n AS own_rows
  FROM pg_class c,
       pg_temp.sec_try(format('SELECT pg_catalog.count(*)::pg_catalog.text FROM %s', c.oid::regclass),
                       NULL, 'sec_a', 'sec_b') b,
       pg_temp.sec_try(format('SELECT pg_catalog.count(*)::pg_catalog.text FROM %s t'
                              ' WHERE t.tenant OPERATOR(pg_catalog.<>) ''sec_a''', c.oid::regclass),
                       NULL, 'sec_a', 'sec_a') a,
       LATERAL (SELECT count(*) FROM pg_attribute x WHERE x.attrelid = c.oid AND x.attname = 'tenant') o(n)
 WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind = 'r';
SELECT cmp_ok((SELECT count(*) FROM sec_reads)::int, '>=', 7, 'every table was read');
SELECT is_empty($$SELECT relname FROM sec_reads WHERE own_rows <> 1$$,
	'every table is keyed by tenant');
SELECT is_empty($$SELECT relname, as_b FROM sec_reads WHERE as_b <> '0'$$,
	'with tenant B set, sec_a reads no row of any table');
SELECT is_empty($$SELECT relname, as_a FROM sec_reads WHERE as_a <> '0'$$,
	'with its own tenant set, sec_a reads no other tenant''s row');
SELECT is((SELECT t.result FROM pg_temp.sec_try('SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.task',
                                                NULL, 'sec_a', 'sec_a') t),
	'2', 'and it does read its own');

-- The view of the sweeper is for pg_monitor and the owner.
SELECT is((SELECT t.code FROM pg_temp.sec_try('SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.sweeper_status',
                                              NULL, 'sec_a', 'sec_b') t),
	'42501', 'a role without pg_monitor cannot read worklist.sweeper_status');
SELECT is((SELECT t.code FROM pg_temp.sec_try('SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.sweeper_status',
                                              NULL, 'pg_monitor', 'sec_b') t),
	'ok', 'pg_monitor can');
SELECT is((SELECT t.result FROM pg_temp.sec_try($$SELECT pg_catalog.count(*)::pg_catalog.text
                                                   FROM worklist.metrics_states() m
                                                  WHERE m.tenant OPERATOR(pg_catalog.=) 'sec_b'$$,
                                                NULL, 'pg_monitor', NULL) t),
	'14', 'and reads the counts of tenant B from the metrics, without a binding');

SELECT * FROM finish();
ROLLBACK;
