-- Retention (new in 0.3).
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

-- Tickets keep the instant of their latest event (for retention); the
-- sweeper lists due tickets across tenants.
ALTER TABLE worklist.ticket ADD COLUMN last_event_at timestamptz;
ALTER TABLE worklist.ticket DISABLE TRIGGER verbs_only;
UPDATE worklist.ticket t
   SET last_event_at = (SELECT pg_catalog.max(e.at) FROM worklist.ticket_event e
                         WHERE e.tenant OPERATOR(pg_catalog.=) t.tenant
                           AND e.ticket OPERATOR(pg_catalog.=) t.id);
ALTER TABLE worklist.ticket ENABLE TRIGGER verbs_only;
CREATE INDEX ticket_due ON worklist.ticket (next_check, tenant)
	WHERE next_check IS NOT NULL;
CREATE INDEX ticket_closed ON worklist.ticket (tenant, last_event_at)
	WHERE state OPERATOR(pg_catalog.=) ANY ('{done,archived}'::worklist.ticket_status[]);

-- Runs by the instant of their newest checkpoint, for retention.
CREATE INDEX run_age ON worklist.run (tenant, latest_checkpoint_at)
	WHERE listed;
