-- Runs: conclude_run, and WL008 for every write, park and claim of a
-- concluded run.

SET worklist.tenant = 'run_conclude';
SET timezone = 'UTC';

-- A refusal's SQLSTATE, message and DETAIL, the fence f written F.
CREATE FUNCTION pg_temp.refusal(q text, f bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; m text; d text;
BEGIN
	EXECUTE q;
	RETURN 'admitted';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
	RETURN st || ': ' || m || ' / ' || replace(replace(d, f::text, 'F'), (f - 1)::text, 'F-1');
END
$$;

CREATE FUNCTION pg_temp.run(r text)
RETURNS TABLE (concluded_at timestamptz, claim_holder text, claim_expires_at timestamptz,
               park_state worklist.park_state, park_resolved_at timestamptz)
LANGUAGE sql AS $$
	SELECT e.concluded_at, e.claim_holder, e.claim_expires_at, e.park_state, e.park_resolved_at
	  FROM worklist.list_durable_runs('p', 's', now => '2024-01-01 01:00') pg, unnest(pg.entries) e
	 WHERE e.run = r
$$;

-- A held run, concluded by its holder: the lease ends at now, no task to
-- withdraw.
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c1', '{}', created_at => '2024-01-01 00:00');
SELECT fence AS f1 FROM worklist.claim_run('p', 's', 'r1', 'w1', '1 hour', '2024-01-01 00:01') \gset
SELECT worklist.conclude_run('p', 's', 'r1', :f1, '2024-01-01 00:02') AS withdrawn;
SELECT * FROM pg_temp.run('r1');
SELECT expires_at, released FROM worklist.run_claim WHERE tenant = 'run_conclude' AND run = 'r1';

-- Concluding again: 0, nothing changes, whatever the fence.
SELECT worklist.conclude_run('p', 's', 'r1', :f1, '2024-01-01 00:30') AS again;
SELECT worklist.conclude_run('p', 's', 'r1', 12345, '2024-01-01 00:30') AS stale_fence_too;
SELECT worklist.conclude_run('p', 's', 'r1', NULL, '2024-01-01 00:30') AS unfenced_too;
SELECT concluded_at FROM pg_temp.run('r1');

-- Every write, park and claim of it: WL008, whatever the fence.
\set VERBOSITY default
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c2', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c1', '{}', fence => :f1);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c1', '{}', fence => 99);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r1', 'w1', '1 hour', '2024-01-01 00:03');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r1', 'w2', '1 hour', '2024-01-01 00:03');
\echo :LAST_ERROR_SQLSTATE
SELECT (worklist.open_task('t0', 'case', '{r}')).id;
SELECT worklist.park_run('p', 's', 'r1', 'c3', '{t0}', now => '2024-01-01 00:03');
\echo :LAST_ERROR_SQLSTATE
-- WL008 comes before the fence rule and before WL001
SELECT worklist.park_run('p', 's', 'r1', 'c3', '{nosuchtask}', fence => 7, now => '2024-01-01 00:03');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
-- reads, listing, delete and prune work and keep the conclusion
SELECT checkpoint_id FROM worklist.read_checkpoint('p', 's', 'r1', 'c1');
SELECT count(*) FROM worklist.list_checkpoints('p', 's', 'r1');
SELECT count(*) AS concluded FROM worklist.list_durable_runs('p', concluded => true) pg, unnest(pg.entries);
SELECT count(*) AS not_concluded FROM worklist.list_durable_runs('p', concluded => false) pg, unnest(pg.entries);
SELECT worklist.prune_checkpoints('p', 's', 'r1', 0);
SELECT concluded_at FROM worklist.run WHERE tenant = 'run_conclude' AND run = 'r1';

-- Fence rule.  A live lease: a stale fence is WL007, a NULL fence is
-- WL007 naming the holder's fence.
SELECT worklist.write_checkpoint('p', 's', 'r2', 'c1', '{}', created_at => '2024-01-01 00:00');
SELECT fence AS f2 FROM worklist.claim_run('p', 's', 'r2', 'w1', '1 hour', '2024-01-01 00:01') \gset
SELECT pg_temp.refusal(format('SELECT worklist.conclude_run(''p'', ''s'', ''r2'', %s, ''2024-01-01 00:02'')', :f2 - 1), :f2);
SELECT pg_temp.refusal('SELECT worklist.conclude_run(''p'', ''s'', ''r2'', NULL, ''2024-01-01 00:02'')', :f2);
\set VERBOSITY default
-- a fence on a run never claimed: WL007, no current fence
SELECT worklist.write_checkpoint('p', 's', 'r3', 'c1', '{}', created_at => '2024-01-01 00:00');
SELECT worklist.conclude_run('p', 's', 'r3', 5, '2024-01-01 00:02');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT concluded_at FROM pg_temp.run('r2');
-- once the lease expired, NULL is admitted (an operator finishing an
-- abandoned run), and so is the current fence of an expired lease
SELECT worklist.conclude_run('p', 's', 'r2', NULL, '2024-01-01 01:01') AS unfenced_after_expiry;
SELECT concluded_at, claim_holder, claim_expires_at FROM pg_temp.run('r2');
SELECT worklist.conclude_run('p', 's', 'r3', NULL, '2024-01-01 00:02') AS never_claimed;

