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
-- the records of one run's parks (resolving one, forgetting them)
CREATE INDEX run_park_task_run ON worklist.run_park_task
	(tenant, project, session, run, checkpoint_id);
-- @end
