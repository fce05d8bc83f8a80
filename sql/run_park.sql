-- Runs: park_run parks a run on tasks, gives its lease up, and the park
-- resolves in the transaction that settles its last pending task.

SET worklist.tenant = 'run_park';
SET timezone = 'UTC';

CREATE FUNCTION pg_temp.run(r text, at timestamptz DEFAULT '2024-01-01 00:30')
RETURNS TABLE (park_state worklist.park_state, park_checkpoint_id text, park_request text,
               parked_at timestamptz, park_deadline timestamptz, park_resolved_at timestamptz,
               claim_holder text, claim_expired boolean)
LANGUAGE sql AS $$
	SELECT e.park_state, e.park_checkpoint_id, e.park_request, e.parked_at, e.park_deadline,
	       e.park_resolved_at, e.claim_holder, e.claim_expired
	  FROM worklist.list_durable_runs('p', 's', now => at) pg, unnest(pg.entries) e
	 WHERE e.run = r
$$;

SELECT (worklist.open_task('t' || g, 'case', '{r}', run_id => 'agent')).id FROM generate_series(1, 6) g;

-- The holder parks on two tasks: a checkpoint written at now, parked at
-- now, awaiting them; the lease is given up (expired at now).
SELECT fence AS f1 FROM worklist.claim_run('p', 's', 'r1', 'w1', '1 hour', '2024-01-01 00:00') \gset
SELECT * FROM worklist.park_run('p', 's', 'r1', 'c1', '{t1,t2}', fence => :f1,
                                body => '{"step": 3}', park_request => 'approve-refund',
                                park_deadline => '2024-01-02', now => '2024-01-01 00:01',
                                metadata => '{"source": "loop"}', parent_checkpoint_id => 'c0');
SELECT * FROM pg_temp.run('r1');
SELECT holder, expires_at, released FROM worklist.run_claim WHERE tenant = 'run_park' AND run = 'r1';
-- the fence of the holding stays the current one: a late fenced write of
-- the former holder is still admitted, as after release_run
SELECT task_id, checkpoint_id, resolved FROM worklist.run_park_task WHERE tenant = 'run_park' ORDER BY 1;

-- Settling one task leaves it outstanding; settling the last resolves
-- it, at the instant the settlement was judged at.
SELECT (worklist.claim('t1', 'u', '{r}')).state;
SELECT worklist.complete('t1', 'u', '{"approve": true}');
SELECT park_state FROM pg_temp.run('r1');
SELECT worklist.set_state('t2', 'withdrawn'::worklist.task_state) IS NOT NULL AS set;
SELECT park_state, park_resolved_at IS NOT NULL AS resolved FROM pg_temp.run('r1');
SELECT park_resolved_at IS NOT NULL AS resolved FROM worklist.read_checkpoint('p', 's', 'r1', 'c1');
-- the answers are read from the tasks
SELECT id, state, decided_by, decision FROM worklist.task WHERE tenant = 'run_park' AND id IN ('t1', 't2') ORDER BY id;

-- Every task settled already: resolved at once, at now.
SELECT park_resolved_at FROM worklist.park_run('p', 's', 'r2', 'c1', '{t1,t2,t1}', now => '2024-01-01 00:02');
SELECT park_state FROM pg_temp.run('r2');

-- An escalation does not resolve a park (the task is still pending).
SELECT park_resolved_at FROM worklist.park_run('p', 's', 'r3', 'c1', '{t3}', now => '2024-01-01 00:03');
SELECT (worklist.escalate('t3')).state;
SELECT park_state FROM pg_temp.run('r3');
-- withdraw_run settles it, and resolves the park
SELECT worklist.withdraw_run('agent', '{t3}');
SELECT park_state FROM pg_temp.run('r3');

-- A deadline past: the park reads expired; the tasks stay as they are.
SELECT park_deadline FROM worklist.park_run('p', 's', 'r4', 'c1', '{t4}', park_deadline => '2024-01-01 00:10',
                                            now => '2024-01-01 00:04');
SELECT park_state FROM pg_temp.run('r4', '2024-01-01 00:09:59');
SELECT park_state FROM pg_temp.run('r4', '2024-01-01 00:10');
SELECT state FROM worklist.task WHERE tenant = 'run_park' AND id = 't4';

