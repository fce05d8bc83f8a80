-- test/soak/setup.sql -- the soak's harness, installed by a superuser in a
-- database of its own (soak.sh, and the fault tests in test/t/5NN_*.pl).
--
-- Schema soak holds:
--   * wrappers around the verbs (soak.claim, soak.run_write, ...).  Each
--     sets the tenant, calls the verb, and records what came of it in
--     soak.outcome in the same transaction.  The refusals the contract
--     allows for that call (WL002 ... WL007) are caught and recorded; any
--     other error is raised again, so the pgbench client that made the
--     call aborts and the soak fails.
--   * an audit trail written by triggers on the extension's tables
--     (soak.task_change, soak.claim_change, soak.checkpoint_write), in the
--     transaction of the change, so it holds exactly what committed;
--   * soak.audit(), the checks run after the load.
--
-- The verbs fire the triggers with search_path pinned to pg_catalog and
-- as the extension's owner: every name here is schema-qualified.
--
-- Pausing inside a verb (for the fault tests): a session that sets
-- soak.pause_in to 'task' or 'run_checkpoint' waits, inside the verb's
-- statement that changed that table and before the verb returns, for
-- advisory lock 4242 -- which the test holds while it kills the session.
--
-- Epochs: the cumulative counters of worklist.stats() live in shared
-- memory and start from zero whenever the server (re)starts, crash
-- restarts included.  Every audit row carries the epoch current when it
-- was written; a test that restarts the server adds an epoch before it
-- calls any verb again, and compares the counters with the audit rows of
-- that epoch only.

\set ON_ERROR_STOP 1

CREATE EXTENSION worklist;
CREATE SCHEMA soak;

-- The two tenants the load works in.
CREATE FUNCTION soak.tenant(tn int) RETURNS text
	LANGUAGE sql IMMUTABLE
	RETURN (ARRAY['soak_a', 'soak_b'])[tn % 2 + 1];

CREATE TABLE soak.epoch (
	n		int PRIMARY KEY,
	began	timestamptz NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO soak.epoch (n) VALUES (1);

CREATE FUNCTION soak.epoch() RETURNS int
	LANGUAGE sql STABLE
	RETURN (SELECT max(e.n) FROM soak.epoch e);

-- Call after a restart, before any verb runs again.
CREATE FUNCTION soak.new_epoch() RETURNS int
	LANGUAGE sql
	BEGIN ATOMIC
		INSERT INTO soak.epoch (n) SELECT max(e.n) + 1 FROM soak.epoch e RETURNING n;
	END;

-- ---------------------------------------------------------------------
-- Audit trail
-- ---------------------------------------------------------------------

-- What each wrapped call came to: the verb's answer, or the SQLSTATE it
-- was refused with.
CREATE TABLE soak.outcome (
	epoch		int NOT NULL,
	at			timestamptz NOT NULL DEFAULT clock_timestamp(),
	tenant		text NOT NULL,
	verb		text NOT NULL,
	target		text,
	actor		text,
	result		text NOT NULL,
	fence		bigint
);
CREATE INDEX ON soak.outcome (tenant, verb, target);

CREATE FUNCTION soak.note(tenant text, verb text, target text, actor text,
						  result text, fence bigint DEFAULT NULL)
	RETURNS text
	LANGUAGE sql
	BEGIN ATOMIC
		INSERT INTO soak.outcome (epoch, tenant, verb, target, actor, result, fence)
		VALUES (soak.epoch(), note.tenant, note.verb, note.target, note.actor,
				note.result, note.fence)
		RETURNING result;
	END;

-- Every insert and update of a task.
CREATE TABLE soak.task_change (
	epoch		int NOT NULL,
	xid			xid8 NOT NULL,
	at			timestamptz NOT NULL,
	tenant		text NOT NULL,
	id			text NOT NULL,
	old_state	text,
	new_state	text NOT NULL,
	old_holder	text,
	new_holder	text,
	decided_by	text,
	decision	jsonb,
	due_at		timestamptz,
	settled_at	timestamptz,
	policy		text NOT NULL
);
CREATE INDEX ON soak.task_change (tenant, id);

CREATE FUNCTION soak.on_task() RETURNS trigger
	LANGUAGE plpgsql
	AS $$
BEGIN
	INSERT INTO soak.task_change
	VALUES (soak.epoch(), pg_catalog.pg_current_xact_id(), pg_catalog.clock_timestamp(),
			NEW.tenant, NEW.id,
			CASE WHEN TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN OLD.state::pg_catalog.text END,
			NEW.state::pg_catalog.text,
			CASE WHEN TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN OLD.holder END,
			NEW.holder, NEW.decided_by, NEW.decision, NEW.due_at, NEW.settled_at,
			NEW.expiry_policy::pg_catalog.text);
	IF pg_catalog.current_setting('soak.pause_in', true) OPERATOR(pg_catalog.=) TG_TABLE_NAME THEN
		PERFORM pg_catalog.pg_advisory_xact_lock(4242);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER soak_audit AFTER INSERT OR UPDATE ON worklist.task
	FOR EACH ROW EXECUTE FUNCTION soak.on_task();

-- Every claim of a run (the lease row is inserted by a first claim and
-- updated by every later one; release_run updates it too).
CREATE TABLE soak.claim_change (
	epoch		int NOT NULL,
	xid			xid8 NOT NULL,
	at_now		timestamptz NOT NULL,	-- now() of the claim: its "now"
	tenant		text NOT NULL,
	run			text NOT NULL,
	old_holder	text,
	old_fence	bigint,
	old_expires	timestamptz,
	old_released boolean,
	new_holder	text NOT NULL,
	new_fence	bigint NOT NULL,
	new_expires	timestamptz NOT NULL,
	new_released boolean NOT NULL,
	reclaimed	boolean NOT NULL
);
CREATE INDEX ON soak.claim_change (tenant, run);

CREATE FUNCTION soak.on_claim() RETURNS trigger
	LANGUAGE plpgsql
	AS $$
BEGIN
	IF TG_OP OPERATOR(pg_catalog.=) 'UPDATE' THEN
		INSERT INTO soak.claim_change
		VALUES (soak.epoch(), pg_catalog.pg_current_xact_id(), pg_catalog.now(),
				NEW.tenant, NEW.project OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) NEW.session
					OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) NEW.run,
				OLD.holder, OLD.fence, OLD.expires_at, OLD.released,
				NEW.holder, NEW.fence, NEW.expires_at, NEW.released, NEW.reclaimed);
	ELSE
		INSERT INTO soak.claim_change
		VALUES (soak.epoch(), pg_catalog.pg_current_xact_id(), pg_catalog.now(),
				NEW.tenant, NEW.project OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) NEW.session
					OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) NEW.run,
				NULL, NULL, NULL, NULL,
				NEW.holder, NEW.fence, NEW.expires_at, NEW.released, NEW.reclaimed);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER soak_audit AFTER INSERT OR UPDATE ON worklist.run_claim
	FOR EACH ROW EXECUTE FUNCTION soak.on_claim();

