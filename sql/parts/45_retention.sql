-- worklist: retention (doc/reference.md, section 8)
--
-- One row per tenant that has set a policy: how long each kind of settled
-- work is kept (NULL: forever), and when the sweep next has something to
-- purge (src/retention.c).

CREATE TABLE worklist.retention_policy (
	tenant		text PRIMARY KEY,
	tasks		interval,
	tickets		interval,
	runs		interval,
	next_purge	timestamptz		-- NULL: no policy, nothing ever due
);
-- The sweeper's list of tenants with something due reads next_purge
-- across tenants.
CREATE INDEX retention_policy_due ON worklist.retention_policy (next_purge, tenant)
	WHERE next_purge IS NOT NULL;

CREATE FUNCTION worklist.set_retention(
		tasks interval DEFAULT NULL,
		tickets interval DEFAULT NULL,
		runs interval DEFAULT NULL)
	RETURNS void
	AS 'MODULE_PATHNAME', 'wl_set_retention'
	LANGUAGE C VOLATILE;
COMMENT ON FUNCTION worklist.set_retention(interval, interval, interval) IS
	'Set how long the current tenant keeps settled tasks, closed tickets and finished runs (NULL: forever); service and admin bindings';

CREATE FUNCTION worklist.retention(OUT tasks interval, OUT tickets interval, OUT runs interval)
	RETURNS record
	AS 'MODULE_PATHNAME', 'wl_retention'
	LANGUAGE C STABLE;
COMMENT ON FUNCTION worklist.retention() IS
	'The current tenant''s retention policy (NULL: kept forever)';
