-- worklist: the history of tasks (doc/reference.md, section 4)

-- @since 0.4
-- One row per change of a task, numbered per task from 1 with no gap
-- (src/settle.c).  detail is NULL for an empty object.  Append-only: the
-- trigger below refuses every change but erase_tenant's and the task
-- purge's, which take a task's history with the task.
CREATE TABLE worklist.task_log (
	tenant	text NOT NULL,
	task_id	text NOT NULL,
	seq		integer NOT NULL,
	at		timestamptz NOT NULL,
	event	text NOT NULL,
	actor	text,
	login	text,
	detail	jsonb,
	PRIMARY KEY (tenant, task_id, seq)
);

CREATE FUNCTION worklist.task_log_guard() RETURNS trigger
	AS 'MODULE_PATHNAME', 'wl_task_log_guard'
	LANGUAGE C;
COMMENT ON FUNCTION worklist.task_log_guard() IS
	'Trigger keeping the history of tasks append-only';
CREATE TRIGGER task_log_append_only
	BEFORE UPDATE OR DELETE OR TRUNCATE ON worklist.task_log
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.task_log_guard();
REVOKE EXECUTE ON FUNCTION worklist.task_log_guard() FROM PUBLIC;

-- An event of a task's history, as task_history() and note() return it.
CREATE TYPE worklist.task_event AS (
	task_id	text,
	seq		integer,
	at		timestamptz,
	event	text,
	actor	text,
	login	text,
	detail	jsonb
);

CREATE FUNCTION worklist.task_history(id text, after integer DEFAULT 0, lim int DEFAULT 100)
	RETURNS SETOF worklist.task_event
	AS 'MODULE_PATHNAME', 'wl_task_history'
	LANGUAGE C STABLE ROWS 100;
COMMENT ON FUNCTION worklist.task_history(text, integer, int) IS
	'The events of a task after seq after, oldest first; WL001 when there is no such task';

CREATE FUNCTION worklist.note(id text, actor text, body text)
	RETURNS worklist.task_event
	AS 'MODULE_PATHNAME', 'wl_note'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.note(text, text, text) IS
	'Append a comment (a noted event) to the history of a task, pending or settled';
-- @end
