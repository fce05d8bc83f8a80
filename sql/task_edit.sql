-- Tasks (0.4): hand_over and update_task -- what they change, their
-- refusals in the documented order, and the events they append to the
-- task's history (handed_over, updated; nothing when nothing changed).
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE so the
-- expected output pins the SQLSTATE as well as the message and DETAIL.

SET worklist.tenant = 'task_edit';

-- The events of this file's verbs, read from the history table itself.
CREATE FUNCTION pg_temp.edits(task text)
RETURNS TABLE (event text, actor text, login text, at_now boolean, detail jsonb)
LANGUAGE sql AS $$
	SELECT l.event, l.actor, l.login, l.at = now(), COALESCE(l.detail, '{}')
	  FROM worklist.task_log l
	 WHERE l.tenant = current_setting('worklist.tenant') AND l.task_id = task
	   AND l.event IN ('handed_over', 'updated')
	 ORDER BY l.seq
$$;

SELECT id, state FROM worklist.open_task('t', 'c', '{reviewer}',
	excluded => '{author}', escalation_roles => '{manager}',
	claim_timeout => '1 hour');
SELECT id, state FROM worklist.open_task('free', 'c', '{reviewer}');
SELECT id, state FROM worklist.open_task('done', 'c', '{reviewer}');
SELECT holder FROM worklist.claim('done', 'bob', '{reviewer}');
SELECT worklist.complete('done', 'bob', '{}');
SELECT holder FROM worklist.claim('t', 'bob', '{reviewer}');
SELECT claimed_at AS bob_claimed_at, claim_expires_at AS bob_expires_at
  FROM worklist.task('t') \gset