-- Every checkpoint written, with the fence the writer carried (the
-- wrappers put it in the body) and the run's current fence read at the
-- moment of the write, in a snapshot taken then.
CREATE TABLE soak.checkpoint_write (
	epoch		int NOT NULL,
	xid			xid8 NOT NULL,
	tenant		text NOT NULL,
	run			text NOT NULL,
	checkpoint_id text NOT NULL,
	fence		bigint,
	current_fence bigint,
	current_holder text
);

CREATE FUNCTION soak.on_checkpoint() RETURNS trigger
	LANGUAGE plpgsql
	AS $$
DECLARE
	cur_fence	bigint;
	cur_holder	text;
BEGIN
	SELECT l.fence, l.holder INTO cur_fence, cur_holder
	  FROM worklist.run_claim l
	 WHERE l.tenant OPERATOR(pg_catalog.=) NEW.tenant
	   AND l.project OPERATOR(pg_catalog.=) NEW.project
	   AND l.session OPERATOR(pg_catalog.=) NEW.session
	   AND l.run OPERATOR(pg_catalog.=) NEW.run;
	INSERT INTO soak.checkpoint_write
	VALUES (soak.epoch(), pg_catalog.pg_current_xact_id(), NEW.tenant,
			NEW.project OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) NEW.session
				OPERATOR(pg_catalog.||) '/' OPERATOR(pg_catalog.||) NEW.run,
			NEW.checkpoint_id, (NEW.body OPERATOR(pg_catalog.->>) 'fence')::pg_catalog.int8,
			cur_fence, cur_holder);
	IF pg_catalog.current_setting('soak.pause_in', true) OPERATOR(pg_catalog.=) TG_TABLE_NAME THEN
		PERFORM pg_catalog.pg_advisory_xact_lock(4242);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER soak_audit AFTER INSERT OR UPDATE ON worklist.run_checkpoint
	FOR EACH ROW EXECUTE FUNCTION soak.on_checkpoint();

-- The monitor's samples: how long the most overdue open or claimed task
-- has been waiting for its policy, every quarter of a second.
CREATE TABLE soak.sample (
	at			timestamptz NOT NULL,
	overdue		int NOT NULL,
	worst		interval,
	tick_ms		float8			-- the sweeper's last tick took this long
);

CREATE PROCEDURE soak.monitor(seconds float8)
	LANGUAGE plpgsql
	AS $$
DECLARE
	stop timestamptz := clock_timestamp() + make_interval(secs => seconds);
