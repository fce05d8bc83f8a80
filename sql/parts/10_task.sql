-- worklist: tasks (doc/reference.md, section 4)

CREATE TYPE worklist.task_state AS ENUM
	('open', 'claimed', 'escalated', 'completed', 'expired', 'withdrawn');
CREATE TYPE worklist.expiry_policy AS ENUM ('deny', 'proceed', 'escalate');

-- The table's row type is the worklist.task every task verb returns: the
-- documented columns in the documented order, then the tenant, then what
-- 0.3 added.
--
-- holder and claimed_at name the current claim of a pending task; once the
-- task is settled they are kept as the record of its last claim.
-- claim_expires_at is claimed_at + claim_timeout while a claim of a task
-- with a claim_timeout is held, NULL otherwise (the sweep releases the
-- claim from then on).  escalated_at (0.4) is when the task was escalated,
-- NULL while it is not.
CREATE TABLE worklist.task (
	id					text NOT NULL,
	case_id				text NOT NULL,
	run_id				text,
	state				worklist.task_state NOT NULL DEFAULT 'open',
	roles				text[] NOT NULL,
	excluded			text[] NOT NULL DEFAULT '{}',
	escalation_roles	text[] NOT NULL DEFAULT '{}',
	priority			int NOT NULL DEFAULT 0,
	payload				jsonb NOT NULL DEFAULT '{}',
	due_at				timestamptz,
	expiry_policy		worklist.expiry_policy NOT NULL DEFAULT 'deny',
	holder				text,
	claimed_at			timestamptz,
	created_at			timestamptz NOT NULL DEFAULT now(),
	settled_at			timestamptz,
	decided_by			text,
	decision			jsonb,
	tenant				text NOT NULL,
	claim_timeout		interval,
	claim_expires_at	timestamptz,
	PRIMARY KEY (tenant, id)
);

-- withdraw_run looks tasks up by id, through the primary key.  The other
-- indexes of the table (0.4) are made below, after escalated_at.

-- Every settlement leaves a dead entry in task_claimable, near its head,
-- where the next claim_next starts its scan; only VACUUM removes them.  Vacuum the table after a
-- fixed number of changes rather than a fraction of its (mostly settled,
-- ever growing) size, so that the head stays short however much history
-- the table keeps.
--
-- Until VACUUM comes, a claim_next that meets a dead entry marks it dead in
-- the index, so the claims after it skip it without visiting the table --
-- but only once no snapshot older than the claim that left it is held.
-- ANALYZE holds one while it samples, and at the default rate (a tenth of
-- the table changed) a busy queue is analyzed every few seconds; meanwhile
-- every claim_next visits every entry the claims made since left behind.
-- Claims and settlements do not change what the statements' plans depend
-- on, so analyze after as many changes as the table has rows.
ALTER TABLE worklist.task SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 2000,
	autovacuum_analyze_scale_factor = 1
);

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

-- @since 0.4
-- The layout of 0.4: a claim leaves the task's row where it is.
--
-- A claim, a release, a take-over or a hand-over changes state, holder,
-- claimed_at and claim_expires_at, and no index of worklist.task reads any
-- of them -- not in a key, not in a predicate -- so PostgreSQL makes the
-- change a HOT update: the new version of the row goes into the same page
-- and no index gets a new entry.  The indexes tell pending from settled by
-- settled_at, which a task has exactly once it is settled, and escalated
-- from not by escalated_at; the fill factor leaves each page room for the
-- versions its claims and settlements write (at 75, a fifth of the claims
-- of 8 busy workers found their page full and were not HOT; at 60, 2%).  Settling still writes entries (the task
-- moves from the pending indexes to task_settled).
--
-- Who holds what is kept beside, in worklist.task_claim: one row per held
-- pending task, mirroring the task's holder, claimed_at and
-- claim_expires_at, written in the same transaction as the task by the
-- one function every change of a task goes through (src/task.c,
-- wl_task_changed).  It is small -- as many rows as there are claims -- and
-- serves held(), claims() and the claim timeouts of the sweep.
ALTER TABLE worklist.task ADD COLUMN escalated_at timestamptz;
ALTER TABLE worklist.task SET (fillfactor = 60);

