-- Tasks: queue, claim_next, for_case, open_count, overdue, and the task
-- part of sweep.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE so the
-- expected output pins the SQLSTATE as well as the message.

SET worklist.tenant = 'task_lists';

-- Queue order: highest priority, then oldest created_at, then id.
SELECT id FROM worklist.open_task('q-old', 'k1', '{r}');
BEGIN;	-- one transaction: the same created_at, so id decides
SELECT id FROM worklist.open_task('q-b', 'k1', '{r}');
SELECT id FROM worklist.open_task('q-a', 'k2', '{r}');
COMMIT;
SELECT id FROM worklist.open_task('q-high', 'k1', '{r}', priority => 5);
SELECT id FROM worklist.open_task('q-low', 'k1', '{r}', priority => -5);
SELECT id FROM worklist.open_task('q-excl', 'k1', '{r}', excluded => '{alice}');
SELECT id FROM worklist.open_task('q-other-role', 'k1', '{s}');
SELECT id FROM worklist.open_task('q-claimed', 'k1', '{r}');
SELECT holder FROM worklist.claim('q-claimed', 'zed', '{r}');
SELECT id FROM worklist.open_task('q-esc-free', 'k1', '{s}', escalation_roles => '{boss}');
SELECT state FROM worklist.escalate('q-esc-free');
SELECT id FROM worklist.open_task('q-esc-held', 'k1', '{r}', escalation_roles => '{boss}');
SELECT state FROM worklist.escalate('q-esc-held');
SELECT holder FROM worklist.claim('q-esc-held', 'zed', '{r}');
SELECT id FROM worklist.open_task('q-settled', 'k1', '{r}');
SELECT worklist.set_state('q-settled', 'completed');

