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
	WHERE settled_at IS NULL;
DO $$
BEGIN
	EXECUTE (SELECT format('ALTER TABLE minimal.task SET (%s)', array_to_string(reloptions, ', '))
	           FROM pg_class WHERE oid = 'worklist.task'::regclass);
END
$$;

-- Ids of the tasks the retention load opens.
CREATE SEQUENCE bench.keep_ids;

-- Loads of a queue, numbered: each load's task ids are new (the load's
-- number leads them), as a live queue's are, so that the history of
-- tasks (worklist.task_log, which the reload does not empty) gets each
-- load's events appended, not inserted among a previous load's events of
-- the same ids.
CREATE SEQUENCE bench.loads;

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

-- The queue of the cycle workload: n open tasks of tenant ten (by default
-- "cycle") in schema sch (worklist, floor or minimal), after emptying that
-- schema's task table (and worklist's claims).  Several roles (one or two
-- of reviewer, approver, legal), five priorities, half of them with a
-- deadline a month away, distinct creation times, ids new to the load.
CREATE FUNCTION bench.load_queue(sch text, n int, ten text DEFAULT 'cycle') RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('TRUNCATE %I.task', sch);
	IF sch = 'worklist' THEN
		TRUNCATE worklist.task_claim;
	END IF;
	EXECUTE format($q$
		INSERT INTO %I.task (tenant, id, case_id, roles, priority, payload,
		                     due_at, created_at)
		SELECT $2, 't' || $3 || '.' || lpad(i::text, 7, '0'), 'case' || (i / 3),
		       CASE i %% 4 WHEN 0 THEN '{reviewer}'::text[]
		                   WHEN 1 THEN '{approver}'
		                   WHEN 2 THEN '{reviewer,approver}'
		                   ELSE '{legal}' END,
		       i %% 5,
		       jsonb_build_object('doc', 'd' || i, 'amount', i %% 1000),
		       CASE WHEN i %% 2 = 0 THEN now() + interval '30 days' END,
		       now() - interval '1 hour' + i * interval '1 ms'
		  FROM generate_series(1, $1) i$q$, sch) USING n, ten, nextval('bench.loads');
END
$$;

-- The backlog of worklist's peer rows: n open tasks of tenant ten shaped
-- like the jobs the peers' rows load (peers.js): one role, one priority,
-- no deadline, a payload of {"i": i}, created in order, after emptying
-- worklist.task.
CREATE FUNCTION bench.load_jobs(n int, ten text) RETURNS void
LANGUAGE sql AS $$
	TRUNCATE worklist.task, worklist.task_claim;
	INSERT INTO worklist.task (tenant, id, case_id, roles, payload, created_at)
	SELECT ten, 'j' || l || '.' || lpad(i::text, 7, '0'), 'job' || i, '{reviewer}',
	       jsonb_build_object('i', i), now() - interval '1 hour' + i * interval '1 ms'
	  FROM generate_series(1, n) i, nextval('bench.loads') l;
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
-- deadlines, as settled work has) and `due` open tasks that fall due ten
-- days from now: the timed sweep judges them at an instant past that, so
-- no sweeper working in real time expires them first.  Called again with a
-- larger `settled`, it adds the difference.
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
	       now() + interval '10 days' + i * interval '1 ms', now() - interval '2 hours'
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

