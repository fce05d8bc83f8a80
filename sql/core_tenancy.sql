-- Tenancy: the worklist.tenant setting, closed tenancy, binding kinds,
-- worklist.open_tenants, erasure.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE so the
-- expected output pins the SQLSTATE as well as the message.

SHOW worklist.tenant;
SHOW worklist.open_tenants;

-- An empty tenant is refused by every verb, before anything else.
SET worklist.tenant = '';
SELECT worklist.erase_tenant();
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.sweep();
\echo :LAST_ERROR_SQLSTATE
-- ... and so is one longer than an identifier may be.
SELECT set_config('worklist.tenant', repeat('x', 257), false) IS NOT NULL AS set;
SELECT worklist.erase_tenant();
\echo :LAST_ERROR_SQLSTATE
SELECT set_config('worklist.tenant', repeat('é', 256), false) IS NOT NULL AS set;
SELECT worklist.erase_tenant();
RESET worklist.tenant;
SHOW worklist.tenant;

-- Rows of two tenants; only the extension's verbs (or its owner) write.
INSERT INTO worklist.task (tenant, id, case_id, roles)
VALUES ('a', 't1', 'c', '{r}'), ('a', 't2', 'c', '{r}'), ('b', 't1', 'c', '{r}');
INSERT INTO worklist.ticket (tenant, id, requester, title)
VALUES ('a', 'k1', 'req', 'a ticket');
INSERT INTO worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value)
VALUES ('a', 'k1', 1, 'w', now(), 'participation', 'working');
INSERT INTO worklist.run (tenant, project, session, run)
VALUES ('a', 'p', 's', 'r'), ('b', 'p', 's', 'r');
INSERT INTO worklist.run_checkpoint (tenant, project, session, run, checkpoint_id, created_at, body)
VALUES ('a', 'p', 's', 'r', 'c1', now(), '{}');

CREATE ROLE wl_alice;
CREATE ROLE wl_bob;
CREATE ROLE wl_team;
GRANT wl_team TO wl_alice;
GRANT USAGE ON SCHEMA worklist TO wl_bob, wl_alice;
GRANT SELECT ON worklist.task TO wl_bob, wl_alice;

-- Closed tenancy: a tenant nobody bound is reachable by nobody but the
-- owner and superusers, and the refusal reads the same as for a bound one.
SET worklist.tenant = 'b';
SET ROLE wl_bob;
SELECT worklist.sweep();
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS bob_sees_b FROM worklist.task;
SELECT worklist.open_task('planted', 'c', '{r}');
\echo :LAST_ERROR_SQLSTATE
-- ... nor may anybody but a superuser open unbound tenants.
SET worklist.open_tenants = on;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT count(*) AS nothing_planted FROM worklist.task WHERE id = 'planted';

-- Bindings: members of a bound role act in the tenant and see only its
-- rows; a role outside the bindings is refused and sees nothing.
SELECT worklist.grant_tenant('a', 'wl_team');
SELECT worklist.grant_tenant('a', 'wl_team');	-- idempotent
SELECT tenant, role, kind FROM worklist.tenant_binding ORDER BY 1, 2;
SET worklist.tenant = 'a';
SET ROLE wl_bob;
SELECT worklist.sweep();
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS bob_sees FROM worklist.task;
SET ROLE wl_alice;
SELECT (worklist.sweep()).denied;
SELECT tenant, id FROM worklist.task ORDER BY 1, 2;
-- The empty-tenant check comes before the reach check.
SET worklist.tenant = '';
SELECT worklist.sweep();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- worklist.open_tenants (superuser-only) opens unbound tenants to every
-- role, as a service binding; a bound tenant stays closed.
SET worklist.open_tenants = on;
SET worklist.tenant = 'b';
SET ROLE wl_bob;
SELECT tenant, id FROM worklist.task ORDER BY 1, 2;
SELECT (worklist.sweep(now() + interval '1 hour')).denied AS service_clock;
SET worklist.tenant = 'a';
SELECT worklist.sweep();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
RESET worklist.open_tenants;

