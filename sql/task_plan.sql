-- Tasks: the lists cost what they return, not what the table holds.
--
-- A million settled tasks and a hundred pending ones.  First the plans of
-- the statements the verbs run (spelled here as task.c spells them, planned
-- generically as kept plans are): each reads a partial index that holds
-- pending rows only (told from settled ones by settled_at).  Then the verbs themselves: the buffers one call
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

-- The check can fail: on the whole table (no index to use) it says so.
PREPARE settled_scan AS
SELECT count(*) FROM worklist.task t WHERE t.settled_at IS NOT NULL;

-- What a plan reads, in one line: never the whole table, only the primary
-- key (to find a row by id) and the partial indexes that hold pending
-- tasks only.  Which of those the planner picks for a step (a lookup by id
-- through the primary key or through task_pending_case, a short list
-- sorted from task_pending_case or read in order from task_claimable)
-- depends on statistics sampled by ANALYZE, so the check names the
-- property, not one plan.
CREATE FUNCTION pg_temp.explain(statement text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	plan text[];
	m text[];
	line text;
	idx text;
	verdict text := 'reads no table';
BEGIN
	plan := '{}';
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || statement LOOP
		plan := plan || line;
	END LOOP;
	FOR i IN 1 .. coalesce(array_length(plan, 1), 0) LOOP
		m := regexp_match(plan[i],
			'(Seq Scan|Index Only Scan|Index Scan|Bitmap Index Scan)(?: Backward)?(?: using (\w+))? on (\w+)');
		CONTINUE WHEN m IS NULL;
		IF m[1] = 'Seq Scan' THEN
			RETURN 'scans the whole table';
		END IF;
		idx := coalesce(m[2], m[3]);
		IF idx = 'task_pkey' THEN
			-- the primary key finds rows by id; a range of a tenant's keys
			-- would read its settled rows too
			IF coalesce(plan[i + 1], '') !~ 'Index Cond: .*\(?(t|q|d)?\.?id = ' THEN
				RETURN 'reads a range of the primary key';
			END IF;
		ELSIF idx NOT IN ('task_claimable', 'task_pending_case', 'task_overdue') THEN
			RETURN 'reads index ' || idx;
		END IF;
		verdict := 'reads only indexes of pending tasks, and the primary key by id';
	END LOOP;
	RETURN verdict;
END
$$;

SELECT pg_temp.explain($$EXECUTE settled_scan$$) AS settled_scan;

-- queue
PREPARE queue(text, text[], text, int) AS
SELECT t FROM worklist.task t
 WHERE t.tenant = $1
   AND t.settled_at IS NULL AND t.holder IS NULL
   AND (t.roles && $2 OR (t.state = 'escalated' AND t.escalation_roles && $2))
   AND ($3 IS NULL OR NOT ($3 = ANY (t.excluded)))
 ORDER BY t.priority DESC, t.created_at, t.id LIMIT $4;
SELECT pg_temp.explain($$EXECUTE queue('task_plan', '{r}', NULL, 100)$$) AS queue;

-- claim_next
PREPARE claim_next(text, text, text[]) AS
UPDATE worklist.task t SET holder = $2, claimed_at = now(),
       state = CASE WHEN t.state = 'open' THEN 'claimed' ELSE t.state END
 WHERE t.tenant = $1 AND t.id = (
       SELECT q.id FROM worklist.task q
        WHERE q.tenant = $1
          AND q.settled_at IS NULL AND q.holder IS NULL
          AND (q.roles && $3 OR (q.state = 'escalated' AND q.escalation_roles && $3))
          AND NOT ($2 = ANY (q.excluded))
        ORDER BY q.priority DESC, q.created_at, q.id
        LIMIT 1 FOR NO KEY UPDATE OF q SKIP LOCKED)
RETURNING t, t.id;
SELECT pg_temp.explain($$EXECUTE claim_next('task_plan', 'x', '{r}')$$) AS claim_next;

-- for_case
PREPARE for_case(text, text) AS
SELECT t FROM worklist.task t
 WHERE t.tenant = $1 AND t.case_id = $2
   AND t.settled_at IS NULL
 ORDER BY t.priority DESC, t.created_at, t.id;
SELECT pg_temp.explain($$EXECUTE for_case('task_plan', 'case-7')$$) AS for_case;

-- open_count
PREPARE open_count(text) AS
SELECT count(*) FROM worklist.task t
 WHERE t.tenant = $1
   AND t.settled_at IS NULL;
SELECT pg_temp.explain($$EXECUTE open_count('task_plan')$$) AS open_count;

-- overdue
PREPARE overdue(text, timestamptz, int) AS
SELECT t FROM worklist.task t
 WHERE t.tenant = $1 AND t.settled_at IS NULL AND t.escalated_at IS NULL
   AND t.due_at <= $2
 ORDER BY t.due_at, t.id LIMIT $3;
SELECT pg_temp.explain($$EXECUTE overdue('task_plan', 'infinity', 100)$$) AS overdue;

-- the sweep
PREPARE sweep(text, timestamptz, int) AS
UPDATE worklist.task t SET state = 'expired', settled_at = $2
 WHERE t.tenant = $1 AND t.settled_at IS NULL AND t.escalated_at IS NULL
   AND t.id = ANY (ARRAY(
       SELECT d.id FROM worklist.task d
        WHERE d.tenant = $1 AND d.settled_at IS NULL AND d.escalated_at IS NULL
          AND d.due_at <= $2
        ORDER BY d.due_at, d.id LIMIT $3
        FOR NO KEY UPDATE OF d SKIP LOCKED))
RETURNING t.id, t.expiry_policy::text;
SELECT pg_temp.explain($$EXECUTE sweep('task_plan', 'infinity', 1000)$$) AS sweep;

-- withdraw_run
PREPARE withdraw_run(text, text, text[]) AS
UPDATE worklist.task t SET state = 'withdrawn', settled_at = now()
 WHERE t.tenant = $1 AND t.id = ANY ($3) AND t.run_id = $2
   AND t.state = ANY ('{open,claimed,escalated}'::worklist.task_state[])
RETURNING t.id;
SELECT pg_temp.explain($$EXECUTE withdraw_run('task_plan', 'run', '{pending-1,pending-2}')$$) AS withdraw_run;

DEALLOCATE ALL;
RESET plan_cache_mode;

-- The verbs themselves: shared buffers touched by one call, read from
-- EXPLAIN ANALYZE of the call (the function's own statements included):
-- under 300, and under 600 for the sweep, which settles 20 tasks and
-- writes each into the indexes that hold settled tasks (for retention).
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
	       pg_temp.buffers(v.call) < CASE WHEN v.verb = 'sweep' THEN 600 ELSE 300 END AS cheap
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
