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

-- write_checkpoint: sql/parts/35_park.sql (0.4 added metadata and
-- parent_checkpoint_id).

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

-- list_durable_runs: sql/parts/35_park.sql (0.4 added concluded).
