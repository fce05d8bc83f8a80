-- worklist: core (tenancy, bindings, erasure)

\echo Use "CREATE EXTENSION worklist" to load this file. \quit

-- The schema is the extension's own: created here, so it is a member and
-- DROP EXTENSION removes it with everything in it.  A schema of that name
-- made in advance (by anybody) makes CREATE EXTENSION fail instead of
-- adopting whatever was put in it.
CREATE SCHEMA worklist;

-- The tenant the row-level-security policies compare rows with: the
-- current tenant when the current role may act in it, else NULL.
CREATE FUNCTION worklist.visible_tenant() RETURNS text
	AS 'MODULE_PATHNAME', 'wl_visible_tenant_sql'
	LANGUAGE C STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION worklist.visible_tenant() IS
	'Current tenant if the current role may act in it, else NULL (used by row-level security)';

-- How a role reaches a tenant (see grant_tenant).
CREATE TYPE worklist.binding_kind AS ENUM ('member', 'service', 'admin');

-- A role, as a binding refers to it: stored as the role's OID, written
-- out as its name ("(dropped)" once the role is gone) and read back by
-- resolving the name, so that pg_dump restores bindings by role name and
-- never by number.  A name no role has reads as a dropped role.
CREATE TYPE worklist.role_ref;
CREATE FUNCTION worklist.role_ref_in(cstring) RETURNS worklist.role_ref
	AS 'MODULE_PATHNAME', 'wl_role_ref_in'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION worklist.role_ref_out(worklist.role_ref) RETURNS cstring
	AS 'MODULE_PATHNAME', 'wl_role_ref_out'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE TYPE worklist.role_ref (
	INPUT = worklist.role_ref_in,
	OUTPUT = worklist.role_ref_out,
	LIKE = pg_catalog.oid
);
COMMENT ON TYPE worklist.role_ref IS
	'A role a binding refers to: its OID, written out as its name';
CREATE CAST (worklist.role_ref AS pg_catalog.oid) WITHOUT FUNCTION;
CREATE CAST (pg_catalog.oid AS worklist.role_ref) WITHOUT FUNCTION;

