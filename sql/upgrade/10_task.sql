-- worklist 0.3 -> 0.4: tasks

-- claim_next gains skip: the two-argument function goes, and
-- sql/parts/10_task.sql creates the new one (its privileges are kept by
-- 00_begin.sql and 99_end.sql).
DROP FUNCTION worklist.claim_next(text, text[]);

-- The 0.4 layout (sql/parts/10_task.sql): the indexes of 0.3 read state,
-- holder and claim_expires_at, which a claim changes; they go, and the
-- part creates the new ones and worklist.task_claim.  The rows move over
-- in sql/upgrade/11_task_claims.sql.
DROP INDEX worklist.task_claimable, worklist.task_pending_case, worklist.task_overdue,
	worklist.task_claim_expiry, worklist.task_held, worklist.task_settled,
	worklist.task_due, worklist.task_claim_due;
