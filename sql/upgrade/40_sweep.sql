-- The sweep: what it did, two new counts at the end.
ALTER TYPE worklist.sweep_result ADD ATTRIBUTE claims_released integer;
ALTER TYPE worklist.sweep_result ADD ATTRIBUTE purged integer;
COMMENT ON FUNCTION worklist.sweep(timestamptz, int) IS
	'For the current tenant: apply expiry policies to overdue tasks, release claims held past their timeout, run the ticket watchdog, purge by the retention policy';