-- The statements in src/task*.c spell these predicates word for word
-- (src/task.h): the planner uses a partial index only when a query's
-- condition implies its predicate.

-- queue and claim_next: pending rows in queue order, the priority negated
-- so that the key ascends and a scan can start at any key (where
-- claim_next starts: src/hint.c).  Held rows are in it too; the statements
-- pass them by their holder, and claim_next's hint past those at the head.
CREATE INDEX task_claimable ON worklist.task
	(tenant, (OPERATOR(pg_catalog.-) priority::pg_catalog.int8), created_at, id)
	WHERE settled_at IS NULL;

-- for_case (same order) and open_count (an index-only count).
CREATE INDEX task_pending_case ON worklist.task
	(tenant, case_id, priority DESC, created_at, id)
	WHERE settled_at IS NULL;

-- overdue and the sweep: pending rows not escalated that have a deadline,
-- by deadline.  Escalated rows are not in it, so they can never crowd it.
CREATE INDEX task_overdue ON worklist.task
	(tenant, due_at, id)
	WHERE settled_at IS NULL AND escalated_at IS NULL AND due_at IS NOT NULL;

-- Retention: settled tasks by when they were settled.
CREATE INDEX task_settled ON worklist.task
	(tenant, settled_at)
	WHERE settled_at IS NOT NULL;

-- The sweeper's list of tenants with something due reads this and
-- task_claim_due across tenants, by the instant things fall due, so its
-- cost follows what is due, not how many tenants there are.
CREATE INDEX task_due ON worklist.task
	(due_at, tenant)
	WHERE settled_at IS NULL AND escalated_at IS NULL AND due_at IS NOT NULL;

-- The current claims.  Rows come and go with the claims; VACUUM keeps the
-- table as small as the number of claims held.
CREATE TABLE worklist.task_claim (
	tenant				text NOT NULL,
	task_id				text NOT NULL,
	holder				text NOT NULL,
	claimed_at			timestamptz NOT NULL,
	claim_expires_at	timestamptz,
	PRIMARY KEY (tenant, task_id)
);
ALTER TABLE worklist.task_claim SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 1000
);

-- held: one holder's claims, oldest first.  The holder leads, so that a
-- statement that names a claim's key (tenant, task_id) is never planned
-- on this index instead of the primary key.
CREATE INDEX task_held ON worklist.task_claim (holder, tenant, claimed_at, task_id);