-- A new park supersedes the current one; the superseded park still
-- resolves when its tasks settle.
SELECT park_tasks FROM worklist.park_run('p', 's', 'r5', 'c1', '{t5}', now => '2024-01-01 00:05');
SELECT park_tasks FROM worklist.park_run('p', 's', 'r5', 'c2', '{t6}', now => '2024-01-01 00:06');
SELECT park_checkpoint_id FROM pg_temp.run('r5');
SELECT worklist.withdraw_run('agent', '{t5}');
SELECT park_resolved_at IS NOT NULL AS old_resolved FROM worklist.read_checkpoint('p', 's', 'r5', 'c1');
SELECT park_state FROM pg_temp.run('r5');
-- overwriting a parked checkpoint with write_checkpoint forgets its tasks
SELECT worklist.write_checkpoint('p', 's', 'r5', 'c2', '{}', created_at => '2024-01-01 00:07');
SELECT park_tasks, park_request FROM worklist.read_checkpoint('p', 's', 'r5', 'c2');
SELECT count(*) AS records FROM worklist.run_park_task WHERE tenant = 'run_park' AND run = 'r5' AND checkpoint_id = 'c2';

-- Refusals, in order: arguments, WL008 (run_conclude), the fence, WL001.
SELECT fence AS f6 FROM worklist.claim_run('p', 's', 'r6', 'w1', '1 hour', '2024-01-01 00:00') \gset
\set VERBOSITY terse
SELECT worklist.park_run('p', 's', 'r6', 'c1', '{t4}', fence => :f6 - 1, now => '2024-01-01 00:10');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.park_run('p', 's', 'r6', 'c1', '{t4}', now => '2024-01-01 00:10');
\echo :LAST_ERROR_SQLSTATE
-- the fence rule comes before WL001
SELECT worklist.park_run('p', 's', 'r6', 'c1', '{nosuch}', now => '2024-01-01 00:10');
\echo :LAST_ERROR_SQLSTATE
-- WL001 names the first missing task in the array's order
SELECT worklist.park_run('p', 's', 'r6', 'c1', '{t4,zz,aa}', fence => :f6, now => '2024-01-01 00:10');
\echo :LAST_ERROR_SQLSTATE
-- a task of another tenant does not exist here
SET worklist.tenant = 'run_park_other';
SELECT (worklist.open_task('other', 'case', '{r}')).id;
SET worklist.tenant = 'run_park';
SELECT worklist.park_run('p', 's', 'r6', 'c1', '{other}', fence => :f6, now => '2024-01-01 00:10');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
-- nothing was written by the refusals, and the lease is still held
SELECT count(*) FROM worklist.list_checkpoints('p', 's', 'r6');
SELECT holder, expires_at FROM worklist.run_claim WHERE tenant = 'run_park' AND run = 'r6';

-- Bad arguments (22023, 54000).
SELECT worklist.park_run('p', 's', 'r7', 'c1', NULL);
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{}');
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{t4,NULL}');
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{t4,""}');
SELECT worklist.park_run('p', 's', 'r7', 'c1', ARRAY[repeat('x', 257)]);
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{{t4},{t5}}');
SELECT worklist.park_run('p', 's', 'r7', 'c1', array_fill('t4'::text, ARRAY[1001]));
SELECT count(*) FROM worklist.park_run('p', 's', 'r7', 'c1', array_fill('t4'::text, ARRAY[1000]));
SELECT worklist.park_run(NULL, 's', 'r7', 'c1', '{t4}');
SELECT worklist.park_run('p', 's', 'r7', '', '{t4}');
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{t4}', body => NULL);
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{t4}', park_request => '');
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{t4}', now => NULL);
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{t4}', now => '-infinity');
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{t4}', parent_checkpoint_id => '');
SET worklist.max_document_size = 100;
\set VERBOSITY default
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{t4}', metadata => jsonb_build_object('x', repeat('y', 200)));
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.park_run('p', 's', 'r7', 'c1', '{t4}', body => jsonb_build_object('x', repeat('y', 200)));
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
RESET worklist.max_document_size;
-- NULL metadata means {}, a NULL park_request 'tasks'
SELECT metadata, park_request FROM worklist.park_run('p', 's', 'r7', 'c2', '{t4}', metadata => NULL, park_request => NULL);

