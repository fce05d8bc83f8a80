-- floor.sql -- the floor to beat: the task verbs the benchmark drives
-- (claim_next, complete, claim, release), written by hand in PL/pgSQL the
-- way a team would write them without the extension.
--
-- Installed by bench.sh into the benchmark database only.  For a fair
-- comparison it keeps what the extension keeps:
--   * the task table as 0.2 shipped it, in schema "floor": the same
--     columns (less 0.3's claim timeout) and storage settings, the primary
--     key and the queue, case and overdue indexes -- not the five indexes
--     0.3 added (held work, claim timeouts, retention, the sweeper's due
--     lists), which the extension maintains on every claim and settlement
--     and the floor does not;
--   * the same checks, in the same order: the tenant from the setting
--     worklist.tenant (empty: 22023; bound to roles the caller is not a
--     member of: 42501), then the arguments (22023 naming them), then the
--     verb's refusals with the documented SQLSTATEs (WL001 ... WL006);
--   * private tables: the verbs are SECURITY DEFINER with a pinned
--     search_path, the usual way to let callers through verbs only;
--   * the same statements: one UPDATE whose WHERE clause is the whole
--     condition, and a locked read deciding the refusal when it misses;
--     claim_next picks its row FOR UPDATE SKIP LOCKED;
--   * NOTIFY when worklist.notify is on.
-- It keeps no counters (the extension's live in shared memory).  Its
-- statements are planned as PL/pgSQL plans them by default (custom plans
-- while they look cheaper); bench.sh also runs it once with
-- plan_cache_mode = force_generic_plan, the plans the extension keeps.

CREATE SCHEMA floor;

CREATE TYPE floor.task_state AS ENUM
	('open', 'claimed', 'escalated', 'completed', 'expired', 'withdrawn');
CREATE TYPE floor.expiry_policy AS ENUM ('deny', 'proceed', 'escalate');

CREATE TABLE floor.tenant_binding (
	tenant	text NOT NULL,
	role	regrole NOT NULL,
	PRIMARY KEY (tenant, role)
);

CREATE TABLE floor.task (
	id					text NOT NULL,
	case_id				text NOT NULL,
	run_id				text,
	state				floor.task_state NOT NULL DEFAULT 'open',
	roles				text[] NOT NULL,
	excluded			text[] NOT NULL DEFAULT '{}',
	escalation_roles	text[] NOT NULL DEFAULT '{}',
	priority			int NOT NULL DEFAULT 0,
	payload				jsonb NOT NULL DEFAULT '{}',
	due_at				timestamptz,
	expiry_policy		floor.expiry_policy NOT NULL DEFAULT 'deny',
	holder				text,
	claimed_at			timestamptz,
	created_at			timestamptz NOT NULL DEFAULT now(),
	settled_at			timestamptz,
	decided_by			text,
	decision			jsonb,
	tenant				text NOT NULL,
	PRIMARY KEY (tenant, id)
);

CREATE INDEX task_claimable ON floor.task
	(tenant, priority DESC, created_at, id)
	WHERE state = 'open' OR (state = 'escalated' AND holder IS NULL);
CREATE INDEX task_pending_case ON floor.task
	(tenant, case_id, priority DESC, created_at, id)
	WHERE state = ANY ('{open,claimed,escalated}'::floor.task_state[]);
CREATE INDEX task_overdue ON floor.task
	(tenant, due_at, id)
	WHERE state = ANY ('{open,claimed}'::floor.task_state[]) AND due_at IS NOT NULL;

ALTER TABLE floor.task SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 2000,
	autovacuum_analyze_scale_factor = 1
);

-- The tenant of the call: 22023 when empty or too long, 42501 when the
-- tenant is bound to roles the caller is not a member of.
CREATE FUNCTION floor.tenant() RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
	t text := current_setting('worklist.tenant', true);
BEGIN
	IF t IS NULL OR t = '' OR length(t) > 256 THEN
		RAISE 'setting "worklist.tenant" must not be empty' USING ERRCODE = '22023';
	END IF;
	IF EXISTS (SELECT FROM floor.tenant_binding b WHERE b.tenant = t
	           HAVING NOT bool_or(pg_has_role(session_user, b.role, 'MEMBER'))) THEN
		RAISE 'permission denied for tenant "%"', t USING ERRCODE = '42501';
	END IF;
	RETURN t;
END
$$;

-- The checks of the arguments are written out in each verb, as plain
-- expressions (PL/pgSQL evaluates those without a query); only an array
-- of roles needs one.

CREATE FUNCTION floor.claim_next(actor text, roles text[]) RETURNS floor.task
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	t text := floor.tenant();
	r floor.task;
BEGIN
	IF actor IS NULL OR actor = '' OR length(actor) > 256 THEN
		RAISE 'argument "actor" must be a non-empty identifier of at most 256 characters'
			USING ERRCODE = '22023';
	END IF;
	IF roles IS NULL OR array_ndims(roles) > 1
	   OR EXISTS (SELECT FROM unnest(roles) e WHERE e IS NULL OR e = '' OR length(e) > 256) THEN
		RAISE 'argument "roles" must be a one-dimensional array of identifiers' USING ERRCODE = '22023';
	END IF;
	IF cardinality(roles) = 0 THEN
		RETURN NULL;
	END IF;
	UPDATE floor.task k
	   SET holder = actor, claimed_at = now(),
	       state = CASE WHEN k.state = 'open' THEN 'claimed' ELSE k.state END
	 WHERE k.tenant = t
	   AND k.id = (SELECT q.id FROM floor.task q
	                WHERE q.tenant = t
	                  AND (q.state = 'open' OR (q.state = 'escalated' AND q.holder IS NULL))
	                  AND (q.roles && claim_next.roles
	                       OR (q.state = 'escalated' AND q.escalation_roles && claim_next.roles))
	                  AND NOT (actor = ANY (q.excluded))
	                ORDER BY q.priority DESC, q.created_at, q.id
	                LIMIT 1
	                FOR UPDATE SKIP LOCKED)
	RETURNING k.* INTO r;
	IF NOT FOUND THEN
		RETURN NULL;
	END IF;
	IF current_setting('worklist.notify', true) IS DISTINCT FROM 'off' THEN
		PERFORM pg_notify('worklist', json_build_object('tenant', t, 'kind', 'task',
		                                                'id', r.id, 'event', 'claimed')::text);
	END IF;
	RETURN r;
END
$$;

CREATE FUNCTION floor.claim(id text, actor text, roles text[]) RETURNS floor.task
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	t text := floor.tenant();
	r floor.task;
BEGIN
	IF id IS NULL OR id = '' OR length(id) > 256 THEN
		RAISE 'argument "id" must be a non-empty identifier of at most 256 characters'
			USING ERRCODE = '22023';
	END IF;
	IF actor IS NULL OR actor = '' OR length(actor) > 256 THEN
		RAISE 'argument "actor" must be a non-empty identifier of at most 256 characters'
			USING ERRCODE = '22023';
	END IF;
	IF roles IS NULL OR array_ndims(roles) > 1
	   OR EXISTS (SELECT FROM unnest(roles) e WHERE e IS NULL OR e = '' OR length(e) > 256) THEN
		RAISE 'argument "roles" must be a one-dimensional array of identifiers' USING ERRCODE = '22023';
	END IF;
	UPDATE floor.task k
	   SET holder = actor, claimed_at = now(),
	       state = CASE WHEN k.state = 'open' THEN 'claimed' ELSE k.state END
	 WHERE k.tenant = t AND k.id = claim.id
	   AND (k.state = 'open' OR (k.state = 'escalated' AND k.holder IS NULL))
	   AND NOT (actor = ANY (k.excluded))
	   AND (k.roles && claim.roles OR (k.state = 'escalated' AND k.escalation_roles && claim.roles))
	RETURNING k.* INTO r;
	IF NOT FOUND THEN
		-- say why, from one locked read, in the documented order
		SELECT k.* INTO r FROM floor.task k WHERE k.tenant = t AND k.id = claim.id FOR NO KEY UPDATE;
		IF NOT FOUND THEN
			RAISE 'task "%" does not exist', id USING ERRCODE = 'WL001';
		END IF;
		IF actor = ANY (r.excluded) THEN
			RAISE 'actor "%" is excluded from task "%"', actor, id USING ERRCODE = 'WL002';
		END IF;
		IF NOT (r.roles && roles OR (r.state = 'escalated' AND r.escalation_roles && roles)) THEN
			RAISE 'actor "%" has no role in the audience of task "%"', actor, id USING ERRCODE = 'WL003';
		END IF;
		IF r.state NOT IN ('open', 'claimed', 'escalated') THEN
			RAISE 'task "%" is not pending', id USING ERRCODE = 'WL004';
		END IF;
		IF r.holder = actor THEN
			RETURN r;
		END IF;
		IF r.holder IS NOT NULL THEN
			RAISE 'task "%" is already claimed', id USING ERRCODE = 'WL005',
				DETAIL = format('It is held by "%s".', r.holder);
		END IF;
		-- free after all, and now locked by us
		UPDATE floor.task k
		   SET holder = actor, claimed_at = now(),
		       state = CASE WHEN k.state = 'open' THEN 'claimed' ELSE k.state END
		 WHERE k.tenant = t AND k.id = claim.id
		RETURNING k.* INTO r;
	END IF;
	IF current_setting('worklist.notify', true) IS DISTINCT FROM 'off' THEN
		PERFORM pg_notify('worklist', json_build_object('tenant', t, 'kind', 'task',
		                                                'id', id, 'event', 'claimed')::text);
	END IF;
	RETURN r;
END
$$;

CREATE FUNCTION floor.release(id text, actor text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	t text := floor.tenant();
	r floor.task;
BEGIN
	IF id IS NULL OR id = '' OR length(id) > 256 THEN
		RAISE 'argument "id" must be a non-empty identifier of at most 256 characters'
			USING ERRCODE = '22023';
	END IF;
	IF actor IS NULL OR actor = '' OR length(actor) > 256 THEN
		RAISE 'argument "actor" must be a non-empty identifier of at most 256 characters'
			USING ERRCODE = '22023';
	END IF;
	UPDATE floor.task k
	   SET holder = NULL, claimed_at = NULL,
	       state = CASE WHEN k.state = 'claimed' THEN 'open' ELSE k.state END
	 WHERE k.tenant = t AND k.id = release.id AND k.holder = actor
	   AND k.state = ANY ('{open,claimed,escalated}');
	IF NOT FOUND THEN
		SELECT k.* INTO r FROM floor.task k WHERE k.tenant = t AND k.id = release.id FOR NO KEY UPDATE;
		IF NOT FOUND THEN
			RAISE 'task "%" does not exist', id USING ERRCODE = 'WL001';
		END IF;
		IF actor = ANY (r.excluded) THEN
			RAISE 'actor "%" is excluded from task "%"', actor, id USING ERRCODE = 'WL002';
		END IF;
		RAISE 'task "%" is not held by "%"', id, actor USING ERRCODE = 'WL006';
	END IF;
	IF current_setting('worklist.notify', true) IS DISTINCT FROM 'off' THEN
		PERFORM pg_notify('worklist', json_build_object('tenant', t, 'kind', 'task',
		                                                'id', id, 'event', 'released')::text);
	END IF;
END
$$;

CREATE FUNCTION floor.complete(id text, actor text, decision jsonb) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	t text := floor.tenant();
	r floor.task;
BEGIN
	IF id IS NULL OR id = '' OR length(id) > 256 THEN
		RAISE 'argument "id" must be a non-empty identifier of at most 256 characters'
			USING ERRCODE = '22023';
	END IF;
	IF actor IS NULL OR actor = '' OR length(actor) > 256 THEN
		RAISE 'argument "actor" must be a non-empty identifier of at most 256 characters'
			USING ERRCODE = '22023';
	END IF;
	IF decision IS NULL THEN
		RAISE 'argument "decision" must not be null' USING ERRCODE = '22023';
	END IF;
	UPDATE floor.task k
	   SET state = 'completed', settled_at = now(), decided_by = actor,
	       decision = complete.decision
	 WHERE k.tenant = t AND k.id = complete.id AND k.holder = actor
	   AND k.state = ANY ('{open,claimed,escalated}');
	IF NOT FOUND THEN
		SELECT k.* INTO r FROM floor.task k WHERE k.tenant = t AND k.id = complete.id FOR NO KEY UPDATE;
		IF NOT FOUND THEN
			RAISE 'task "%" does not exist', id USING ERRCODE = 'WL001';
		END IF;
		IF actor = ANY (r.excluded) THEN
			RAISE 'actor "%" is excluded from task "%"', actor, id USING ERRCODE = 'WL002';
		END IF;
		IF r.state NOT IN ('open', 'claimed', 'escalated') THEN
			RETURN false;
		END IF;
		RAISE 'task "%" is not held by "%"', id, actor USING ERRCODE = 'WL006';
	END IF;
	IF current_setting('worklist.notify', true) IS DISTINCT FROM 'off' THEN
		PERFORM pg_notify('worklist', json_build_object('tenant', t, 'kind', 'task',
		                                                'id', id, 'event', 'completed')::text);
	END IF;
	RETURN true;
END
$$;

REVOKE ALL ON ALL TABLES IN SCHEMA floor FROM PUBLIC;
