-- claim_next starts at a per-tenant hint (src/hint.c) that claims raise
-- and anything that makes a task claimable lowers.  Whatever the hint, the
-- queue order is the documented one: every claim below takes the first task
-- in queue order, across releases, escalations, claim timeouts, new tasks
-- of higher priority, rolled-back claims and settlements, and claimers
-- whose roles differ.  (Without the library preloaded there is no hint,
-- and the same answers come from the head of the queue.)
SET worklist.tenant = 'task_queue_hint';

-- Ten tasks, t01 first in queue order, for role r; u1 for role u in the
-- middle.
SELECT count(*) FROM generate_series(1, 10) g,
       worklist.open_task('t' || lpad(g::text, 2, '0'), 'c', '{r}', priority => 0,
                          claim_timeout => '1 hour');
SELECT id FROM worklist.open_task('u1', 'c', '{u}', priority => 0);
SELECT id FROM worklist.queue('{r,u}', 3);

-- Claims move the start on; a claimer for another role does not make the
-- first claimer miss its task, and vice versa.
SELECT id FROM worklist.claim_next('a', '{r}');
SELECT id FROM worklist.claim_next('a', '{r}');
SELECT id FROM worklist.claim_next('b', '{u}');
SELECT id FROM worklist.claim_next('a', '{r}');
-- a release puts its task first again
SELECT worklist.release('t01', 'a');
SELECT id FROM worklist.claim_next('c', '{r}');
-- a new task of higher priority goes first
SELECT id FROM worklist.open_task('p1', 'c', '{r}', priority => 5);
SELECT id FROM worklist.claim_next('c', '{r}');
-- a claim rolled back leaves its task first; so do several in one
-- transaction, and a settlement rolled back
BEGIN;
SELECT id FROM worklist.claim_next('d', '{r}');
ROLLBACK;
BEGIN;
SELECT id FROM worklist.claim_next('d', '{r}');
SELECT id FROM worklist.claim_next('d', '{r}');
SELECT id FROM worklist.claim_next('d', '{r}');
ROLLBACK;
BEGIN;
SELECT worklist.set_state('t04', 'withdrawn');
SELECT id FROM worklist.claim_next('d', '{r}');
ROLLBACK;
SELECT id FROM worklist.claim_next('d', '{r}');
-- in one transaction, a release followed by a claim takes the released task
BEGIN;
SELECT worklist.release('t04', 'd');
SELECT id FROM worklist.claim_next('e', '{r}');
COMMIT;
-- an escalation clears the holder of a task behind the start: it is
-- claimable again, first in the queue
SELECT state FROM worklist.escalate('t02');
SELECT id FROM worklist.queue('{r}', 1);
-- a claim timeout puts the task back first
SELECT claims_released FROM worklist.sweep(now() + interval '2 hours');
SELECT id FROM worklist.queue('{r}', 4);
SELECT id FROM worklist.claim_next('f', '{r}');
-- settled tasks never come back
SELECT worklist.complete('t01', 'f', '{}');
SELECT id FROM worklist.queue('{r}', 3);
-- the queue and claim_next agree with the order read from the table
SELECT array_agg(id ORDER BY priority DESC, created_at, id) AS table_order
  FROM worklist.task
 WHERE tenant = 'task_queue_hint'
   AND (state = 'open' OR (state = 'escalated' AND holder IS NULL)) AND roles && '{r}';
SELECT array_agg(id) AS queue_order FROM worklist.queue('{r}', 100);
SELECT array_agg((worklist.claim_next('g', '{r}')).id) AS claim_order
  FROM generate_series(1, 20);

-- A release in a transaction prepared for two-phase commit: the task is
-- claimed first once the prepared transaction is committed, though claims
-- ran in between.
SELECT count(*) FROM generate_series(1, 3) g,
       worklist.open_task('x' || g, 'c', '{x}', priority => 10 - g);
SELECT id FROM worklist.claim_next('h', '{x}');
BEGIN;
SET LOCAL worklist.notify = off;	-- a notifying transaction cannot be prepared
SELECT worklist.release('x1', 'h');
PREPARE TRANSACTION 'task_queue_hint';
SELECT id FROM worklist.claim_next('i', '{x}');
COMMIT PREPARED 'task_queue_hint';
SELECT id FROM worklist.claim_next('i', '{x}');
-- Tasks written behind the verbs' back (here by the owner's INSERT, as a
-- data-only restore would): claimed in order once that commits.
SELECT id FROM worklist.claim_next('i', '{x}');
INSERT INTO worklist.task (tenant, id, case_id, roles, priority)
VALUES ('task_queue_hint', 'y1', 'c', '{x}', 9);
SELECT id FROM worklist.claim_next('i', '{x}');

SELECT worklist.erase_tenant() > 0 AS erased;
