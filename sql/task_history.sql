-- The history of tasks (0.4): the event every verb and every sweep path
-- appends, its actor, login, instant and detail; nothing for a call that
-- changes nothing; note and task_history; claim_next's skip.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE so the
-- expected output pins the SQLSTATE as well as the message.

SET worklist.tenant = 'task_history';

-- The history of one task as the tests read it: login compared with the
-- role that ran the test (the verbs run as the extension's owner; the
-- event must name the caller).
CREATE FUNCTION pg_temp.h(task text)
	RETURNS TABLE (seq integer, event text, actor text, login_is_caller boolean, detail jsonb)
	LANGUAGE sql AS $$
	SELECT e.seq, e.event, e.actor, e.login = current_user, e.detail
	  FROM worklist.task_history(task) e
$$;

-- open_task: event 1 "opened", at the transaction's now(), no actor; a
-- re-open appends nothing.
BEGIN;
SELECT id FROM worklist.open_task('a', 'case', '{reviewer}', claim_timeout => '1 hour');
SELECT seq, event, actor, login = current_user AS login_is_caller, detail, at = now() AS at_now
  FROM worklist.task_history('a');
COMMIT;
SELECT id FROM worklist.open_task('a', 'case', '{other}');
SELECT * FROM pg_temp.h('a');

-- claim; a same-holder re-claim appends nothing; release; claim_next.
SELECT holder FROM worklist.claim('a', 'bob', '{reviewer}');
SELECT holder FROM worklist.claim('a', 'bob', '{reviewer}');
SELECT worklist.release('a', 'bob');
SELECT id, holder FROM worklist.claim_next('carol', '{reviewer}');
-- take_over names the new holder and, in detail, the one it took from;
-- taking over from oneself appends nothing.
SELECT holder FROM worklist.take_over('a', 'carol', 'dave', '{reviewer}');
SELECT holder FROM worklist.take_over('a', 'dave', 'dave', '{reviewer}');
-- A refusal appends nothing either.
SELECT worklist.release('a', 'carol');
\echo :LAST_ERROR_SQLSTATE
-- note returns the event it appended.
SELECT task_id, seq, event, actor, detail FROM worklist.note('a', 'dave', 'Asked the customer for the receipt.');
-- complete; a retried complete answers true again and appends nothing; so
-- does one answering false.
SELECT worklist.complete('a', 'dave', '{"approve": true}');
SELECT worklist.complete('a', 'dave', '{"approve": true}');
SELECT worklist.complete('a', 'erin', '{"approve": false}');
-- A settled task still takes notes; escalate and set_state of a settled
-- task change nothing and append nothing.
SELECT seq FROM worklist.note('a', 'erin', 'Refund sent.');
SELECT state FROM worklist.escalate('a');
SELECT worklist.set_state('a', 'withdrawn');
SELECT * FROM pg_temp.h('a');

-- set_state: recorded under the state it set, via set_state.
SELECT id FROM worklist.open_task('s1', 'case', '{reviewer}');
SELECT id FROM worklist.open_task('s2', 'case', '{reviewer}');
SELECT id FROM worklist.open_task('s3', 'case', '{reviewer}');
SELECT worklist.set_state('s1', 'completed'), worklist.set_state('s2', 'expired'),
       worklist.set_state('s3', 'withdrawn');
SELECT worklist.set_state('s1', 'expired');
SELECT t.id, h.* FROM unnest('{s1,s2,s3}'::text[]) t(id), pg_temp.h(t.id) h ORDER BY 1, 2;

-- escalate: no actor; an escalated task is not escalated again.
SELECT id FROM worklist.open_task('e1', 'case', '{reviewer}', escalation_roles => '{lead}');
SELECT holder FROM worklist.claim('e1', 'bob', '{reviewer}');
SELECT state FROM worklist.escalate('e1');
SELECT state FROM worklist.escalate('e1');
SELECT * FROM pg_temp.h('e1');

-- withdraw_run: withdrawn, once, however often named.
SELECT id FROM worklist.open_task('w1', 'case', '{reviewer}', run_id => 'run-1');
SELECT id FROM worklist.open_task('w2', 'case', '{reviewer}', run_id => 'run-2');
SELECT worklist.withdraw_run('run-1', '{w1,w1,w2}');
SELECT worklist.withdraw_run('run-1', '{w1}');
SELECT t.id, h.* FROM unnest('{w1,w2}'::text[]) t(id), pg_temp.h(t.id) h ORDER BY 1, 2;

