-- worklist: the sweep, the sweeper and the counters
-- (doc/reference.md, sections 7 and 9; notifications are in 50_notify.sql)

CREATE TYPE worklist.sweep_result AS (
	denied				integer,
	proceeded			integer,
	escalated			integer,
	tickets_escalated	integer,
	tickets_confirmed	integer,
	claims_released		integer,
	purged				integer
);

CREATE FUNCTION worklist.sweep(now timestamptz DEFAULT now(), lim int DEFAULT 1000)
	RETURNS worklist.sweep_result
	AS 'MODULE_PATHNAME', 'wl_sweep'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.sweep(timestamptz, int) IS
	'For the current tenant: apply expiry policies to overdue tasks, release claims held past their timeout, run the ticket watchdog, purge by the retention policy';

CREATE FUNCTION worklist.start_sweeper() RETURNS integer
	AS 'MODULE_PATHNAME', 'wl_start_sweeper'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.start_sweeper() IS
	'The pid of the sweeper of the current database, started here where the library is not preloaded (and asked of the launcher where it is)';

CREATE FUNCTION worklist.sweeper_status(
	OUT pid integer,
	OUT database text,
	OUT started_at timestamptz,
	OUT last_tick timestamptz,
	OUT last_duration_ms double precision,
	OUT ticks bigint,
	OUT denied bigint,
	OUT proceeded bigint,
	OUT escalated bigint,
	OUT tickets_escalated bigint,
	OUT tickets_confirmed bigint,
	OUT claims_released bigint,
	OUT purged bigint,
	OUT tenants_in_error text[],
	OUT last_error text,
	OUT last_error_tenant text,
	OUT last_error_at timestamptz)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_sweeper_status'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.sweeper_status() IS
	'The sweeper of the current database: the rows of the view worklist.sweeper_status';

-- The sweeper of the current database, one row once it has had one since
-- server start; pid is NULL while none runs.  Totals count what the
-- database's sweepers did since server start; tenants_in_error are the
-- tenants whose last batch failed (at most 8 are named).
CREATE VIEW worklist.sweeper_status AS
	SELECT * FROM worklist.sweeper_status();
COMMENT ON VIEW worklist.sweeper_status IS
	'Status of the sweeper of the current database: pid, last tick and its duration, totals per action, tenants in error, last error';

REVOKE EXECUTE ON FUNCTION worklist.start_sweeper() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.sweeper_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION worklist.sweeper_status() TO pg_monitor;
GRANT SELECT ON worklist.sweeper_status TO pg_monitor;

CREATE FUNCTION worklist.stats() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'wl_stats'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.stats() IS
	'For the current tenant: tasks per state, oldest pending age, overdue tasks, tickets per state, runs, live leases, and cumulative counters since server start';