BEGIN
	WHILE clock_timestamp() < stop LOOP
		INSERT INTO soak.sample
		SELECT clock_timestamp(), count(*), clock_timestamp() - min(t.due_at),
			   (SELECT max(s.last_duration_ms) FROM worklist.sweeper_status s)
		  FROM worklist.task t
		 WHERE t.state = ANY ('{open,claimed}'::worklist.task_state[])
		   AND t.due_at <= clock_timestamp();
		COMMIT;
		PERFORM pg_sleep(0.25);
	END LOOP;
END
$$;

-- ---------------------------------------------------------------------
-- Task wrappers
-- ---------------------------------------------------------------------

CREATE SEQUENCE soak.task_seq;

-- A random pending task of the tenant: any, held by actor ('held'), held
-- by somebody else ('other'), or escalated and free ('escalated').
CREATE FUNCTION soak.pick(tenant text, what text, actor text DEFAULT NULL)
	RETURNS text
	LANGUAGE sql VOLATILE
	BEGIN ATOMIC
		SELECT t.id FROM worklist.task t
		 WHERE t.tenant = pick.tenant
		   AND t.state = ANY ('{open,claimed,escalated}'::worklist.task_state[])
		   AND CASE WHEN pick.what = 'held' THEN t.holder = pick.actor
					WHEN pick.what = 'other' THEN t.holder <> pick.actor
					WHEN pick.what = 'escalated' THEN t.state = 'escalated' AND t.holder IS NULL
					ELSE true END
		 ORDER BY random() LIMIT 1;
	END;

-- Open a new task: due in 0.2 to 4 seconds, any policy; one in ten
-- excludes one of the workers.
CREATE FUNCTION soak.open(tenant text) RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	id text := 'T' || nextval('soak.task_seq');
	t worklist.task;
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	t := worklist.open_task(id, 'case' || (random() * 50)::int, '{r}',
			payload => jsonb_build_object('n', id),
			priority => (random() * 3)::int,
			due_at => now() + make_interval(secs => 0.2 + random() * 3.8),
			expiry_policy => (ARRAY['deny', 'proceed', 'escalate'])[1 + (random() * 2)::int]::worklist.expiry_policy,
			excluded => CASE WHEN random() < 0.1 THEN ARRAY['w' || (random() * 7)::int] ELSE '{}' END,
			escalation_roles => '{lead}');
	IF t.created_at <> now() OR t.state <> 'open' THEN
		RAISE EXCEPTION 'open_task(%) did not create an open task: %', id, t;
	END IF;
	RETURN soak.note(tenant, 'open_task', id, NULL, 'opened');
END
$$;

-- Open an id again: the task must come back unchanged, whatever state.
CREATE FUNCTION soak.reopen(tenant text) RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	id text;
	was worklist.task;
	t worklist.task;
BEGIN
	SELECT k.* INTO was FROM worklist.task k
	 WHERE k.tenant = reopen.tenant
	   AND k.id = 'T' || (1 + (random() * (SELECT last_value FROM soak.task_seq))::bigint);
	IF was.id IS NULL THEN
		RETURN 'skipped';
	END IF;
	id := was.id;
	PERFORM set_config('worklist.tenant', tenant, true);
	t := worklist.open_task(id, 'other-case', '{x}', due_at => now());
	IF t.created_at <> was.created_at OR t.case_id <> was.case_id OR t.roles <> was.roles THEN
		RAISE EXCEPTION 'reopening % changed it: % became %', id, was, t;
	END IF;
	RETURN soak.note(tenant, 'open_task', id, NULL, 'existing');
END
$$;

CREATE FUNCTION soak.claim(tenant text, id text, actor text, roles text[] DEFAULT '{r}')
	RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	t worklist.task;
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	BEGIN
		t := worklist.claim(id, actor, roles);
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> ALL ('{WL002,WL003,WL004,WL005}') THEN
			RAISE;
		END IF;
		RETURN soak.note(tenant, 'claim', id, actor, SQLSTATE);
	END;
	IF t.holder <> actor THEN
		RAISE EXCEPTION 'claim(%) by % returned holder %', id, actor, t.holder;
	END IF;
	RETURN soak.note(tenant, 'claim', id, actor,
					 CASE WHEN t.claimed_at = now() THEN 'claimed' ELSE 'same' END);
END
$$;

CREATE FUNCTION soak.claim_next(tenant text, actor text, roles text[] DEFAULT '{r}')
	RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	t worklist.task;
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	t := worklist.claim_next(actor, roles);
	IF t.id IS NOT NULL AND (t.holder <> actor OR t.claimed_at <> now()) THEN
		RAISE EXCEPTION 'claim_next by % returned %', actor, t;
	END IF;
	RETURN soak.note(tenant, 'claim_next', t.id, actor,
					 CASE WHEN t.id IS NULL THEN 'none' ELSE 'claimed' END);
END
$$;

