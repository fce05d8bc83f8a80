-- worklist: metrics for a monitoring system (doc/reference.md, section 9;
-- contrib/prometheus/ has a postgres_exporter queries file reading them)
--
-- Counts of every tenant of the current database, with tenant names, kinds
-- and states as labels and never an id, for members of pg_monitor, the
-- owner and superusers, who need no tenant binding to read them
-- (src/metrics.c checks the caller too).

-- @since 0.4
CREATE FUNCTION worklist.metrics_tenants(
	OUT tenant text,
	OUT tasks_overdue bigint,
	OUT oldest_pending_age_seconds double precision,
	OUT runs bigint,
	OUT live_leases bigint,
	OUT sweep_in_error boolean,
	OUT claims bigint,
	OUT claim_conflicts bigint,
	OUT take_overs bigint,
	OUT claim_timeouts bigint,
	OUT lease_reclaims bigint,
	OUT stale_fence_refusals bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_metrics_tenants'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.metrics_tenants() IS
	'For every tenant of the current database: overdue tasks, oldest pending age, runs, live leases, whether the sweeper is failing on it, and the counters of stats(); for pg_monitor';

CREATE FUNCTION worklist.metrics_states(
	OUT tenant text,
	OUT kind text,
	OUT state text,
	OUT count bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'wl_metrics_states'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.metrics_states() IS
	'For every tenant of the current database: tasks per state and tickets per state, every state present; for pg_monitor';

CREATE FUNCTION worklist.metrics_sweeper(
	OUT running boolean,
	OUT last_tick_age_seconds double precision,
	OUT last_duration_seconds double precision,
	OUT ticks bigint,
	OUT denied bigint,
	OUT proceeded bigint,
	OUT escalated bigint,
	OUT tickets_escalated bigint,
	OUT tickets_confirmed bigint,
	OUT claims_released bigint,
	OUT purged bigint,
	OUT tenants_in_error integer)
	RETURNS record
	AS 'MODULE_PATHNAME', 'wl_metrics_sweeper'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.metrics_sweeper() IS
	'The sweeper of the current database as numbers: running, age of the last tick, its duration, totals per action, tenants in error; for pg_monitor';

REVOKE EXECUTE ON FUNCTION worklist.metrics_tenants() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.metrics_states() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION worklist.metrics_sweeper() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION worklist.metrics_tenants() TO pg_monitor;
GRANT EXECUTE ON FUNCTION worklist.metrics_states() TO pg_monitor;
GRANT EXECUTE ON FUNCTION worklist.metrics_sweeper() TO pg_monitor;
-- @end
