-- Tasks: the public surface of doc/reference.md section 4 (names, argument order,
-- defaults, return types, volatility, privileges), tenancy through the
-- verbs, and immunity to search_path tricks.
BEGIN;
SELECT plan(40);

-- Signatures: argument names, order and defaults exactly as documented.
SELECT results_eq(
	$$SELECT p.proname::text COLLATE "default", pg_get_function_arguments(p.oid),
	         pg_get_function_result(p.oid)
	    FROM pg_proc p
	   WHERE p.pronamespace = 'worklist'::regnamespace
	     AND p.proname = ANY ('{open_task,task,claim,claim_next,release,take_over,complete,set_state,escalate,withdraw_run,queue,for_case,held,open_count,overdue}')
	   ORDER BY 1$$,
	$$VALUES
	('claim', 'id text, actor text, roles text[]', 'worklist.task'),
	('claim_next', 'actor text, roles text[], skip text[] DEFAULT ''{}''::text[]', 'worklist.task'),
	('complete', 'id text, actor text, decision jsonb', 'boolean'),
	('escalate', 'id text', 'worklist.task'),
	('for_case', 'case_id text', 'SETOF worklist.task'),
	('held', 'actor text, lim integer DEFAULT 100', 'SETOF worklist.task'),
	('open_count', '', 'bigint'),
	('open_task', 'id text, case_id text, roles text[], run_id text DEFAULT NULL::text, '
	              'payload jsonb DEFAULT ''{}''::jsonb, priority integer DEFAULT 0, '
	              'due_at timestamp with time zone DEFAULT NULL::timestamp with time zone, '
	              'expiry_policy worklist.expiry_policy DEFAULT ''deny''::worklist.expiry_policy, '
	              'excluded text[] DEFAULT ''{}''::text[], escalation_roles text[] DEFAULT ''{}''::text[], '
	              'claim_timeout interval DEFAULT NULL::interval',
	 'worklist.task'),
	('overdue', 'now timestamp with time zone DEFAULT now(), lim integer DEFAULT 100', 'SETOF worklist.task'),
	('queue', 'roles text[], lim integer DEFAULT 100, actor text DEFAULT NULL::text', 'SETOF worklist.task'),
	('release', 'id text, actor text', 'void'),
	('set_state', 'id text, state worklist.task_state', 'boolean'),
	('take_over', 'id text, from_actor text, actor text, roles text[]', 'worklist.task'),
	('task', 'id text', 'worklist.task'),
	('withdraw_run', 'run_id text, awaited text[]', 'integer')$$,
	'every task verb has the documented arguments, defaults and result, and no overload');

-- Readers are STABLE, everything that changes a task VOLATILE; none is
-- STRICT (a NULL argument is refused, not answered with NULL).
SELECT volatility_is('worklist', 'task', ARRAY['text'], 'stable', 'task() is stable');
SELECT volatility_is('worklist', 'queue', ARRAY['text[]', 'integer', 'text'], 'stable', 'queue() is stable');
SELECT volatility_is('worklist', 'for_case', ARRAY['text'], 'stable', 'for_case() is stable');
SELECT volatility_is('worklist', 'held', ARRAY['text', 'integer'], 'stable', 'held() is stable');
SELECT volatility_is('worklist', 'open_count', ARRAY[]::text[], 'stable', 'open_count() is stable');
SELECT volatility_is('worklist', 'overdue', ARRAY['timestamp with time zone', 'integer'], 'stable', 'overdue() is stable');
SELECT is(
	(SELECT array_agg(p.proname::text ORDER BY p.proname) FROM pg_proc p
	  WHERE p.pronamespace = 'worklist'::regnamespace AND p.provolatile = 'v'
	    AND p.proname = ANY ('{open_task,claim,claim_next,release,take_over,complete,set_state,escalate,withdraw_run}')),
	ARRAY['claim', 'claim_next', 'complete', 'escalate', 'open_task', 'release',
	      'set_state', 'take_over', 'withdraw_run'],
	'every verb that changes a task is volatile');
SELECT is(
	(SELECT count(*)::int FROM pg_proc p
	  WHERE p.pronamespace = 'worklist'::regnamespace AND p.proisstrict
	    AND p.proname = ANY ('{open_task,task,claim,claim_next,release,take_over,complete,set_state,escalate,withdraw_run,queue,for_case,held,open_count,overdue}')),
	0, 'no task verb is strict');
SELECT is(
	(SELECT count(*)::int FROM pg_proc p
	  WHERE p.pronamespace = 'worklist'::regnamespace
	    AND p.proname = ANY ('{open_task,task,claim,claim_next,release,take_over,complete,set_state,escalate,withdraw_run,queue,for_case,held,open_count,overdue}')
	    AND obj_description(p.oid, 'pg_proc') IS NULL),
	0, 'every task verb has a comment');

-- Types and the row type.
SELECT enum_has_labels('worklist', 'task_state',
	ARRAY['open', 'claimed', 'escalated', 'completed', 'expired', 'withdrawn'],
	'task_state has the documented states in order');