-- A binding change reaches an open session at once.
SET worklist.tenant = 'b';
SELECT worklist.grant_tenant('b', 'wl_bob', 'service');
SET ROLE wl_bob;
SELECT count(*) AS bob_sees_b FROM worklist.task;
SET ROLE wl_alice;
SELECT worklist.sweep();
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS alice_sees_b FROM worklist.task;
RESET ROLE;
SELECT worklist.revoke_tenant('b', 'wl_bob');
SELECT worklist.revoke_tenant('b', 'wl_bob');	-- absent: no-op
SET ROLE wl_bob;
SELECT count(*) AS bob_sees_b FROM worklist.task;
RESET ROLE;

-- Role and kind arguments fail as their input does.
SELECT worklist.grant_tenant('a', 'wl_nobody');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant('a', 999999::oid::regrole);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.revoke_tenant('a', 'wl_nobody');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant('a', 'wl_team', 'owner');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant('a', 'wl_team', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant('a', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant('', 'wl_team');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant(NULL, 'wl_team');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant(repeat('x', 257), 'wl_team');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant(repeat('x', 1000000), 'wl_team');
\echo :LAST_ERROR_SQLSTATE
-- 256 characters is fine, however many bytes they take
SELECT worklist.grant_tenant(repeat('é', 256), 'wl_team');
SELECT worklist.revoke_tenant(repeat('é', 256), 'wl_team');
SELECT count(*) AS bindings_left FROM worklist.tenant_binding;

-- grant_tenant and revoke_tenant are PUBLIC, and refuse whoever is not
-- admin of the tenant named; erase_tenant is not PUBLIC.
SET ROLE wl_alice;
SET worklist.tenant = 'a';
SELECT worklist.grant_tenant('a', 'wl_alice', 'admin');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.revoke_tenant('a', 'wl_team');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.erase_tenant();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT tenant, role, kind FROM worklist.tenant_binding ORDER BY 1, 2;

-- Erasure removes every row of the tenant in every table, keeps bindings,
-- and leaves the other tenant alone.
SET worklist.tenant = 'a';
SELECT worklist.erase_tenant() AS erased;
SELECT worklist.erase_tenant() AS erased_again;
RESET worklist.tenant;
SELECT 'task' AS t, tenant, count(*) FROM worklist.task GROUP BY tenant
UNION ALL SELECT 'ticket', tenant, count(*) FROM worklist.ticket GROUP BY tenant
UNION ALL SELECT 'ticket_event', tenant, count(*) FROM worklist.ticket_event GROUP BY tenant
UNION ALL SELECT 'run', tenant, count(*) FROM worklist.run GROUP BY tenant
UNION ALL SELECT 'run_checkpoint', tenant, count(*) FROM worklist.run_checkpoint GROUP BY tenant
ORDER BY 1, 2;
SELECT tenant, role, kind FROM worklist.tenant_binding ORDER BY 1, 2;

-- EXECUTE granted on erase_tenant: a role outside the bindings is still
-- refused, so is a member or service binding; an admin binding erases.
-- An unbound tenant reached while open_tenants is on needs only EXECUTE.
GRANT EXECUTE ON FUNCTION worklist.erase_tenant() TO wl_bob, wl_team;
INSERT INTO worklist.task (tenant, id, case_id, roles) VALUES ('a', 't3', 'c', '{r}');
SET worklist.tenant = 'a';
SET ROLE wl_bob;
SELECT worklist.erase_tenant();
\echo :LAST_ERROR_SQLSTATE
SET ROLE wl_alice;
SELECT worklist.erase_tenant();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT worklist.grant_tenant('a', 'wl_team', 'service');
SET ROLE wl_alice;
SELECT worklist.erase_tenant();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT worklist.grant_tenant('a', 'wl_team', 'admin');
SELECT tenant, role, kind FROM worklist.tenant_binding ORDER BY 1, 2;
SET ROLE wl_alice;
SELECT worklist.erase_tenant() AS alice_erased;
RESET ROLE;
SET worklist.open_tenants = on;
SET worklist.tenant = 'b';
SET ROLE wl_bob;
SELECT worklist.erase_tenant() AS bob_erased_unbound_b;
RESET ROLE;
RESET worklist.open_tenants;

-- clean up
SELECT worklist.revoke_tenant('a', 'wl_team');
REVOKE ALL ON worklist.task FROM wl_bob, wl_alice;
REVOKE ALL ON SCHEMA worklist FROM wl_bob, wl_alice;
REVOKE EXECUTE ON FUNCTION worklist.erase_tenant() FROM wl_bob, wl_team;
DROP ROLE wl_alice, wl_bob, wl_team;
