-- The metrics: metrics_tenants(), metrics_states() and metrics_sweeper()
-- say for every tenant of the database what stats() and sweeper_status
-- say for one, as counts, to pg_monitor without a binding, and to nobody
-- else.  (test/deploy/910_metrics.pl scrapes them through
-- postgres_exporter.)

-- Two tenants with some of everything.
SET worklist.tenant = 'metrics_a';
SELECT count(*) AS opened FROM generate_series(1, 4) g,
       worklist.open_task('ma' || g, 'c', '{r}',
                          due_at => CASE WHEN g = 4 THEN now() - interval '1 hour' END);
SELECT holder FROM worklist.claim('ma1', 'ann', '{r}');
SELECT worklist.claim('ma1', 'bob', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.complete('ma1', 'ann', '{}');
SELECT holder FROM worklist.claim('ma2', 'ann', '{r}');
SELECT worklist.set_state('ma3', 'withdrawn');
SELECT ticket FROM worklist.open_ticket('mk1', 'req', 'x');
SELECT state FROM worklist.report('mk1', 'agent', 'working');
SELECT fence > 0 AS claimed FROM worklist.claim_run('mp', 'ms', 'mr1', 'w1', '1 hour');
SELECT worklist.write_checkpoint('mp', 'ms', 'mr2', 'c1', '{}');
SET worklist.tenant = 'metrics_b';
SELECT id FROM worklist.open_task('mb1', 'c', '{r}');
-- a tenant with a binding and nothing else
CREATE ROLE wl_metrics_app;
SELECT worklist.grant_tenant('metrics_c', 'wl_metrics_app', 'service');
RESET worklist.tenant;

-- Per tenant, the figures of stats(), which the owner reads tenant by
-- tenant.
CREATE FUNCTION pg_temp.stats_of(t text) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('worklist.tenant', t, true);
	RETURN worklist.stats();
END
$$;
SELECT m.tenant, m.tasks_overdue, m.oldest_pending_age_seconds > 0 AS has_pending,
       m.runs, m.live_leases, m.sweep_in_error, m.claims, m.claim_conflicts,
       m.take_overs, m.claim_timeouts, m.lease_reclaims, m.stale_fence_refusals
  FROM worklist.metrics_tenants() m WHERE m.tenant LIKE 'metrics\_%' ORDER BY 1;
SELECT m.tenant,
       m.tasks_overdue = (s->>'overdue_tasks')::bigint AS overdue,
       m.oldest_pending_age_seconds IS NOT DISTINCT FROM
         coalesce(extract(epoch FROM (s->>'oldest_pending_age')::interval)::float8, 0) AS oldest,
       m.runs = (s->>'runs')::bigint AS runs,
       m.live_leases = (s->>'live_leases')::bigint AS leases,
       jsonb_build_object('claims', m.claims, 'claim_conflicts', m.claim_conflicts,
                          'take_overs', m.take_overs, 'claim_timeouts', m.claim_timeouts,
                          'lease_reclaims', m.lease_reclaims,
                          'stale_fence_refusals', m.stale_fence_refusals) = s->'counters' AS counters
  FROM worklist.metrics_tenants() m, pg_temp.stats_of(m.tenant) s
 WHERE m.tenant LIKE 'metrics\_%' ORDER BY 1;

-- Every state of both kinds, zeros included, equal to stats().
SELECT tenant, kind, state, count FROM worklist.metrics_states()
 WHERE tenant = 'metrics_a' ORDER BY kind, state;
SELECT count(*) AS states_differing
  FROM worklist.metrics_states() m, pg_temp.stats_of(m.tenant) s
 WHERE m.count <> (s->(m.kind || 's')->>m.state)::bigint;

-- Every tenant of the database: bound, or with a task, ticket or run.
SELECT (SELECT array_agg(tenant ORDER BY tenant) FROM worklist.metrics_tenants())
     = (SELECT array_agg(tenant ORDER BY tenant) FROM (
         SELECT tenant FROM worklist.tenant_binding UNION SELECT tenant FROM worklist.task
         UNION SELECT tenant FROM worklist.ticket UNION SELECT tenant FROM worklist.run) t)
       AS every_tenant,
       (SELECT array_agg(DISTINCT tenant ORDER BY tenant) FROM worklist.metrics_states())
     = (SELECT array_agg(tenant ORDER BY tenant) FROM worklist.metrics_tenants())
       AS same_tenants;

-- Counts only: no id of any task, ticket or run is in any row.
SELECT count(*) AS rows_naming_an_id
  FROM (SELECT m::text AS r FROM worklist.metrics_tenants() m
        UNION ALL SELECT m::text FROM worklist.metrics_states() m
        UNION ALL SELECT m::text FROM worklist.metrics_sweeper() m) x
 WHERE r ~ '\m(ma[1-4]|mb1|mk1|mp|ms|mr[12])\M';

-- The sweeper: one row (the test server sweeps every hour).
SELECT count(*) AS rows, bool_and(ticks >= 0 AND purged >= 0 AND tenants_in_error >= 0) AS numbers,
       bool_and((last_tick_age_seconds IS NULL) = (ticks = 0)) AS age_after_first_tick
  FROM worklist.metrics_sweeper();

-- Who may read them: pg_monitor, without a binding of any tenant ...
CREATE ROLE wl_metrics_monitor IN ROLE pg_monitor;
SET ROLE wl_metrics_monitor;
SELECT count(*) AS tenants_seen FROM worklist.metrics_tenants() WHERE tenant LIKE 'metrics\_%';
SELECT count(*) AS states_seen FROM worklist.metrics_states() WHERE tenant LIKE 'metrics\_%';
SELECT count(*) AS sweeper_rows FROM worklist.metrics_sweeper();
RESET ROLE;
-- ... and nobody else: not PUBLIC, not a role bound to a tenant, not a
-- role granted EXECUTE on them.
SET ROLE wl_metrics_app;
SELECT count(*) FROM worklist.metrics_tenants();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT EXECUTE ON FUNCTION worklist.metrics_tenants(), worklist.metrics_states(),
	worklist.metrics_sweeper() TO wl_metrics_app;
SET ROLE wl_metrics_app;
SELECT count(*) FROM worklist.metrics_tenants();
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM worklist.metrics_states();
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM worklist.metrics_sweeper();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
REVOKE EXECUTE ON FUNCTION worklist.metrics_tenants(), worklist.metrics_states(),
	worklist.metrics_sweeper() FROM wl_metrics_app;

-- Clean up.
SELECT worklist.revoke_tenant('metrics_c', 'wl_metrics_app');
DROP ROLE wl_metrics_app;
DROP ROLE wl_metrics_monitor;
SET worklist.tenant = 'metrics_a';
SELECT worklist.erase_tenant() > 0 AS erased;
SET worklist.tenant = 'metrics_b';
SELECT worklist.erase_tenant() > 0 AS erased;