SELECT enum_has_labels('worklist', 'expiry_policy', ARRAY['deny', 'proceed', 'escalate'],
	'expiry_policy has the documented policies');
SELECT results_eq(
	$$SELECT a.attname::text COLLATE "default" FROM pg_attribute a
	   WHERE a.attrelid = 'worklist.task'::regclass AND a.attnum > 0 AND NOT a.attisdropped
	   ORDER BY a.attnum$$,
	$$VALUES ('id'), ('case_id'), ('run_id'), ('state'), ('roles'), ('excluded'),
	         ('escalation_roles'), ('priority'), ('payload'), ('due_at'), ('expiry_policy'),
	         ('holder'), ('claimed_at'), ('created_at'), ('settled_at'), ('decided_by'),
	         ('decision'), ('tenant'), ('claim_timeout'), ('claim_expires_at'), ('escalated_at')$$,
	'the task row type: documented columns in documented order, then tenant, then the claim timeout, then when it was escalated');
SELECT is(
	(SELECT array_agg(c.relname::text ORDER BY c.relname)
	   FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	  WHERE i.indrelid = ANY ('{worklist.task,worklist.task_claim}'::regclass[])
	    AND i.indpred IS NOT NULL),
	ARRAY['task_claim_due', 'task_claim_expiry', 'task_claimable', 'task_claims', 'task_due',
	      'task_overdue', 'task_pending_case', 'task_settled'],
	'the lists and the sweep are served by partial indexes');
SELECT is(
	(SELECT reloptions FROM pg_class WHERE oid = 'worklist.task'::regclass),
	ARRAY['autovacuum_vacuum_scale_factor=0', 'autovacuum_vacuum_threshold=2000',
	      'autovacuum_analyze_scale_factor=1', 'fillfactor=60'],
	'the task table is vacuumed after a fixed number of changes, not a fraction of its size, and analyzed after a table''s worth');

-- Privileges: PUBLIC may run every task verb but take_over and set_state.
SELECT function_privs_are('worklist', 'take_over', ARRAY['text', 'text', 'text', 'text[]'],
	'public', ARRAY[]::text[], 'PUBLIC may not execute take_over');
SELECT function_privs_are('worklist', 'set_state', ARRAY['text', 'worklist.task_state'],
	'public', ARRAY[]::text[], 'PUBLIC may not execute set_state');
SELECT is(
	(SELECT array_agg(p.proname::text ORDER BY p.proname) FROM pg_proc p
	  WHERE p.pronamespace = 'worklist'::regnamespace
	    AND has_function_privilege('public', p.oid, 'EXECUTE')
	    AND p.proname = ANY ('{open_task,task,claim,claim_next,release,take_over,complete,set_state,escalate,withdraw_run,queue,for_case,held,open_count,overdue}')),
	ARRAY['claim', 'claim_next', 'complete', 'escalate', 'for_case', 'held', 'open_count',
	      'open_task', 'overdue', 'queue', 'release', 'task', 'withdraw_run'],
	'PUBLIC may execute the other task verbs');

-- A role with no privilege on the tables works through the verbs (its
-- team, and the lead, are bound to the tenant as service).
CREATE ROLE wl_tap_reviewer;
CREATE ROLE wl_tap_lead;
CREATE ROLE wl_tap_team;
GRANT wl_tap_team TO wl_tap_reviewer;
SELECT worklist.grant_tenant('tap_task', 'wl_tap_team', 'service');
SELECT worklist.grant_tenant('tap_task', 'wl_tap_lead', 'service');
SET LOCAL worklist.tenant = 'tap_task';
SET LOCAL ROLE wl_tap_reviewer;
SELECT is((worklist.open_task('t1', 'c', '{r}', due_at => '2020-01-01')).state::text, 'open',
	'a role without table privileges opens a task');
SELECT is((worklist.claim('t1', 'wl_tap_reviewer', '{r}')).holder, 'wl_tap_reviewer',
	'... and claims it');
SELECT is((SELECT count(*)::int FROM worklist.queue('{r}')), 0, '... and reads the queue');
SELECT is(worklist.open_count(), 1::bigint, '... and counts');
SELECT throws_ok($$SELECT worklist.set_state('t1', 'withdrawn')$$, '42501', NULL,
	'set_state is refused to a role without the grant');
SELECT throws_ok($$SELECT worklist.take_over('t1', 'wl_tap_reviewer', 'x', '{r}')$$, '42501', NULL,
	'take_over is refused to a role without the grant');
SELECT throws_ok($$UPDATE worklist.task SET holder = 'x'$$, '42501', NULL,
	'and the table cannot be written directly');

-- The owner may hand take_over and set_state to a queue lead.
RESET ROLE;
GRANT EXECUTE ON FUNCTION worklist.take_over(text, text, text, text[]) TO wl_tap_lead;
GRANT EXECUTE ON FUNCTION worklist.set_state(text, worklist.task_state) TO wl_tap_lead;
SET LOCAL ROLE wl_tap_lead;
SELECT is((worklist.take_over('t1', 'wl_tap_reviewer', 'lead', '{r}')).holder, 'lead',
	'a lead granted take_over moves a claim');