-- The sweep: each expiry policy, a claim timeout; each event at the
-- sweep's now, with the caller of sweep() as its login.
SELECT id FROM worklist.open_task('x-deny', 'case', '{reviewer}', due_at => '2000-01-01');
SELECT id FROM worklist.open_task('x-proceed', 'case', '{reviewer}', due_at => '2000-01-01',
                                  expiry_policy => 'proceed');
SELECT id FROM worklist.open_task('x-escalate', 'case', '{reviewer}', due_at => '2000-01-01',
                                  expiry_policy => 'escalate', escalation_roles => '{lead}');
SELECT id FROM worklist.open_task('x-timeout', 'case', '{reviewer}', claim_timeout => '1 minute');
SELECT holder FROM worklist.claim('x-timeout', 'bob', '{reviewer}');
SELECT holder FROM worklist.claim('x-deny', 'bob', '{reviewer}');
BEGIN;
SELECT denied, proceeded, escalated, claims_released
  FROM worklist.sweep(now() + interval '1 hour');
SELECT t.id, e.seq, e.event, e.actor, e.login = current_user AS login_is_caller, e.detail,
       e.at = now() + interval '1 hour' AS at_sweep_now
  FROM unnest('{x-deny,x-proceed,x-escalate,x-timeout}'::text[]) t(id),
       worklist.task_history(t.id, 1) e
 ORDER BY 1, 2;
COMMIT;
-- A second sweep finds nothing and appends nothing.
SELECT denied, proceeded, escalated, claims_released
  FROM worklist.sweep(now() + interval '1 hour');
SELECT count(*) FROM unnest('{x-deny,x-proceed,x-escalate,x-timeout}'::text[]) t(id),
       worklist.task_history(t.id) e;