CREATE FUNCTION soak.complete(tenant text, id text, actor text) RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	done boolean;
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	BEGIN
		done := worklist.complete(id, actor, jsonb_build_object('by', actor));
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> ALL ('{WL002,WL006}') THEN
			RAISE;
		END IF;
		RETURN soak.note(tenant, 'complete', id, actor, SQLSTATE);
	END;
	RETURN soak.note(tenant, 'complete', id, actor, done::text);
END
$$;

CREATE FUNCTION soak.release(tenant text, id text, actor text) RETURNS text
	LANGUAGE plpgsql
	AS $$
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	BEGIN
		PERFORM worklist.release(id, actor);
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> ALL ('{WL002,WL006}') THEN
			RAISE;
		END IF;
		RETURN soak.note(tenant, 'release', id, actor, SQLSTATE);
	END;
	RETURN soak.note(tenant, 'release', id, actor, 'released');
END
$$;

CREATE FUNCTION soak.take_over(tenant text, id text, from_actor text, actor text,
							   roles text[] DEFAULT '{r}')
	RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	t worklist.task;
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	BEGIN
		t := worklist.take_over(id, from_actor, actor, roles);
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> ALL ('{WL002,WL003,WL004,WL006}') THEN
			RAISE;
		END IF;
		RETURN soak.note(tenant, 'take_over', id, actor, SQLSTATE);
	END;
	IF t.holder <> actor THEN
		RAISE EXCEPTION 'take_over(%) by % returned holder %', id, actor, t.holder;
	END IF;
	RETURN soak.note(tenant, 'take_over', id, actor, 'moved');
END
$$;

CREATE FUNCTION soak.escalate(tenant text, id text) RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	t worklist.task;
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	t := worklist.escalate(id);
	IF t.state IN ('open', 'claimed') THEN
		RAISE EXCEPTION 'escalate(%) left it %', id, t.state;
	END IF;
	RETURN soak.note(tenant, 'escalate', id, NULL, t.state::text);
END
$$;

-- One step of a task worker: one verb, chosen at random.  Workers are
-- w0..w7 with role r; leads (role lead) take escalated tasks.
CREATE FUNCTION soak.task_step(tn int, client int) RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	ten text := soak.tenant(tn);
	actor text := 'w' || client;
	r float8 := random();
	tid text;
	holder text;
BEGIN
	IF r < 0.24 THEN
		RETURN soak.open(ten);
	ELSIF r < 0.40 THEN
		RETURN soak.claim_next(ten, actor);
	ELSIF r < 0.50 THEN
		tid := soak.pick(ten, 'any');
		RETURN CASE WHEN tid IS NULL THEN 'idle' ELSE soak.claim(ten, tid, actor) END;
	ELSIF r < 0.66 THEN
		-- usually a task this worker holds; sometimes anybody's
		tid := CASE WHEN r < 0.63 THEN soak.pick(ten, 'held', actor) ELSE soak.pick(ten, 'any') END;
		RETURN CASE WHEN tid IS NULL THEN 'idle' ELSE soak.complete(ten, tid, actor) END;
	ELSIF r < 0.72 THEN
		tid := CASE WHEN r < 0.70 THEN soak.pick(ten, 'held', actor) ELSE soak.pick(ten, 'any') END;
		RETURN CASE WHEN tid IS NULL THEN 'idle' ELSE soak.release(ten, tid, actor) END;
	ELSIF r < 0.80 THEN
		tid := soak.pick(ten, 'other', actor);
		IF tid IS NULL THEN
			RETURN 'idle';
		END IF;
		SELECT t.holder INTO holder FROM worklist.task t WHERE t.tenant = ten AND t.id = tid;
		RETURN soak.take_over(ten, tid, coalesce(holder, 'nobody'), actor);
	ELSIF r < 0.85 THEN
		tid := soak.pick(ten, 'any');
		RETURN CASE WHEN tid IS NULL THEN 'idle' ELSE soak.escalate(ten, tid) END;
	ELSIF r < 0.97 THEN
		-- a lead takes an escalated task and decides it
		tid := soak.pick(ten, 'escalated');
		IF tid IS NULL THEN
			RETURN 'idle';
		END IF;
		IF soak.claim(ten, tid, 'lead' || client, '{lead}') IN ('claimed', 'same') THEN
			RETURN soak.complete(ten, tid, 'lead' || client);
		END IF;
		RETURN 'lost';
	ELSE
		RETURN soak.reopen(ten);
	END IF;
END
$$;

-- After the load: decide every task still pending (all of them escalated
-- by then, or the audit reports them stuck), through the same wrappers.
CREATE FUNCTION soak.drain() RETURNS int
	LANGUAGE plpgsql
	AS $$
DECLARE
	t record;
	n int := 0;
