-- setup.sql -- what bench.sh installs next to the extension and the floor
-- (floor.sql) in the benchmark database: the ceiling table, the claim
-- wrappers of the race workload, the raw upsert table, and loaders that
-- put the same rows into worklist's tables and the floor's.
--
-- Rows are inserted directly (as the owner) rather than through the verbs:
-- loading is not what is measured, and it keeps every reset short.

CREATE SCHEMA bench;

-- The ceiling: pgbench's raw single-row UPDATE (the shape of
-- pgbench_accounts), on as many rows as the task queue holds.
CREATE TABLE bench.ceiling (
	aid			int PRIMARY KEY,
	abalance	int NOT NULL DEFAULT 0,
	filler		char(84)
);

CREATE FUNCTION bench.load_ceiling(n int) RETURNS void LANGUAGE sql AS $$
	TRUNCATE bench.ceiling;
	INSERT INTO bench.ceiling (aid) SELECT i FROM generate_series(1, n) i;
$$;

-- The raw upsert the fenced and unfenced checkpoint writes are compared
-- with: a table of the same shape (columns and indexes) as the
-- checkpoints.
CREATE TABLE bench.raw_checkpoint (LIKE worklist.run_checkpoint INCLUDING ALL);

-- The cycle's two statements sent by pgbench without the extension around
-- them (scripts/cycle_sql.sql on worklist.task), and the same on this
-- copy of the task table that keeps only the indexes a claim and a
-- completion need: the primary key and the queue (bench.sh rewrites the
-- script's table name).
CREATE SCHEMA minimal;
CREATE TABLE minimal.task
	(LIKE worklist.task INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE);
ALTER TABLE minimal.task ADD PRIMARY KEY (tenant, id);
CREATE INDEX task_claimable ON minimal.task (tenant, (- priority::int8), created_at, id)
	WHERE state = 'open' OR (state = 'escalated' AND holder IS NULL);
DO $$
BEGIN
	EXECUTE (SELECT format('ALTER TABLE minimal.task SET (%s)', array_to_string(reloptions, ', '))
	           FROM pg_class WHERE oid = 'worklist.task'::regclass);
END
$$;

-- Conflicts of the race workload, counted outside any transaction.
CREATE SEQUENCE bench.conflicts_worklist;
CREATE SEQUENCE bench.conflicts_floor;

-- pgbench aborts a client on an ERROR, so the race claims through these:
-- WL005 (somebody else holds it) is counted and answered false; anything
-- else still aborts the client and fails the row.
CREATE FUNCTION bench.try_claim_worklist(id text, actor text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM worklist.claim(id, actor, '{reviewer}');
	RETURN true;
EXCEPTION WHEN SQLSTATE 'WL005' THEN
	PERFORM nextval('bench.conflicts_worklist');
	RETURN false;
END
$$;

CREATE FUNCTION bench.try_claim_floor(id text, actor text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM floor.claim(id, actor, '{reviewer}');
	RETURN true;
EXCEPTION WHEN SQLSTATE 'WL005' THEN
	PERFORM nextval('bench.conflicts_floor');
	RETURN false;
END
$$;

-- The queue of the cycle workload: n open tasks of tenant "cycle" in
-- schema sch (worklist, floor or minimal), after emptying that schema's task
-- table.  Several roles (one or two of reviewer, approver, legal), five
-- priorities, half of them with a deadline a month away, distinct
-- creation times.
CREATE FUNCTION bench.load_queue(sch text, n int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('TRUNCATE %I.task', sch);
	EXECUTE format($q$
		INSERT INTO %I.task (tenant, id, case_id, roles, priority, payload,
		                     due_at, created_at)
		SELECT 'cycle', 't' || lpad(i::text, 7, '0'), 'case' || (i / 3),
		       CASE i %% 4 WHEN 0 THEN '{reviewer}'::text[]
		                   WHEN 1 THEN '{approver}'
		                   WHEN 2 THEN '{reviewer,approver}'
		                   ELSE '{legal}' END,
		       i %% 5,
		       jsonb_build_object('doc', 'd' || i, 'amount', i %% 1000),
		       CASE WHEN i %% 2 = 0 THEN now() + interval '30 days' END,
		       now() - interval '1 hour' + i * interval '1 ms'
		  FROM generate_series(1, $1) i$q$, sch) USING n;
END
$$;

-- The ten tasks of the race workload, in both schemas.
CREATE FUNCTION bench.load_race() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	sch text;
BEGIN
	FOREACH sch IN ARRAY ARRAY['worklist', 'floor'] LOOP
		EXECUTE format('DELETE FROM %I.task WHERE tenant = %L', sch, 'race');
		EXECUTE format($q$
			INSERT INTO %I.task (tenant, id, case_id, roles)
			SELECT 'race', 'race' || i, 'race', '{reviewer}'
			  FROM generate_series(1, 10) i$q$, sch);
	END LOOP;
END
$$;

-- The sweep workload's tenant: `settled` completed tasks (with past
-- deadlines, as settled work has) and `due` open tasks that are overdue.
-- Called again with a larger `settled`, it adds the difference.
CREATE FUNCTION bench.load_sweep(settled int, due int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	have int;
BEGIN
	SELECT count(*) INTO have FROM worklist.task
	 WHERE tenant = 'sweep' AND id LIKE 's%';
	INSERT INTO worklist.task (tenant, id, case_id, roles, state, priority,
	                           due_at, holder, claimed_at, created_at,
	                           settled_at, decided_by, decision)
	SELECT 'sweep', 's' || lpad(i::text, 8, '0'), 'case' || (i / 3), '{reviewer}',
	       'completed', i % 5, now() - interval '10 days',
	       'w' || (i % 8), now() - interval '20 days', now() - interval '30 days',
	       now() - interval '15 days', 'w' || (i % 8), '{"ok": true}'
	  FROM generate_series(have + 1, settled) i;
	INSERT INTO worklist.task (tenant, id, case_id, roles, due_at, created_at)
	SELECT 'sweep', 'd' || lpad(i::text, 5, '0'), 'due', '{reviewer}',
	       now() - interval '1 hour' + i * interval '1 ms', now() - interval '2 hours'
	  FROM generate_series(1, due) i
	ON CONFLICT DO NOTHING;
END
$$;

-- Put the overdue tasks back to open after a sweep expired them.
CREATE FUNCTION bench.reopen_due() RETURNS bigint
LANGUAGE sql AS $$
	WITH r AS (
		UPDATE worklist.task SET state = 'open', settled_at = NULL, decision = NULL
		 WHERE tenant = 'sweep' AND id LIKE 'd%' AND state <> 'open'
		RETURNING 1)
	SELECT count(*) FROM r;
$$;
