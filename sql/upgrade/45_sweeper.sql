-- The sweeper: one per database, its status with claims released, purges,
-- the tenants in error and the tenant of the last error.
DROP VIEW worklist.sweeper_status;
DROP FUNCTION worklist.sweeper_status();

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

CREATE VIEW worklist.sweeper_status AS
	SELECT * FROM worklist.sweeper_status();
COMMENT ON VIEW worklist.sweeper_status IS
	'Status of the sweeper of the current database: pid, last tick and its duration, totals per action, tenants in error, last error';

REVOKE EXECUTE ON FUNCTION worklist.sweeper_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION worklist.sweeper_status() TO pg_monitor;
GRANT SELECT ON worklist.sweeper_status TO pg_monitor;
