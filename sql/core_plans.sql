-- Plans made while the tables are empty.
--
-- Right after CREATE EXTENSION and a VACUUM every table is empty, and the
-- planner knows it: a statement planned then would read its table
-- sequentially, and the plan is kept (until the table is next analyzed,
-- which never happens within one transaction).  Rows loaded through the
-- verbs in one transaction would then each cost a read of every row
-- written before.  Every statement must reach its rows through an index
-- however small the tables look when it is planned.
--
-- Each verb runs many times in one transaction on a freshly vacuumed,
-- empty database.  pg_stat_xact_user_tables counts sequential scans not
-- yet reported (CREATE EXTENSION's index builds among them, until a
-- report): the check compares its counts at the end of the transaction
-- with those at its start.

\set regress_db :DBNAME
CREATE DATABASE worklist_plans;
\c worklist_plans
SET client_min_messages = warning;
CREATE EXTENSION worklist;
VACUUM;
SET worklist.tenant = 'plans';
\pset footer off
-- a retention policy, so the sweeps below plan their purges too
SELECT worklist.set_retention(tasks => '1 day', tickets => '1 day', runs => '1 day');

BEGIN;
CREATE TEMP TABLE scans_before AS
SELECT relid, seq_scan FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist';
CREATE FUNCTION pg_temp.seq_scans()
RETURNS TABLE (relname name, seq_scans bigint) LANGUAGE sql AS $$
	SELECT s.relname, s.seq_scan - b.seq_scan
	  FROM pg_stat_xact_user_tables s JOIN scans_before b USING (relid)
	 WHERE s.seq_scan > b.seq_scan ORDER BY s.relname
$$;

-- tasks
SELECT count(*) AS opened FROM generate_series(1, 60) g,
       worklist.open_task('t' || g, 'case-' || (g % 7), '{r}',
                          run_id => 'run-' || (g % 3), priority => g % 4,
                          due_at => '2020-01-01'::timestamptz + g * interval '1 minute',
                          expiry_policy => (ARRAY['deny', 'proceed', 'escalate'])[1 + g % 3]::worklist.expiry_policy);
SELECT count(*) AS claimed FROM generate_series(1, 20) g, worklist.claim('t' || g, 'w' || g, '{r}');
SELECT count(*) AS claimed_next FROM generate_series(1, 20) g, worklist.claim_next('n' || g, '{r}');
SELECT count(*) AS released FROM generate_series(1, 5) g, worklist.release('t' || g, 'w' || g);
SELECT count(*) AS taken_over FROM generate_series(6, 10) g, worklist.take_over('t' || g, 'w' || g, 'x' || g, '{r}');
SELECT count(*) AS completed FROM generate_series(11, 20) g, worklist.complete('t' || g, 'w' || g, '{}');
SELECT count(*) AS handed_over FROM generate_series(6, 8) g, worklist.hand_over('t' || g, 'x' || g, 'y' || g, '{r}');
SELECT count(*) AS updated FROM generate_series(21, 25) g, worklist.update_task('t' || g, priority => 7);
SELECT count(*) AS claims FROM generate_series(1, 5) g, worklist.claims(10);
SELECT count(*) AS claimed_many FROM generate_series(1, 3) g, worklist.claim_many('m' || g, '{r}', 3);
SELECT count(*) AS completed_many FROM generate_series(7, 8) g,
       worklist.complete_many('y' || g, ARRAY['t' || g], ARRAY['{}'::jsonb]);
