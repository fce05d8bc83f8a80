-- Tasks: open_task and task.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE so the
-- expected output pins the SQLSTATE as well as the message.

SET worklist.tenant = 'task_open';

-- A new task: state open, every default applied, timestamps set.
SELECT id, case_id, run_id, state, roles, excluded, escalation_roles,
       priority, payload, due_at, expiry_policy, holder, claimed_at,
       created_at = now() AS created_now, settled_at, decided_by, decision,
       tenant
  FROM worklist.open_task('t1', 'c1', '{reviewer}');

-- The row type: the documented columns in the documented order, then the
-- tenant.
SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
  FROM pg_attribute a
 WHERE a.attrelid = 'worklist.task'::regclass AND a.attnum > 0
   AND NOT a.attisdropped
 ORDER BY a.attnum;

-- Every argument given.
SELECT id, case_id, run_id, state, roles, excluded, escalation_roles,
       priority, payload, due_at, expiry_policy
  FROM worklist.open_task('t2', 'c1', '{reviewer,lead}', 'run1',
                          '{"amount": 12}', 5, '2030-01-01 00:00+00',
                          'escalate', '{author}', '{manager}');
SELECT created_at AS t2_created FROM worklist.task('t2') \gset

-- Opening again returns the existing task unchanged, whatever the other
-- arguments say (the id names the decision).
SELECT id, case_id, run_id, roles, priority, payload, due_at, expiry_policy,
       excluded, escalation_roles, created_at = :'t2_created' AS same_created_at
  FROM worklist.open_task('t2', 'other-case', '{someone}', 'run2', '{"x": 1}',
                          9, NULL, 'deny', '{}', '{}');
SELECT count(*) AS t2_rows FROM worklist.task
 WHERE tenant = 'task_open' AND id = 't2';

-- ... including after it was claimed and settled: nothing reopens it.
SELECT state FROM worklist.claim('t1', 'alice', '{reviewer}');
SELECT worklist.complete('t1', 'alice', '{"ok": true}');
SELECT id, state, holder, decided_by, decision
  FROM worklist.open_task('t1', 'c1', '{reviewer}');

-- An argument with a default that is passed NULL means its default.
SELECT id, run_id, payload, priority, due_at, expiry_policy, excluded,
       escalation_roles
  FROM worklist.open_task('t3', 'c1', '{reviewer}', NULL, NULL, NULL, NULL,
                          NULL, NULL, NULL);

-- Deadlines at the ends of time are accepted as given.
SELECT id, due_at FROM worklist.open_task('t-inf', 'c1', '{r}', due_at => 'infinity');
SELECT id, due_at FROM worklist.open_task('t-ninf', 'c1', '{r}', due_at => '-infinity');
SELECT id, due_at FROM worklist.open_task('t-old', 'c1', '{r}', due_at => '4713-01-01 00:00+00 BC');
SELECT id, due_at FROM worklist.open_task('t-far', 'c1', '{r}', due_at => '294276-12-31 00:00+00');
-- Any jsonb is a payload; identifiers may be any text up to 256 characters.
SELECT id, payload FROM worklist.open_task('t-json', 'c1', '{r}', payload => '[1, "two", null]');
SELECT length(id), length(case_id), length(roles[1])
  FROM worklist.open_task(repeat('i', 256), repeat('c', 256), ARRAY[repeat('r', 256)]);
SELECT length(id) FROM worklist.open_task(repeat('é', 256), 'c1', '{r}');
SELECT id FROM worklist.open_task('t "quoted" ''x''', 'c1', '{r}');

-- task(): one task, or NULL.
SELECT id, state, priority FROM worklist.task('t2');
SELECT worklist.task('missing') IS NULL AS missing_is_null;

-- Ids are unique per tenant: tenant b has its own t1.
SET worklist.tenant = 'task_open_b';
SELECT worklist.task('t1') IS NULL AS not_visible_from_b;
SELECT id, state, tenant FROM worklist.open_task('t1', 'cb', '{r}');
SET worklist.tenant = 'task_open';
SELECT id, state, case_id, tenant FROM worklist.task('t1');

-- Bad input: clean refusals naming the argument, never a crash.
SELECT worklist.open_task(NULL, 'c', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('', 'c', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task(repeat('x', 257), 'c', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task(repeat('é', 257), 'c', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task(repeat('x', 1024 * 1024), 'c', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', NULL, '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', '', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', repeat('x', 1024 * 1024), '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{r,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{r,""}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', ARRAY['r', repeat('x', 257)]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', ARRAY[repeat('x', 1024 * 1024)]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{{a,b},{c,d}}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{r}', run_id => '');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{r}', run_id => repeat('x', 257));
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{r}', excluded => '{NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{r}', excluded => '{""}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{r}', escalation_roles => ARRAY[NULL::text]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{r}', escalation_roles => ARRAY[repeat('x', 257)]);
\echo :LAST_ERROR_SQLSTATE
-- Unknown enum values fail as enum input does.
SELECT worklist.open_task('t', 'c', '{r}', expiry_policy => 'ignore');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_task('t', 'c', '{r}', expiry_policy => 'DENY');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.task(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.task('');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.task(repeat('x', 257));
\echo :LAST_ERROR_SQLSTATE
-- None of the refused calls created anything.
SELECT count(*) AS tasks_named_t FROM worklist.task
 WHERE tenant = 'task_open' AND id = 't';


SELECT worklist.erase_tenant() > 0 AS erased;
SET worklist.tenant = 'task_open_b';
SELECT worklist.erase_tenant();
RESET worklist.tenant;
