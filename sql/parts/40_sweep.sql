-- worklist: the sweep, the sweeper, notifications and counters
-- (CONTRACT sections 4 and 5)

CREATE TYPE worklist.sweep_result AS (
	denied				integer,
	proceeded			integer,
	escalated			integer,
	tickets_escalated	integer,
	tickets_confirmed	integer
);

CREATE FUNCTION worklist.sweep(now timestamptz DEFAULT now(), lim int DEFAULT 1000)
	RETURNS worklist.sweep_result
	AS 'MODULE_PATHNAME', 'wl_sweep'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.sweep(timestamptz, int) IS
	'Apply expiry policies to overdue tasks and run the ticket watchdog, for the current tenant';