SELECT count(*) AS escalated FROM generate_series(41, 45) g, worklist.escalate('t' || g);
SELECT count(*) AS read FROM generate_series(1, 60) g, worklist.task('t' || g);
SELECT count(*) AS queued FROM generate_series(1, 10) g, worklist.queue('{r}');
SELECT count(*) AS for_case FROM generate_series(1, 7) g, worklist.for_case('case-' || g);
SELECT sum(worklist.open_count()) > 0 AS counted FROM generate_series(1, 10);
SELECT count(*) AS overdue FROM generate_series(1, 10) g, worklist.overdue('2021-01-01');
SELECT count(*) AS withdrawn FROM generate_series(0, 1) g, worklist.withdraw_run('run-' || g, '{}');
SELECT count(*) AS sweeps FROM generate_series(1, 5) g, worklist.sweep('2021-01-01', 10);
SELECT count(*) AS noted FROM generate_series(1, 60) g, worklist.note('t' || g, 'w' || g, 'a note');
SELECT count(*) AS histories FROM generate_series(1, 60) g, worklist.task_history('t' || g);
SELECT count(*) AS history_pages FROM generate_series(1, 60) g, worklist.task_history('t' || g, 1, 1);
SELECT count(*) AS skipping FROM generate_series(1, 5) g,
       worklist.claim_next('s' || g, '{r}', ARRAY['t1', 't' || (40 + g)]);

-- tickets
SELECT count(*) AS tickets FROM generate_series(1, 30) g,
       worklist.open_ticket('k' || g, 'req', 'title', authorities => '{lead}',
                            open_deadline => '2030-01-01', ladder => '{1 hour}');
SELECT count(*) AS reports FROM generate_series(1, 30) g, generate_series(1, 4) a,
       worklist.report('k' || g, 'agent-' || a, 'working',
                       at => '2024-01-01'::timestamptz + a * interval '1 second');
SELECT count(*) AS states FROM generate_series(1, 30) g, worklist.ticket_state('k' || g);
SELECT count(*) AS history FROM generate_series(1, 30) g, worklist.ticket_history('k' || g);
SELECT count(*) AS closed FROM generate_series(1, 10) g, worklist.close_ticket('k' || g, 'req', 'done');
SELECT count(*) AS watched FROM generate_series(1, 5) g, worklist.overdue_tickets('2031-01-01');

-- runs
SELECT count(*) AS written FROM generate_series(1, 40) g, generate_series(1, 3) c,
       worklist.write_checkpoint('p', 's' || (g % 4), 'r' || g, 'c' || c, '{}',
                                 run_created_at => '2024-01-01'::timestamptz + g * interval '1 s');
SELECT count(*) AS leases FROM generate_series(1, 20) g, worklist.claim_run('p', 's' || (g % 4), 'r' || g, 'w', '1 hour');
SELECT count(*) AS fenced FROM generate_series(1, 20) g,
       worklist.write_checkpoint('p', 's' || (g % 4), 'r' || g, 'c9', '{}',
                                 fence => (SELECT l.fence FROM worklist.claim_run('p', 's' || (g % 4), 'r' || g, 'w', '1 hour') l));
SELECT count(*) AS read FROM generate_series(1, 40) g, worklist.read_checkpoint('p', 's' || (g % 4), 'r' || g, 'c1');
SELECT count(*) AS listed FROM generate_series(1, 40) g, worklist.list_checkpoints('p', 's' || (g % 4), 'r' || g);
SELECT count(*) AS deleted FROM generate_series(1, 10) g, worklist.delete_checkpoint('p', 's' || (g % 4), 'r' || g, 'c2');
SELECT count(*) AS pruned FROM generate_series(1, 10) g, worklist.prune_checkpoints('p', 's' || (g % 4), 'r' || g, 1);
SELECT count(*) AS pages FROM generate_series(1, 10) g, worklist.list_durable_runs('p');
SELECT count(*) AS released FROM generate_series(1, 10) g,
       worklist.release_run('p', 's' || (g % 4), 'r' || g,
                            (SELECT l.fence FROM worklist.claim_run('p', 's' || (g % 4), 'r' || g, 'w', '1 hour') l));
-- what an agent framework keeps beside its checkpoints
SELECT count(*) AS put_writes FROM generate_series(1, 40) g,
       worklist.put_writes('p', 's' || (g % 4), 'r' || g, 'c3', 't', '{0,-1}', '{a,b}', '{1,2}');
SELECT count(*) AS fenced_writes FROM generate_series(1, 10) g,
       worklist.put_writes('p', 's' || (g % 4), 'r' || g, 'c3', 't2', '{0}', '{a}', '{1}',
                           fence => (SELECT l.fence FROM worklist.claim_run('p', 's' || (g % 4), 'r' || g, 'w', '1 hour') l));