-- Every settling path resolves the park of its last pending task, in
-- its own transaction; an escalation (by the verb or by the sweep's
-- policy) does not.  complete_many resolves the park of each task it
-- settles, also one (complete_many_both) whose two tasks it settles in
-- one call, but not one (complete_many_half) whose other task is still
-- pending (and then escalated by the sweep).
SET worklist.tenant = 'run_park_paths';
SELECT (worklist.open_task(id, 'case', '{r}', run_id => 'agent', due_at => '2024-01-01 01:00',
                           expiry_policy => pol::worklist.expiry_policy)).id
  FROM (VALUES ('complete', 'deny'), ('set_state', 'deny'), ('withdraw_run', 'deny'),
               ('conclude_run', 'deny'), ('sweep_deny', 'deny'), ('sweep_proceed', 'proceed'),
               ('sweep_escalate', 'escalate'), ('escalate', 'deny'), ('complete_many', 'deny'),
               ('complete_many_both', 'deny'), ('complete_many_both_b', 'deny'),
               ('complete_many_half', 'deny'), ('complete_many_half_b', 'escalate')) v(id, pol);
SELECT count(*) FROM (SELECT worklist.park_run('p', 's', id, 'c1',
                                               CASE WHEN id IN ('complete_many_both', 'complete_many_half') THEN ARRAY[id, id || '_b']
                                                    ELSE ARRAY[id] END,
                                               now => '2024-01-01')
                        FROM unnest('{complete,set_state,withdraw_run,conclude_run,sweep_deny,sweep_proceed,sweep_escalate,escalate,complete_many,complete_many_both,complete_many_half}'::text[]) id) x;
SELECT (worklist.claim('complete', 'u', '{r}')).state;
SELECT worklist.complete('complete', 'u', '{"ok": true}');
SELECT id, (worklist.claim(id, 'u', '{r}')).state
  FROM unnest('{complete_many,complete_many_both,complete_many_both_b,complete_many_half}'::text[]) id;
SELECT * FROM worklist.complete_many('u', '{complete_many_both_b,complete_many,complete_many_both,complete_many_half}',
                                     ARRAY['{"ok": 1}', '{"ok": 2}', '{"ok": 3}', '{"ok": 4}']::jsonb[]);
SELECT worklist.set_state('set_state', 'expired'::worklist.task_state);
SELECT worklist.withdraw_run('agent', '{withdraw_run}');
SELECT worklist.conclude_run('p', 's', 'conclude_run', now => '2024-01-01 00:30');
SELECT (worklist.escalate('escalate')).state;
SELECT denied, proceeded, escalated FROM worklist.sweep('2024-01-01 02:00');
SELECT t.id, t.state, e.park_state, e.park_resolved_at = t.settled_at AS at_settlement
  FROM worklist.task t
  JOIN worklist.list_durable_runs('p', 's', now => '2024-01-01 03:00') pg ON true,
       unnest(pg.entries) e
 WHERE t.tenant = 'run_park_paths' AND e.run = t.id
 ORDER BY t.id;
SELECT worklist.erase_tenant() > 0 AS erased;

-- Retention never purges a run whose current park is outstanding, nor,
-- while the run is not concluded, the tasks its current park awaits;
-- a concluded run goes, conclusion included.
SET worklist.tenant = 'run_park_retention';
SELECT worklist.set_retention(tasks => '1 day', runs => '1 day');
SELECT (worklist.open_task(id, 'case', '{r}')).id FROM unnest('{a1,a2,b1,c1}'::text[]) id;
SELECT worklist.set_state(id, 'completed'::worklist.task_state) FROM unnest('{a2,b1,c1}'::text[]) id;
-- waiting: outstanding on a1 (pending) and a2 (settled)
SELECT park_state FROM worklist.park_run('p', 's', 'waiting', 'c1', '{a1,a2}', now => '2024-01-01')
  CROSS JOIN (VALUES ('parked')) v(park_state);
