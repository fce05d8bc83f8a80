-- worklist: upgrade from 0.2 to 0.3
--
-- Assembled from sql/upgrade/*.sql in name order, one part per concept,
-- like the install script from sql/parts/.

\echo Use "ALTER EXTENSION worklist UPDATE TO '0.3'" to load this file. \quit
-- Closed tenancy and binding kinds.
--
-- Every existing binding becomes a service binding: what a binding meant
-- in 0.2 (its members named any actor, roles and instant).  Tenants with
-- no binding were open to every role in 0.2; they stay reachable only if
-- the operator sets worklist.open_tenants = on (superuser-only).

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

-- tenant_binding: role becomes a worklist.role_ref (the OIDs carry over),
-- bindings gain their kind, and the key on (tenant, role) becomes a
-- unique index over bindings of existing roles.
ALTER TABLE worklist.tenant_binding DROP CONSTRAINT tenant_binding_pkey;
ALTER TABLE worklist.tenant_binding
	ALTER COLUMN role TYPE worklist.role_ref
	USING role::pg_catalog.oid::worklist.role_ref;
ALTER TABLE worklist.tenant_binding
	ADD COLUMN kind worklist.binding_kind NOT NULL DEFAULT 'service';
ALTER TABLE worklist.tenant_binding ALTER COLUMN kind DROP DEFAULT;
CREATE INDEX tenant_binding_tenant ON worklist.tenant_binding (tenant);
CREATE UNIQUE INDEX tenant_binding_role ON worklist.tenant_binding (tenant, role)
	WHERE role::pg_catalog.oid OPERATOR(pg_catalog.<>) 0;
ALTER TABLE worklist.tenant_binding REPLICA IDENTITY FULL;

DROP FUNCTION worklist.grant_tenant(text, regrole);
DROP FUNCTION worklist.revoke_tenant(text, regrole);
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

-- The bindings the caller may administer; role is NULL for a binding
-- whose role no longer exists.
CREATE VIEW worklist.bindings WITH (security_barrier) AS
	SELECT b.tenant, r.oid::pg_catalog.regrole AS role, b.kind
	  FROM worklist.tenant_binding b
	  LEFT JOIN pg_catalog.pg_roles r
	    ON r.oid OPERATOR(pg_catalog.=) b.role::pg_catalog.oid
	 WHERE worklist.administers(b.tenant);
COMMENT ON VIEW worklist.bindings IS
	'Tenant bindings of the tenants the current role administers';

GRANT SELECT ON worklist.bindings TO PUBLIC;

CREATE FUNCTION worklist.kept_statements(
	OUT name text, OUT sql text, OUT jit boolean, OUT cost double precision)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_kept_statements'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.kept_statements() IS
	'The statements the verbs run, by name, with whether their plans would be compiled by JIT, and their estimated cost';
REVOKE EXECUTE ON FUNCTION worklist.kept_statements() FROM PUBLIC;
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
-- The sweep: what it did, two new counts at the end.
ALTER TYPE worklist.sweep_result ADD ATTRIBUTE claims_released integer;
ALTER TYPE worklist.sweep_result ADD ATTRIBUTE purged integer;
COMMENT ON FUNCTION worklist.sweep(timestamptz, int) IS
	'For the current tenant: apply expiry policies to overdue tasks, release claims held past their timeout, run the ticket watchdog, purge by the retention policy';
-- Retention (new in 0.3).
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

-- Tickets keep the instant of their latest event (for retention); the
-- sweeper lists due tickets across tenants.
ALTER TABLE worklist.ticket ADD COLUMN last_event_at timestamptz;
ALTER TABLE worklist.ticket DISABLE TRIGGER verbs_only;
UPDATE worklist.ticket t
   SET last_event_at = (SELECT pg_catalog.max(e.at) FROM worklist.ticket_event e
                         WHERE e.tenant OPERATOR(pg_catalog.=) t.tenant
                           AND e.ticket OPERATOR(pg_catalog.=) t.id);
ALTER TABLE worklist.ticket ENABLE TRIGGER verbs_only;
CREATE INDEX ticket_due ON worklist.ticket (next_check, tenant)
	WHERE next_check IS NOT NULL;
CREATE INDEX ticket_closed ON worklist.ticket (tenant, last_event_at)
	WHERE state OPERATOR(pg_catalog.=) ANY ('{done,archived}'::worklist.ticket_status[]);

-- Runs by the instant of their newest checkpoint, for retention.
CREATE INDEX run_age ON worklist.run (tenant, latest_checkpoint_at)
	WHERE listed;
-- The sweeper: one per database, its status with claims released, purges,
-- the tenants in error and the tenant of the last error.
DROP VIEW worklist.sweeper_status;
DROP FUNCTION worklist.sweeper_status();

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

CREATE VIEW worklist.sweeper_status AS
	SELECT * FROM worklist.sweeper_status();
COMMENT ON VIEW worklist.sweeper_status IS
	'Status of the sweeper of the current database: pid, last tick and its duration, totals per action, tenants in error, last error';

REVOKE EXECUTE ON FUNCTION worklist.sweeper_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION worklist.sweeper_status() TO pg_monitor;
GRANT SELECT ON worklist.sweeper_status TO pg_monitor;
-- Notifications: a channel per tenant instead of NOTIFY worklist.
CREATE TABLE worklist.tenant_channel (
	tenant		text PRIMARY KEY,
	secret		bytea NOT NULL
		CHECK (pg_catalog.octet_length(secret) OPERATOR(pg_catalog.>=) 16),
	rotated_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE worklist.tenant_channel IS
	'The secret each tenant''s notification channel is derived from';
-- as 90_security.sql does for every table of a fresh install
REVOKE ALL ON TABLE worklist.tenant_channel FROM PUBLIC;
ALTER TABLE worklist.tenant_channel ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON worklist.tenant_channel FOR SELECT
	USING (tenant OPERATOR(pg_catalog.=) worklist.visible_tenant());
SELECT pg_catalog.pg_extension_config_dump('worklist.tenant_channel', '');
CREATE TRIGGER guard_truncate BEFORE TRUNCATE ON worklist.tenant_channel
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.guard_truncate();

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
-- Tables added by this upgrade get what every table of the extension has
-- (sql/parts/90_security.sql): no PUBLIC privilege, row-level security
-- with the tenant policy, registration with pg_dump, the TRUNCATE guard.
DO $security$
DECLARE
	rel pg_catalog.regclass;
BEGIN
	FOR rel IN
		SELECT c.oid::pg_catalog.regclass
		  FROM pg_catalog.pg_class c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) 'worklist'::pg_catalog.regnamespace
		   AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
		   AND NOT EXISTS (SELECT FROM pg_catalog.pg_policy p
		                    WHERE p.polrelid OPERATOR(pg_catalog.=) c.oid
		                      AND p.polname OPERATOR(pg_catalog.=) 'tenant_isolation')
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
END
$security$;
