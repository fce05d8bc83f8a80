-- worklist 0.3 -> 0.4: the tasks and claims of 0.3 in the 0.4 layout
-- (after sql/parts/10_task.sql has made worklist.task_claim and
-- escalated_at).
--
-- 0.3 did not record when a task was escalated: an escalated task gets its
-- created_at, the earliest instant it can have been.  Every pending task
-- that has a holder gets its row in worklist.task_claim.  The settled ones
-- already have their settled_at.
UPDATE worklist.task t SET escalated_at = t.created_at
 WHERE t.state OPERATOR(pg_catalog.=) 'escalated'::worklist.task_state;
INSERT INTO worklist.task_claim (tenant, task_id, holder, claimed_at, claim_expires_at)
SELECT t.tenant, t.id, t.holder, t.claimed_at, t.claim_expires_at
  FROM worklist.task t
 WHERE t.holder IS NOT NULL
   AND t.state OPERATOR(pg_catalog.=) ANY ('{open,claimed,escalated}'::worklist.task_state[]);
-- A task settled behind the verbs' back without a settled_at (the owner's
-- own UPDATE) would count as pending to the new indexes: it gets its
-- created_at.
UPDATE worklist.task t SET settled_at = t.created_at
 WHERE t.settled_at IS NULL
   AND t.state OPERATOR(pg_catalog.=) ANY ('{completed,expired,withdrawn}'::worklist.task_state[]);
