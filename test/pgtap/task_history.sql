-- The history of tasks (0.4): the surface of task_history and note, who
-- may read and write a history, the login an event names, and the
-- append-only guard, for every role the owner included.
BEGIN;
SELECT plan(26);

SELECT results_eq(
	$$SELECT p.proname::text COLLATE "default", pg_get_function_arguments(p.oid),
	         pg_get_function_result(p.oid)
	    FROM pg_proc p
	   WHERE p.pronamespace = 'worklist'::regnamespace
	     AND p.proname = ANY ('{task_history,note}')
	   ORDER BY 1$$,
	$$VALUES
	('note', 'id text, actor text, body text', 'worklist.task_event'),
	('task_history', 'id text, after integer DEFAULT 0, lim integer DEFAULT 100', 'SETOF worklist.task_event')$$,
	'task_history and note have the documented arguments, defaults and result, and no overload');
SELECT volatility_is('worklist', 'task_history', ARRAY['text', 'integer', 'integer'], 'stable',
	'task_history() is stable');
SELECT volatility_is('worklist', 'note', ARRAY['text', 'text', 'text'], 'volatile',
	'note() is volatile');
SELECT is(
	(SELECT array_agg(p.proname::text ORDER BY p.proname) FROM pg_proc p
	  WHERE p.pronamespace = 'worklist'::regnamespace
	    AND has_function_privilege('public', p.oid, 'EXECUTE')
	    AND p.proname = ANY ('{task_history,note}')),
	ARRAY['note', 'task_history'], 'PUBLIC may execute task_history and note');
SELECT results_eq(
	$$SELECT a.attname::text COLLATE "default", format_type(a.atttypid, a.atttypmod)
	    FROM pg_attribute a
	   WHERE a.attrelid = 'worklist.task_event'::regclass AND a.attnum > 0 ORDER BY a.attnum$$,
	$$VALUES ('task_id', 'text'), ('seq', 'integer'), ('at', 'timestamp with time zone'),
	         ('event', 'text'), ('actor', 'text'), ('login', 'text'), ('detail', 'jsonb')$$,
	'worklist.task_event has the documented columns in order');

-- A member, a service, a login bound to nothing and one bound to another
-- tenant.
CREATE ROLE th_team;
CREATE ROLE th_alice IN ROLE th_team;
CREATE ROLE th_bob IN ROLE th_team;
CREATE ROLE th_service;
CREATE ROLE th_stranger;
CREATE ROLE th_elsewhere;
SELECT worklist.grant_tenant('th', 'th_team', 'member');
SELECT worklist.grant_tenant('th', 'th_service', 'service');
SELECT worklist.grant_tenant('th_else', 'th_elsewhere', 'service');
SET LOCAL worklist.max_clock_skew = '1 hour';
SET LOCAL worklist.tenant = 'th';
SELECT worklist.open_task('t1', 'c', '{th_team}');
SELECT worklist.open_task('t2', 'c', '{r}');

-- The member acts as itself: its claim and its note name it as actor and
-- as login.
SET LOCAL ROLE th_alice;
SELECT is((worklist.claim('t1', 'th_alice', '{th_team}')).holder, 'th_alice', 'the member claims');
SELECT is((SELECT actor || ':' || event || ':' || detail::text
             FROM worklist.note('t1', 'th_alice', 'looked at it')),
	'th_alice:noted:{"body": "looked at it"}', 'the member notes, as itself');
SELECT results_eq(
	$$SELECT seq, event, actor, login FROM worklist.task_history('t1', 1)$$,
	$$VALUES (2, 'claimed'::text, 'th_alice'::text, 'th_alice'::text), (3, 'noted', 'th_alice', 'th_alice')$$,
	'the member reads the history: each event names the login that made it');
SELECT throws_ok($$SELECT worklist.note('t1', 'th_bob', 'in somebody else''s name')$$, '42501', NULL,
	'a member may not note in another actor''s name');
SELECT throws_ok($$SELECT worklist.note('t1', 'th_team', 'as the group')$$, '42501', NULL,
	'nor in its group''s');
SELECT is((SELECT count(*)::int FROM worklist.task_history('t1')), 3, 'and the refusals appended nothing');
RESET ROLE;

-- A service names any actor; the login is still the service's.
SET LOCAL ROLE th_service;
SELECT is((worklist.claim('t2', 'somebody', '{r}')).holder, 'somebody', 'the service claims for somebody');
SELECT is((SELECT actor || ':' || login FROM worklist.note('t2', 'somebody', 'on their behalf')),
	'somebody:th_service', 'a note for somebody names the service''s login');
SELECT is((SELECT string_agg(actor || ':' || login, ',' ORDER BY seq) FROM worklist.task_history('t2', 1)),
	'somebody:th_service,somebody:th_service', 'as the claim does');
RESET ROLE;

-- A login bound to nothing, and one bound to another tenant, reach
-- neither the history nor note.
SET LOCAL ROLE th_stranger;
SELECT throws_ok($$SELECT count(*) FROM worklist.task_history('t1')$$, '42501', NULL,
	'a login bound to nothing may not read a history');
SELECT throws_ok($$SELECT worklist.note('t1', 'th_stranger', 'hello')$$, '42501', NULL,
	'nor note');
RESET ROLE;
SET LOCAL ROLE th_elsewhere;
SELECT throws_ok($$SELECT count(*) FROM worklist.task_history('t1')$$, '42501', NULL,
	'a login bound to another tenant may not read this one''s history');
SELECT throws_ok($$SELECT worklist.note('t1', 'th_elsewhere', 'hello')$$, '42501', NULL,
	'nor note there');
SET LOCAL worklist.tenant = 'th_else';
SELECT throws_ok($$SELECT count(*) FROM worklist.task_history('t1')$$, 'WL001', NULL,
	'in its own tenant the task does not exist');
SET LOCAL worklist.tenant = 'th';
RESET ROLE;

-- Append-only, for every role: one granted everything on the table, and
-- the owner (a superuser here).
CREATE TEMP TABLE th_before AS
SELECT string_agg(l::text, E'\n' ORDER BY l.task_id, l.seq) AS events FROM worklist.task_log l WHERE l.tenant = 'th';
GRANT ALL ON worklist.task_log TO th_alice;
SET LOCAL ROLE th_alice;
SELECT throws_ok($$UPDATE worklist.task_log SET actor = 'mallory'$$, '42501', NULL,
	'a role granted UPDATE may not change an event');
SELECT throws_ok($$DELETE FROM worklist.task_log$$, '42501', NULL,
	'nor, granted DELETE, remove one');
SELECT throws_ok($$TRUNCATE worklist.task_log$$, '42501', NULL,
	'nor, granted TRUNCATE, empty the table');
RESET ROLE;
SELECT throws_ok($$UPDATE worklist.task_log SET actor = 'mallory' WHERE tenant = 'th'$$, '42501', NULL,
	'the owner may not change an event');
SELECT throws_ok($$DELETE FROM worklist.task_log WHERE tenant = 'th'$$, '42501', NULL,
	'nor remove one');
SELECT throws_ok($$TRUNCATE worklist.task_log$$, '42501', NULL,
	'nor empty the table');
SELECT is((SELECT string_agg(l::text, E'\n' ORDER BY l.task_id, l.seq) FROM worklist.task_log l WHERE l.tenant = 'th'),
	(SELECT events FROM th_before), 'every event is still there, unchanged');

SELECT * FROM finish();
ROLLBACK;
