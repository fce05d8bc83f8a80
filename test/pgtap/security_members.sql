-- The rules of a member binding that name no argument (0.4): a group never
-- writes, a member writes only at the present time, escalate and
-- withdraw_run are not a member's; and the array bounds every verb keeps.
-- Every function comes from pg_proc, so a verb added later is covered.
BEGIN;
\ir security_calls.psql
SELECT plan(17);

CREATE ROLE sec_group;							-- the role the tenant is bound to
CREATE ROLE sec_alice IN ROLE sec_group;		-- a member of it, acting as itself
CREATE ROLE sec_bob IN ROLE sec_group;
SELECT worklist.grant_tenant('sec_m', 'sec_group', 'member');
SELECT pg_temp.sec_fixture('sec_m');
RESET worklist.tenant;
-- every function, take_over, set_state and erase_tenant included, so that
-- only the binding's rules stand in the way
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA worklist TO sec_group;
-- the baseline's actor and holder are alice: let the member be it
INSERT INTO sec_baseline VALUES ('to_actor', $$'sec_bob'$$), ('to_roles', $$'{sec_group}'$$)
	ON CONFLICT (name) DO UPDATE SET expr = EXCLUDED.expr;
UPDATE sec_baseline SET expr = $$'sec_alice'$$ WHERE name IN ('actor', 'holder', 'from_actor');
UPDATE sec_baseline SET expr = $$'{sec_group}'$$ WHERE name = 'roles';

-- Writes are the volatile functions but two reads: channel(), which makes
-- the tenant's secret on first use, and sweeper_status(), which reads
-- shared memory.  The metrics read no tenant and refuse every role
-- outside pg_monitor (test/pgtap/security_tenants.sql).
CREATE TEMP VIEW sec_writes AS
SELECT v.* FROM sec_verbs v JOIN pg_proc p ON p.oid = v.oid
 WHERE p.provolatile = 'v' AND v.verb NOT IN ('channel', 'sweeper_status')
   AND v.verb NOT LIKE 'metrics\_%';
CREATE TEMP VIEW sec_reads AS
SELECT v.* FROM sec_verbs v
 WHERE v.oid NOT IN (SELECT oid FROM sec_writes) AND v.verb NOT LIKE 'metrics\_%';

-- 1. A group never writes under a member binding: SET ROLE to the bound
-- role, and every write verb is refused, naming itself, before anything
-- is looked at.
SET LOCAL worklist.max_clock_skew = '1 hour';
CREATE TEMP TABLE sec_group_try AS
SELECT v.verb, t.code, t.result
  FROM sec_writes v, pg_temp.sec_try(pg_temp.sec_call(v.oid), NULL, 'sec_group', 'sec_m') t;
SELECT cmp_ok((SELECT count(*) FROM sec_group_try)::int, '>=', 20, 'every write verb was called');
SELECT is_empty($$
	SELECT verb, code, result FROM sec_group_try
	 WHERE verb NOT IN ('grant_tenant', 'revoke_tenant')
	   AND (code <> '42501' OR result <> format('permission denied for %s in tenant "sec_m"', verb))$$,
	'a group is refused every write with 42501, naming the verb');
SELECT is_empty($$SELECT verb, code FROM sec_group_try WHERE code <> '42501'$$,
	'grant_tenant and revoke_tenant refuse it too');
SELECT is_empty($$
	SELECT v.verb, t.code, t.result
	  FROM sec_reads v, pg_temp.sec_try(pg_temp.sec_call(v.oid), NULL, 'sec_group', 'sec_m') t
	 WHERE t.code = '42501' AND v.verb <> 'claims'$$,
	'and it reads as before (but claims, an operator''s read)');
SELECT is((SELECT t.code || ':' || t.result
             FROM pg_temp.sec_try($$SELECT (worklist.task('sec_task')).holder$$, NULL, 'sec_group', 'sec_m') t),
	'ok:alice', 'it sees the task it may not decide');
-- the member itself writes
SELECT is((SELECT t.code || ':' || t.result
             FROM pg_temp.sec_try($$SELECT (worklist.open_task('sec_new', 'c', '{sec_group}')).id$$,
                                  NULL, 'sec_alice', 'sec_m') t),
	'ok:sec_new', 'a member of the group writes as itself');

-- 2. escalate and withdraw_run take work from its holder naming nobody:
-- refused to a member, allowed to a service binding.
SELECT is((SELECT t.code || ':' || t.result
             FROM pg_temp.sec_try(pg_temp.sec_call('worklist.escalate(text)'::regprocedure),
                                  NULL, 'sec_alice', 'sec_m') t),
	'42501:permission denied for escalate in tenant "sec_m"', 'escalate is refused to a member');
SELECT is((SELECT t.code || ':' || t.result
             FROM pg_temp.sec_try(pg_temp.sec_call('worklist.withdraw_run(text,text[])'::regprocedure),
                                  NULL, 'sec_alice', 'sec_m') t),
	'42501:permission denied for withdraw_run in tenant "sec_m"', 'withdraw_run is refused to a member');
