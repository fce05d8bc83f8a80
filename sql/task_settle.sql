-- Tasks: complete, set_state, escalate, withdraw_run.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE so the
-- expected output pins the SQLSTATE as well as the message and DETAIL.

SET worklist.tenant = 'task_settle';

-- complete: the holder settles the task, recording decided_by and decision.
SELECT id FROM worklist.open_task('c1', 'case', '{reviewer}', excluded => '{author}');
SELECT holder FROM worklist.claim('c1', 'bob', '{reviewer}');
-- WL001, WL002 (barred: never told the holder), WL006 naming the holder.
SELECT worklist.complete('nope', 'bob', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.complete('c1', 'author', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.complete('c1', 'carol', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.complete('c1', 'bob', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT state, holder, decided_by, decision FROM worklist.task('c1');
BEGIN;
SELECT worklist.complete('c1', 'bob', '{"approve": true, "note": "fine"}');
SELECT state, holder, decided_by, decision, settled_at = now() AS settled_now
  FROM worklist.task('c1');
COMMIT;
-- Already settled: false, and nothing changes -- whoever asks.
SELECT worklist.complete('c1', 'bob', '{"approve": false}');
SELECT worklist.complete('c1', 'carol', '{"approve": false}');
SELECT state, holder, decided_by, decision FROM worklist.task('c1');
-- ... except a barred actor, who is refused as before.
SELECT worklist.complete('c1', 'author', '{}');
\echo :LAST_ERROR_SQLSTATE

-- Pending but held by nobody: WL006.
SELECT id FROM worklist.open_task('c2', 'case', '{reviewer}');
SELECT worklist.complete('c2', 'bob', '{}');
\echo :LAST_ERROR_SQLSTATE
-- An escalated task is completed by its holder like any other.
SELECT state FROM worklist.escalate('c2');
SELECT state, holder FROM worklist.claim('c2', 'bob', '{reviewer}');
SELECT worklist.complete('c2', 'bob', '"yes"');
SELECT state, holder, decided_by, decision FROM worklist.task('c2');

-- The sweep (or an operator) won: the holder's complete answers false and
-- leaves the expiry alone.
SELECT id FROM worklist.open_task('c3', 'case', '{reviewer}');
SELECT holder FROM worklist.claim('c3', 'bob', '{reviewer}');
SELECT worklist.set_state('c3', 'expired');
SELECT worklist.complete('c3', 'bob', '{"late": true}');
SELECT state, holder, decided_by, decision FROM worklist.task('c3');

-- set_state: compare-and-set from any pending state to a settled one.
SELECT id FROM worklist.open_task('s-open', 'case', '{reviewer}');
SELECT id FROM worklist.open_task('s-claimed', 'case', '{reviewer}');
SELECT holder FROM worklist.claim('s-claimed', 'bob', '{reviewer}');
SELECT id FROM worklist.open_task('s-escalated', 'case', '{reviewer}');
SELECT state FROM worklist.escalate('s-escalated');
BEGIN;
SELECT worklist.set_state('s-open', 'completed') AS open_to_completed,
       worklist.set_state('s-claimed', 'withdrawn') AS claimed_to_withdrawn,
       worklist.set_state('s-escalated', 'expired') AS escalated_to_expired;
SELECT id, state, holder, decided_by, decision, settled_at = now() AS settled_now
  FROM worklist.task t
 WHERE tenant = 'task_settle' AND id LIKE 's-%' ORDER BY id;
COMMIT;
-- Already settled: false, changing nothing, whatever the target.
SELECT worklist.set_state('s-open', 'completed'),
       worklist.set_state('s-open', 'expired'),
       worklist.set_state('s-open', 'withdrawn');
SELECT state FROM worklist.task('s-open');
-- A pending target is refused, settled task or not.
SELECT id FROM worklist.open_task('s-new', 'case', '{reviewer}');
SELECT worklist.set_state('s-new', 'open');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_state('s-new', 'claimed');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_state('s-open', 'escalated');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_state('s-new', 'finished');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_state('s-new', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_state('nope', 'completed');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_state(NULL, 'completed');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_state(repeat('x', 257), 'completed');
\echo :LAST_ERROR_SQLSTATE
SELECT state FROM worklist.task('s-new');

-- escalate: open or claimed -> escalated, holder cleared.
SELECT id FROM worklist.open_task('e-open', 'case', '{reviewer}', escalation_roles => '{manager}');
SELECT id FROM worklist.open_task('e-claimed', 'case', '{reviewer}', escalation_roles => '{manager}');
SELECT holder FROM worklist.claim('e-claimed', 'bob', '{reviewer}');
SELECT id, state, holder, claimed_at FROM worklist.escalate('e-open');
SELECT id, state, holder, claimed_at FROM worklist.escalate('e-claimed');
-- Already escalated: unchanged, even when held again since.
SELECT holder FROM worklist.claim('e-claimed', 'mia', '{manager}');
SELECT claimed_at AS mia_claimed_at FROM worklist.task('e-claimed') \gset
SELECT id, state, holder, claimed_at = :'mia_claimed_at' AS same_claimed_at
  FROM worklist.escalate('e-claimed');
SELECT id, state, holder FROM worklist.escalate('e-open');
-- Settled: returned as it is; a decision is never un-decided.
SELECT id, state, holder, decided_by FROM worklist.escalate('c1');
SELECT id, state FROM worklist.escalate('s-escalated');
SELECT worklist.escalate('nope');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.escalate(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.escalate('');
\echo :LAST_ERROR_SQLSTATE

-- withdraw_run: the awaited tasks of this run that are still pending.
SELECT id FROM worklist.open_task('w-open', 'case', '{r}', run_id => 'run1');
SELECT id FROM worklist.open_task('w-claimed', 'case', '{r}', run_id => 'run1');
SELECT holder FROM worklist.claim('w-claimed', 'bob', '{r}');
SELECT id FROM worklist.open_task('w-escalated', 'case', '{r}', run_id => 'run1');
SELECT state FROM worklist.escalate('w-escalated');
SELECT id FROM worklist.open_task('w-done', 'case', '{r}', run_id => 'run1');
SELECT worklist.set_state('w-done', 'completed');
SELECT id FROM worklist.open_task('w-other-run', 'case', '{r}', run_id => 'run2');
SELECT id FROM worklist.open_task('w-no-run', 'case', '{r}');
SELECT id FROM worklist.open_task('w-not-awaited', 'case', '{r}', run_id => 'run1');
SELECT worklist.withdraw_run('run1',
	'{w-open,w-claimed,w-escalated,w-done,w-other-run,w-no-run,w-open,missing}');
SELECT id, state, holder, settled_at IS NOT NULL AS settled
  FROM worklist.task t
 WHERE tenant = 'task_settle' AND id LIKE 'w-%' ORDER BY id;
-- Again: nothing left to withdraw.
SELECT worklist.withdraw_run('run1', '{w-open,w-claimed,w-escalated}');
SELECT worklist.withdraw_run('run1', '{}');
-- A withdrawn task cannot be claimed or completed.
SELECT worklist.claim('w-open', 'bob', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.complete('w-claimed', 'bob', '{}');
SELECT worklist.withdraw_run(NULL, '{w-not-awaited}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.withdraw_run('', '{w-not-awaited}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.withdraw_run('run1', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.withdraw_run('run1', '{w-not-awaited,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.withdraw_run('run1', ARRAY['w-not-awaited', repeat('x', 257)]);
\echo :LAST_ERROR_SQLSTATE
SELECT state FROM worklist.task('w-not-awaited');

-- Another tenant's tasks are out of reach of every verb.
SET worklist.tenant = 'task_settle_b';
SELECT worklist.complete('c2', 'bob', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_state('s-new', 'completed');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.escalate('e-open');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.withdraw_run('run1', '{w-not-awaited}');
SET worklist.tenant = 'task_settle';
SELECT id, state FROM worklist.task t
 WHERE tenant = 'task_settle' AND id IN ('s-new', 'w-not-awaited') ORDER BY id;

SELECT worklist.erase_tenant();
RESET worklist.tenant;