SELECT count(*) AS put_values FROM generate_series(1, 40) g,
       worklist.put_values('p', 's' || (g % 4), 'r' || g, '{a,b}', '{v1,v2}', '{1,2}');
SELECT count(*) AS pending FROM generate_series(1, 40) g, worklist.pending_writes('p', 's' || (g % 4), 'r' || g, 'c3');
SELECT count(*) AS run_values FROM generate_series(1, 40) g,
       worklist.run_values('p', 's' || (g % 4), 'r' || g, '{a,b}', '{v1,v2}');
SELECT count(*) AS latest FROM generate_series(1, 40) g, worklist.latest_checkpoint('p', 's' || (g % 4), 'r' || g);
SELECT count(*) AS newest FROM generate_series(1, 5) g, worklist.newest_checkpoints('p', lim => g);
SELECT count(*) AS newest_session FROM generate_series(1, 5) g, worklist.newest_checkpoints('p', 's1', lim => 20 * g);
SELECT count(*) AS newest_run FROM generate_series(1, 5) g, worklist.newest_checkpoints('p', 's1', 'r1', metadata => '{}');
SELECT count(*) AS newest_after FROM generate_series(1, 5) g,
       worklist.newest_checkpoints('p', before_session => 's' || (g % 4), before_run => 'r' || g, before_checkpoint_id => 'c9');
SELECT count(*) AS newest_after_session FROM generate_series(1, 5) g,
       worklist.newest_checkpoints('p', 's' || (g % 4), before_run => 'r' || g, before_checkpoint_id => 'c9');
SELECT count(*) AS newest_after_run FROM generate_series(1, 5) g,
       worklist.newest_checkpoints('p', 's' || (g % 4), 'r' || g, before_checkpoint_id => 'c9');
SELECT sum(worklist.delete_run('p', 's' || (g % 4), 'r' || g)) AS runs_deleted FROM generate_series(31, 40) g;
SELECT count(*) AS parked FROM generate_series(1, 10) g,
       worklist.park_run('p', 's' || (g % 4), 'r' || g, 'pk', ARRAY['t' || (40 + g)],
                         fence => (SELECT l.fence FROM worklist.claim_run('p', 's' || (g % 4), 'r' || g, 'w', '1 hour') l));
SELECT count(*) AS parked_for_many FROM generate_series(1, 2) g,
       worklist.open_task('pm' || g, 'pm', '{pm}'),
       worklist.park_run('pm', 'pm', 'pm' || g, 'pk', ARRAY['pm' || g]);
SELECT count(*) AS completed_parked_many FROM generate_series(1, 2) g,
       worklist.claim('pm' || g, 'w', '{pm}'),
       worklist.complete_many('w', ARRAY['pm' || g], ARRAY['{}'::jsonb]);
SELECT count(c.run) AS next FROM generate_series(1, 10) g, worklist.claim_next_run('p', 'n' || g, '1 hour') c;
SELECT count(c.run) AS next_in_session FROM generate_series(1, 4) g,
       worklist.claim_next_run('p', 'm' || g, '1 hour', 's' || g) c;
SELECT sum(worklist.conclude_run('p', 's' || (g % 4), 'r' || g)) AS withdrawn_by_conclusion
  FROM generate_series(1, 10) g;
SELECT worklist.stats() IS NOT NULL AS stats;

-- Each verb reads what it acts on, not the tenant's other rows.  The
-- statements were planned above, on tables the planner knew as empty;
-- now the tenant gets a thousand more pending tasks, 300 of them claimed
-- with a claim timeout that has not passed and 100 completed too recently
-- to purge, 300 tickets and 300 runs, and each call below must read
-- (fetch from the heap, through any index or scan) fewer than 50 rows of
-- the extension's tables.  The sweep finds nothing new due.  (The few
-- tasks the calls act on come first in queue order: a claim_next or a
-- queue whose roles meet none of the tasks ahead of its own reads past
-- them, which is the queue's order, not a plan's.)
SELECT count(*) AS bulk FROM generate_series(1, 1000) g,
       worklist.open_task('bulk' || g, 'bulk-' || (g % 3), '{bulk}', run_id => 'bulk-run',
                          claim_timeout => '1 hour', due_at => '2100-01-01');