-- Claimable work for role r: open, or escalated with no holder.
SELECT id, state, priority FROM worklist.queue('{r}');
-- Roles meet the audience if any one of them is in it.
SELECT id, state FROM worklist.queue('{x,s}');
-- The escalation audience sees escalated tasks only.
SELECT id, state FROM worklist.queue('{boss}');
-- An actor never sees the tasks that exclude it; NULL actor filters nothing.
SELECT id FROM worklist.queue('{r}', 100, 'alice');
SELECT id FROM worklist.queue('{r}', actor => 'bob');
SELECT id FROM worklist.queue('{r}', actor => NULL);
-- An empty roles array meets no audience.
SELECT count(*) FROM worklist.queue('{}');
-- Limits are clamped to [1, 1000]; NULL means the default.
SELECT id FROM worklist.queue('{r}', 2);
SELECT id FROM worklist.queue('{r}', 0);
SELECT id FROM worklist.queue('{r}', -5);
SELECT count(*) FROM worklist.queue('{r}', NULL);
SELECT count(*) FROM worklist.queue('{r}', 2147483647);
SELECT worklist.queue(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.queue('{r,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.queue(ARRAY[repeat('x', 257)]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.queue('{r}', 10, '');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.queue('{r}', 10, repeat('x', 1024 * 1024));
\echo :LAST_ERROR_SQLSTATE

-- for_case: every pending task of one case, in queue order -- held ones
-- too, settled ones never.
SELECT id, state, holder FROM worklist.for_case('k1');
SELECT id FROM worklist.for_case('k2');
SELECT count(*) FROM worklist.for_case('no-such-case');
SELECT worklist.for_case(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.for_case('');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.for_case(repeat('x', 257));
\echo :LAST_ERROR_SQLSTATE

-- open_count: every pending task, whatever its roles or holder.
SELECT worklist.open_count();

-- claim_next: the first task of queue(roles, ..., actor), claimed.
SELECT id, state, holder FROM worklist.claim_next('alice', '{r}');
SELECT id, state, holder FROM worklist.claim_next('alice', '{r}');
-- An escalated task stays escalated when claimed.
SELECT id, state, holder FROM worklist.claim_next('mia', '{boss}');
SELECT worklist.claim_next('mia', '{boss}') IS NULL AS none_left_for_boss;
-- alice is barred from q-excl: she never gets it, bob does.
SELECT id, state, holder FROM worklist.claim_next('alice', '{r}');
SELECT id, state, holder FROM worklist.claim_next('alice', '{r}');
SELECT id, state, holder FROM worklist.claim_next('alice', '{r}');
SELECT worklist.claim_next('alice', '{r}') IS NULL AS none_left_for_alice;
SELECT id, state, holder FROM worklist.claim_next('bob', '{r}');
SELECT id, state, holder FROM worklist.claim_next('bob', '{r}');
SELECT worklist.claim_next('bob', '{r}') IS NULL AS none_left_for_bob;
SELECT worklist.claim_next('bob', '{}') IS NULL AS empty_roles_get_nothing;
SELECT id, state FROM worklist.queue('{r,s,boss}');
SELECT worklist.open_count();
SELECT worklist.claim_next(NULL, '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_next('', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_next('bob', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_next('bob', '{NULL}');
\echo :LAST_ERROR_SQLSTATE

-- Another tenant sees none of it.
SET worklist.tenant = 'task_lists_b';
SELECT count(*) FROM worklist.queue('{r,s,boss}');
SELECT count(*) FROM worklist.for_case('k1');
SELECT worklist.open_count();
SELECT worklist.claim_next('bob', '{r}') IS NULL AS nothing_for_b;
SET worklist.tenant = 'task_lists';
SELECT worklist.erase_tenant();

-- overdue: open and claimed tasks with due_at <= now, earliest first --
-- never escalated ones.
SELECT id FROM worklist.open_task('d-at-now', 'k', '{r}', due_at => '2030-01-01 10:00+00');
SELECT id FROM worklist.open_task('d-before', 'k', '{r}', due_at => '2030-01-01 09:00+00',
	expiry_policy => 'proceed');
SELECT holder FROM worklist.claim('d-before', 'bob', '{r}');
SELECT id FROM worklist.open_task('d-after', 'k', '{r}', due_at => '2030-01-01 10:00:00.000001+00');
SELECT id FROM worklist.open_task('d-escalated', 'k', '{r}', due_at => '2030-01-01 08:00+00');
SELECT state FROM worklist.escalate('d-escalated');
SELECT id FROM worklist.open_task('d-settled', 'k', '{r}', due_at => '2030-01-01 07:00+00');
SELECT worklist.set_state('d-settled', 'withdrawn');
SELECT id FROM worklist.open_task('d-none', 'k', '{r}');
SELECT id FROM worklist.open_task('d-ninf', 'k', '{r}', due_at => '-infinity',
	expiry_policy => 'escalate');
SELECT id FROM worklist.open_task('d-inf', 'k', '{r}', due_at => 'infinity');
SELECT id FROM worklist.open_task('d-tie', 'k', '{r}', due_at => '2030-01-01 09:00+00',
	expiry_policy => 'escalate');

SELECT id, state, due_at FROM worklist.overdue('2030-01-01 10:00+00');
SELECT id FROM worklist.overdue('2030-01-01 10:00+00', 2);
SELECT id FROM worklist.overdue('2030-01-01 10:00+00', -1);
SELECT id FROM worklist.overdue('-infinity');
SELECT id FROM worklist.overdue('infinity');
SELECT count(*) FROM worklist.overdue(now());	-- due in 2030: only -infinity
SELECT worklist.overdue(NULL);
\echo :LAST_ERROR_SQLSTATE

-- sweep: deny and proceed expire with the policy as decision, escalate
-- escalates; up to lim tasks, earliest due first.
SELECT * FROM worklist.sweep('2030-01-01 10:00+00', 2);
SELECT id, state, holder, decided_by, decision,
       settled_at = '2030-01-01 10:00+00' AS settled_at_sweep_now
  FROM worklist.task t WHERE tenant = 'task_lists' ORDER BY due_at, id;
SELECT * FROM worklist.sweep('2030-01-01 10:00+00');
SELECT id, state, holder, decided_by, decision,
       settled_at = '2030-01-01 10:00+00' AS settled_at_sweep_now
  FROM worklist.task t WHERE tenant = 'task_lists' ORDER BY due_at, id;
-- Escalated tasks are never overdue, so a further sweep has nothing to do.
SELECT count(*) FROM worklist.overdue('2030-01-01 10:00+00');
SELECT * FROM worklist.sweep('2030-01-01 10:00+00');
-- The boundary: due exactly at now is overdue, a microsecond later is not.
SELECT * FROM worklist.sweep('2030-01-01 10:00:00.000001+00');
SELECT id, state, decision FROM worklist.task('d-after');
-- No finite instant reaches a deadline of infinity; the sweep refuses an
-- infinite now (the watchdog stamps its events with it).
SELECT * FROM worklist.sweep('294276-12-31 23:59:59+00');
SELECT id, state, decision FROM worklist.task('d-inf');
SELECT * FROM worklist.sweep('infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.sweep('-infinity');
\echo :LAST_ERROR_SQLSTATE
-- Limits are clamped to [1, 100000].
SELECT id FROM worklist.open_task('d-late1', 'k', '{r}', due_at => '2031-01-01 00:00+00');
SELECT id FROM worklist.open_task('d-late2', 'k', '{r}', due_at => '2031-01-01 00:00+00');
SELECT * FROM worklist.sweep('2031-01-01 00:00+00', 0);
SELECT * FROM worklist.sweep('2031-01-01 00:00+00', -100);
SELECT id, state FROM worklist.task t
 WHERE tenant = 'task_lists' AND id LIKE 'd-late%' ORDER BY id;
SELECT * FROM worklist.sweep(NULL);
\echo :LAST_ERROR_SQLSTATE
-- The escalate policy does what escalate() does: a claimed task loses
-- its holder.
SELECT id FROM worklist.open_task('d-held', 'k', '{r}', due_at => '2031-01-01 00:00+00',
	expiry_policy => 'escalate');
SELECT holder FROM worklist.claim('d-held', 'bob', '{r}');
SELECT * FROM worklist.sweep('2031-01-01 00:00+00');
SELECT id, state, holder, claimed_at, settled_at, decision FROM worklist.task('d-held');
-- A tenant's sweep never touches another tenant's tasks.
SELECT id FROM worklist.open_task('d-late3', 'k', '{r}', due_at => '2031-01-01 00:00+00');
SET worklist.tenant = 'task_lists_b';
SELECT * FROM worklist.sweep('294276-12-31 23:59:59+00', 100000);
SELECT count(*) FROM worklist.overdue('infinity');
SET worklist.tenant = 'task_lists';
SELECT id, state FROM worklist.overdue('infinity');

SELECT worklist.erase_tenant();

-- Limits are clamped at 1000, never an error.
SELECT count(*) FROM generate_series(1, 1001) g,
	worklist.open_task('many-' || g, 'k', '{r}', due_at => '2030-01-01');
SELECT count(*) AS queue_5000 FROM worklist.queue('{r}', 5000);
SELECT count(*) AS overdue_5000 FROM worklist.overdue('2030-01-01', 5000);
SELECT * FROM worklist.sweep('2030-01-01', 2147483647);

SELECT worklist.erase_tenant();
RESET worklist.tenant;