-- Comparison by OID (an index on bindings; logical replication of them,
-- which finds rows by comparing every column).
CREATE FUNCTION worklist.role_ref_eq(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oideq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_ne(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_lt(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidlt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_le(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidle' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_gt(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidgt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_ge(worklist.role_ref, worklist.role_ref) RETURNS boolean
	AS 'oidge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION worklist.role_ref_cmp(worklist.role_ref, worklist.role_ref) RETURNS integer
	AS 'btoidcmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR worklist.= (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_eq,
	COMMUTATOR = OPERATOR(worklist.=), NEGATOR = OPERATOR(worklist.<>),
	RESTRICT = eqsel, JOIN = eqjoinsel, MERGES);
CREATE OPERATOR worklist.<> (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_ne,
	COMMUTATOR = OPERATOR(worklist.<>), NEGATOR = OPERATOR(worklist.=),
	RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR worklist.< (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_lt,
	COMMUTATOR = OPERATOR(worklist.>), NEGATOR = OPERATOR(worklist.>=),
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR worklist.<= (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_le,
	COMMUTATOR = OPERATOR(worklist.>=), NEGATOR = OPERATOR(worklist.>),
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR worklist.> (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_gt,
	COMMUTATOR = OPERATOR(worklist.<), NEGATOR = OPERATOR(worklist.<=),
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR worklist.>= (
	LEFTARG = worklist.role_ref, RIGHTARG = worklist.role_ref,
	FUNCTION = worklist.role_ref_ge,
	COMMUTATOR = OPERATOR(worklist.<=), NEGATOR = OPERATOR(worklist.<),
	RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR CLASS worklist.role_ref_ops
	DEFAULT FOR TYPE worklist.role_ref USING btree AS
	OPERATOR 1 worklist.<,
	OPERATOR 2 worklist.<=,
	OPERATOR 3 worklist.=,
	OPERATOR 4 worklist.>=,
	OPERATOR 5 worklist.>,
	FUNCTION 1 worklist.role_ref_cmp(worklist.role_ref, worklist.role_ref);

-- Roles a tenant is bound to, and as what.  A binding whose role was
-- dropped (or could not be resolved by a restore) stays: it grants
-- nothing and keeps its tenant closed.  Such bindings share the value
-- "(dropped)", so only the bindings of existing roles are unique.
CREATE TABLE worklist.tenant_binding (
	tenant	text NOT NULL,
	role	worklist.role_ref NOT NULL,
	kind	worklist.binding_kind NOT NULL
);
CREATE INDEX tenant_binding_tenant ON worklist.tenant_binding (tenant);
CREATE UNIQUE INDEX tenant_binding_role ON worklist.tenant_binding (tenant, role)
	WHERE role::pg_catalog.oid OPERATOR(pg_catalog.<>) 0;
-- No key that logical replication could use (a dropped role's bindings
-- are not unique): a replicated revoke finds its row by every column.
ALTER TABLE worklist.tenant_binding REPLICA IDENTITY FULL;

CREATE FUNCTION worklist.binding_changed() RETURNS trigger
	AS 'MODULE_PATHNAME', 'wl_binding_changed'
	LANGUAGE C;
CREATE TRIGGER binding_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON worklist.tenant_binding
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.binding_changed();

CREATE FUNCTION worklist.grant_tenant(tenant text, role regrole,
		kind worklist.binding_kind DEFAULT 'member') RETURNS void
	AS 'MODULE_PATHNAME', 'wl_grant_tenant'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.grant_tenant(text, regrole, worklist.binding_kind) IS
	'Bind a tenant to a role as member, service or admin, or change the kind of its binding; admin of the tenant only';

CREATE FUNCTION worklist.revoke_tenant(tenant text, role regrole) RETURNS void
	AS 'MODULE_PATHNAME', 'wl_revoke_tenant'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.revoke_tenant(text, regrole) IS
	'Remove a binding of a tenant to a role (no-op when absent); admin of the tenant only';

CREATE FUNCTION worklist.administers(tenant text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'wl_administers'
	LANGUAGE C STABLE PARALLEL RESTRICTED;
COMMENT ON FUNCTION worklist.administers(text) IS
	'Whether the current role is admin of the tenant (owner and superusers are admin of every tenant)';

-- The bindings the caller may administer; role is NULL for a binding whose
-- role no longer exists.  A security barrier: a function of the caller's
-- in a query of the view never sees the other rows.
CREATE VIEW worklist.bindings WITH (security_barrier) AS
	SELECT b.tenant, r.oid::pg_catalog.regrole AS role, b.kind
	  FROM worklist.tenant_binding b
	  LEFT JOIN pg_catalog.pg_roles r
	    ON r.oid OPERATOR(pg_catalog.=) b.role::pg_catalog.oid
	 WHERE worklist.administers(b.tenant);
COMMENT ON VIEW worklist.bindings IS
	'Tenant bindings of the tenants the current role administers';

CREATE FUNCTION worklist.erase_tenant() RETURNS bigint
	AS 'MODULE_PATHNAME', 'wl_erase_tenant'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.erase_tenant() IS
	'Delete every row of the current tenant; returns how many rows were removed';

-- Every statement the verbs keep, and whether its plan would be compiled
-- by JIT (never: they are planned with jit off).  For the owner: a
-- regression test prints them, so that a change to the C that builds them
-- shows as SQL.
CREATE FUNCTION worklist.kept_statements(
	OUT name text, OUT sql text, OUT jit boolean, OUT cost double precision)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_kept_statements'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.kept_statements() IS
	'The statements the verbs run, by name, with whether their plans would be compiled by JIT, and their estimated cost';
REVOKE EXECUTE ON FUNCTION worklist.kept_statements() FROM PUBLIC;
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
-- claim from then on).
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

-- Settled tasks accumulate; pending ones are few.  Every list below is
-- served by a partial index that holds pending rows only, so what a verb
-- costs follows what it returns, not how much history the table keeps.
-- The predicates are spelled exactly as the statements in task.c spell
-- their conditions, which is what lets the planner prove they apply.

-- queue and claim_next: claimable rows, in queue order, the priority
-- negated so that the key ascends and a scan can start at any key (where
-- claim_next starts: src/hint.c).
CREATE INDEX task_claimable ON worklist.task
	(tenant, (OPERATOR(pg_catalog.-) priority::pg_catalog.int8), created_at, id)
	WHERE state OPERATOR(pg_catalog.=) 'open'::worklist.task_state
	   OR (state OPERATOR(pg_catalog.=) 'escalated'::worklist.task_state
		   AND holder IS NULL);

-- for_case (same order) and open_count (an index-only count).
CREATE INDEX task_pending_case ON worklist.task
	(tenant, case_id, priority DESC, created_at, id)
	WHERE state OPERATOR(pg_catalog.=) ANY ('{open,claimed,escalated}'::worklist.task_state[]);

-- overdue and the sweep: open and claimed rows that have a deadline, by
-- deadline.  Escalated rows are not in it, so they can never crowd it.
CREATE INDEX task_overdue ON worklist.task
	(tenant, due_at, id)
	WHERE state OPERATOR(pg_catalog.=) ANY ('{open,claimed}'::worklist.task_state[])
	  AND due_at IS NOT NULL;

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

-- withdraw_run looks tasks up by id, through the primary key.

-- Every claim, and every settlement of an unclaimed task, leaves a dead
-- entry in task_claimable -- a claim at its head, where the next claim_next
-- starts its scan; only VACUUM removes them.  Vacuum the table after a
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

CREATE FUNCTION worklist.claim_next(actor text, roles text[])
	RETURNS worklist.task
	AS 'MODULE_PATHNAME', 'wl_claim_next'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.claim_next(text, text[]) IS
	'Claim the first task in queue order that no concurrent caller is claiming; NULL when there is none';

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
-- worklist: tickets (doc/reference.md, section 5)
--
-- A ticket's state is folded from an append-only log of what each actor
-- said (src/fold.c); see src/ticket.c for the storage and locking.

CREATE TYPE worklist.participation AS ENUM
	('acknowledged', 'working', 'blocked', 'delivered', 'abandoned');
CREATE TYPE worklist.outcome AS ENUM ('done', 'archived');
CREATE TYPE worklist.ticket_status AS ENUM
	('open', 'acknowledged', 'working', 'blocked', 'delivered', 'unowned',
	 'done', 'archived');

-- What was asked, by whom, and who may end it; then a summary of the log,
-- written in the same statement as every event (never by hand).
CREATE TABLE worklist.ticket (
	id					text NOT NULL,
	requester			text NOT NULL,
	title				text NOT NULL,
	body				jsonb NOT NULL DEFAULT '{}',
	authorities			text[] NOT NULL DEFAULT '{}',
	open_deadline		timestamptz,
	confirm_window		interval,
	ladder				interval[] NOT NULL DEFAULT '{}',
	created_at			timestamptz NOT NULL DEFAULT now(),
	-- the summary
	state				worklist.ticket_status NOT NULL DEFAULT 'open',
	deadline			timestamptz,
	overdue_from		timestamptz,	-- live: deadline, or -infinity if none
	next_check			timestamptz,	-- when the watchdog next has work
	last_seq			bigint NOT NULL DEFAULT 0,
	fold_state			bytea,			-- src/fold_store.c; NULL: no events yet
	tenant				text NOT NULL,
	last_event_at		timestamptz,	-- the latest `at` of any event
	PRIMARY KEY (tenant, id)
);

-- overdue_tickets and the watchdog read only what is due.
CREATE INDEX ticket_overdue ON worklist.ticket (tenant, overdue_from, id)
	WHERE overdue_from IS NOT NULL;
CREATE INDEX ticket_watchdog ON worklist.ticket (tenant, next_check, id)
	WHERE next_check IS NOT NULL;
-- The sweeper's list of tenants with something due reads next_check
-- across tenants.
CREATE INDEX ticket_due ON worklist.ticket (next_check, tenant)
	WHERE next_check IS NOT NULL;
-- Retention: closed tickets by the instant of their latest event.
CREATE INDEX ticket_closed ON worklist.ticket (tenant, last_event_at)
	WHERE state OPERATOR(pg_catalog.=) ANY ('{done,archived}'::worklist.ticket_status[]);

-- The log.  Its row type is what ticket_history returns: the documented
-- fields first, in the documented order.  `value` is the participation,
-- the outcome, or (for an escalation) the rung.  `watchdog` marks the
-- events only the watchdog writes (escalations and implicit
-- confirmations); `confirmation` is the implicit confirmation it recorded.
CREATE TABLE worklist.ticket_event (
	ticket				text NOT NULL,
	actor				text NOT NULL,
	at					timestamptz NOT NULL,
	kind				text NOT NULL,
	value				text NOT NULL,
	reason				text,
	not_before			timestamptz,
	seq					bigint NOT NULL,	-- arrival order within the ticket
	watchdog			boolean NOT NULL DEFAULT false,
	confirmation		jsonb,
	tenant				text NOT NULL,
	PRIMARY KEY (tenant, ticket, seq),
	CONSTRAINT ticket_event_value CHECK (
		(kind = 'participation'
		 AND value = ANY ('{acknowledged,working,blocked,delivered,abandoned}'))
		OR (kind = 'outcome' AND value = ANY ('{done,archived}'))
		OR (kind = 'escalation' AND value ~ '^[1-9][0-9]{0,8}$'
			AND watchdog AND reason IS NULL AND not_before IS NULL)),
	CONSTRAINT ticket_event_watchdog CHECK (
		watchdog = (actor = 'worklist.watchdog')
		AND (confirmation IS NULL OR (watchdog AND kind = 'outcome'))),
	CONSTRAINT ticket_event_at CHECK (isfinite(at))
);

-- Append-only: no UPDATE, DELETE or TRUNCATE of the log or of a ticket,
-- by anybody, unless erase_tenant() is running -- or, for an UPDATE of a
-- ticket, the verbs writing its summary.
CREATE FUNCTION worklist.ticket_log_guard() RETURNS trigger
	AS 'MODULE_PATHNAME', 'wl_ticket_log_guard'
	LANGUAGE C;
COMMENT ON FUNCTION worklist.ticket_log_guard() IS
	'Trigger keeping the ticket log append-only and tickets written by the verbs only';
CREATE TRIGGER append_only
	BEFORE UPDATE OR DELETE OR TRUNCATE ON worklist.ticket_event
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.ticket_log_guard();
CREATE TRIGGER verbs_only
	BEFORE UPDATE OR DELETE OR TRUNCATE ON worklist.ticket
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.ticket_log_guard();

CREATE TYPE worklist.ticket_fold AS (
	ticket				text,
	state				worklist.ticket_status,
	deadline			timestamptz,
	overdue				boolean,
	live_actors			text[],
	blocked_actors		text[],
	abandoned			jsonb,
	unauthorized_close	text[],
	interrupted			text[],
	confirmation		jsonb,
	closed_by			text,
	closed_at			timestamptz,
	escalation_rung		integer,
	close_reason		text
);

CREATE FUNCTION worklist.open_ticket(
	id text, requester text, title text, body jsonb DEFAULT '{}',
	authorities text[] DEFAULT '{}', open_deadline timestamptz DEFAULT NULL,
	confirm_window interval DEFAULT NULL, ladder interval[] DEFAULT '{}')
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_open_ticket'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.open_ticket(text, text, text, jsonb, text[], timestamptz, interval, interval[]) IS
	'Create a ticket, or return the existing one''s fold unchanged';

CREATE FUNCTION worklist.report(
	ticket text, actor text, value worklist.participation,
	not_before timestamptz DEFAULT NULL, reason text DEFAULT NULL,
	at timestamptz DEFAULT now())
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_report'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.report(text, text, worklist.participation, timestamptz, text, timestamptz) IS
	'Append what an actor says about its own participation; returns the fold';

CREATE FUNCTION worklist.close_ticket(
	ticket text, actor text, outcome worklist.outcome,
	reason text DEFAULT NULL, at timestamptz DEFAULT now())
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_close_ticket'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.close_ticket(text, text, worklist.outcome, text, timestamptz) IS
	'Append an outcome; from an actor without authority it is read as that actor''s participation';

CREATE FUNCTION worklist.ticket_state(ticket text, now timestamptz DEFAULT now())
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_ticket_state'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.ticket_state(text, timestamptz) IS
	'The fold of a ticket''s log, judged at now';

CREATE FUNCTION worklist.ticket_history(ticket text)
	RETURNS SETOF worklist.ticket_event
	AS 'MODULE_PATHNAME', 'wl_ticket_history'
	LANGUAGE C STABLE ROWS 20;
COMMENT ON FUNCTION worklist.ticket_history(text) IS
	'Every event of a ticket, in arrival order';

CREATE FUNCTION worklist.overdue_tickets(now timestamptz DEFAULT now(), lim int DEFAULT 100)
	RETURNS SETOF worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_overdue_tickets'
	LANGUAGE C STABLE ROWS 100;
COMMENT ON FUNCTION worklist.overdue_tickets(timestamptz, int) IS
	'Live tickets overdue at now: no deadline first, then earliest deadline, then id';

-- The fold as an aggregate over a ticket's events, for anyone who wants
-- to replay a log (or part of it) themselves.  The order of the input
-- never matters.
CREATE FUNCTION worklist.fold_step(internal, worklist.ticket_event, worklist.ticket, timestamptz)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'wl_fold_step'
	LANGUAGE C IMMUTABLE;
CREATE FUNCTION worklist.fold_final(internal, worklist.ticket_event, worklist.ticket, timestamptz)
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_fold_final'
	LANGUAGE C IMMUTABLE;
COMMENT ON FUNCTION worklist.fold_step(internal, worklist.ticket_event, worklist.ticket, timestamptz) IS
	'Transition function of worklist.fold';
COMMENT ON FUNCTION worklist.fold_final(internal, worklist.ticket_event, worklist.ticket, timestamptz) IS
	'Final function of worklist.fold';
CREATE AGGREGATE worklist.fold(e worklist.ticket_event, t worklist.ticket, now timestamptz) (
	SFUNC = worklist.fold_step,
	STYPE = internal,
	FINALFUNC = worklist.fold_final,
	FINALFUNC_EXTRA
);
COMMENT ON AGGREGATE worklist.fold(worklist.ticket_event, worklist.ticket, timestamptz) IS
	'Fold events of one ticket (in any order) into its ticket_fold, judged at now';
-- worklist: runs, checkpoints, leases and fences (doc/reference.md, section 6)
--
-- Three tables:
--   run             one row per run that exists (written or claimed): its
--                   fixed facts (parent_run, run_created_at) and a summary
--                   of its checkpoints (count, newest, park) that the
--                   checkpoint verbs keep current in the transaction of
--                   every change, so listing never aggregates checkpoints;
--   run_checkpoint  the checkpoints;
--   run_claim       the lease of a run that was ever claimed, with its
--                   current fence.  Kept apart from run so that a claim
--                   (which always changes the fence) rewrites a narrow row
--                   with two indexes, not a run row with the listing's.
-- A run's row in run exists whenever it has a checkpoint or a lease.
-- Identifiers sort bytewise (COLLATE "C"): the same on every server and
-- never disturbed by an operating-system collation update.

CREATE TYPE worklist.park_state AS ENUM ('outstanding', 'expired', 'resolved');

-- One sequence mints every fence of every run; see claim_run.
CREATE SEQUENCE worklist.fence_seq AS bigint;

CREATE TABLE worklist.run (
	tenant				text NOT NULL,
	project				text COLLATE "C" NOT NULL,
	session				text COLLATE "C" NOT NULL,
	run					text COLLATE "C" NOT NULL,
	parent_run			text,
	run_created_at		timestamptz,
	-- summary of the checkpoints; listed is checkpoint_count > 0, kept as
	-- its own column so the listing indexes' predicate changes only when a
	-- run gains its first checkpoint or loses its last (updates stay HOT)
	listed				boolean NOT NULL DEFAULT false,
	checkpoint_count	bigint NOT NULL DEFAULT 0,
	latest_checkpoint_id text COLLATE "C",
	latest_checkpoint_at timestamptz,
	-- the park: copied from the newest checkpoint with a park_request
	park_checkpoint_id	text COLLATE "C",
	park_request		text,
	parked_at			timestamptz,
	park_deadline		timestamptz,
	park_resolved_at	timestamptz,
	PRIMARY KEY (tenant, project, session, run)
) WITH (fillfactor = 80);

-- Keyset pagination of list_durable_runs: one index per order and scope,
-- each on keys that never change once set, so every page is one index
-- range scan of lim + 1 entries.
CREATE INDEX run_list_by_id ON worklist.run (tenant, run, project, session)
	WHERE listed;
CREATE INDEX run_list_by_id_p ON worklist.run (tenant, project, run, session)
	WHERE listed;
CREATE INDEX run_list_by_id_ps ON worklist.run (tenant, project, session, run)
	WHERE listed;
-- created_at order: runs without run_created_at first, so the key is
-- (run_created_at IS NOT NULL, COALESCE(run_created_at, '-infinity'), ...),
-- which never holds a NULL and keeps a run created at '-infinity' after
-- the undated ones.
CREATE INDEX run_list_by_created ON worklist.run
	(tenant, (run_created_at IS NOT NULL),
	 COALESCE(run_created_at, '-infinity'::timestamptz), run, project, session)
	WHERE listed;
CREATE INDEX run_list_by_created_p ON worklist.run
	(tenant, project, (run_created_at IS NOT NULL),
	 COALESCE(run_created_at, '-infinity'::timestamptz), run, session)
	WHERE listed;
CREATE INDEX run_list_by_created_ps ON worklist.run
	(tenant, project, session, (run_created_at IS NOT NULL),
	 COALESCE(run_created_at, '-infinity'::timestamptz), run)
	WHERE listed;
-- Retention: listed runs by the instant of their newest checkpoint.
CREATE INDEX run_age ON worklist.run (tenant, latest_checkpoint_at)
	WHERE listed;
-- The same two orders over parked runs only, for the park filter (an
-- approval inbox lists the few parked runs among many).
CREATE INDEX run_list_parked_by_id ON worklist.run (tenant, run, project, session)
	WHERE listed AND park_checkpoint_id IS NOT NULL;
CREATE INDEX run_list_parked_by_created ON worklist.run
	(tenant, (run_created_at IS NOT NULL),
	 COALESCE(run_created_at, '-infinity'::timestamptz), run, project, session)
	WHERE listed AND park_checkpoint_id IS NOT NULL;

CREATE TABLE worklist.run_checkpoint (
	tenant				text NOT NULL,
	project				text COLLATE "C" NOT NULL,
	session				text COLLATE "C" NOT NULL,
	run					text COLLATE "C" NOT NULL,
	checkpoint_id		text COLLATE "C" NOT NULL,
	created_at			timestamptz NOT NULL,
	body				jsonb NOT NULL,
	park_request		text,
	parked_at			timestamptz,
	park_deadline		timestamptz,
	park_resolved_at	timestamptz,
	PRIMARY KEY (tenant, project, session, run, checkpoint_id)
);

-- list_checkpoints, prune_checkpoints and the run's newest checkpoint
CREATE INDEX run_checkpoint_order ON worklist.run_checkpoint
	(tenant, project, session, run, created_at, checkpoint_id);
-- the run's newest parked checkpoint
CREATE INDEX run_checkpoint_park ON worklist.run_checkpoint
	(tenant, project, session, run, created_at, checkpoint_id)
	WHERE park_request IS NOT NULL;

CREATE TABLE worklist.run_claim (
	tenant				text NOT NULL,
	project				text COLLATE "C" NOT NULL,
	session				text COLLATE "C" NOT NULL,
	run					text COLLATE "C" NOT NULL,
	holder				text NOT NULL,
	fence				bigint NOT NULL,
	expires_at			timestamptz NOT NULL,
	-- given up by release_run (a later claim by somebody else is then no
	-- rescue of a stalled holder, so not counted as a lease reclaim)
	released			boolean NOT NULL DEFAULT false,
	-- this holding was taken from another holder whose lease had expired
	reclaimed			boolean NOT NULL DEFAULT false,
	PRIMARY KEY (tenant, project, session, run)
);

-- No fence is ever stored twice, and max(fence) -- the guard claim_run
-- keeps against a sequence that fell behind -- is one index probe.
CREATE UNIQUE INDEX run_claim_fence ON worklist.run_claim (fence);

-- Row types of the verbs.
CREATE TYPE worklist.checkpoint AS (
	project				text,
	session				text,
	run					text,
	parent_run			text,
	checkpoint_id		text,
	created_at			timestamptz,
	run_created_at		timestamptz,
	body				jsonb,
	park_request		text,
	parked_at			timestamptz,
	park_deadline		timestamptz,
	park_resolved_at	timestamptz
);

CREATE TYPE worklist.run_lease AS (
	holder				text,
	fence				bigint,
	expires_at			timestamptz
);

CREATE TYPE worklist.durable_run AS (
	project				text,
	session				text,
	run					text,
	parent_run			text,
	run_created_at		timestamptz,
	checkpoint_count	bigint,
	latest_checkpoint_id text,
	latest_checkpoint_at timestamptz,
	park_state			worklist.park_state,
	park_checkpoint_id	text,
	park_request		text,
	parked_at			timestamptz,
	park_deadline		timestamptz,
	park_resolved_at	timestamptz,
	claim_holder		text,
	claim_fence			bigint,
	claim_expires_at	timestamptz,
	claim_expired		boolean
);

CREATE TYPE worklist.durable_run_page AS (
	entries				worklist.durable_run[],
	cursor				text
);

-- Verbs.

CREATE FUNCTION worklist.write_checkpoint(
	project text, session text, run text, checkpoint_id text, body jsonb,
	fence bigint DEFAULT NULL,
	parent_run text DEFAULT NULL,
	created_at timestamptz DEFAULT pg_catalog.now(),
	run_created_at timestamptz DEFAULT NULL,
	park_request text DEFAULT NULL,
	parked_at timestamptz DEFAULT NULL,
	park_deadline timestamptz DEFAULT NULL,
	park_resolved_at timestamptz DEFAULT NULL)
	RETURNS void
	AS 'MODULE_PATHNAME', 'wl_write_checkpoint'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.write_checkpoint(text, text, text, text, jsonb, bigint, text,
	timestamptz, timestamptz, text, timestamptz, timestamptz, timestamptz) IS
	'Insert or overwrite a checkpoint of a run; a fence other than the run''s current one is refused (WL007)';

CREATE FUNCTION worklist.read_checkpoint(
	project text, session text, run text, checkpoint_id text)
	RETURNS worklist.checkpoint
	AS 'MODULE_PATHNAME', 'wl_read_checkpoint'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.read_checkpoint(text, text, text, text) IS
	'One checkpoint of a run, or NULL';

CREATE FUNCTION worklist.list_checkpoints(project text, session text, run text)
	RETURNS SETOF worklist.checkpoint
	AS 'MODULE_PATHNAME', 'wl_list_checkpoints'
	LANGUAGE C STABLE ROWS 10;
COMMENT ON FUNCTION worklist.list_checkpoints(text, text, text) IS
	'The checkpoints of a run, oldest created_at first, then by id';

CREATE FUNCTION worklist.delete_checkpoint(
	project text, session text, run text, checkpoint_id text)
	RETURNS void
	AS 'MODULE_PATHNAME', 'wl_delete_checkpoint'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.delete_checkpoint(text, text, text, text) IS
	'Delete one checkpoint of a run (no-op when absent)';

CREATE FUNCTION worklist.prune_checkpoints(
	project text, session text, run text, keep integer)
	RETURNS integer
	AS 'MODULE_PATHNAME', 'wl_prune_checkpoints'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.prune_checkpoints(text, text, text, integer) IS
	'Delete all but the newest keep checkpoints of a run; returns how many were deleted';

CREATE FUNCTION worklist.claim_run(
	project text, session text, run text, holder text, ttl interval,
	now timestamptz DEFAULT pg_catalog.now())
	RETURNS worklist.run_lease
	AS 'MODULE_PATHNAME', 'wl_claim_run'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.claim_run(text, text, text, text, interval, timestamptz) IS
	'Take (or renew) the lease of a run with a new fence; NULL while another holder''s lease is unexpired';

CREATE FUNCTION worklist.release_run(
	project text, session text, run text, fence bigint,
	now timestamptz DEFAULT pg_catalog.now())
	RETURNS void
	AS 'MODULE_PATHNAME', 'wl_release_run'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.release_run(text, text, text, bigint, timestamptz) IS
	'End the lease of a run now, when fence is its current fence and the lease is unexpired; otherwise do nothing';

CREATE FUNCTION worklist.list_durable_runs(
	project text DEFAULT NULL,
	session text DEFAULT NULL,
	order_by text DEFAULT 'run_id',
	park worklist.park_state[] DEFAULT NULL,
	claimed boolean DEFAULT NULL,
	lim integer DEFAULT 100,
	cursor text DEFAULT NULL,
	now timestamptz DEFAULT pg_catalog.now())
	RETURNS worklist.durable_run_page
	AS 'MODULE_PATHNAME', 'wl_list_durable_runs'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.list_durable_runs(text, text, text, worklist.park_state[],
	boolean, integer, text, timestamptz) IS
	'One page of the runs that have checkpoints, by run id or by creation, with their park and claim';
-- worklist: the sweep, the sweeper and the counters
-- (doc/reference.md, sections 7 and 9; notifications are in 50_notify.sql)

CREATE TYPE worklist.sweep_result AS (
	denied				integer,
	proceeded			integer,
	escalated			integer,
	tickets_escalated	integer,
	tickets_confirmed	integer,
	claims_released		integer,
	purged				integer
);

CREATE FUNCTION worklist.sweep(now timestamptz DEFAULT now(), lim int DEFAULT 1000)
	RETURNS worklist.sweep_result
	AS 'MODULE_PATHNAME', 'wl_sweep'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.sweep(timestamptz, int) IS
	'For the current tenant: apply expiry policies to overdue tasks, release claims held past their timeout, run the ticket watchdog, purge by the retention policy';

CREATE FUNCTION worklist.start_sweeper() RETURNS integer
	AS 'MODULE_PATHNAME', 'wl_start_sweeper'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.start_sweeper() IS
	'The pid of the sweeper of the current database, started here where the library is not preloaded (and asked of the launcher where it is)';

CREATE FUNCTION worklist.sweeper_status(
	OUT pid integer,
	OUT database text,
	OUT started_at timestamptz,
	OUT last_tick timestamptz,
	OUT last_duration_ms double precision,
	OUT ticks bigint,
	OUT denied bigint,
	OUT proceeded bigint,
	OUT escalated bigint,
	OUT tickets_escalated bigint,
	OUT tickets_confirmed bigint,
	OUT claims_released bigint,
	OUT purged bigint,
	OUT tenants_in_error text[],
	OUT last_error text,
	OUT last_error_tenant text,
	OUT last_error_at timestamptz)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_sweeper_status'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.sweeper_status() IS
	'The sweeper of the current database: the rows of the view worklist.sweeper_status';

-- The sweeper of the current database, one row once it has had one since
-- server start; pid is NULL while none runs.  Totals count what the
-- database's sweepers did since server start; tenants_in_error are the
-- tenants whose last batch failed (at most 8 are named).
CREATE VIEW worklist.sweeper_status AS
	SELECT * FROM worklist.sweeper_status();
COMMENT ON VIEW worklist.sweeper_status IS
	'Status of the sweeper of the current database: pid, last tick and its duration, totals per action, tenants in error, last error';

REVOKE EXECUTE ON FUNCTION worklist.start_sweeper() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.sweeper_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION worklist.sweeper_status() TO pg_monitor;
GRANT SELECT ON worklist.sweeper_status TO pg_monitor;

CREATE FUNCTION worklist.stats() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'wl_stats'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.stats() IS
	'For the current tenant: tasks per state, oldest pending age, overdue tasks, tickets per state, runs, live leases, and cumulative counters since server start';
-- worklist: retention (doc/reference.md, section 8)
--
-- One row per tenant that has set a policy: how long each kind of settled
-- work is kept (NULL: forever), and when the sweep next has something to
-- purge (src/retention.c).

CREATE TABLE worklist.retention_policy (
	tenant		text PRIMARY KEY,
	tasks		interval,
	tickets		interval,
	runs		interval,
	next_purge	timestamptz		-- NULL: no policy, nothing ever due
);
-- The sweeper's list of tenants with something due reads next_purge
-- across tenants.
CREATE INDEX retention_policy_due ON worklist.retention_policy (next_purge, tenant)
	WHERE next_purge IS NOT NULL;

CREATE FUNCTION worklist.set_retention(
		tasks interval DEFAULT NULL,
		tickets interval DEFAULT NULL,
		runs interval DEFAULT NULL)
	RETURNS void
	AS 'MODULE_PATHNAME', 'wl_set_retention'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.set_retention(interval, interval, interval) IS
	'Set how long the current tenant keeps settled tasks, closed tickets and finished runs (NULL: forever); service and admin bindings';

CREATE FUNCTION worklist.retention(OUT tasks interval, OUT tickets interval, OUT runs interval)
	RETURNS record
	AS 'MODULE_PATHNAME', 'wl_retention'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.retention() IS
	'The current tenant''s retention policy (NULL: kept forever)';
-- worklist: notifications (doc/reference.md, section 9)
--
-- Each tenant has its own channel, named by a keyed hash of the tenant
-- under a secret of its own (src/notify.c).  The secret is made by the
-- tenant's first call of channel() and replaced by rotate_channel(); only
-- the extension owner can read it, and pg_dump keeps it (90_security.sql),
-- so a restore keeps the channel names.  erase_tenant() leaves it.

CREATE TABLE worklist.tenant_channel (
	tenant		text PRIMARY KEY,
	secret		bytea NOT NULL
		CHECK (pg_catalog.octet_length(secret) OPERATOR(pg_catalog.>=) 16),
	rotated_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE worklist.tenant_channel IS
	'The secret each tenant''s notification channel is derived from';

CREATE FUNCTION worklist.channel() RETURNS text
	AS 'MODULE_PATHNAME', 'wl_channel'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.channel() IS
	'The notification channel of the current tenant, to LISTEN on';

CREATE FUNCTION worklist.rotate_channel() RETURNS text
	AS 'MODULE_PATHNAME', 'wl_rotate_channel'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.rotate_channel() IS
	'Give the current tenant a new notification channel and return it; the old one receives {"rotated": true}; admin of the tenant only';
-- worklist: privileges, row-level security, pg_dump registration
--
-- Applied to every table and sequence of the schema, so one added later
-- cannot be forgotten.  A test checks the result against the catalog.

-- Emptying a table is refused to everybody but the owner, whatever the
-- owner granted (a grant of ALL includes TRUNCATE).
CREATE FUNCTION worklist.guard_truncate() RETURNS trigger
	AS 'MODULE_PATHNAME', 'wl_guard_truncate'
	LANGUAGE C;

-- The verbs run as the owner, so a trigger put on one of the tables by
-- another role (one granted TRIGGER, say by a grant of ALL) would run with
-- the owner's rights whenever a verb fires it; and a foreign key into one
-- of the tables (REFERENCES is part of ALL too) would let its owner probe
-- which ids exist in any tenant and block erase_tenant.  Only the owner
-- and superusers may create either.
CREATE FUNCTION worklist.guard_ddl() RETURNS event_trigger
	LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp
	AS $guard$
DECLARE
	cmd record;
	nsp pg_catalog.oid := 'worklist'::pg_catalog.regnamespace;
BEGIN
	IF EXISTS (SELECT FROM pg_catalog.pg_roles r
	            WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER AND r.rolsuper)
	   OR pg_catalog.pg_has_role(CURRENT_USER,
	          (SELECT n.nspowner FROM pg_catalog.pg_namespace n
	            WHERE n.oid OPERATOR(pg_catalog.=) nsp), 'USAGE')
	THEN
		RETURN;
	END IF;
	FOR cmd IN SELECT * FROM pg_catalog.pg_event_trigger_ddl_commands() LOOP
		IF cmd.object_type OPERATOR(pg_catalog.=) 'trigger'
		   AND EXISTS (SELECT FROM pg_catalog.pg_trigger t
		                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
		                WHERE t.oid OPERATOR(pg_catalog.=) cmd.objid
		                  AND c.relnamespace OPERATOR(pg_catalog.=) nsp)
		THEN
			RAISE EXCEPTION 'permission denied to create trigger on a table of extension "worklist"'
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = 'The verbs run as the owner of the extension; only that owner may add triggers to its tables.';
		END IF;
		IF cmd.object_type OPERATOR(pg_catalog.=) 'table'
		   AND EXISTS (SELECT FROM pg_catalog.pg_constraint k
		                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) k.confrelid
		                WHERE k.conrelid OPERATOR(pg_catalog.=) cmd.objid
		                  AND k.contype OPERATOR(pg_catalog.=) 'f'
		                  AND c.relnamespace OPERATOR(pg_catalog.=) nsp)
		THEN
			RAISE EXCEPTION 'permission denied to reference a table of extension "worklist"'
				USING ERRCODE = 'insufficient_privilege',
					  DETAIL = 'A foreign key into its tables would reveal which ids exist in any tenant and block erase_tenant.';
		END IF;
	END LOOP;
END
$guard$;
CREATE EVENT TRIGGER worklist_guard_ddl ON ddl_command_end
	WHEN TAG IN ('CREATE TRIGGER', 'CREATE TABLE', 'ALTER TABLE')
	EXECUTE FUNCTION worklist.guard_ddl();

DO $security$
DECLARE
	rel pg_catalog.regclass;
BEGIN
	FOR rel IN
		SELECT c.oid::pg_catalog.regclass
		  FROM pg_catalog.pg_class c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
		   AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %s FROM PUBLIC', rel);
		EXECUTE pg_catalog.format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', rel);
		EXECUTE pg_catalog.format(
			'CREATE POLICY tenant_isolation ON %s FOR SELECT'
			' USING (tenant OPERATOR(pg_catalog.=) worklist.visible_tenant())', rel);
		PERFORM pg_catalog.pg_extension_config_dump(rel, '');
		EXECUTE pg_catalog.format(
			'CREATE TRIGGER guard_truncate BEFORE TRUNCATE ON %s'
			' FOR EACH STATEMENT EXECUTE FUNCTION worklist.guard_truncate()', rel);
	END LOOP;
	FOR rel IN
		SELECT c.oid::pg_catalog.regclass
		  FROM pg_catalog.pg_class c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
		   AND c.relkind OPERATOR(pg_catalog.=) 'S'
	LOOP
		EXECUTE pg_catalog.format('REVOKE ALL ON SEQUENCE %s FROM PUBLIC', rel);
		PERFORM pg_catalog.pg_extension_config_dump(rel, '');
	END LOOP;
END
$security$;

-- Operator verbs: the owner grants EXECUTE on these to whom it chooses.
-- (grant_tenant and revoke_tenant are executable by PUBLIC: they refuse
-- every caller that is not admin of the tenant named.)
REVOKE EXECUTE ON FUNCTION worklist.erase_tenant() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.binding_changed() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.guard_truncate() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.guard_ddl() FROM PUBLIC;

-- Everybody may reach the verbs; nothing else in the schema grants PUBLIC
-- anything.
GRANT USAGE ON SCHEMA worklist TO PUBLIC;
GRANT SELECT ON worklist.bindings TO PUBLIC;
