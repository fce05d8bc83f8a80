-- stats(): per-tenant gauges, and cumulative counters kept per tenant in
-- shared memory (the test server preloads the library).  Counters are
-- cumulative since server start, so the test compares before and after.

SET worklist.tenant = 'sweep_stats';
CREATE TEMP TABLE before AS SELECT worklist.stats()->'counters' AS c;
CREATE FUNCTION pg_temp.delta() RETURNS TABLE (counter text, delta bigint)
LANGUAGE sql AS $$
	SELECT k, (worklist.stats()->'counters'->>k)::bigint - (b.c->>k)::bigint
	  FROM before b, jsonb_object_keys(b.c) k ORDER BY k
$$;

-- The keys, for a tenant with nothing yet.
SELECT jsonb_object_keys(worklist.stats()) AS key ORDER BY 1;
SELECT worklist.stats()->'tasks' AS tasks, worklist.stats()->'tickets' AS tickets;

-- Claims: claim, claim_next, a conflict, a take-over; a same-holder
-- re-claim and a take-over from oneself change nothing and count nothing.
SELECT id FROM worklist.open_task('t1', 'c', '{r}');
SELECT id FROM worklist.open_task('t2', 'c', '{r}');
SELECT id FROM worklist.open_task('t3', 'c', '{r}', due_at => now() - interval '1 hour');
SELECT id FROM worklist.open_task('t4', 'c', '{r}', due_at => now() + interval '1 hour');
SELECT holder FROM worklist.claim('t1', 'ann', '{r}');
SELECT holder FROM worklist.claim('t1', 'ann', '{r}');
SELECT worklist.claim('t1', 'bob', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t1', 'cy', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT holder FROM worklist.claim_next('bob', '{r}');
SELECT holder FROM worklist.take_over('t1', 'ann', 'cy', '{r}');
SELECT holder FROM worklist.take_over('t1', 'cy', 'cy', '{r}');
SELECT worklist.complete('t1', 'cy', '{"ok": true}');

-- Leases: a reclaim after expiry counts; a renewal and a claim after a
-- release do not.  A stale fenced write is refused and counted.
SELECT fence AS f1 FROM worklist.claim_run('p', 's', 'r', 'w1', '1 minute', '2999-01-01 00:00') \gset
SELECT fence AS f2 FROM worklist.claim_run('p', 's', 'r', 'w1', '1 minute', '2999-01-01 00:00:30') \gset
SELECT fence AS f3 FROM worklist.claim_run('p', 's', 'r', 'w2', '1 minute', '2999-01-01 00:05') \gset
\set VERBOSITY terse
SELECT worklist.write_checkpoint('p', 's', 'r', 'c1', '{}', fence => :f2);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT worklist.write_checkpoint('p', 's', 'r', 'c1', '{}', fence => :f3);
SELECT worklist.release_run('p', 's', 'r', :f3, '2999-01-01 00:05:10');
SELECT holder FROM worklist.claim_run('p', 's', 'r', 'w3', '1 minute', '2999-01-01 00:05:20');

-- Claims, take-overs and reclaims count when they commit: not in a
-- rolled-back transaction, nor in a rolled-back subtransaction.
BEGIN;
SELECT holder FROM worklist.claim('t3', 'eve', '{r}');
SELECT holder FROM worklist.take_over('t3', 'eve', 'fay', '{r}');
SELECT fence > 0 AS reclaimed FROM worklist.claim_run('p', 's', 'r', 'w9', '1 minute', '2999-01-02');
ROLLBACK;
BEGIN;
SAVEPOINT s1;
SELECT holder FROM worklist.claim('t3', 'eve', '{r}');
ROLLBACK TO SAVEPOINT s1;
SAVEPOINT s2;
SELECT holder FROM worklist.claim('t3', 'gus', '{r}');
RELEASE SAVEPOINT s2;
SELECT worklist.release('t3', 'gus');
COMMIT;

SELECT * FROM pg_temp.delta();

-- Gauges of this tenant: t1 completed, t2 claimed by claim_next, t3 and
-- t4 open (t3 overdue).
SELECT worklist.stats()->'tasks' AS tasks;
SELECT (worklist.stats()->>'overdue_tasks')::int AS overdue_tasks,
       (worklist.stats()->>'oldest_pending_age')::interval > '0' AS has_oldest_pending,
       (worklist.stats()->>'runs')::int AS runs,
       (worklist.stats()->>'live_leases')::int AS live_leases;
SELECT ticket FROM worklist.open_ticket('k1', 'req', 'x');
SELECT ticket FROM worklist.open_ticket('k2', 'req', 'y');
SELECT state FROM worklist.report('k2', 'agent', 'working');
SELECT worklist.stats()->'tickets' AS tickets;

-- Another tenant sees none of it: its gauges are zero and its counters
-- did not move.
SET worklist.tenant = 'sweep_stats_other';
CREATE TEMP TABLE before_other AS SELECT worklist.stats() AS s;
SET worklist.tenant = 'sweep_stats';
SELECT holder FROM worklist.claim('t4', 'dee', '{r}');
SET worklist.tenant = 'sweep_stats_other';
SELECT worklist.stats() = (SELECT s FROM before_other) AS other_unchanged,
       worklist.stats()->'tasks'->>'claimed' AS other_claimed;

-- The binding rule applies: a role outside a bound tenant gets 42501.
CREATE ROLE wl_stats_outsider;
SELECT worklist.grant_tenant('sweep_stats', 'pg_monitor');
SET worklist.tenant = 'sweep_stats';
SET ROLE wl_stats_outsider;
SELECT worklist.stats();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT worklist.revoke_tenant('sweep_stats', 'pg_monitor');
DROP ROLE wl_stats_outsider;

SELECT worklist.erase_tenant() > 0 AS erased;
SET worklist.tenant = 'sweep_stats_other';
SELECT worklist.erase_tenant();
RESET worklist.tenant;