SELECT is(worklist.set_state('t1', 'withdrawn'), true,
	'a lead granted set_state settles a task');
RESET ROLE;

-- A bound tenant: roles outside the binding are refused by every task verb
-- (42501) and learn nothing; members act as usual.
SELECT lives_ok($$SELECT worklist.revoke_tenant('tap_task', 'wl_tap_lead')$$,
	'the lead''s binding is revoked; the team stays bound');
SET LOCAL ROLE wl_tap_lead;
SELECT throws_ok($$SELECT worklist.task('t1')$$, '42501', NULL, 'task() refuses an unbound role');
SELECT throws_ok($$SELECT worklist.open_task('t2', 'c', '{r}')$$, '42501', NULL, 'open_task refuses an unbound role');
SELECT throws_ok($$SELECT worklist.claim('t1', 'x', '{r}')$$, '42501', NULL, 'claim refuses an unbound role');
SELECT throws_ok($$SELECT worklist.claim_next('x', '{r}')$$, '42501', NULL, 'claim_next refuses an unbound role');
SELECT throws_ok($$SELECT * FROM worklist.queue('{r}')$$, '42501', NULL, 'queue refuses an unbound role');
SELECT throws_ok($$SELECT worklist.open_count()$$, '42501', NULL, 'open_count refuses an unbound role');
SELECT throws_ok($$SELECT worklist.set_state('nope', 'withdrawn')$$, '42501', NULL,
	'the tenant is judged before the task: no WL001 for an unbound role');
-- empty tenant first of all
SET LOCAL worklist.tenant = '';
SELECT throws_ok($$SELECT worklist.claim(NULL, NULL, NULL)$$, '22023', NULL,
	'an empty tenant is refused before the arguments');
SET LOCAL worklist.tenant = 'tap_task';
SET LOCAL ROLE wl_tap_reviewer;
SELECT is((worklist.task('t1')).state::text, 'withdrawn', 'a member of the bound role reads the task');
RESET ROLE;

-- search_path tricks change nothing: an "=" and "&&" that are always true,
-- and a now() from the past, first on the path.
CREATE SCHEMA tap_evil;
CREATE FUNCTION tap_evil.yes(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR tap_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = tap_evil.yes);
CREATE FUNCTION tap_evil.yes_arr(text[], text[]) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR tap_evil.&& (LEFTARG = text[], RIGHTARG = text[], FUNCTION = tap_evil.yes_arr);
CREATE FUNCTION tap_evil.now() RETURNS timestamptz LANGUAGE sql AS $$SELECT 'epoch'::timestamptz$$;
SET LOCAL worklist.tenant = 'tap_evil';
SELECT is((worklist.open_task('e1', 'c', '{r}', excluded => '{mallory}', due_at => '2020-01-01')).id,
	'e1', 'a task to attack');
SELECT is((worklist.claim('e1', 'alice', '{r}')).holder, 'alice', 'held by alice');
-- pgTAP itself is not immune, so results are gathered under the trap and
-- judged after it is lifted.
CREATE TEMP TABLE evil_out (what text, result text);
SET LOCAL search_path = tap_evil, pg_catalog, public;
DO $$
BEGIN
	BEGIN
		PERFORM worklist.claim('e1', 'bob', '{r}');
		INSERT INTO pg_temp.evil_out VALUES ('claim by bob', 'ok');
	EXCEPTION WHEN OTHERS THEN
		INSERT INTO pg_temp.evil_out VALUES ('claim by bob', SQLSTATE);
	END;
	BEGIN
		PERFORM worklist.claim('e1', 'mallory', '{nope}');
		INSERT INTO pg_temp.evil_out VALUES ('claim by mallory', 'ok');
	EXCEPTION WHEN OTHERS THEN
		INSERT INTO pg_temp.evil_out VALUES ('claim by mallory', SQLSTATE);
	END;
END
$$;
INSERT INTO pg_temp.evil_out SELECT 'hijacked "="', ('a'::text = 'b'::text)::text;
INSERT INTO pg_temp.evil_out SELECT 'queue for nobody', count(*)::text FROM worklist.queue('{nope}');
INSERT INTO pg_temp.evil_out SELECT 'claim_next for nobody', (worklist.claim_next('bob', '{nope}')).id IS NULL;
INSERT INTO pg_temp.evil_out SELECT 'overdue by default now()', count(*)::text FROM worklist.overdue();
RESET search_path;
SELECT results_eq(
	$$SELECT what, result FROM pg_temp.evil_out ORDER BY what$$,
	$$VALUES ('claim by bob', 'WL005'), ('claim by mallory', 'WL002'),
	         ('claim_next for nobody', 'true'), ('hijacked "="', 'true'),
	         ('overdue by default now()', '1'), ('queue for nobody', '0')$$,
	'a hijacking "=", "&&" and now() first on the search_path change nothing');

SELECT * FROM finish();
ROLLBACK;