-- Tenants with nothing due (the sweeper's tick): n tenants, each with one
-- open task whose deadline is a month away.
CREATE FUNCTION bench.load_idle_tenants(n int) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO worklist.task (tenant, id, case_id, roles, due_at)
	SELECT 'idle' || lpad(i::text, 7, '0'), 't1', 'case', '{reviewer}',
	       now() + interval '30 days'
	  FROM generate_series(1, n) i;
$$;

-- A backlog for the sweeper: n open tasks of tenant ten, overdue by an hour
-- or less (expiry policy deny).
CREATE FUNCTION bench.load_overdue(ten text, n int) RETURNS void
LANGUAGE sql AS $$
	INSERT INTO worklist.task (tenant, id, case_id, roles, due_at, created_at)
	SELECT ten, 'o' || lpad(i::text, 7, '0'), 'case' || (i / 3), '{reviewer}',
	       now() - interval '1 hour' + i * interval '1 ms', now() - interval '2 hours'
	  FROM generate_series(1, n) i;
$$;

-- The sweeper of this database as worklist.sweeper_status shows it (pid,
-- last tick, last duration); all NULL when the view lacks one of those
-- columns or no running sweeper works here.  The view shows the sweepers of
-- the current database; where it also names a database, the others are
-- left out.
CREATE FUNCTION bench.sweeper(OUT pid int, OUT last_tick timestamptz,
                              OUT last_duration_ms float8)
LANGUAGE plpgsql AS $$
DECLARE
	cols text[];
BEGIN
	SELECT array_agg(a.attname::text) INTO cols
	  FROM pg_attribute a
	 WHERE a.attrelid = to_regclass('worklist.sweeper_status')
	   AND a.attnum > 0 AND NOT a.attisdropped;
	IF cols IS NULL OR NOT cols @> '{pid,last_tick,last_duration_ms}' THEN
		RETURN;
	END IF;
	EXECUTE 'SELECT s.pid, s.last_tick, s.last_duration_ms::float8
	           FROM worklist.sweeper_status s WHERE s.pid IS NOT NULL'
	        || CASE WHEN 'database' = ANY (cols)
	                THEN ' AND s.database = current_database()' ELSE '' END
	        || ' ORDER BY s.last_tick DESC NULLS LAST LIMIT 1'
	   INTO pid, last_tick, last_duration_ms;
END
$$;

-- The durations (ms) of the sweeper's next n ticks, read from its status
-- every 20 ms, committing between reads so that no snapshot is held; NULL
-- when fewer came within timeout_s seconds.
CREATE PROCEDURE bench.sample_ticks(n int, timeout_s float8, INOUT durations float8[] DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
	s record;
	seen timestamptz;
	deadline timestamptz := clock_timestamp() + timeout_s * interval '1 s';
BEGIN
	durations := '{}';
	SELECT * INTO s FROM bench.sweeper();
	seen := s.last_tick;
	WHILE cardinality(durations) < n LOOP
		IF clock_timestamp() > deadline THEN
			durations := NULL;
			RETURN;
		END IF;
		COMMIT;
		PERFORM pg_sleep(0.02);
		SELECT * INTO s FROM bench.sweeper();
		IF s.last_tick IS DISTINCT FROM seen AND s.last_tick IS NOT NULL THEN
			durations := durations || s.last_duration_ms;
			seen := s.last_tick;
		END IF;
	END LOOP;
END
$$;

-- How long after their deadlines the sweeper expired the open tasks of
-- tenant ten: every 10 ms (committing between reads), each task seen
-- settled for the first time gives (that instant - due_at) in ms, in order
-- of due_at; NULL for a task not settled within timeout_s seconds.
-- backlog_left: whether tenant other still had overdue open tasks when the
-- last one was seen settled.
CREATE PROCEDURE bench.wait_expired(ten text, other text, timeout_s float8,
                                    INOUT delays float8[] DEFAULT NULL,
                                    INOUT backlog_left boolean DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
	deadline timestamptz := clock_timestamp() + timeout_s * interval '1 s';
	pending int;
BEGIN
	CREATE TEMP TABLE IF NOT EXISTS seen (id text PRIMARY KEY, at timestamptz);
	TRUNCATE seen;
	LOOP
		INSERT INTO seen
		SELECT t.id, clock_timestamp() FROM worklist.task t
		 WHERE t.tenant = ten AND t.state <> 'open'
		ON CONFLICT DO NOTHING;
		SELECT count(*) INTO pending FROM worklist.task t
		 WHERE t.tenant = ten AND t.state = 'open';
		IF pending = 0 THEN
			backlog_left := EXISTS (SELECT FROM worklist.task t
			                         WHERE t.tenant = other AND t.state = 'open'
			                           AND t.due_at <= clock_timestamp());
			EXIT;
		END IF;
		EXIT WHEN clock_timestamp() > deadline;
		COMMIT;
		PERFORM pg_sleep(0.01);
	END LOOP;
	SELECT array_agg(extract(epoch FROM s.at - t.due_at) * 1000 ORDER BY t.due_at)
	  INTO delays
	  FROM worklist.task t LEFT JOIN seen s ON s.id = t.id
	 WHERE t.tenant = ten;
END
$$;