-- hand_over refusals, first failure first.
-- WL001: no such task (whatever the receiver).
SELECT worklist.hand_over('nope', 'bob', 'author', '{}');
\echo :LAST_ERROR_SQLSTATE
-- WL004: settled, before whether actor holds it.
SELECT worklist.hand_over('done', 'carol', 'dan', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
-- WL006: actor does not hold it (DETAIL: who does), before the receiver.
SELECT worklist.hand_over('t', 'carol', 'author', '{}');
\echo :LAST_ERROR_SQLSTATE
-- WL006: nobody holds it.
SELECT worklist.hand_over('free', 'bob', 'carol', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
-- To oneself: unchanged (same claimed_at), before the receiver's checks,
-- and no event.
SELECT id, state, holder, claimed_at = :'bob_claimed_at' AS same_claimed_at
  FROM worklist.hand_over('t', 'bob', 'bob', '{}');
-- WL002: the receiver is barred, even with a good role.
SELECT worklist.hand_over('t', 'bob', 'author', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
-- WL002 before WL003.
SELECT worklist.hand_over('t', 'bob', 'author', '{clerk}');
\echo :LAST_ERROR_SQLSTATE
-- WL003: to_roles meet no audience; an empty array meets none.
SELECT worklist.hand_over('t', 'bob', 'carol', '{clerk}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.hand_over('t', 'bob', 'carol', '{}');
\echo :LAST_ERROR_SQLSTATE
-- an escalation role is not in the audience before escalation
SELECT worklist.hand_over('t', 'bob', 'mia', '{manager}');
\echo :LAST_ERROR_SQLSTATE
-- Arguments: identifiers, a text[] of identifiers.
SELECT worklist.hand_over('t', 'bob', NULL, '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.hand_over('t', 'bob', '', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.hand_over('t', 'bob', 'carol', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.hand_over('t', 'bob', 'carol', '{reviewer,""}');
\echo :LAST_ERROR_SQLSTATE
-- Nothing of that changed the task or its history.
SELECT state, holder, claimed_at = :'bob_claimed_at' AS same_claimed_at FROM worklist.task('t');
SELECT * FROM pg_temp.edits('t');

-- The hand-over: holder carol, claimed_at the transaction's now() (the
-- claim timeout starts again), state as it was; one event by the giver.
SELECT pg_sleep(0.01);
BEGIN;
SELECT id, state, holder, claimed_at = now() AS claimed_now,
       claim_expires_at = now() + interval '1 hour' AS expires_anew,
       claimed_at > :'bob_claimed_at' AS later
  FROM worklist.hand_over('t', 'bob', 'carol', '{clerk,reviewer}');
SELECT * FROM pg_temp.edits('t');
COMMIT;
-- the giver no longer holds it; the receiver does
SELECT worklist.complete('t', 'bob', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT id FROM worklist.held('carol');
SELECT count(*) AS bob_holds FROM worklist.held('bob');

-- An escalated task stays escalated; once escalated, escalation_roles
-- count for the receiver.
SELECT state FROM worklist.escalate('t');
SELECT holder FROM worklist.claim('t', 'mia', '{manager}');
SELECT state, holder FROM worklist.hand_over('t', 'mia', 'max', '{manager}');
SELECT * FROM pg_temp.edits('t');
-- the task is released back to escalated, not open
SELECT worklist.release('t', 'max');
SELECT state, holder FROM worklist.task('t');

-- update_task.
SELECT id FROM worklist.open_task('u', 'c', '{r}', priority => 1,
	due_at => '2030-01-01 00:00+00');
SELECT id FROM worklist.open_task('v', 'c', '{r}', priority => 2);
SELECT id FROM worklist.open_task('w', 'c', '{r}', priority => 3);
SELECT id FROM worklist.queue('{r}');
-- Refusals: WL001, WL004 (settled, even when nothing would change).
SELECT worklist.update_task('nope', priority => 5);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.update_task('done', priority => 5);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.update_task('done');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.update_task(NULL, priority => 5);
\echo :LAST_ERROR_SQLSTATE
-- a deadline before every instant is no deadline
SELECT worklist.update_task('u', due_at => '-infinity');
\echo :LAST_ERROR_SQLSTATE
-- NULL leaves a field as it is: nothing changes, nothing is recorded.
SELECT id, priority, due_at FROM worklist.update_task('u');
SELECT id, priority, due_at FROM worklist.update_task('u', NULL, NULL);
-- the same values are no change either
SELECT id, priority, due_at FROM worklist.update_task('u', 1, '2030-01-01 00:00+00');
SELECT * FROM pg_temp.edits('u');
-- The queue order follows at once.
SELECT id, priority, due_at FROM worklist.update_task('u', priority => 10);
SELECT id FROM worklist.queue('{r}');
-- The overdue list too: a deadline in the past, then none.
SELECT count(*) AS overdue FROM worklist.overdue('2029-01-01') WHERE id = 'u';
SELECT id, priority, due_at FROM worklist.update_task('u', due_at => '2020-01-01 00:00+00');
SELECT id FROM worklist.overdue('2029-01-01') WHERE id = 'u';
SELECT id, priority, due_at FROM worklist.update_task('u', due_at => 'infinity');
SELECT count(*) AS overdue FROM worklist.overdue('9999-01-01') WHERE id = 'u';
-- a deadline for a task that had none, and both fields at once
SELECT id, priority, due_at FROM worklist.update_task('v', -1, '2031-06-01 12:00+00');
SELECT id FROM worklist.queue('{r}');
-- Each change one event with the changed fields as [old, new], none for
-- the calls that changed nothing; no actor, the login that called.
SELECT * FROM pg_temp.edits('u');
SELECT * FROM pg_temp.edits('v');
-- A claimed task is pending: it can be edited, and keeps its claim.
SELECT holder FROM worklist.claim('w', 'ann', '{r}');
SELECT state, holder, priority FROM worklist.update_task('w', priority => 0);

-- The queue follows a raised priority however far claim_next has gone:
-- nine claims move the claim hint past the tasks before them (the library
-- is preloaded here), and a task raised ahead of the hint comes first.
SELECT count(*) FROM generate_series(1, 20) g,
       worklist.open_task('h' || lpad(g::text, 2, '0'), 'c', '{h}');
-- (each claim in a transaction of its own: a transaction that has taken
-- tasks raises no hint)
SELECT $$SELECT (worklist.claim_next('hc', '{h}')).id$$ FROM generate_series(1, 9) \gexec
SELECT id, priority FROM worklist.update_task('h20', priority => 5);
SELECT id FROM worklist.claim_next('hc', '{h}');
SELECT id FROM worklist.claim_next('hc', '{h}');

-- A change rolled back leaves no event behind.
BEGIN;
SELECT priority FROM worklist.update_task('h19', priority => 7);
ROLLBACK;
SELECT priority FROM worklist.task('h19');
SELECT count(*) AS events FROM pg_temp.edits('h19');

SELECT worklist.erase_tenant() > 0 AS erased;
