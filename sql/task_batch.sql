-- Tasks (0.4): claim_many and complete_many -- claim_next's order and
-- rules for many tasks at once, the clamps, completions all or nothing
-- with their refusals in the documented order, rows in the arrays' order,
-- the events each task gets and the claims counter.  claims(), the
-- operator's view of every claim, at the end.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE so the
-- expected output pins the SQLSTATE as well as the message and DETAIL.

SET worklist.tenant = 'task_batch';

CREATE FUNCTION pg_temp.events(tasks text[])
RETURNS TABLE (task_id text, event text, actor text, at_now boolean, detail jsonb)
LANGUAGE sql AS $$
	SELECT l.task_id, l.event, l.actor, l.at = now(), COALESCE(l.detail, '{}')
	  FROM worklist.task_log l
	 WHERE l.tenant = current_setting('worklist.tenant') AND l.task_id = ANY (tasks)
	   AND l.event IN ('claimed', 'completed')
	 ORDER BY l.task_id, l.seq
$$;
CREATE TEMP TABLE before AS SELECT worklist.stats()->'counters' AS c;
CREATE FUNCTION pg_temp.claims_counted() RETURNS bigint LANGUAGE sql AS $$
	SELECT (worklist.stats()->'counters'->>'claims')::bigint - (b.c->>'claims')::bigint
	  FROM before b
$$;

-- The queue for role r, in queue order: p3 (priority 3), then q1..q6 by
-- age; q2 bars ann, q4 is for role s only, q5 is claimed by bob, q6 is
-- escalated and nobody holds it.
SELECT id FROM worklist.open_task('p3', 'c', '{r}', priority => 3);
SELECT count(*) FROM generate_series(1, 6) g,
       worklist.open_task('q' || g, 'c',
                          CASE WHEN g = 4 THEN '{s}' ELSE '{r}' END::text[],
                          excluded => CASE WHEN g = 2 THEN '{ann}' ELSE '{}' END::text[],
                          escalation_roles => '{m}');
SELECT holder FROM worklist.claim('q5', 'bob', '{r}');
SELECT state FROM worklist.escalate('q6');
SELECT id FROM worklist.queue('{r}', 10, 'ann');

-- claim_many: up to n in claim_next order, returned in that order.
SELECT id, state, holder, claimed_at = now() AS claimed_now
  FROM worklist.claim_many('ann', '{r}', 2);
-- Every rule of claim_next: the barred task, other audiences, held tasks
-- are passed over; an escalated one is claimed and stays escalated.
SELECT id, state, holder FROM worklist.claim_many('ann', '{r}', 10);
-- none left for ann: no rows
SELECT count(*) AS none FROM worklist.claim_many('ann', '{r}', 10);
-- an empty roles array meets no audience
SELECT count(*) AS none FROM worklist.claim_many('cy', '{}', 10);
-- q2 is there for somebody else, and the escalation role counts for q6 only
-- once escalated (it is held now)
SELECT id FROM worklist.claim_many('cy', '{r,m}', 10);
SELECT pg_temp.claims_counted() AS claims;
-- one claimed event per task, by the actor
SELECT * FROM pg_temp.events('{p3,q1,q2,q3,q6}');

-- n: NULL means 1, below 1 is 1, above 1000 is 1000.
SELECT count(*) FROM generate_series(1, 1005) g,
       worklist.open_task('n' || lpad(g::text, 4, '0'), 'c', '{n}');
SELECT count(*) AS null_n FROM worklist.claim_many('dee', '{n}', NULL);
SELECT count(*) AS zero_n FROM worklist.claim_many('dee', '{n}', 0);
SELECT count(*) AS negative_n FROM worklist.claim_many('dee', '{n}', -7);
SELECT count(*) AS huge_n, min(id), max(id) FROM worklist.claim_many('dee', '{n}', 1000000);
SELECT count(*) AS rest FROM worklist.claim_many('dee', '{n}', 1000000);

-- skip: the ids given are passed over (NULL: none).
SELECT count(*) FROM generate_series(1, 4) g,
       worklist.open_task('k' || g, 'c', '{k}');
SELECT id FROM worklist.claim_many('eve', '{k}', 2, '{k1,k3,nope}');
SELECT id FROM worklist.claim_many('eve', '{k}', 2, NULL);

