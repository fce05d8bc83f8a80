-- worklist: tickets (doc/reference.md, section 5)
--
-- A ticket's state is folded from an append-only log of what each actor
-- said (src/fold.c); see src/ticket.c for the storage and locking.

CREATE TYPE worklist.participation AS ENUM
	('acknowledged', 'working', 'blocked', 'delivered', 'abandoned');
CREATE TYPE worklist.outcome AS ENUM ('done', 'archived');
CREATE TYPE worklist.ticket_status AS ENUM
	('open', 'acknowledged', 'working', 'blocked', 'delivered', 'unowned',
	 'done', 'archived');

-- What was asked, by whom, and who may end it; then a summary of the log,
-- written in the same statement as every event (never by hand).
CREATE TABLE worklist.ticket (
	id					text NOT NULL,
	requester			text NOT NULL,
	title				text NOT NULL,
	body				jsonb NOT NULL DEFAULT '{}',
	authorities			text[] NOT NULL DEFAULT '{}',
	open_deadline		timestamptz,
	confirm_window		interval,
	ladder				interval[] NOT NULL DEFAULT '{}',
	created_at			timestamptz NOT NULL DEFAULT now(),
	-- the summary
	state				worklist.ticket_status NOT NULL DEFAULT 'open',
	deadline			timestamptz,
	overdue_from		timestamptz,	-- live: deadline, or -infinity if none
	next_check			timestamptz,	-- when the watchdog next has work
	last_seq			bigint NOT NULL DEFAULT 0,
	fold_state			bytea,			-- src/fold_store.c; NULL: no events yet
	tenant				text NOT NULL,
	last_event_at		timestamptz,	-- the latest `at` of any event
	PRIMARY KEY (tenant, id)
);

-- overdue_tickets and the watchdog read only what is due.
CREATE INDEX ticket_overdue ON worklist.ticket (tenant, overdue_from, id)
	WHERE overdue_from IS NOT NULL;
CREATE INDEX ticket_watchdog ON worklist.ticket (tenant, next_check, id)
	WHERE next_check IS NOT NULL;
-- The sweeper's list of tenants with something due reads next_check
-- across tenants.
CREATE INDEX ticket_due ON worklist.ticket (next_check, tenant)
	WHERE next_check IS NOT NULL;
-- Retention: closed tickets by the instant of their latest event.
CREATE INDEX ticket_closed ON worklist.ticket (tenant, last_event_at)
	WHERE state OPERATOR(pg_catalog.=) ANY ('{done,archived}'::worklist.ticket_status[]);

-- The log.  Its row type is what ticket_history returns: the documented
-- fields first, in the documented order.  `value` is the participation,
-- the outcome, or (for an escalation) the rung.  `watchdog` marks the
-- events only the watchdog writes (escalations and implicit
-- confirmations); `confirmation` is the implicit confirmation it recorded.
CREATE TABLE worklist.ticket_event (
	ticket				text NOT NULL,
	actor				text NOT NULL,
	at					timestamptz NOT NULL,
	kind				text NOT NULL,
	value				text NOT NULL,
	reason				text,
	not_before			timestamptz,
	seq					bigint NOT NULL,	-- arrival order within the ticket
	watchdog			boolean NOT NULL DEFAULT false,
	confirmation		jsonb,
	tenant				text NOT NULL,
	PRIMARY KEY (tenant, ticket, seq),
	CONSTRAINT ticket_event_value CHECK (
		(kind = 'participation'
		 AND value = ANY ('{acknowledged,working,blocked,delivered,abandoned}'))
		OR (kind = 'outcome' AND value = ANY ('{done,archived}'))
		OR (kind = 'escalation' AND value ~ '^[1-9][0-9]{0,8}$'
			AND watchdog AND reason IS NULL AND not_before IS NULL)),
	CONSTRAINT ticket_event_watchdog CHECK (
		watchdog = (actor = 'worklist.watchdog')
		AND (confirmation IS NULL OR (watchdog AND kind = 'outcome'))),
	CONSTRAINT ticket_event_at CHECK (isfinite(at))
);

-- Append-only: no UPDATE, DELETE or TRUNCATE of the log or of a ticket,
-- by anybody, unless erase_tenant() is running -- or, for an UPDATE of a
-- ticket, the verbs writing its summary.
CREATE FUNCTION worklist.ticket_log_guard() RETURNS trigger
	AS 'MODULE_PATHNAME', 'wl_ticket_log_guard'
	LANGUAGE C;
COMMENT ON FUNCTION worklist.ticket_log_guard() IS
	'Trigger keeping the ticket log append-only and tickets written by the verbs only';