SELECT is((SELECT (worklist.task('sec_task')).state::text FROM (SELECT set_config('worklist.tenant', 'sec_m', true)) s),
	'claimed', 'the member''s attempts changed nothing');
RESET worklist.tenant;

-- 3. A member's writes happen now: once a statement starts later than
-- worklist.max_clock_skew after its transaction began, every write verb
-- refuses it, with or without a clock argument.
SET LOCAL worklist.max_clock_skew = '1 ms';
SELECT pg_sleep(0.01);
CREATE TEMP TABLE sec_late_try AS
SELECT v.verb, t.code, t.result
  FROM sec_writes v, pg_temp.sec_try(pg_temp.sec_call(v.oid), NULL, 'sec_alice', 'sec_m') t
 WHERE v.verb NOT IN ('grant_tenant', 'revoke_tenant');
SELECT is_empty($$
	SELECT verb, code, result FROM sec_late_try
	 WHERE code <> '42501' OR result <> format('permission denied for %s in tenant "sec_m"', verb)$$,
	'a member is refused every write in a transaction older than the skew');
SELECT is_empty($$
	SELECT v.verb, t.code, t.result
	  FROM sec_reads v, pg_temp.sec_try(pg_temp.sec_call(v.oid), NULL, 'sec_alice', 'sec_m') t
	 WHERE t.code = '42501' AND v.verb <> 'claims'$$,
	'and still reads (at any instant)');
RESET worklist.max_clock_skew;
-- Within one statement too: the time is also taken when the verb is
-- called (refused past the skew and past one second).  The skew is set to
-- what has passed since the transaction began plus 700 ms, then a
-- statement writes at once (admitted) or after a second (refused, though
-- it started in time).
SELECT set_config('worklist.max_clock_skew',
                  (round(1000 * extract(epoch FROM clock_timestamp() - now())) + 700)::text || ' ms',
                  true) IS NOT NULL AS skew_set;
SELECT is((SELECT t.code || ':' || t.result
             FROM pg_temp.sec_try($$SELECT (worklist.open_task('sec_in_time', 'c', '{sec_group}')).id$$,
                                  NULL, 'sec_alice', 'sec_m') t),
	'ok:sec_in_time', 'a member writes within the skew');
SELECT set_config('worklist.max_clock_skew',
                  (round(1000 * extract(epoch FROM clock_timestamp() - now())) + 700)::text || ' ms',
                  true) IS NOT NULL AS skew_set;
SELECT is((SELECT t.code || ':' || t.result
             FROM pg_temp.sec_try($$SELECT pg_sleep(1)::text || (worklist.open_task('sec_late', 'c', '{sec_group}')).id$$,
                                  NULL, 'sec_alice', 'sec_m') t),
	'42501:permission denied for open_task in tenant "sec_m"',
	'a write called later than the skew is refused though its statement started in time');
RESET worklist.max_clock_skew;

-- 4. Arrays are bounded: every text[] argument of every verb takes 1,000
-- elements and refuses 1,001 with 22023 naming it; a ladder 32 rungs.
CREATE TEMP TABLE sec_arrays AS
SELECT v.verb, a.name AS arg, n,
       (pg_temp.sec_try(regexp_replace(pg_temp.sec_call(v.oid),
                                       format('%I => \([^)]*\)::pg_catalog\.text\[\]', a.name),
                                       format('%I => pg_catalog.array_fill(''r''::text, ARRAY[%s])', a.name, n)),
                        NULL, NULL, 'sec_m')).*
  FROM sec_verbs v JOIN pg_proc p ON p.oid = v.oid,
       unnest(p.proargnames[1:p.pronargs], p.proargtypes::regtype[]) a(name, typ),
       (VALUES (1000), (1001)) s(n)
 WHERE a.typ = 'text[]'::regtype;
SELECT cmp_ok((SELECT count(DISTINCT verb || arg) FROM sec_arrays)::int, '>=', 9,
	'every text[] argument was tried');
SELECT is_empty($$
	SELECT verb, arg, code, result FROM sec_arrays
	 WHERE n = 1001 AND (code <> '22023' OR result <> format('argument "%s" must have at most 1000 elements', arg))$$,
	'1,001 elements are refused with 22023, naming the argument');
SELECT is_empty($$SELECT verb, arg, code, result FROM sec_arrays
                   WHERE n = 1000 AND result ~ 'at most 1000 elements'$$,
	'1,000 are accepted');
SELECT is(ARRAY(SELECT t.code FROM (VALUES (32), (33)) s(n),
                LATERAL pg_temp.sec_try(format(
                    $$SELECT (worklist.open_ticket('sec_ladder_%s', 'req', 't', ladder => pg_catalog.array_fill('1 hour'::interval, ARRAY[%s]))).ticket$$,
                    n, n), NULL, NULL, 'sec_m') t ORDER BY n),
	ARRAY['ok', '22023'], 'a ladder takes 32 rungs and refuses 33');

SELECT * FROM finish();
ROLLBACK;