SELECT count(*) AS bulk_claimed FROM generate_series(1, 300) g, worklist.claim('bulk' || g, 'b' || g, '{bulk}');
SELECT count(*) AS bulk_completed FROM generate_series(1, 100) g, worklist.complete('bulk' || g, 'b' || g, '{}');
SELECT count(*) AS bulk_tickets FROM generate_series(1, 300) g,
       worklist.open_ticket('bulk-k' || g, 'req', 'title', authorities => '{lead}', open_deadline => '2100-01-01');
SELECT count(*) AS bulk_runs FROM generate_series(1, 300) g,
       worklist.write_checkpoint('bulk-p', 'bulk-s', 'bulk-r' || g, 'c1', '{}'),
       worklist.put_writes('bulk-p', 'bulk-s', 'bulk-r' || g, 'c1', 't', '{0}', '{a}', '{1}'),
       worklist.put_values('bulk-p', 'bulk-s', 'bulk-r' || g, '{a}', '{v1}', '{1}');
SELECT count(*) AS few FROM generate_series(1, 3) g,
       worklist.open_task('few' || g, 'few-case', '{few}', run_id => 'few-run', priority => 10);
SELECT count(*) AS sweep_first FROM worklist.sweep('2021-01-01', 100);

CREATE FUNCTION pg_temp.rows_read() RETURNS bigint LANGUAGE sql AS $$
	SELECT sum(coalesce(idx_tup_fetch, 0) + seq_tup_read)::bigint
	  FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist'