-- A run with neither checkpoint nor lease is recorded concluded; later
-- writes and claims get WL008, and it is not listed (no checkpoint).
SELECT worklist.conclude_run('p', 's', 'ghost', NULL, '2024-01-01 00:02') AS ghost;
SELECT concluded_at, listed FROM worklist.run WHERE tenant = 'run_conclude' AND run = 'ghost';
SELECT worklist.write_checkpoint('p', 's', 'ghost', 'c1', '{}');
SELECT worklist.claim_run('p', 's', 'ghost', 'w', '1 hour');

-- The pending tasks of the current park are withdrawn, whatever their
-- run_id; a settled one stays as it is.  The park resolves.
SELECT (worklist.open_task('t1', 'case', '{r}', run_id => 'elsewhere')).id AS opened;
SELECT (worklist.open_task('t2', 'case', '{r}')).id AS opened;
SELECT (worklist.open_task('t3', 'case', '{r}')).id AS opened;
SELECT (worklist.claim('t3', 'u', '{r}')).state AS claimed;
SELECT worklist.complete('t3', 'u', '{"ok": true}') AS completed;
SELECT fence AS f4 FROM worklist.claim_run('p', 's', 'r4', 'w1', '1 hour', '2024-01-01 00:00') \gset
SELECT worklist.write_checkpoint('p', 's', 'r4', 'c0', '{}', fence => :f4, created_at => '2024-01-01 00:00');
SELECT park_tasks FROM worklist.park_run('p', 's', 'r4', 'c1', '{t1,t2,t3}', fence => :f4, now => '2024-01-01 00:01');
SELECT worklist.claim_next_run('p', 'w2', '1 hour', now => '2024-01-01 00:02') IS NULL AS outstanding_park_not_offered;
SELECT fence AS f4 FROM worklist.claim_run('p', 's', 'r4', 'w2', '1 hour', '2024-01-01 00:02') \gset
SELECT worklist.conclude_run('p', 's', 'r4', :f4, '2024-01-01 00:03') AS withdrawn;
SELECT id, state, settled_at = '2024-01-01 00:03' AS settled_by_conclusion FROM worklist.task WHERE tenant = 'run_conclude' AND id IN ('t1', 't2', 't3') ORDER BY id;
SELECT task_id, event FROM worklist.task_log WHERE tenant = 'run_conclude' AND event = 'withdrawn' ORDER BY task_id;
SELECT park_state, park_resolved_at FROM pg_temp.run('r4');
SELECT park_resolved_at FROM worklist.read_checkpoint('p', 's', 'r4', 'c1');

-- A conclusion withdraws all of its park's tasks first and then judges
-- the park once: withdrawing the 1,000 tasks of a park, listed in the
-- order they are locked in, reads a few rows per task (judging the park
-- after each task would read its tasks again each time).
SELECT count(*) FROM generate_series(1, 1000) g, worklist.open_task('big' || g, 'big', '{r}');
SELECT fence AS f5 FROM worklist.claim_run('p', 's', 'r5', 'w1', '1 hour') \gset
SELECT p.park_resolved_at IS NULL AS outstanding
  FROM worklist.park_run('p', 's', 'r5', 'c1',
                         ARRAY(SELECT 'big' || g FROM generate_series(1, 1000) g ORDER BY ('big' || g) COLLATE "C"),
                         fence => :f5) p;
SELECT fence AS f5 FROM worklist.claim_run('p', 's', 'r5', 'w1', '1 hour') \gset
BEGIN;
CREATE TEMP TABLE reads_before AS
SELECT sum(coalesce(idx_tup_fetch, 0) + seq_tup_read) AS n
  FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist';
SELECT worklist.conclude_run('p', 's', 'r5', :f5) AS withdrawn;
SELECT (SELECT sum(coalesce(idx_tup_fetch, 0) + seq_tup_read)
          FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist') - b.n < 10 * 1000
       AS few_reads_per_task
  FROM reads_before b;
COMMIT;
SELECT park_resolved_at IS NOT NULL AS resolved FROM worklist.read_checkpoint('p', 's', 'r5', 'c1');

-- Arguments.
SELECT worklist.conclude_run(NULL, 's', 'r');
SELECT worklist.conclude_run('p', '', 'r');
SELECT worklist.conclude_run('p', 's', repeat('x', 257));
SELECT worklist.conclude_run('p', 's', 'r', now => NULL);
SELECT worklist.conclude_run('p', 's', 'r', now => 'infinity');

-- Leave no fence behind for the tests that follow (they set the sequence).
SELECT worklist.erase_tenant() > 0 AS erased;