CREATE TRIGGER append_only
	BEFORE UPDATE OR DELETE OR TRUNCATE ON worklist.ticket_event
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.ticket_log_guard();
CREATE TRIGGER verbs_only
	BEFORE UPDATE OR DELETE OR TRUNCATE ON worklist.ticket
	FOR EACH STATEMENT EXECUTE FUNCTION worklist.ticket_log_guard();

CREATE TYPE worklist.ticket_fold AS (
	ticket				text,
	state				worklist.ticket_status,
	deadline			timestamptz,
	overdue				boolean,
	live_actors			text[],
	blocked_actors		text[],
	abandoned			jsonb,
	unauthorized_close	text[],
	interrupted			text[],
	confirmation		jsonb,
	closed_by			text,
	closed_at			timestamptz,
	escalation_rung		integer,
	close_reason		text
);

CREATE FUNCTION worklist.open_ticket(
	id text, requester text, title text, body jsonb DEFAULT '{}',
	authorities text[] DEFAULT '{}', open_deadline timestamptz DEFAULT NULL,
	confirm_window interval DEFAULT NULL, ladder interval[] DEFAULT '{}')
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_open_ticket'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.open_ticket(text, text, text, jsonb, text[], timestamptz, interval, interval[]) IS
	'Create a ticket, or return the existing one''s fold unchanged';

CREATE FUNCTION worklist.report(
	ticket text, actor text, value worklist.participation,
	not_before timestamptz DEFAULT NULL, reason text DEFAULT NULL,
	at timestamptz DEFAULT now())
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_report'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.report(text, text, worklist.participation, timestamptz, text, timestamptz) IS
	'Append what an actor says about its own participation; returns the fold';

CREATE FUNCTION worklist.close_ticket(
	ticket text, actor text, outcome worklist.outcome,
	reason text DEFAULT NULL, at timestamptz DEFAULT now())
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_close_ticket'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.close_ticket(text, text, worklist.outcome, text, timestamptz) IS
	'Append an outcome; from an actor without authority it is read as that actor''s participation';

CREATE FUNCTION worklist.ticket_state(ticket text, now timestamptz DEFAULT now())
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_ticket_state'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.ticket_state(text, timestamptz) IS
	'The fold of a ticket''s log, judged at now';

CREATE FUNCTION worklist.ticket_history(ticket text)
	RETURNS SETOF worklist.ticket_event
	AS 'MODULE_PATHNAME', 'wl_ticket_history'
	LANGUAGE C STABLE ROWS 20;
COMMENT ON FUNCTION worklist.ticket_history(text) IS
	'Every event of a ticket, in arrival order';

CREATE FUNCTION worklist.overdue_tickets(now timestamptz DEFAULT now(), lim int DEFAULT 100)
	RETURNS SETOF worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_overdue_tickets'
	LANGUAGE C STABLE ROWS 100;
COMMENT ON FUNCTION worklist.overdue_tickets(timestamptz, int) IS
	'Live tickets overdue at now: no deadline first, then earliest deadline, then id';

-- The fold as an aggregate over a ticket's events, for anyone who wants
-- to replay a log (or part of it) themselves.  The order of the input
-- never matters.
CREATE FUNCTION worklist.fold_step(internal, worklist.ticket_event, worklist.ticket, timestamptz)
	RETURNS internal
	AS 'MODULE_PATHNAME', 'wl_fold_step'
	LANGUAGE C IMMUTABLE;
CREATE FUNCTION worklist.fold_final(internal, worklist.ticket_event, worklist.ticket, timestamptz)
	RETURNS worklist.ticket_fold
	AS 'MODULE_PATHNAME', 'wl_fold_final'
	LANGUAGE C IMMUTABLE;
COMMENT ON FUNCTION worklist.fold_step(internal, worklist.ticket_event, worklist.ticket, timestamptz) IS
	'Transition function of worklist.fold';
COMMENT ON FUNCTION worklist.fold_final(internal, worklist.ticket_event, worklist.ticket, timestamptz) IS
	'Final function of worklist.fold';
CREATE AGGREGATE worklist.fold(e worklist.ticket_event, t worklist.ticket, now timestamptz) (
	SFUNC = worklist.fold_step,
	STYPE = internal,
	FINALFUNC = worklist.fold_final,
	FINALFUNC_EXTRA
);
COMMENT ON AGGREGATE worklist.fold(worklist.ticket_event, worklist.ticket, timestamptz) IS
	'Fold events of one ticket (in any order) into its ticket_fold, judged at now';