$$;
CREATE FUNCTION pg_temp.reads(call text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	before bigint := pg_temp.rows_read();
BEGIN
	EXECUTE call;
	RETURN pg_temp.rows_read() - before;
END
$$;
CREATE TEMP TABLE calls (n serial, call text);
INSERT INTO calls (call) VALUES
	($$SELECT worklist.task('few1')$$),
	($$SELECT worklist.claim('few1', 'f', '{few}')$$),
	($$SELECT worklist.release('few1', 'f')$$),
	($$SELECT worklist.claim('few1', 'f', '{few}')$$),
	($$SELECT worklist.take_over('few1', 'f', 'g', '{few}')$$),
	($$SELECT worklist.complete('few1', 'g', '{}')$$),
	($$SELECT worklist.complete('few1', 'g', '{}')$$),
	($$SELECT worklist.escalate('few2')$$),
	($$SELECT worklist.set_state('few2', 'expired')$$),
	($$SELECT worklist.claim_next('f', '{few}')$$),
	($$SELECT worklist.withdraw_run('few-run', '{few3}')$$),
	($$SELECT worklist.withdraw_run('few-run', '{few3, bulk500}')$$),
	($$SELECT count(*) FROM worklist.for_case('few-case')$$),
	($$SELECT count(*) FROM worklist.held('g', 5)$$),
	($$SELECT count(*) FROM worklist.overdue('2021-01-01', 5)$$),
	($$SELECT worklist.open_task('few4', 'few-case', '{few}')$$),
	($$SELECT count(*) FROM generate_series(5, 6) g, worklist.open_task('few' || g, 'few-case', '{few5}', priority => 10)$$),
	($$SELECT worklist.update_task('few5', priority => 11)$$),
	($$SELECT count(*) FROM worklist.claim_many('f', '{few5}', 2)$$),
	($$SELECT worklist.hand_over('few5', 'f', 'g', '{few5}')$$),
	($$SELECT count(*) FROM worklist.claims(5)$$),
	($$SELECT count(*) FROM worklist.complete_many('g', '{few5}', ARRAY['{}'::jsonb])$$),
	($$SELECT worklist.park_run('few-p', 'few-s', 'few-r4', 'c1', '{few6}')$$),
	($$SELECT count(*) FROM worklist.complete_many('f', '{few6}', ARRAY['{}'::jsonb])$$),
	($$SELECT worklist.note('few1', 'g', 'a note')$$),
	($$SELECT count(*) FROM worklist.task_history('few1')$$),
	($$SELECT count(*) FROM worklist.task_history('few1', 2, 2)$$),
	($$SELECT worklist.claim_next('f', '{bulk}', '{bulk301,bulk302}')$$),
	($$SELECT * FROM worklist.sweep('2021-01-01', 10)$$),
	($$SELECT worklist.open_ticket('few-k', 'req', 'title', authorities => '{lead}')$$),
	($$SELECT worklist.report('few-k', 'agent', 'working')$$),
	($$SELECT worklist.ticket_state('few-k')$$),
	($$SELECT count(*) FROM worklist.ticket_history('few-k')$$),
	($$SELECT worklist.close_ticket('few-k', 'req', 'done')$$),
	($$SELECT worklist.write_checkpoint('few-p', 'few-s', 'few-r', 'c1', '{}')$$),
	($$SELECT worklist.claim_run('few-p', 'few-s', 'few-r', 'w', '1 hour')$$),
	($$SELECT worklist.read_checkpoint('few-p', 'few-s', 'few-r', 'c1')$$),
	($$SELECT count(*) FROM worklist.list_checkpoints('few-p', 'few-s', 'few-r')$$),
	($$SELECT worklist.latest_checkpoint('few-p', 'few-s', 'few-r')$$),
	($$SELECT count(*) FROM worklist.newest_checkpoints('few-p', lim => 5)$$),
	($$SELECT count(*) FROM worklist.newest_checkpoints('few-p', 'few-s', lim => 5)$$),
	($$SELECT count(*) FROM worklist.newest_checkpoints('few-p', 'few-s', 'few-r', metadata => '{}')$$),
	($$SELECT count(*) FROM worklist.newest_checkpoints('few-p', 'few-s', 'few-r', before_checkpoint_id => 'c1')$$),
	($$SELECT worklist.put_writes('few-p', 'few-s', 'few-r', 'c1', 't', '{0,-1}', '{a,b}', '{1,2}')$$),
	($$SELECT count(*) FROM worklist.pending_writes('few-p', 'few-s', 'few-r', 'c1')$$),
	($$SELECT worklist.put_values('few-p', 'few-s', 'few-r', '{a,b}', '{v1,v2}', '{1,2}')$$),
	($$SELECT count(*) FROM worklist.run_values('few-p', 'few-s', 'few-r', '{a,b}', '{v1,v2}')$$),
	($$SELECT worklist.delete_checkpoint('few-p', 'few-s', 'few-r', 'c1')$$),
	($$SELECT worklist.prune_checkpoints('few-p', 'few-s', 'few-r', 0)$$),
	($$SELECT worklist.park_run('few-p', 'few-s', 'few-r2', 'c1', '{few4}')$$),
	($$SELECT worklist.write_checkpoint('few-p', 'few-s', 'few-r3', 'c1', '{}')$$),
	($$SELECT worklist.claim_next_run('few-p', 'w', '1 hour')$$),
	($$SELECT worklist.claim_next_run('few-p', 'w', '1 hour', 'few-s')$$),
	($$SELECT worklist.conclude_run('few-p', 'few-s', 'few-r2')$$),
	($$SELECT worklist.delete_run('few-p', 'few-s', 'few-r',
	     (SELECT l.fence FROM worklist.claim_run('few-p', 'few-s', 'few-r', 'w', '1 hour') l))$$);
SELECT n, call, pg_temp.reads(call) AS rows_read INTO TEMP read_by_call FROM calls ORDER BY n;
SELECT count(*) AS calls, count(*) FILTER (WHERE rows_read < 50) AS reading_little FROM read_by_call;
-- (the calls that read more, if any)
SELECT call, rows_read FROM read_by_call WHERE rows_read >= 50 ORDER BY n;
-- A claim leaves its task in task_claimable (the claim is a HOT update:
-- see sql/parts/10_task.sql), so a queue whose head is held reads past
-- the held rows -- the 200 bulk tasks claimed and not completed -- and
-- no further.  (claim_next starts past them, at the tenant's hint, once a
-- transaction of its own has raised it.)
SELECT pg_temp.reads($$SELECT count(*) FROM worklist.queue('{bulk}', 5)$$)
       - (SELECT count(*) FROM worklist.claims(1000) WHERE id LIKE 'bulk%') AS queue_reads_beyond_held
  INTO TEMP queue_reads;
SELECT queue_reads_beyond_held < 50 AS queue_reads_little_beyond_held FROM queue_reads;
-- The check can fail: a count of the pending tasks reads them.
SELECT pg_temp.reads($$SELECT count(*) FROM worklist.task WHERE settled_at IS NULL$$) >= 50 AS count_reads_many;

-- The verbs that name a task's key find the task through the primary key
-- and scan no other index of the table, or of worklist.task_claim beside
-- it (whose rows they reach by its primary key).  Any other would find
-- the row by walking entries: task_held, say, keeps an entry for every
-- claim a holder took until VACUUM removes it, and release, take_over and
-- complete, which also name the holder, once walked them all.
-- (in schema public, so that the new session below has it too)
CREATE FUNCTION public.side_scans(call text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	q text := $q$SELECT sum(pg_stat_get_xact_numscans(indexrelid))::bigint FROM pg_index
	             WHERE indrelid IN ('worklist.task'::regclass, 'worklist.task_claim'::regclass)
	               AND indexrelid NOT IN ('worklist.task_pkey'::regclass,
	                                      'worklist.task_claim_pkey'::regclass)$q$;
	before bigint;
	after bigint;
BEGIN
	EXECUTE q INTO before;
	EXECUTE call;
	EXECUTE q INTO after;
	RETURN after - before;
END
$$;
-- Each by-key verb in turn on task (claimed by holder, released, claimed
-- again, taken over by taker, completed) and on other (escalated, then
-- expired): the scans of other indexes each made.
CREATE FUNCTION public.by_key_side_scans(task text, other text, holder text, taker text,
                                         roles text,
                                         OUT claim bigint, OUT release bigint,
                                         OUT claim_again bigint, OUT take_over bigint,
                                         OUT complete bigint, OUT escalate bigint,
                                         OUT set_state bigint)
LANGUAGE plpgsql AS $$
BEGIN
	claim := public.side_scans(format('SELECT worklist.claim(%L, %L, %L)', task, holder, roles));
	release := public.side_scans(format('SELECT worklist.release(%L, %L)', task, holder));
	claim_again := public.side_scans(format('SELECT worklist.claim(%L, %L, %L)', task, holder, roles));
	take_over := public.side_scans(format('SELECT worklist.take_over(%L, %L, %L, %L)',
	                                      task, holder, taker, roles));
	complete := public.side_scans(format('SELECT worklist.complete(%L, %L, %L)', task, taker, '{}'));
	escalate := public.side_scans(format('SELECT worklist.escalate(%L)', other));
	set_state := public.side_scans(format('SELECT worklist.set_state(%L, %L)', other, 'expired'));
END
$$;
SELECT * FROM public.by_key_side_scans('bulk900', 'bulk901', 'h', 'h2', '{bulk}');
-- The check can fail: held() reads task_held.
SELECT public.side_scans($$SELECT count(*) FROM worklist.held('h2')$$) AS held;

-- Tables the verbs read sequentially in this transaction: none.
SELECT * FROM pg_temp.seq_scans();
-- The check can fail: a scan of a whole table is counted.
SELECT count(*) > 0 AS has_tasks FROM worklist.task;
SELECT * FROM pg_temp.seq_scans();
COMMIT;

-- The same with plans made on tables the planner knows as full: a new
-- session plans afresh.  One holder has settled many tasks.
\c worklist_plans
SET client_min_messages = warning;
SET worklist.tenant = 'plans';
SELECT count(*) AS history FROM generate_series(1, 2000) g,
       worklist.open_task('hist' || g, 'hist', '{hist}') o,
       worklist.claim('hist' || g, 'veteran', '{hist}') c,
       worklist.complete('hist' || g, 'veteran', '{}') d;
ANALYZE worklist.task;
SELECT o.id FROM generate_series(1, 2) g, worklist.open_task('vet' || g, 'hist', '{hist}') o;
BEGIN;
SELECT * FROM public.by_key_side_scans('vet1', 'vet2', 'veteran', 'rookie', '{hist}');
COMMIT;

\c :regress_db
DROP DATABASE worklist_plans;
