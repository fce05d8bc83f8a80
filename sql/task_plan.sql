-- Tasks: the lists cost what they return, not what the table holds.
--
-- A million settled tasks and a hundred pending ones.  First the plans of
-- the statements the verbs run (spelled here as task.c spells them, planned
-- generically as kept plans are): each reads a partial index that holds
-- pending rows only.  Then the verbs themselves: the buffers one call
-- touches, against the thousands of pages the settled rows fill.

SET worklist.tenant = 'task_plan';

INSERT INTO worklist.task (tenant, id, case_id, roles, state, due_at,
                           created_at, settled_at, priority, holder)
SELECT 'task_plan', 'settled-' || g, 'case-' || (g % 1000), '{r}',
       (ARRAY['completed', 'expired', 'withdrawn']::worklist.task_state[])[1 + g % 3],
       '2020-01-01'::timestamptz + g * interval '1 second',
       '2019-01-01'::timestamptz + g * interval '1 second',
       '2020-06-01', g % 7, 'somebody'
  FROM generate_series(1, 1000000) g;
SELECT count(*) AS opened
  FROM generate_series(1, 100) g,
       worklist.open_task('pending-' || g, 'case-' || (g % 1000), '{r}',
                          priority => g % 7,
                          due_at => '2020-01-01'::timestamptz + g * interval '1 minute');
SELECT count(*) AS claimed
  FROM generate_series(1, 10) g, worklist.claim('pending-' || g, 'w' || g, '{r}');
ANALYZE worklist.task;
SELECT pg_relation_size('worklist.task') / current_setting('block_size')::int > 10000
       AS table_has_over_10000_pages;

SET plan_cache_mode = force_generic_plan;