BEGIN
	FOR t IN SELECT k.tenant, k.id, k.holder FROM worklist.task k
			  WHERE k.state = 'escalated' ORDER BY 1, 2
	LOOP
		IF t.holder IS NULL THEN
			PERFORM soak.claim(t.tenant, t.id, 'drain', '{lead}');
			t.holder := 'drain';
		END IF;
		IF soak.complete(t.tenant, t.id, t.holder) <> 'true' THEN
			RAISE EXCEPTION 'could not decide escalated task %/%', t.tenant, t.id;
		END IF;
		n := n + 1;
	END LOOP;
	RETURN n;
END
$$;

-- ---------------------------------------------------------------------
-- Run wrappers: a worker claims a run with a short lease, naps, writes
-- fenced checkpoints, naps, writes again, and releases, prunes or just
-- lets the lease run out.  Leases expire under workers that nap too long;
-- another worker reclaims and the late writes are refused (WL007).
-- ---------------------------------------------------------------------

CREATE SEQUENCE soak.checkpoint_seq;

-- The fence of the lease taken, or 0 when somebody else holds the run.
CREATE FUNCTION soak.run_claim(tn int, client int, run int) RETURNS bigint
	LANGUAGE plpgsql
	AS $$
DECLARE
	tenant text := soak.tenant(tn);
	l worklist.run_lease;
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	l := worklist.claim_run('p', 's', 'run' || run, 'w' || client, interval '250 milliseconds');
	IF l.fence IS NOT NULL AND l.holder <> 'w' || client THEN
		RAISE EXCEPTION 'claim_run by w% returned %', client, l;
	END IF;
	PERFORM soak.note(tenant, 'claim_run', 'p/s/run' || run, 'w' || client,
					  CASE WHEN l.fence IS NULL THEN 'lost' ELSE 'held' END, l.fence);
	RETURN coalesce(l.fence, 0);
END
$$;

CREATE FUNCTION soak.run_write(tn int, client int, run int, fence bigint) RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	tenant text := soak.tenant(tn);
	actor text := 'w' || client;
	ckpt text := 'k' || (random() * 4)::int;
	body jsonb;
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	IF fence = 0 THEN
		-- no lease: now and then an unfenced write, which is always admitted
		IF random() < 0.2 THEN
			PERFORM worklist.write_checkpoint('p', 's', 'run' || run, ckpt,
				jsonb_build_object('holder', actor, 'n', nextval('soak.checkpoint_seq')));
			RETURN soak.note(tenant, 'write_checkpoint', 'p/s/run' || run, actor, 'unfenced');
		END IF;
		RETURN 'skipped';
	END IF;
	body := jsonb_build_object('fence', fence, 'holder', actor, 'n', nextval('soak.checkpoint_seq'));
	BEGIN
		PERFORM worklist.write_checkpoint('p', 's', 'run' || run, ckpt, body, fence);
	EXCEPTION WHEN OTHERS THEN
		IF SQLSTATE <> 'WL007' THEN
			RAISE;
		END IF;
		RETURN soak.note(tenant, 'write_checkpoint', 'p/s/run' || run, actor, SQLSTATE, fence);
	END;
	RETURN soak.note(tenant, 'write_checkpoint', 'p/s/run' || run, actor, 'written', fence);
END
$$;

CREATE FUNCTION soak.run_finish(tn int, client int, run int, fence bigint) RETURNS text
	LANGUAGE plpgsql
	AS $$
DECLARE
	tenant text := soak.tenant(tn);
	r float8 := random();
	n int;
BEGIN
	PERFORM set_config('worklist.tenant', tenant, true);
	IF fence = 0 THEN
		RETURN 'skipped';
	ELSIF r < 0.4 THEN
		PERFORM worklist.release_run('p', 's', 'run' || run, fence);
		RETURN soak.note(tenant, 'release_run', 'p/s/run' || run, 'w' || client, 'done', fence);
	ELSIF r < 0.6 THEN
		n := worklist.prune_checkpoints('p', 's', 'run' || run, 2);
		RETURN soak.note(tenant, 'prune_checkpoints', 'p/s/run' || run, 'w' || client, n::text);
	END IF;
	RETURN 'lapsed';
END
$$;

-- ---------------------------------------------------------------------
-- The audit
-- ---------------------------------------------------------------------

-- Checks over everything recorded.  counters_epoch: the epoch whose audit
-- rows the cumulative counters of stats() must match (the server must
-- not have restarted since it began; NULL: not checked).  during_load:
-- also judge how closely the sweep kept pace with the load (not across
-- crashes: nothing sweeps while the server is down).  Run it once the
-- load has stopped, every task has fallen due, and soak.drain() has
-- decided the escalated ones.
CREATE FUNCTION soak.audit(counters_epoch int, during_load boolean)
	RETURNS TABLE (check_name text, ok boolean, detail text)
	LANGUAGE plpgsql
	AS $$