-- claims: every claim of the tenant, oldest first.  The predicate, always
-- true, is spelled as the statement of claims() in src/task_list.c spells
-- it, and held(), which names the holder instead, does not: so held()
-- cannot be planned on this index (walking every claim for one holder's).
CREATE INDEX task_claims ON worklist.task_claim (tenant, claimed_at, task_id)
	WHERE claimed_at IS NOT NULL;

-- The claim-timeout part of the sweep: claims with a timeout, by when they
-- time out; and across tenants, for the sweeper's list (as task_due).
CREATE INDEX task_claim_expiry ON worklist.task_claim
	(tenant, claim_expires_at, task_id)
	WHERE claim_expires_at IS NOT NULL;
CREATE INDEX task_claim_due ON worklist.task_claim
	(claim_expires_at, tenant)
	WHERE claim_expires_at IS NOT NULL;
-- @end

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

CREATE FUNCTION worklist.task(id text)
	RETURNS worklist.task
	AS 'MODULE_PATHNAME', 'wl_task'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.task(text) IS
	'One task, or NULL when there is none with this id';

CREATE FUNCTION worklist.claim(id text, actor text, roles text[])
	RETURNS worklist.task
	AS 'MODULE_PATHNAME', 'wl_claim'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.claim(text, text, text[]) IS
	'Reserve a task for an actor; refusals in the order WL001, WL002, WL003, WL004, WL005';

-- @since 0.4
-- skip is new in 0.4 (the update drops the two-argument function).
CREATE FUNCTION worklist.claim_next(actor text, roles text[], skip text[] DEFAULT '{}')
	RETURNS worklist.task
	AS 'MODULE_PATHNAME', 'wl_claim_next'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.claim_next(text, text[], text[]) IS
	'Claim the first task in queue order, not among skip, that no concurrent caller is claiming; NULL when there is none';
-- @end

CREATE FUNCTION worklist.release(id text, actor text)
	RETURNS void
	AS 'MODULE_PATHNAME', 'wl_release'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.release(text, text) IS
	'Give a claim back; WL006 unless the actor holds the task';

CREATE FUNCTION worklist.take_over(id text, from_actor text, actor text, roles text[])
	RETURNS worklist.task
	AS 'MODULE_PATHNAME', 'wl_take_over'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.take_over(text, text, text, text[]) IS
	'Move a claim from from_actor to actor; WL006 naming from_actor when it is not the holder';

CREATE FUNCTION worklist.complete(id text, actor text, decision jsonb)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'wl_complete'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.complete(text, text, jsonb) IS
	'The holder settles a task as completed; true also for a retry by the same actor with an equal decision, false when it was otherwise already settled';

CREATE FUNCTION worklist.set_state(id text, state worklist.task_state)
	RETURNS boolean
	AS 'MODULE_PATHNAME', 'wl_set_state'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.set_state(text, worklist.task_state) IS
	'Compare-and-set a pending task to a settled state; false when it was already settled';

CREATE FUNCTION worklist.escalate(id text)
	RETURNS worklist.task
	AS 'MODULE_PATHNAME', 'wl_escalate'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.escalate(text) IS
	'Escalate an open or claimed task (holder cleared, audience widened); otherwise return it unchanged';

CREATE FUNCTION worklist.withdraw_run(run_id text, awaited text[])
	RETURNS integer
	AS 'MODULE_PATHNAME', 'wl_withdraw_run'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.withdraw_run(text, text[]) IS
	'Withdraw the still-pending tasks of awaited that belong to run_id; returns how many';

CREATE FUNCTION worklist.queue(roles text[], lim int DEFAULT 100, actor text DEFAULT NULL)
	RETURNS SETOF worklist.task
	AS 'MODULE_PATHNAME', 'wl_queue'
	LANGUAGE C STABLE ROWS 100;
COMMENT ON FUNCTION worklist.queue(text[], int, text) IS
	'Claimable tasks whose audience meets roles, highest priority, then oldest, then id first';

CREATE FUNCTION worklist.for_case(case_id text)
	RETURNS SETOF worklist.task
	AS 'MODULE_PATHNAME', 'wl_for_case'
	LANGUAGE C STABLE ROWS 10;
COMMENT ON FUNCTION worklist.for_case(text) IS
	'Every pending task of one case, in queue order';

CREATE FUNCTION worklist.held(actor text, lim int DEFAULT 100)
	RETURNS SETOF worklist.task
	AS 'MODULE_PATHNAME', 'wl_held'
	LANGUAGE C STABLE ROWS 100;
COMMENT ON FUNCTION worklist.held(text, int) IS
	'The pending tasks an actor holds, oldest claim first, then id';

CREATE FUNCTION worklist.open_count()
	RETURNS bigint
	AS 'MODULE_PATHNAME', 'wl_open_count'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.open_count() IS
	'How many tasks are pending, across all roles';

CREATE FUNCTION worklist.overdue(now timestamptz DEFAULT now(), lim int DEFAULT 100)
	RETURNS SETOF worklist.task
	AS 'MODULE_PATHNAME', 'wl_overdue'
	LANGUAGE C STABLE ROWS 100;
COMMENT ON FUNCTION worklist.overdue(timestamptz, int) IS
	'Open and claimed tasks due at or before now, earliest first; never escalated ones';

-- Verbs for a queue lead or an operator: the owner grants them.
REVOKE EXECUTE ON FUNCTION worklist.take_over(text, text, text, text[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.task_written() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.set_state(text, worklist.task_state) FROM PUBLIC;