-- Arguments.
SELECT worklist.claim_many(NULL, '{r}', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_many('ann', NULL, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_many('ann', '{r,NULL}', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_many('ann', '{r}', 1, '{""}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_many('ann', '{r}', 1, '{{a},{b}}');
\echo :LAST_ERROR_SQLSTATE

-- The claim hint: nine claims move it on (each in a transaction of its own,
-- the library is preloaded here), and a task released behind it comes
-- back first.
SELECT count(*) FROM generate_series(1, 20) g,
       worklist.open_task('h' || lpad(g::text, 2, '0'), 'c', '{h}');
SELECT $$SELECT string_agg(id, ',') FROM worklist.claim_many('hc', '{h}', 1)$$
  FROM generate_series(1, 9) \gexec
SELECT worklist.release('h02', 'hc');
SELECT id FROM worklist.claim_many('hc', '{h}', 2);

-- complete_many.  ann holds p3, q1, q3, q6; bob holds q5.
SELECT id, holder FROM worklist.held('ann');
-- Argument errors come first: unequal lengths, an id twice (before the
-- missing task), NULLs, a jsonb[] that is not a list of documents.
SELECT * FROM worklist.complete_many('ann', '{p3,q1}', ARRAY['{}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.complete_many('ann', '{nope,nope}', ARRAY['{}', '{}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.complete_many('ann', NULL, ARRAY['{}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.complete_many('ann', '{p3}', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.complete_many('ann', '{p3}', ARRAY[NULL]::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.complete_many('ann', '{p3}', ARRAY[['{}'], ['{}']]::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.complete_many(NULL, '{p3}', ARRAY['{}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SET worklist.max_document_size = 16;
SELECT * FROM worklist.complete_many('ann', '{p3,q1}',
	ARRAY['{}', '{"a long decision": "more than sixteen bytes"}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
RESET worklist.max_document_size;
-- Then the first failing id in the arrays' order decides and fails the
-- whole call: WL006 (q5 is bob's) before the missing one, WL001 before
-- WL006 the other way round, WL002 for a task that bars the actor.
SELECT * FROM worklist.complete_many('ann', '{p3,q5,nope}', ARRAY['{}', '{}', '{}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.complete_many('ann', '{p3,nope,q5}', ARRAY['{}', '{}', '{}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.complete_many('ann', '{p3,q2}', ARRAY['{}', '{}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
-- WL006 for a pending task nobody holds
SELECT id FROM worklist.open_task('lone', 'c', '{l}');
SELECT * FROM worklist.complete_many('ann', '{p3,lone}', ARRAY['{}', '{}']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
-- ... and settled nothing.
SELECT id, state FROM worklist.held('ann');
-- Empty arrays: no rows.
SELECT count(*) AS none FROM worklist.complete_many('ann', '{}', '{}');
-- Every pair settled, rows in the arrays' order, each its decision.
SELECT * FROM worklist.complete_many('ann', '{q3,p3,q6}',
	ARRAY['{"n": 3}', '{"n": 1}', '{"n": 6}']::jsonb[]);
SELECT id, state, decided_by, decision, settled_at = now() AS settled_now
  FROM worklist.task('p3') UNION ALL
SELECT id, state, decided_by, decision, settled_at = now() FROM worklist.task('q3') UNION ALL
SELECT id, state, decided_by, decision, settled_at = now() FROM worklist.task('q6');
-- Answers as complete's: a retry with the same decisions converges
-- (true), a different decision or a task settled otherwise is false; a
-- pending held one in the same call is settled.
SELECT worklist.set_state('q1', 'withdrawn');
SELECT holder FROM worklist.claim('lone', 'ann', '{l}');
SELECT * FROM worklist.complete_many('ann', '{p3,q3,q1,lone}',
	ARRAY['{"n": 1}', '{"n": 99}', '{}', '{}']::jsonb[]);
SELECT id, decision FROM worklist.task('q3');
-- one completed event per settlement, none for the answers that changed
-- nothing
SELECT * FROM pg_temp.events('{p3,q1,q3,q6,lone}') WHERE event = 'completed';

-- Under REPEATABLE READ the events of a batch are numbered from the
-- latest state of each task's history, one task at a time; after the
-- commit every task's history still counts 1, 2, 3 without a gap.
SELECT count(*) FROM generate_series(1, 3) g, worklist.open_task('rr' || g, 'rr', '{rr}');
SELECT (worklist.note('rr1', 'ann', 'before')).seq AS noted;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT id FROM worklist.claim_many('ann', '{rr}', 2);
SELECT id, settled FROM worklist.complete_many('ann', '{rr2,rr1}', ARRAY['{"n": 2}', '{"n": 1}']::jsonb[]);
COMMIT;
SELECT l.task_id, l.seq, l.event, l.actor FROM worklist.task_log l
 WHERE l.tenant = current_setting('worklist.tenant') AND l.task_id LIKE 'rr%'
 ORDER BY 1, 2;
SELECT id, decision FROM worklist.task('rr1') UNION ALL
SELECT id, decision FROM worklist.task('rr2');

-- A park that awaits a task complete_many settles is resolved by it.
SELECT fence AS bf FROM worklist.claim_run('bp', 'bs', 'br', 'w1', '1 hour') \gset
SELECT park_tasks FROM worklist.park_run('bp', 'bs', 'br', 'c1', '{rr3}', fence => :bf);
SELECT c.park_resolved_at IS NULL AS outstanding FROM worklist.run_checkpoint c
 WHERE c.tenant = current_setting('worklist.tenant') AND c.run = 'br';
SELECT id FROM worklist.claim_many('ann', '{rr}', 5);
SELECT id, settled FROM worklist.complete_many('ann', '{rr3}', ARRAY['{}']::jsonb[]);
SELECT c.park_resolved_at IS NOT NULL AS resolved FROM worklist.run_checkpoint c
 WHERE c.tenant = current_setting('worklist.tenant') AND c.run = 'br';
SELECT worklist.delete_run('bp', 'bs', 'br') AS deleted;

-- A park that awaits many tasks of a batch is judged once, after the batch
-- settled them all, not once per task (which would read the park's tasks
-- again for each of them): a batch of 999 of a park's 1,000 tasks reads a
-- few rows per task, and leaves that park outstanding until its last
-- task; a second park, awaiting three of them, is resolved by the batch.
-- (The batch settles bx too, which no park awaits.)
SELECT count(*) FROM generate_series(1, 1000) g, worklist.open_task('bk' || g, 'bk', '{bk}');
SELECT count(*) FROM worklist.claim_many('ann', '{bk}', 1000);
SELECT (worklist.claim((worklist.open_task('bx', 'bk', '{bx}')).id, 'ann', '{bx}')).holder;
SELECT fence AS bf FROM worklist.claim_run('bp', 'bs', 'bbig', 'w1', '1 hour') \gset
SELECT p.park_resolved_at IS NULL AS outstanding
  FROM worklist.park_run('bp', 'bs', 'bbig', 'c1',
                         ARRAY(SELECT 'bk' || g FROM generate_series(1, 1000) g), fence => :bf) p;
SELECT p.park_resolved_at IS NULL AS outstanding
  FROM worklist.park_run('bp', 'bs', 'bsmall', 'c1', '{bk3,bk1,bk2}') p;
BEGIN;
CREATE TEMP TABLE reads_before AS
SELECT sum(coalesce(idx_tup_fetch, 0) + seq_tup_read) AS n
  FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist';
SELECT count(*) FILTER (WHERE settled) AS settled
  FROM worklist.complete_many('ann', ARRAY(SELECT 'bk' || g FROM generate_series(1, 999) g) || 'bx'::text,
                              array_fill('{}'::jsonb, ARRAY[1000]));
SELECT (SELECT sum(coalesce(idx_tup_fetch, 0) + seq_tup_read)
          FROM pg_stat_xact_user_tables WHERE schemaname = 'worklist') - b.n < 10 * 999
       AS few_reads_per_task
  FROM reads_before b;
COMMIT;
SELECT c.run, c.park_resolved_at IS NOT NULL AS resolved FROM worklist.run_checkpoint c
 WHERE c.tenant = current_setting('worklist.tenant') AND c.run IN ('bbig', 'bsmall')
 ORDER BY c.run;
SELECT worklist.complete('bk1000', 'ann', '{}');
SELECT c.run, c.park_resolved_at IS NOT NULL AS resolved FROM worklist.run_checkpoint c
 WHERE c.tenant = current_setting('worklist.tenant') AND c.run IN ('bbig', 'bsmall')
 ORDER BY c.run;
SELECT worklist.delete_run('bp', 'bs', 'bbig') + worklist.delete_run('bp', 'bs', 'bsmall') AS deleted;

-- claims(): every pending held task, oldest claim first, then id.
SELECT worklist.erase_tenant() > 0 AS erased;
SELECT count(*) FROM generate_series(1, 5) g, worklist.open_task('c' || g, 'c', '{r}');
BEGIN;
SELECT holder FROM worklist.claim('c4', 'zed', '{r}');
SELECT holder FROM worklist.claim('c2', 'amy', '{r}');
COMMIT;
BEGIN;
SELECT holder FROM worklist.claim('c1', 'amy', '{r}');
COMMIT;
SELECT holder FROM worklist.claim('c5', 'bo', '{r}');
SELECT worklist.complete('c5', 'bo', '{}');
SELECT state FROM worklist.escalate('c3');
SELECT holder FROM worklist.claim('c3', 'mo', '{r}');
SELECT id, state, holder FROM worklist.claims();
-- lim: NULL is 100, clamped to [1, 1000]
SELECT count(*) AS one FROM worklist.claims(0);
SELECT count(*) AS two FROM worklist.claims(2);
SELECT count(*) AS all_of_them FROM worklist.claims(NULL);

SELECT worklist.erase_tenant() > 0 AS erased;