DECLARE
	pending CONSTANT worklist.task_state[] := '{open,claimed,escalated}';
	settled CONSTANT text[] := '{completed,expired,withdrawn}';
	grace interval := 2 * current_setting('worklist.sweep_interval')::interval;
	n bigint;
	m bigint;
	d text;
	p50 interval;
	p99 interval;
	worst interval;
	tn text;
	stats jsonb;
	expect jsonb;
BEGIN
	-- Every task opened exists; none exists that was not opened.
	SELECT count(*) INTO n FROM soak.outcome o
	 WHERE o.verb = 'open_task' AND o.result = 'opened'
	   AND NOT EXISTS (SELECT FROM worklist.task t WHERE t.tenant = o.tenant AND t.id = o.target);
	SELECT count(*) INTO m FROM worklist.task t
	 WHERE NOT EXISTS (SELECT FROM soak.outcome o WHERE o.verb = 'open_task' AND o.result = 'opened'
						  AND o.tenant = t.tenant AND o.target = t.id);
	check_name := 'no task lost'; ok := n = 0 AND m = 0;
	detail := format('%s tasks; %s opened but missing, %s not opened by anybody',
					 (SELECT count(*) FROM worklist.task), n, m);
	RETURN NEXT;

	-- Nothing is left pending: the sweeper applied every policy, and the
	-- escalated tasks were decided.
	SELECT count(*), string_agg(DISTINCT t.state::text, ',') INTO n, d
	  FROM worklist.task t WHERE t.state = ANY (pending);
	SELECT string_agg(s || '=' || c, ' ') INTO detail
	  FROM (SELECT t.state::text s, count(*) c FROM worklist.task t GROUP BY 1 ORDER BY 1) x;
	check_name := 'every task settled'; ok := n = 0;
	detail := detail || CASE WHEN n > 0 THEN format('; %s pending (%s)', n, d) ELSE '' END;
	RETURN NEXT;

	-- Exactly one change from pending to settled, and none after it.
	SELECT count(*) INTO n FROM (
		SELECT c.tenant, c.id FROM soak.task_change c
		 WHERE c.new_state = ANY (settled)
		   AND (c.old_state IS NULL OR c.old_state <> ALL (settled))
		 GROUP BY 1, 2 HAVING count(*) <> 1) x;
	SELECT count(*) INTO m FROM soak.task_change c WHERE c.old_state = ANY (settled);
	check_name := 'settled exactly once'; ok := n = 0 AND m = 0;
	detail := format('%s tasks settled more than once, %s changes after settlement', n, m);
	RETURN NEXT;

	-- Every change is one the contract allows.
	SELECT count(*), min(format('%s/%s %s(%s)->%s(%s)', c.tenant, c.id, c.old_state, c.old_holder,
								 c.new_state, c.new_holder))
	  INTO n, d
	  FROM soak.task_change c
	 WHERE NOT CASE
		-- opened
		WHEN c.old_state IS NULL THEN c.new_state = 'open' AND c.new_holder IS NULL
		-- claim, claim_next
		WHEN c.old_holder IS NULL AND c.new_holder IS NOT NULL THEN
			(c.old_state, c.new_state) IN (('open', 'claimed'), ('escalated', 'escalated'))
		-- take_over
		WHEN c.old_holder IS NOT NULL AND c.new_holder IS NOT NULL AND c.old_holder <> c.new_holder THEN
			c.old_state = c.new_state AND c.old_state IN ('claimed', 'escalated')
		-- escalate (the verb or the policy): the holder is cleared
		WHEN c.old_state IN ('open', 'claimed') AND c.new_state = 'escalated' THEN
			c.new_holder IS NULL
		-- release
		WHEN c.old_holder IS NOT NULL AND c.new_holder IS NULL THEN
			(c.old_state, c.new_state) IN (('claimed', 'open'), ('escalated', 'escalated'))
		-- complete: by the holder, who is recorded as the decider
		WHEN c.new_state = 'completed' THEN
			c.old_state = ANY (pending::text[]) AND c.decided_by = c.old_holder
			AND c.new_holder = c.old_holder AND c.decision = jsonb_build_object('by', c.decided_by)
		-- expiry: the policy, on an open or claimed task that was due
		WHEN c.new_state = 'expired' THEN
			c.old_state IN ('open', 'claimed') AND c.decided_by IS NULL
			AND c.decision = jsonb_build_object('policy', c.policy) AND c.policy IN ('deny', 'proceed')
			AND c.settled_at >= c.due_at AND c.new_holder IS NOT DISTINCT FROM c.old_holder
		ELSE false END;
	check_name := 'every change allowed'; ok := n = 0;
	detail := format('%s changes not allowed by the contract%s', n,
					 CASE WHEN n > 0 THEN ', e.g. ' || d ELSE '' END);
	RETURN NEXT;

	-- One decider or one policy per settled task, and every "true" from
	-- complete is one of those decisions.
	SELECT count(*) INTO n FROM worklist.task t
	 WHERE t.state = 'completed'
	   AND (t.decided_by IS NULL
			OR (SELECT count(*) FROM soak.outcome o
				 WHERE o.tenant = t.tenant AND o.target = t.id AND o.verb = 'complete'
				   AND o.result = 'true') <> 1
			OR NOT EXISTS (SELECT FROM soak.outcome o
							WHERE o.tenant = t.tenant AND o.target = t.id AND o.verb = 'complete'
							  AND o.result = 'true' AND o.actor = t.decided_by));
	SELECT count(*) INTO m FROM worklist.task t
	 WHERE t.state = 'expired'
	   AND (t.decided_by IS NOT NULL
			OR t.decision <> jsonb_build_object('policy', t.expiry_policy::text)
			OR EXISTS (SELECT FROM soak.outcome o
						WHERE o.tenant = t.tenant AND o.target = t.id AND o.verb = 'complete'
						  AND o.result = 'true'));
	check_name := 'one decider or policy'; ok := n = 0 AND m = 0;
	detail := format('%s completed without exactly one decider, %s expired without exactly its policy', n, m);
	RETURN NEXT;

	-- Nothing stuck: at the end, no open or claimed task is overdue by
	-- more than two sweep intervals ...
	SELECT count(*) INTO n FROM worklist.task t
	 WHERE t.state = ANY ('{open,claimed}'::worklist.task_state[])
	   AND t.due_at <= now() - grace;
	check_name := 'nothing stuck at the end'; ok := n = 0;
	detail := format('%s open or claimed tasks overdue by more than %s', n, grace);
	RETURN NEXT;

	-- During the load the sweep skips rows a worker has locked at that
	-- instant (it never waits), so one task may now and then wait a tick
	-- longer; but the policies must keep pace: 99% of them fire within two
	-- intervals of the due time, none later than ten, and no backlog
	-- builds up.
	IF during_load THEN
		SELECT count(*),
			   count(*) FILTER (WHERE x.lag > grace),
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY x.lag),
			   percentile_cont(0.99) WITHIN GROUP (ORDER BY x.lag),
			   max(x.lag)
		  INTO n, m, p50, p99, worst
		  FROM (SELECT t.settled_at - t.due_at AS lag FROM worklist.task t
				 WHERE t.state = 'expired') x;
		check_name := 'policies applied on time';
		ok := coalesce(p99 <= grace AND worst <= 5 * grace, true);
		detail := format('%s expiries after their due time: median %s, 99%% %s, worst %s; %s later than %s',
						 n, p50, p99, worst, m, grace);
		RETURN NEXT;

		SELECT count(*), count(*) FILTER (WHERE s.worst > grace), max(s.worst)
		  INTO n, m, worst
		  FROM soak.sample s;
		check_name := 'no backlog during the load';
		ok := coalesce(worst <= 5 * grace, true);
		detail := format('%s samples: most overdue open or claimed task %s; %s samples above %s',
						 n, coalesce(worst, '0'), m, grace);
		RETURN NEXT;
	END IF;

	-- Fences: each claim mints one never issued before, above the run's
	-- previous one.
	SELECT count(*) INTO n FROM (
		SELECT c.new_fence FROM soak.claim_change c
		 WHERE c.new_fence IS DISTINCT FROM c.old_fence
		 GROUP BY 1 HAVING count(*) > 1) x;
	SELECT count(*) INTO m FROM soak.claim_change c
	 WHERE c.new_fence < c.old_fence
		OR (c.new_fence = c.old_fence AND NOT (c.new_released AND NOT c.old_released));
	check_name := 'fences never reissued'; ok := n = 0 AND m = 0;
	detail := format('%s claims, %s fences issued twice, %s claims not above the previous fence',
					 (SELECT count(*) FROM soak.claim_change c WHERE c.new_fence IS DISTINCT FROM c.old_fence),
					 n, m);
	RETURN NEXT;

	-- In commit order, a run's fences only grow.
	SELECT count(*) INTO n FROM (
		SELECT c.new_fence < lag(c.new_fence) OVER w AS back
		  FROM soak.claim_change c
		 WHERE c.new_fence IS DISTINCT FROM c.old_fence
		WINDOW w AS (PARTITION BY c.tenant, c.run
					 ORDER BY pg_xact_commit_timestamp(c.xid::xid), c.new_fence)) x
	 WHERE back;
	check_name := 'fences grow in commit order'; ok := n = 0;
	detail := format('%s claims committed after a claim with a higher fence', n);
	RETURN NEXT;

	-- No checkpoint written with a fence other than the run's current one
	-- when it was written, as read at the write ...
	SELECT count(*), count(*) FILTER (WHERE w.fence < w.current_fence) INTO n, m
	  FROM soak.checkpoint_write w
	 WHERE w.fence IS NOT NULL AND w.fence IS DISTINCT FROM w.current_fence;
	check_name := 'fenced writes carried the current fence'; ok := n = 0;
	detail := format('%s fenced writes, %s unfenced; %s with another fence than the current one (%s lower)',
					 (SELECT count(*) FROM soak.checkpoint_write w WHERE w.fence IS NOT NULL),
					 (SELECT count(*) FROM soak.checkpoint_write w WHERE w.fence IS NULL), n, m);
	RETURN NEXT;

	-- ... and, independently of any lock, in commit order: the last claim
	-- of the run that committed before the write minted the write's fence.
	SELECT count(*) INTO n
	  FROM soak.checkpoint_write w
	  LEFT JOIN LATERAL (
		SELECT c.new_fence FROM soak.claim_change c
		 WHERE c.tenant = w.tenant AND c.run = w.run AND c.new_fence IS DISTINCT FROM c.old_fence
		   AND pg_xact_commit_timestamp(c.xid::xid) < pg_xact_commit_timestamp(w.xid::xid)
		 ORDER BY pg_xact_commit_timestamp(c.xid::xid) DESC, c.new_fence DESC LIMIT 1) last ON true
	 WHERE w.fence IS NOT NULL AND last.new_fence IS DISTINCT FROM w.fence;
	check_name := 'no write under a superseded fence'; ok := n = 0;
	detail := format('%s fenced writes committed after a later claim of their run', n);
	RETURN NEXT;

	-- A lease reclaim is a lease taken from another holder after it
	-- expired without being released.
	SELECT count(*) INTO n FROM soak.claim_change c
	 WHERE c.new_fence IS DISTINCT FROM c.old_fence
	   AND c.reclaimed IS DISTINCT FROM (c.old_holder IS NOT NULL AND c.old_holder <> c.new_holder
										 AND NOT c.old_released AND c.old_expires <= c.at_now);
	check_name := 'lease reclaims recorded as such'; ok := n = 0;
	detail := format('%s claims whose reclaimed flag is wrong', n);
	RETURN NEXT;

	-- A run's summary matches its checkpoints.
	SELECT count(*) INTO n FROM worklist.run r
	 WHERE r.checkpoint_count <> (SELECT count(*) FROM worklist.run_checkpoint c
								   WHERE (c.tenant, c.project, c.session, c.run)
									   = (r.tenant, r.project, r.session, r.run))
		OR r.latest_checkpoint_id IS DISTINCT FROM
		   (SELECT c.checkpoint_id FROM worklist.run_checkpoint c
			 WHERE (c.tenant, c.project, c.session, c.run) = (r.tenant, r.project, r.session, r.run)
			 ORDER BY c.created_at DESC, c.checkpoint_id DESC LIMIT 1);
	check_name := 'run summaries match checkpoints'; ok := n = 0;
	detail := format('%s of %s runs disagree with their checkpoints', n, (SELECT count(*) FROM worklist.run));
	RETURN NEXT;

	-- The cumulative counters of each tenant match the audit of the epoch
	-- they were counted in.
	IF counters_epoch IS NOT NULL THEN
		FOR tn IN SELECT soak.tenant(i) FROM generate_series(0, 1) i LOOP
			PERFORM set_config('worklist.tenant', tn, true);
			stats := worklist.stats() -> 'counters';
			expect := jsonb_build_object(
				'claims', (SELECT count(*) FROM soak.task_change c
							WHERE c.tenant = tn AND c.epoch = counters_epoch
							  AND c.old_state IS NOT NULL AND c.old_holder IS NULL AND c.new_holder IS NOT NULL),
				'take_overs', (SELECT count(*) FROM soak.task_change c
								WHERE c.tenant = tn AND c.epoch = counters_epoch
								  AND c.old_holder <> c.new_holder),
				'claim_conflicts', (SELECT count(*) FROM soak.outcome o
									 WHERE o.tenant = tn AND o.epoch = counters_epoch AND o.result = 'WL005'),
				'stale_fence_refusals', (SELECT count(*) FROM soak.outcome o
										  WHERE o.tenant = tn AND o.epoch = counters_epoch AND o.result = 'WL007'),
				'lease_reclaims', (SELECT count(*) FROM soak.claim_change c
									WHERE c.tenant = tn AND c.epoch = counters_epoch AND c.reclaimed
									  AND c.new_fence IS DISTINCT FROM c.old_fence),
				-- no task of the soak has a claim_timeout
				'claim_timeouts', 0);
			check_name := 'counters of ' || tn; ok := stats = expect;
			detail := CASE WHEN ok THEN expect::text
						   ELSE format('stats() %s, audit %s', stats, expect) END;
			RETURN NEXT;
		END LOOP;
	END IF;
END
$$;
