-- worklist: the state an agent framework keeps beside a run's checkpoints
-- (doc/reference.md, section 6, "Persisting an agent framework's state")
--
-- Two tables, each keyed by the run's address within the tenant:
--   run_pending_write  the pending writes of a checkpoint's tasks, one row
--                      per (checkpoint, task id, index);
--   run_channel_value  a run's channel values, one immutable row per
--                      (channel, version).
-- Neither needs the run's row to exist (a framework may write before its
-- checkpoint); both go with the run (delete_run, retention, erasure) and
-- pending writes with their checkpoint (delete_checkpoint,
-- prune_checkpoints).  Identifiers sort bytewise (COLLATE "C"), so
-- pending writes read back in code-point order.

-- @since 0.4
CREATE TABLE worklist.run_pending_write (
	tenant				text NOT NULL,
	project				text COLLATE "C" NOT NULL,
	session				text COLLATE "C" NOT NULL,
	run					text COLLATE "C" NOT NULL,
	checkpoint_id		text COLLATE "C" NOT NULL,
	task_id				text COLLATE "C" NOT NULL,
	idx					integer NOT NULL,
	channel				text COLLATE "C" NOT NULL,
	value				jsonb NOT NULL,
	task_path			text COLLATE "C" NOT NULL DEFAULT '',
	PRIMARY KEY (tenant, project, session, run, checkpoint_id, task_id, idx)
);

CREATE TABLE worklist.run_channel_value (
	tenant				text NOT NULL,
	project				text COLLATE "C" NOT NULL,
	session				text COLLATE "C" NOT NULL,
	run					text COLLATE "C" NOT NULL,
	channel				text COLLATE "C" NOT NULL,
	version				text COLLATE "C" NOT NULL,
	value				jsonb NOT NULL,
	PRIMARY KEY (tenant, project, session, run, channel, version)
);

-- newest_checkpoints: newest first over a project and over a session (a
-- run's own order is run_checkpoint_order, read backwards), each ending
-- in the rest of the order's key so that a page is one range scan.
CREATE INDEX run_checkpoint_newest_p ON worklist.run_checkpoint
	(tenant, project, created_at, checkpoint_id, session, run);
CREATE INDEX run_checkpoint_newest_ps ON worklist.run_checkpoint
	(tenant, project, session, created_at, checkpoint_id, run);

CREATE TYPE worklist.run_write AS (
	checkpoint_id		text,
	task_id				text,
	idx					integer,
	channel				text,
	value				jsonb,
	task_path			text
);

CREATE TYPE worklist.run_value AS (
	channel				text,
	version				text,
	value				jsonb
);

CREATE FUNCTION worklist.latest_checkpoint(project text, session text, run text)
	RETURNS worklist.checkpoint
	AS 'MODULE_PATHNAME', 'wl_latest_checkpoint'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.latest_checkpoint(text, text, text) IS
	'The newest checkpoint of a run (created_at, then checkpoint_id), or NULL';

CREATE FUNCTION worklist.newest_checkpoints(
	project text,
	session text DEFAULT NULL,
	run text DEFAULT NULL,
	metadata jsonb DEFAULT NULL,
	before_session text DEFAULT NULL,
	before_run text DEFAULT NULL,
	before_checkpoint_id text DEFAULT NULL,
	lim integer DEFAULT 100)
	RETURNS SETOF worklist.checkpoint
	AS 'MODULE_PATHNAME', 'wl_newest_checkpoints'
	LANGUAGE C STABLE ROWS 100;
COMMENT ON FUNCTION worklist.newest_checkpoints(text, text, text, jsonb, text, text, text, integer) IS
	'Checkpoints of a project, session or run, newest first, whose metadata contains the filter, after a given checkpoint';

CREATE FUNCTION worklist.put_writes(
	project text, session text, run text, checkpoint_id text, task_id text,
	idx integer[], channels text[], vals jsonb[],
	task_path text DEFAULT '',
	fence bigint DEFAULT NULL)
	RETURNS integer
	AS 'MODULE_PATHNAME', 'wl_put_writes'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.put_writes(text, text, text, text, text, integer[], text[], jsonb[], text, bigint) IS
	'Store the pending writes of a task for a checkpoint; an existing index keeps its first value unless negative; returns rows stored';

CREATE FUNCTION worklist.pending_writes(
	project text, session text, run text, checkpoint_id text)
	RETURNS SETOF worklist.run_write
	AS 'MODULE_PATHNAME', 'wl_pending_writes'
	LANGUAGE C STABLE ROWS 10;
COMMENT ON FUNCTION worklist.pending_writes(text, text, text, text) IS
	'The pending writes of a checkpoint, by task_path, task_id (bytewise) and idx';

CREATE FUNCTION worklist.put_values(
	project text, session text, run text,
	channels text[], versions text[], vals jsonb[],
	fence bigint DEFAULT NULL)
	RETURNS integer
	AS 'MODULE_PATHNAME', 'wl_put_values'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.put_values(text, text, text, text[], text[], jsonb[], bigint) IS
	'Store channel values of a run by (channel, version); an existing version keeps its value; returns how many were new';

CREATE FUNCTION worklist.run_values(
	project text, session text, run text, channels text[], versions text[])
	RETURNS SETOF worklist.run_value
	AS 'MODULE_PATHNAME', 'wl_run_values'
	LANGUAGE C STABLE ROWS 10;
COMMENT ON FUNCTION worklist.run_values(text, text, text, text[], text[]) IS
	'The channel values of a run named by (channel, version) that exist, in argument order';

CREATE FUNCTION worklist.delete_run(
	project text, session text, run text,
	fence bigint DEFAULT NULL,
	now timestamptz DEFAULT pg_catalog.now())
	RETURNS integer
	AS 'MODULE_PATHNAME', 'wl_delete_run'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.delete_run(text, text, text, bigint, timestamptz) IS
	'Delete a run''s checkpoints, pending writes, values and parks, withdraw the tasks its park awaits, and supersede its lease with a fence nobody holds; returns checkpoints removed';
-- @end
