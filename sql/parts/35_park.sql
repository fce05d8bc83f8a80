-- worklist: parks of runs that wait on tasks (doc/reference.md, section 6)

-- @since 0.4
-- What 0.4 adds to a checkpoint: the tasks a park made by park_run
-- awaits, and what an agent framework keeps beside its state (section 6:
-- metadata, stored as given, and the checkpoint it was made from).
-- Columns are only ever added nullable and without a default: adding one
-- then needs no check of the rows, so a column of another role's table
-- (a temporary one included) that uses the table's row type cannot make
-- the update fail.  metadata is NULL only on checkpoints written before
-- 0.4, and reads as '{}'.
ALTER TABLE worklist.run_checkpoint
	ADD COLUMN park_tasks text[],
	ADD COLUMN metadata jsonb,
	ADD COLUMN parent_checkpoint_id text COLLATE "C";

-- A run is concluded once conclude_run says so; queued once it has been
-- written (a checkpoint, park or claim) by this version, so that
-- claim_next_run never hands out a run that finished under 0.3 (NULL:
-- not queued).
ALTER TABLE worklist.run
	ADD COLUMN concluded_at timestamptz,
	ADD COLUMN queued boolean;

ALTER TYPE worklist.checkpoint
	ADD ATTRIBUTE park_tasks text[],
	ADD ATTRIBUTE metadata jsonb,
	ADD ATTRIBUTE parent_checkpoint_id text;
ALTER TYPE worklist.durable_run ADD ATTRIBUTE concluded_at timestamptz;

CREATE FUNCTION worklist.write_checkpoint(
	project text, session text, run text, checkpoint_id text, body jsonb,
	fence bigint DEFAULT NULL,
	parent_run text DEFAULT NULL,
	created_at timestamptz DEFAULT pg_catalog.now(),
	run_created_at timestamptz DEFAULT NULL,
	park_request text DEFAULT NULL,
	parked_at timestamptz DEFAULT NULL,
	park_deadline timestamptz DEFAULT NULL,
	park_resolved_at timestamptz DEFAULT NULL,
	metadata jsonb DEFAULT '{}',
	parent_checkpoint_id text DEFAULT NULL)
	RETURNS void
	AS 'MODULE_PATHNAME', 'wl_write_checkpoint'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.write_checkpoint(text, text, text, text, jsonb, bigint, text,
	timestamptz, timestamptz, text, timestamptz, timestamptz, timestamptz, jsonb, text) IS
	'Insert or overwrite a checkpoint of a run; a fence other than the run''s current one is refused (WL007)';

CREATE FUNCTION worklist.list_durable_runs(
	project text DEFAULT NULL,
	session text DEFAULT NULL,
	order_by text DEFAULT 'run_id',
	park worklist.park_state[] DEFAULT NULL,
	claimed boolean DEFAULT NULL,
	lim integer DEFAULT 100,
	cursor text DEFAULT NULL,
	now timestamptz DEFAULT pg_catalog.now(),
	concluded boolean DEFAULT NULL)
	RETURNS worklist.durable_run_page
	AS 'MODULE_PATHNAME', 'wl_list_durable_runs'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.list_durable_runs(text, text, text, worklist.park_state[],
	boolean, integer, text, timestamptz, boolean) IS
	'One page of the runs that have checkpoints, by run id or by creation, with their park, claim and conclusion';

-- One row per task a park awaits, so that the settlement of a task finds
-- the parks it may resolve (src/settle.c).  Kept while the park is
-- outstanding, and while it is the run's current park (retention keeps
-- the tasks of the current park of a run that is not concluded).
CREATE TABLE worklist.run_park_task (
	tenant			text NOT NULL,
	task_id			text NOT NULL,
	project			text COLLATE "C" NOT NULL,
	session			text COLLATE "C" NOT NULL,
	run				text COLLATE "C" NOT NULL,
	checkpoint_id	text COLLATE "C" NOT NULL,
	resolved		boolean NOT NULL DEFAULT false,
	PRIMARY KEY (tenant, task_id, project, session, run, checkpoint_id)
);
-- the records of one run's parks (resolving one, forgetting them); the
-- tenant last, so that no plan can take this index for a look-up of a
-- task's parks by the tenant alone (the primary key serves those)
CREATE INDEX run_park_task_run ON worklist.run_park_task
	(project, session, run, checkpoint_id, tenant);
-- Runs as a queue of work (section 6): the lease claim_next_run hands out.
CREATE TYPE worklist.claimed_run AS (
	project				text,
	session				text,
	run					text,
	holder				text,
	fence				bigint,
	expires_at			timestamptz
);

-- What claim_next_run reads its candidates from (src/run_queue.c repeats
-- the predicates word for word): runs ready to be handed out, oldest
-- newest checkpoint first, per project and per session; and runs parked
-- with a deadline, by deadline, of which it reads those whose deadline
-- has passed.  Concluded runs, runs parked without a deadline and runs
-- from before 0.4 are in none of them.
CREATE INDEX run_ready ON worklist.run
	(tenant, project, latest_checkpoint_at, session, run)
	WHERE queued AND listed AND concluded_at IS NULL
	  AND (park_checkpoint_id IS NULL OR park_resolved_at IS NOT NULL);
CREATE INDEX run_ready_s ON worklist.run
	(tenant, project, session, latest_checkpoint_at, run)
	WHERE queued AND listed AND concluded_at IS NULL
	  AND (park_checkpoint_id IS NULL OR park_resolved_at IS NOT NULL);
CREATE INDEX run_park_due ON worklist.run (tenant, project, park_deadline)
	WHERE queued AND listed AND concluded_at IS NULL
	  AND park_checkpoint_id IS NOT NULL AND park_resolved_at IS NULL
	  AND park_deadline IS NOT NULL;

CREATE FUNCTION worklist.park_run(
	project text, session text, run text, checkpoint_id text, tasks text[],
	fence bigint DEFAULT NULL,
	body jsonb DEFAULT '{}',
	park_request text DEFAULT 'tasks',
	park_deadline timestamptz DEFAULT NULL,
	now timestamptz DEFAULT pg_catalog.now(),
	metadata jsonb DEFAULT '{}',
	parent_checkpoint_id text DEFAULT NULL)
	RETURNS worklist.checkpoint
	AS 'MODULE_PATHNAME', 'wl_park_run'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.park_run(text, text, text, text, text[], bigint, jsonb, text,
	timestamptz, timestamptz, jsonb, text) IS
	'Park a run on tasks: write a parked checkpoint that awaits them and give the lease up; resolved when none of them is pending';

CREATE FUNCTION worklist.claim_next_run(
	project text, holder text, ttl interval,
	session text DEFAULT NULL,
	now timestamptz DEFAULT pg_catalog.now())
	RETURNS worklist.claimed_run
	AS 'MODULE_PATHNAME', 'wl_claim_next_run'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.claim_next_run(text, text, interval, text, timestamptz) IS
	'Take the lease of the claimable run with the oldest newest checkpoint, without waiting on other claimers; NULL when there is none';

CREATE FUNCTION worklist.conclude_run(
	project text, session text, run text,
	fence bigint DEFAULT NULL,
	now timestamptz DEFAULT pg_catalog.now())
	RETURNS integer
	AS 'MODULE_PATHNAME', 'wl_conclude_run'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.conclude_run(text, text, text, bigint, timestamptz) IS
	'Conclude a run: it takes no more writes, parks or claims; its lease ends and the pending tasks of its park are withdrawn (returns how many)';
-- @end
