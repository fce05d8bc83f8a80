-- worklist 0.3 -> 0.4: the history of the tasks that exist already
-- (after sql/parts/12_task_history.sql has created worklist.task_log)
--
-- Each task gets event 1 "opened" at its created_at and, when settled,
-- event 2 under its state at its settled_at (by decided_by for a completed
-- task), both with login NULL and detail {"migrated": true}.
INSERT INTO worklist.task_log (tenant, task_id, seq, at, event, actor, login, detail)
SELECT t.tenant, t.id, 1, t.created_at, 'opened', NULL, NULL, '{"migrated": true}'::pg_catalog.jsonb
  FROM worklist.task t
UNION ALL
SELECT t.tenant, t.id, 2, COALESCE(t.settled_at, t.created_at), t.state::pg_catalog.text,
	   CASE WHEN t.state OPERATOR(pg_catalog.=) 'completed'::worklist.task_state THEN t.decided_by END,
	   NULL, '{"migrated": true}'::pg_catalog.jsonb
  FROM worklist.task t
 WHERE t.state OPERATOR(pg_catalog.=) ANY ('{completed,expired,withdrawn}'::worklist.task_state[]);