-- The UPDATEs find the rows they change by id, through the primary key or
-- through task_pending_case (which also holds the id); the planner may take
-- either, as both cost a few pages, so the plans below name both.
CREATE FUNCTION pg_temp.explain(statement text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	line text;
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || statement LOOP
		RETURN NEXT regexp_replace(line,
			'Index Scan using task_(pkey|pending_case) on task t$',
			'Index Scan using task_pkey or task_pending_case on task t');
	END LOOP;
END
$$;

-- queue
PREPARE queue(text, text[], text, int) AS
SELECT t FROM worklist.task t
 WHERE t.tenant = $1
   AND (t.state = 'open' OR (t.state = 'escalated' AND t.holder IS NULL))
   AND (t.roles && $2 OR (t.state = 'escalated' AND t.escalation_roles && $2))
   AND ($3 IS NULL OR NOT ($3 = ANY (t.excluded)))
 ORDER BY t.priority DESC, t.created_at, t.id LIMIT $4;
EXPLAIN (COSTS OFF) EXECUTE queue('task_plan', '{r}', NULL, 100);

-- claim_next
PREPARE claim_next(text, text, text[]) AS
UPDATE worklist.task t SET holder = $2, claimed_at = now(),
       state = CASE WHEN t.state = 'open' THEN 'claimed' ELSE t.state END
 WHERE t.tenant = $1 AND t.id = (
       SELECT q.id FROM worklist.task q
        WHERE q.tenant = $1
          AND (q.state = 'open' OR (q.state = 'escalated' AND q.holder IS NULL))
          AND (q.roles && $3 OR (q.state = 'escalated' AND q.escalation_roles && $3))
          AND NOT ($2 = ANY (q.excluded))
        ORDER BY q.priority DESC, q.created_at, q.id
        LIMIT 1 FOR NO KEY UPDATE OF q SKIP LOCKED)
RETURNING t, t.id;
SELECT pg_temp.explain($$EXECUTE claim_next('task_plan', 'x', '{r}')$$);

-- for_case
PREPARE for_case(text, text) AS
SELECT t FROM worklist.task t
 WHERE t.tenant = $1 AND t.case_id = $2
   AND t.state = ANY ('{open,claimed,escalated}'::worklist.task_state[])
 ORDER BY t.priority DESC, t.created_at, t.id;
EXPLAIN (COSTS OFF) EXECUTE for_case('task_plan', 'case-7');

-- open_count
PREPARE open_count(text) AS
SELECT count(*) FROM worklist.task t
 WHERE t.tenant = $1
   AND t.state = ANY ('{open,claimed,escalated}'::worklist.task_state[]);
EXPLAIN (COSTS OFF) EXECUTE open_count('task_plan');

-- overdue
PREPARE overdue(text, timestamptz, int) AS
SELECT t FROM worklist.task t
 WHERE t.tenant = $1 AND t.state = ANY ('{open,claimed}'::worklist.task_state[])
   AND t.due_at <= $2
 ORDER BY t.due_at, t.id LIMIT $3;
EXPLAIN (COSTS OFF) EXECUTE overdue('task_plan', 'infinity', 100);

-- the sweep
PREPARE sweep(text, timestamptz, int) AS
UPDATE worklist.task t SET state = 'expired', settled_at = $2
 WHERE t.tenant = $1 AND t.state = ANY ('{open,claimed}'::worklist.task_state[])
   AND t.id = ANY (ARRAY(
       SELECT d.id FROM worklist.task d
        WHERE d.tenant = $1 AND d.state = ANY ('{open,claimed}'::worklist.task_state[])
          AND d.due_at <= $2
        ORDER BY d.due_at, d.id LIMIT $3
        FOR NO KEY UPDATE OF d SKIP LOCKED))
RETURNING t.id, t.expiry_policy::text;
SELECT pg_temp.explain($$EXECUTE sweep('task_plan', 'infinity', 1000)$$);

-- withdraw_run
PREPARE withdraw_run(text, text, text[]) AS
UPDATE worklist.task t SET state = 'withdrawn', settled_at = now()
 WHERE t.tenant = $1 AND t.id = ANY ($3) AND t.run_id = $2
   AND t.state = ANY ('{open,claimed,escalated}'::worklist.task_state[])
RETURNING t.id;
SELECT pg_temp.explain($$EXECUTE withdraw_run('task_plan', 'run', '{pending-1,pending-2}')$$);

DEALLOCATE ALL;
RESET plan_cache_mode;

-- The verbs themselves: shared buffers touched by one call, read from
-- EXPLAIN ANALYZE of the call (the function's own statements included).
-- Each verb is called once before it is measured, so that preparing its
-- statements is not counted.
CREATE FUNCTION pg_temp.buffers(call text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF, FORMAT JSON) '
		|| call INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint
		 + (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END
$$;

BEGIN;
SELECT verb, cheap FROM (
	SELECT v.n, v.verb, pg_temp.buffers(v.warm_up) AS warm_up,
	       pg_temp.buffers(v.call) < 300 AS cheap
	  FROM (VALUES
		(1, 'queue', $$SELECT * FROM worklist.queue('{r}')$$,
		             $$SELECT * FROM worklist.queue('{r}')$$),
		(2, 'queue for an actor', $$SELECT * FROM worklist.queue('{r}', 100, 'w1')$$,
		                          $$SELECT * FROM worklist.queue('{r}', 100, 'w1')$$),
		(3, 'for_case', $$SELECT * FROM worklist.for_case('case-7')$$,
		                $$SELECT * FROM worklist.for_case('case-8')$$),
		(4, 'open_count', $$SELECT worklist.open_count()$$,
		                  $$SELECT worklist.open_count()$$),
		(5, 'overdue', $$SELECT * FROM worklist.overdue('infinity')$$,
		               $$SELECT * FROM worklist.overdue('infinity')$$),
		(6, 'claim_next', $$SELECT * FROM worklist.claim_next('me', '{r}')$$,
		                  $$SELECT * FROM worklist.claim_next('me', '{r}')$$),
		(7, 'claim', $$SELECT * FROM worklist.claim('pending-50', 'me', '{r}')$$,
		             $$SELECT * FROM worklist.claim('pending-51', 'me', '{r}')$$),
		(8, 'complete', $$SELECT worklist.complete('pending-1', 'w1', '{}')$$,
		                $$SELECT worklist.complete('pending-2', 'w2', '{}')$$),
		(9, 'withdraw_run', $$SELECT worklist.withdraw_run('run', '{pending-3}')$$,
		                    $$SELECT worklist.withdraw_run('run', '{pending-4,pending-5}')$$),
		(10, 'task', $$SELECT * FROM worklist.task('pending-60')$$,
		             $$SELECT * FROM worklist.task('pending-61')$$),
		(11, 'sweep', $$SELECT * FROM worklist.sweep('3000-01-01', 20)$$,
		              $$SELECT * FROM worklist.sweep('3000-01-01', 20)$$)
	  ) AS v(n, verb, warm_up, call)
	 OFFSET 0
) s
 ORDER BY n;
ROLLBACK;

-- What the lists returned was right, too.
SELECT count(*) AS queue FROM worklist.queue('{r}', 1000);
SELECT count(*) AS overdue FROM worklist.overdue('infinity', 1000);
SELECT worklist.open_count();

SELECT worklist.erase_tenant();
RESET worklist.tenant;