-- answered: resolved at once, not concluded: its task b1 stays, the run may go
SELECT park_resolved_at FROM worklist.park_run('p', 's', 'answered', 'c1', '{b1}', now => '2024-01-01');
-- done: concluded; it goes, and so does its task c1
SELECT park_resolved_at FROM worklist.park_run('p', 's', 'done', 'c1', '{c1}', now => '2024-01-01');
SELECT worklist.conclude_run('p', 's', 'done', now => '2024-01-01');
SELECT purged FROM worklist.sweep(now => now() + interval '30 days');
SELECT run, concluded_at FROM worklist.run WHERE tenant = 'run_park_retention' ORDER BY run;
SELECT id FROM worklist.task WHERE tenant = 'run_park_retention' ORDER BY id;
SELECT task_id, run FROM worklist.run_park_task WHERE tenant = 'run_park_retention' ORDER BY 1;
SELECT worklist.erase_tenant() > 0 AS erased;
SET worklist.tenant = 'run_park';

-- A settlement finds the parks of its task by the task, whatever the
-- statistics said when the session planned it: here run_park_task was
-- last analyzed holding one row (autovacuum kept away), and a later
-- session settles one task of a tenant that has 300 parks.  It reads a
-- few rows, not every park of the tenant.
ALTER TABLE worklist.run_park_task SET (autovacuum_enabled = off);
SET worklist.tenant = 'run_park_plans';
SELECT park_tasks FROM worklist.park_run('pp', 's', 'r0', 'c1', ARRAY[(worklist.open_task('one', 'c', '{r}')).id]);
ANALYZE worklist.run_park_task;
SELECT count(*) AS parked FROM generate_series(1, 300) g,
       worklist.park_run('pp', 's', 'r' || g, 'c1', ARRAY[(worklist.open_task('p' || g, 'c', '{r}')).id]);
SELECT (worklist.claim('p7', 'w', '{r}')).holder;
\c
SET worklist.tenant = 'run_park_plans';
BEGIN;
CREATE TEMP TABLE reads_before AS
SELECT sum(coalesce(idx_tup_fetch, 0) + seq_tup_read) AS n
  FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist';
SELECT worklist.complete('p7', 'w', '{}');
SELECT (SELECT sum(coalesce(idx_tup_fetch, 0) + seq_tup_read)
          FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist') - b.n < 50 AS reads_little
  FROM reads_before b;
COMMIT;
SELECT park_resolved_at IS NOT NULL AS resolved FROM worklist.read_checkpoint('pp', 's', 'r7', 'c1');
ALTER TABLE worklist.run_park_task RESET (autovacuum_enabled);
SELECT worklist.erase_tenant() > 0 AS erased;

-- A park's tasks settled one at a time in the park's order: each
-- settlement finds the next task pending at once, rather than passing
-- every task settled before it (which would read 45,000 rows here).
SELECT count(*) AS opened FROM generate_series(1, 300) g, worklist.open_task('q' || g, 'c', '{r}');
SELECT park_tasks[1:2] FROM worklist.park_run('pq', 's', 'r', 'c1', ARRAY(SELECT 'q' || g FROM generate_series(1, 300) g));
BEGIN;
CREATE TEMP TABLE settle_reads_before AS
SELECT sum(coalesce(idx_tup_fetch, 0) + seq_tup_read) AS n
  FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist';
SELECT count(*) FILTER (WHERE worklist.set_state('q' || g, 'withdrawn')) AS settled
  FROM generate_series(1, 299) g;
SELECT (SELECT sum(coalesce(idx_tup_fetch, 0) + seq_tup_read)
          FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist') - b.n < 30 * 299
       AS few_reads_per_task
  FROM settle_reads_before b;
COMMIT;
SELECT park_resolved_at IS NULL AS outstanding FROM worklist.read_checkpoint('pq', 's', 'r', 'c1');
SELECT worklist.set_state('q300', 'withdrawn');
SELECT park_resolved_at IS NOT NULL AS resolved FROM worklist.read_checkpoint('pq', 's', 'r', 'c1');
SELECT worklist.erase_tenant() > 0 AS erased;
SET worklist.tenant = 'run_park';

-- Leave no fence behind for the tests that follow (they set the sequence).
SELECT worklist.erase_tenant() > 0 AS erased;
