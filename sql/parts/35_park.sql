-- worklist: parks of runs that wait on tasks (doc/reference.md, section 6)

-- @since 0.4
-- The tasks a park made by park_run awaits.
ALTER TABLE worklist.run_checkpoint ADD COLUMN park_tasks text[];

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
