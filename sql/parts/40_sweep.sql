-- worklist: the sweep, the sweeper, notifications and counters
-- (CONTRACT sections 4 and 5)

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
	'Start the sweeper background worker for the current database (where the library is not preloaded); returns its pid';

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
	OUT last_error text,
	OUT last_error_at timestamptz)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_sweeper_status'
	LANGUAGE C VOLATILE;

-- One row per sweeper that ran since server start; pid is NULL once it
-- has stopped.  Totals count what each sweeper did since it started.
CREATE VIEW worklist.sweeper_status AS
	SELECT * FROM worklist.sweeper_status();
COMMENT ON VIEW worklist.sweeper_status IS
	'Status of the sweeper background workers: pid, last tick and its duration, totals per action, last error';

REVOKE EXECUTE ON FUNCTION worklist.start_sweeper() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.sweeper_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION worklist.sweeper_status() TO pg_monitor;
GRANT SELECT ON worklist.sweeper_status TO pg_monitor;

CREATE FUNCTION worklist.stats() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'wl_stats'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.stats() IS
	'For the current tenant: tasks per state, oldest pending age, overdue tasks, tickets per state, runs, live leases, and cumulative counters since server start';