-- note: refusals.
SELECT worklist.note('a', 'dave', '');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.note('a', 'dave', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.note('a', 'dave', repeat('x', 4097));
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.note('nope', 'dave', 'hello');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.note('a', NULL, 'hello');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.note('a', '', 'hello');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.note(NULL, 'dave', 'hello');
\echo :LAST_ERROR_SQLSTATE
-- 4,096 characters (of two bytes each) are accepted.
SELECT seq, length(detail->>'body') FROM worklist.note('a', 'dave', repeat('é', 4096));

-- task_history: WL001, and paging.
SELECT * FROM worklist.task_history('nope');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.task_history(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT array_agg(seq) FROM worklist.task_history('a', 0, 3);
SELECT array_agg(seq) FROM worklist.task_history('a', 3, 3);
SELECT array_agg(seq) FROM worklist.task_history('a', 9, 3);
SELECT array_agg(seq) FROM worklist.task_history('a', NULL, NULL);
SELECT array_agg(seq) FROM worklist.task_history('a', -5, 0);
SELECT count(*) FROM worklist.task_history('a', 2147483647);
-- A settled task that has no event after the last one read: nothing.
SELECT count(*) FROM worklist.task_history('a', (SELECT max(seq) FROM worklist.task_history('a')));

-- claim_next's skip: NULL and '{}' skip nothing; the tasks named are
-- passed over; 1,000 elements are accepted, 1,001 refused.
SELECT id FROM worklist.open_task('q1', 'case', '{queue}', priority => 3);
SELECT id FROM worklist.open_task('q2', 'case', '{queue}', priority => 2);
SELECT id FROM worklist.open_task('q3', 'case', '{queue}', priority => 1);
BEGIN;
SELECT id FROM worklist.claim_next('bob', '{queue}', NULL);
ROLLBACK;
BEGIN;
SELECT id FROM worklist.claim_next('bob', '{queue}', '{}');
ROLLBACK;
BEGIN;
SELECT id FROM worklist.claim_next('bob', '{queue}', '{q1}');
ROLLBACK;
BEGIN;
SELECT id FROM worklist.claim_next('bob', '{queue}',
	array_append(ARRAY(SELECT 'other-' || g FROM generate_series(1, 997) g), 'q1') || '{q2,q3}');
ROLLBACK;
SELECT id FROM worklist.claim_next('bob', '{queue}',
	array_append(ARRAY(SELECT 'other-' || g FROM generate_series(1, 998) g), 'q1') || '{q2,q3}');
\echo :LAST_ERROR_SQLSTATE
SELECT id FROM worklist.claim_next('bob', '{queue}', '{q1,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT id FROM worklist.claim_next('bob', '{queue}', '{""}');
\echo :LAST_ERROR_SQLSTATE
-- Skipping every task: NULL, and no event.
SELECT worklist.claim_next('bob', '{queue}', '{q1,q2,q3}') IS NULL AS none;
SELECT t.id, h.* FROM unnest('{q1,q2,q3}'::text[]) t(id), pg_temp.h(t.id) h ORDER BY 1, 2;
-- The claim it makes is recorded like any other.
SELECT id FROM worklist.claim_next('bob', '{queue}', '{q1}');
SELECT * FROM pg_temp.h('q2');

-- The history is append-only, for the owner too (this test runs as a
-- superuser): UPDATE, DELETE and TRUNCATE are refused.
UPDATE worklist.task_log SET actor = 'mallory' WHERE task_id = 'a';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM worklist.task_log WHERE task_id = 'a';
\echo :LAST_ERROR_SQLSTATE
TRUNCATE worklist.task_log;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM worklist.task_history('a');

-- Every task's history, whatever happened to it: numbered 1, 2, 3, ...
-- without a gap (seq is unique per task: 1 to the count of its events),
-- event 1 "opened", exactly one settling event for a
-- settled task, under its state, and none for a pending one.
SELECT t.id, t.state,
       min(l.seq) = 1 AND max(l.seq) = count(*) AS gapless,
       (array_agg(l.event ORDER BY l.seq))[1] = 'opened' AS opened_first,
       count(*) FILTER (WHERE l.event IN ('completed', 'expired', 'withdrawn')) AS settling,
       bool_and(l.event = t.state::text OR l.event NOT IN ('completed', 'expired', 'withdrawn')) AS under_state
  FROM worklist.task t JOIN worklist.task_log l ON l.tenant = t.tenant AND l.task_id = t.id
 WHERE t.tenant = 'task_history'
 GROUP BY t.id, t.state
 ORDER BY t.id;

-- Retention takes a task's history with the task -- but keeps a task the
-- current park of a run not concluded awaits, however old.  (The park is
-- recorded directly here, as park_run records one.)
SELECT id FROM worklist.open_task('p1', 'case', '{reviewer}');
SELECT worklist.set_state('p1', 'completed');
SELECT worklist.write_checkpoint('pp', 'ps', 'pr', 'c1', '{}', park_request => 'approve p1',
                                 parked_at => now());
UPDATE worklist.run_checkpoint SET park_tasks = '{p1}'
 WHERE tenant = 'task_history' AND run = 'pr' AND checkpoint_id = 'c1';
INSERT INTO worklist.run_park_task (tenant, task_id, project, session, run, checkpoint_id)
VALUES ('task_history', 'p1', 'pp', 'ps', 'pr', 'c1');
SELECT park_checkpoint_id, concluded_at IS NULL AS running FROM worklist.run
 WHERE tenant = 'task_history' AND run = 'pr';
SELECT worklist.set_retention(tasks => '1 second');
SELECT purged FROM worklist.sweep(now() + interval '1 day');
SELECT count(*) AS tasks_left FROM worklist.task WHERE tenant = 'task_history';
SELECT t.id, count(*) AS events
  FROM worklist.task_log l JOIN worklist.task t ON t.tenant = l.tenant AND t.id = l.task_id
 WHERE l.tenant = 'task_history' GROUP BY t.id ORDER BY 1;
SELECT count(*) AS orphan_events FROM worklist.task_log l
 WHERE l.tenant = 'task_history'
   AND NOT EXISTS (SELECT FROM worklist.task t WHERE t.tenant = l.tenant AND t.id = l.task_id);
-- Once the run is concluded, its park's task goes too, with its history.
UPDATE worklist.run SET concluded_at = now() WHERE tenant = 'task_history' AND run = 'pr';
SELECT purged FROM worklist.sweep(now() + interval '1 day');
SELECT count(*) AS p1_left FROM worklist.task WHERE tenant = 'task_history' AND id = 'p1';
SELECT count(*) AS p1_events FROM worklist.task_log WHERE tenant = 'task_history' AND task_id = 'p1';

SELECT worklist.erase_tenant();
SELECT count(*) FROM worklist.task_log WHERE tenant = 'task_history';
RESET worklist.tenant;
