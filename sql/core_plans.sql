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
SELECT count(*) AS escalated FROM generate_series(41, 45) g, worklist.escalate('t' || g);
SELECT count(*) AS read FROM generate_series(1, 60) g, worklist.task('t' || g);
SELECT count(*) AS queued FROM generate_series(1, 10) g, worklist.queue('{r}');
SELECT count(*) AS for_case FROM generate_series(1, 7) g, worklist.for_case('case-' || g);
SELECT sum(worklist.open_count()) > 0 AS counted FROM generate_series(1, 10);
SELECT count(*) AS overdue FROM generate_series(1, 10) g, worklist.overdue('2021-01-01');
SELECT count(*) AS withdrawn FROM generate_series(0, 1) g, worklist.withdraw_run('run-' || g, '{}');
SELECT count(*) AS sweeps FROM generate_series(1, 5) g, worklist.sweep('2021-01-01', 10);

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
SELECT worklist.stats() IS NOT NULL AS stats;

-- Tables the verbs read sequentially in this transaction: none.
SELECT * FROM pg_temp.seq_scans();
-- The check can fail: a scan of a whole table is counted.
SELECT count(*) > 0 AS has_tasks FROM worklist.task;
SELECT * FROM pg_temp.seq_scans();
COMMIT;

\c :regress_db
DROP DATABASE worklist_plans;
