-- Tasks: claim timeouts, held(), retried completions, retention, and the
-- indexes the sweeper's list of due tenants reads.
ALTER TABLE worklist.task ADD COLUMN claim_timeout interval;
ALTER TABLE worklist.task ADD COLUMN claim_expires_at timestamptz;

-- The claim-timeout part of the sweep: held claims with a timeout, by
-- when they time out.
CREATE INDEX task_claim_expiry ON worklist.task
	(tenant, claim_expires_at, id)
	WHERE claim_expires_at IS NOT NULL;

-- held: the pending tasks of one holder, oldest claim first.
CREATE INDEX task_held ON worklist.task
	(tenant, holder, claimed_at, id)
	WHERE holder IS NOT NULL
	  AND state OPERATOR(pg_catalog.=) ANY ('{open,claimed,escalated}'::worklist.task_state[]);

-- Retention: settled tasks by when they were settled.
CREATE INDEX task_settled ON worklist.task
	(tenant, settled_at)
	WHERE state OPERATOR(pg_catalog.=) ANY ('{completed,expired,withdrawn}'::worklist.task_state[]);

-- The sweeper's list of tenants with something due reads these two across
-- tenants, by the instant things fall due, so its cost follows what is
-- due, not how many tenants there are.
CREATE INDEX task_due ON worklist.task
	(due_at, tenant)
	WHERE state OPERATOR(pg_catalog.=) ANY ('{open,claimed}'::worklist.task_state[])
	  AND due_at IS NOT NULL;
CREATE INDEX task_claim_due ON worklist.task
	(claim_expires_at, tenant)
	WHERE claim_expires_at IS NOT NULL;

DROP FUNCTION worklist.open_task(text, text, text[], text, jsonb, int, timestamptz,
	worklist.expiry_policy, text[], text[]);
CREATE FUNCTION worklist.open_task(
		id text,
		case_id text,
		roles text[],
		run_id text DEFAULT NULL,
		payload jsonb DEFAULT '{}',
		priority int DEFAULT 0,
		due_at timestamptz DEFAULT NULL,
		expiry_policy worklist.expiry_policy DEFAULT 'deny',
		excluded text[] DEFAULT '{}',
		escalation_roles text[] DEFAULT '{}',
		claim_timeout interval DEFAULT NULL)
	RETURNS worklist.task
	AS 'MODULE_PATHNAME', 'wl_open_task'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.open_task(text, text, text[], text, jsonb, int, timestamptz, worklist.expiry_policy, text[], text[], interval) IS
	'Create a task in state open, or return the existing task with this id unchanged';

COMMENT ON FUNCTION worklist.complete(text, text, jsonb) IS
	'The holder settles a task as completed; true also for a retry by the same actor with an equal decision, false when it was otherwise already settled';

CREATE FUNCTION worklist.held(actor text, lim int DEFAULT 100)
	RETURNS SETOF worklist.task
	AS 'MODULE_PATHNAME', 'wl_held'
	LANGUAGE C STABLE ROWS 100;
COMMENT ON FUNCTION worklist.held(text, int) IS
	'The pending tasks an actor holds, oldest claim first, then id';


-- claim_next starts where the tenant's hint says (src/hint.c): the queue
-- index's key must ascend.
DROP INDEX worklist.task_claimable;
-- queue and claim_next: claimable rows, in queue order, the priority
-- negated so that the key ascends and a scan can start at any key (where
-- claim_next starts: src/hint.c).
CREATE INDEX task_claimable ON worklist.task
	(tenant, (OPERATOR(pg_catalog.-) priority::pg_catalog.int8), created_at, id)
	WHERE state OPERATOR(pg_catalog.=) 'open'::worklist.task_state
	   OR (state OPERATOR(pg_catalog.=) 'escalated'::worklist.task_state
		   AND holder IS NULL);


-- A statement the verbs did not run that writes tasks (the owner's own
-- DML, a data-only restore) sends the claim hints of the database back to
-- the head of their queues when it commits (src/hint.c).
CREATE FUNCTION worklist.task_written() RETURNS trigger
	AS 'MODULE_PATHNAME', 'wl_task_written'
	LANGUAGE C;
COMMENT ON FUNCTION worklist.task_written() IS
	'Trigger resetting the claim hints when tasks are written behind the verbs';
CREATE TRIGGER task_written
	BEFORE INSERT OR UPDATE ON worklist.task
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.task_written();
REVOKE EXECUTE ON FUNCTION worklist.task_written() FROM PUBLIC;
