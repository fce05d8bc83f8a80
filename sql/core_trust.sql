-- The trust model of bindings: a member acts only as itself, with roles it
-- has, at the present time; service and admin are trusted with all three;
-- admin administers its own tenant and no other.
--
-- Every refusal is followed by \echo :LAST_ERROR_SQLSTATE, and by a look
-- at the rows it must have left alone.

CREATE ROLE wl_m LOGIN;			-- a person with a member binding
CREATE ROLE wl_other LOGIN;		-- somebody else, bound to nothing
CREATE ROLE wl_svc LOGIN;		-- an application server
CREATE ROLE wl_adm LOGIN;		-- the operator of tenant t
CREATE ROLE wl_adm2 LOGIN;		-- the operator of another tenant
CREATE ROLE wl_reviewers;		-- an audience wl_m belongs to
CREATE ROLE wl_leads;			-- one it does not
CREATE ROLE wl_group;			-- bound as member; wl_g is in it
CREATE ROLE wl_g LOGIN IN ROLE wl_group, wl_reviewers;
GRANT wl_reviewers TO wl_m;
GRANT USAGE ON SCHEMA worklist TO wl_m, wl_g, wl_svc, wl_adm, wl_adm2, wl_other;

SELECT worklist.grant_tenant('t', 'wl_m');
SELECT worklist.grant_tenant('t', 'wl_group', 'member');
SELECT worklist.grant_tenant('t', 'wl_svc', 'service');
SELECT worklist.grant_tenant('t', 'wl_adm', 'admin');
SELECT worklist.grant_tenant('u', 'wl_adm2', 'admin');

SET worklist.tenant = 't';
SELECT (worklist.open_task('t1', 'c', '{wl_reviewers}')).id;
SELECT (worklist.open_task('t2', 'c', '{wl_reviewers}')).id;
SELECT (worklist.open_task('t3', 'c', '{wl_leads}')).id;
SELECT (worklist.open_ticket('k1', 'wl_svc', 'a ticket', authorities => '{wl_m}')).state;
CREATE TEMP VIEW task_rows AS
	SELECT id, state, holder, decided_by FROM worklist.task WHERE tenant = 't' ORDER BY id;
CREATE TEMP VIEW ticket_rows AS
	SELECT ticket, seq, actor, kind, value FROM worklist.ticket_event WHERE tenant = 't' ORDER BY ticket, seq;
GRANT SELECT ON task_rows, ticket_rows TO PUBLIC;

-- ------------------------------------------------------------------
-- member: the acting party is current_user
-- ------------------------------------------------------------------
SET ROLE wl_m;
SELECT worklist.claim('t1', 'wl_other', '{wl_reviewers}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_next('wl_other', '{wl_reviewers}');
\echo :LAST_ERROR_SQLSTATE
SELECT (worklist.claim('t1', 'wl_m', '{wl_reviewers}')).holder AS claimed_as_self;
SELECT worklist.release('t1', 'wl_other');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.complete('t1', 'wl_other', '{"ok": true}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.open_ticket('k2', 'wl_other', 'planted as somebody else');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.report('k1', 'wl_other', 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.close_ticket('k1', 'wl_other', 'done');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'wl_other', '1 hour');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT * FROM task_rows;
SELECT * FROM ticket_rows;
SELECT count(*) AS runs FROM worklist.run WHERE tenant = 't';
SELECT count(*) AS tickets FROM worklist.ticket WHERE tenant = 't';

-- take_over is not PUBLIC; granted, a member still takes over only as itself.
GRANT EXECUTE ON FUNCTION worklist.take_over(text, text, text, text[]) TO wl_m, wl_g;
SET ROLE wl_g;
SELECT worklist.take_over('t1', 'wl_m', 'wl_m', '{wl_reviewers}');
\echo :LAST_ERROR_SQLSTATE
SELECT (worklist.take_over('t1', 'wl_m', 'wl_g', '{wl_reviewers}')).holder AS taken_over_by;
RESET ROLE;

-- ------------------------------------------------------------------
-- member: every audience role named is one the caller is a member of
-- ------------------------------------------------------------------
SET ROLE wl_m;
SELECT worklist.claim('t3', 'wl_m', '{wl_leads}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t3', 'wl_m', '{wl_reviewers,wl_leads}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t3', 'wl_m', '{no_such_role}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_next('wl_m', '{wl_leads}');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM worklist.queue('{wl_leads}');
\echo :LAST_ERROR_SQLSTATE
SELECT id FROM worklist.queue('{wl_reviewers}');
SELECT worklist.take_over('t1', 'wl_g', 'wl_m', '{wl_leads}');
\echo :LAST_ERROR_SQLSTATE
-- its own role counts as a role it is a member of
SELECT count(*) AS via_own_role FROM worklist.queue('{wl_m}');
-- an empty array names no role: nothing to refuse, and it meets no audience
SELECT worklist.claim_next('wl_m', '{}') IS NULL AS nothing_claimed;
RESET ROLE;
SELECT * FROM task_rows;

-- ------------------------------------------------------------------
-- member: a NULL or malformed argument is an argument error (22023),
-- and the trust checks come before the other arguments' checks
-- ------------------------------------------------------------------
SET ROLE wl_m;
SELECT worklist.claim('t2', NULL, '{wl_reviewers}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t2', '', '{wl_reviewers}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t2', repeat('x', 300), '{wl_reviewers}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t2', 'wl_m', '{NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t2', 'wl_m', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.sweep(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.sweep('infinity');
\echo :LAST_ERROR_SQLSTATE
-- a bad id after a foreign actor: the trust violation is reported
SELECT worklist.claim('', 'wl_other', '{wl_reviewers}');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- ------------------------------------------------------------------
-- member: the clocks of write verbs are within worklist.max_clock_skew
-- of now(), inclusive; read-only verbs may be judged at any instant
-- ------------------------------------------------------------------
SHOW worklist.max_clock_skew;
SET worklist.max_clock_skew = '2 seconds';
SET ROLE wl_m;
BEGIN;
SELECT (worklist.sweep(now() + interval '2 seconds')).denied AS at_the_limit;
SELECT (worklist.sweep(now() - interval '2 seconds')).denied AS at_the_limit_before;
SELECT worklist.sweep(now() + interval '2.000001 seconds');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT worklist.sweep(now() - interval '2.000001 seconds');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT worklist.sweep(now() + interval '2 days');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT worklist.claim_run('p', 's', 'r', 'wl_m', '1 hour', now() - interval '1 hour');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT (worklist.claim_run('p', 's', 'r', 'wl_m', '1 hour', now() + interval '2 seconds')).holder AS lease_at_limit;
SELECT worklist.release_run('p', 's', 'r', 1, now() + interval '1 day');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT worklist.report('k1', 'wl_m', 'working', at => now() - interval '1 year');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT worklist.close_ticket('k1', 'wl_m', 'done', at => now() + interval '3 seconds');
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
SELECT (worklist.report('k1', 'wl_m', 'working', at => now() - interval '2 seconds')).state AS report_at_limit;
ROLLBACK;
-- reads at any instant
SELECT count(*) AS overdue_next_year FROM worklist.overdue(now() + interval '1 year');
SELECT (worklist.ticket_state('k1', now() + interval '1 year')).state AS state_next_year;
SELECT (worklist.list_durable_runs(now => now() - interval '1 year')).cursor;
RESET ROLE;
SELECT * FROM ticket_rows;
SELECT count(*) AS runs FROM worklist.run WHERE tenant = 't';
-- the setting is superuser-only and takes an interval
SET ROLE wl_m;
SET worklist.max_clock_skew = '1 day';
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SET worklist.max_clock_skew = 'soon';
\echo :LAST_ERROR_SQLSTATE
SET worklist.max_clock_skew = '-1 second';
\echo :LAST_ERROR_SQLSTATE
SET worklist.max_clock_skew = 'PT0.5S';
SHOW worklist.max_clock_skew;
SET worklist.max_clock_skew = 0;
SET ROLE wl_m;
SELECT (worklist.sweep(now())).denied AS zero_skew_now;
SELECT worklist.sweep(now() + interval '1 microsecond');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
RESET worklist.max_clock_skew;

-- release_run: a member releases only a lease its own role holds (fences
-- are no secret); another's is left alone, as a stale fence would be.  An
-- instant that is not finite is an argument error.
SET ROLE wl_svc;
SELECT fence AS theirs_fence FROM worklist.claim_run('p', 's', 'theirs', 'wl_svc', '1 hour') \gset
RESET ROLE;
SET ROLE wl_m;
SELECT worklist.release_run('p', 's', 'theirs', :theirs_fence);
SELECT worklist.release_run('p', 's', 'theirs', 1, '-infinity');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT holder, expires_at > now() AS still_held FROM worklist.run_claim
 WHERE tenant = 't' AND run = 'theirs';
SET ROLE wl_m;
SELECT fence AS mine_fence FROM worklist.claim_run('p', 's', 'mine', 'wl_m', '1 hour') \gset
SELECT worklist.release_run('p', 's', 'mine', :mine_fence);
RESET ROLE;
SELECT holder, expires_at > now() AS still_held FROM worklist.run_claim
 WHERE tenant = 't' AND run = 'mine';

-- ------------------------------------------------------------------
-- member identity follows SET ROLE and group membership
-- ------------------------------------------------------------------
SET ROLE wl_g;		-- reaches t through wl_group, acts as wl_g
SELECT (worklist.claim('t2', 'wl_g', '{wl_reviewers}')).holder AS group_member_claims;
SELECT worklist.release('t2', 'wl_group');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release('t2', 'wl_g');
RESET ROLE;
SET SESSION AUTHORIZATION wl_g;
SET ROLE wl_group;	-- now current_user is wl_group, a group (wl_g is in it)
-- a group never writes under a member binding (0.4), whatever it names:
-- the member that switched to it could otherwise decide as the group
SELECT worklist.claim('t2', 'wl_g', '{wl_reviewers}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t2', 'wl_group', '{wl_reviewers}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t2', 'wl_group', '{wl_group}');
\echo :LAST_ERROR_SQLSTATE
-- it still reads
SELECT id, state FROM worklist.task('t2');
RESET ROLE;
RESET SESSION AUTHORIZATION;
SELECT * FROM task_rows;

-- ------------------------------------------------------------------
-- service: any actor, any roles, any instant
-- ------------------------------------------------------------------
SET ROLE wl_svc;
SELECT (worklist.claim('t3', 'somebody', '{wl_leads}')).holder AS service_claims_for;
SELECT worklist.complete('t3', 'somebody', '{"approved": true}') AS service_completes_for;
SELECT (worklist.report('k1', 'agent-7', 'working', at => now() - interval '1 day')).state;
SELECT (worklist.claim_run('p', 's', 'r', 'agent-7', '1 hour', now() + interval '1 minute')).holder;
SELECT (worklist.sweep(now() + interval '1 day')).denied AS service_sweeps_ahead;
-- but it administers nothing
SELECT worklist.grant_tenant('t', 'wl_other');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS service_sees_bindings FROM worklist.bindings;
SELECT worklist.set_state('t1', 'withdrawn');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- ------------------------------------------------------------------
-- admin: bindings of its own tenant, and of no other
-- ------------------------------------------------------------------
SET ROLE wl_adm;
SELECT tenant, role, kind FROM worklist.bindings ORDER BY 1, 2;
SELECT worklist.grant_tenant('t', 'wl_other', 'member');
SELECT worklist.grant_tenant('t', 'wl_other', 'service');	-- changes the kind
SELECT worklist.revoke_tenant('t', 'wl_other');
SELECT worklist.grant_tenant('u', 'wl_adm');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.revoke_tenant('u', 'wl_adm2');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant('new-tenant', 'wl_adm', 'admin');
\echo :LAST_ERROR_SQLSTATE
-- the tenant setting does not matter: the argument's tenant is judged
SET worklist.tenant = 'u';
SELECT worklist.grant_tenant('u', 'wl_adm');
\echo :LAST_ERROR_SQLSTATE
SET worklist.tenant = 't';
-- admin acts as service too
SELECT (worklist.sweep(now() + interval '1 day')).denied AS admin_sweeps_ahead;
RESET ROLE;
SET ROLE wl_adm2;
SELECT tenant, role, kind FROM worklist.bindings ORDER BY 1, 2;
RESET ROLE;
SELECT tenant, role, kind FROM worklist.tenant_binding ORDER BY 1, 2;
-- the owner sees every binding
SELECT count(*) AS owner_sees FROM worklist.bindings;
-- the view is a security barrier: a function of the caller's, however
-- cheap, sees only the rows the caller may administer
CREATE FUNCTION pg_temp.peek(t text, k worklist.binding_kind) RETURNS boolean
	LANGUAGE plpgsql COST 0.0000001 AS $$BEGIN RAISE NOTICE 'peeked at % %', t, k; RETURN true; END$$;
GRANT EXECUTE ON FUNCTION pg_temp.peek(text, worklist.binding_kind) TO PUBLIC;
SET ROLE wl_adm2;
SELECT tenant FROM worklist.bindings WHERE pg_temp.peek(tenant, kind);
SET ROLE wl_svc;
SELECT tenant FROM worklist.bindings WHERE pg_temp.peek(tenant, kind);
RESET ROLE;

-- ------------------------------------------------------------------
-- the widest kind wins: wl_m reaches t as member and, once its group is
-- bound as service, as service
-- ------------------------------------------------------------------
GRANT wl_group TO wl_m;
SELECT worklist.grant_tenant('t', 'wl_group', 'service');
SET ROLE wl_m;
SELECT (worklist.claim('t2', 'somebody-else', '{wl_leads}')).holder IS NULL AS audience_still_applies;
\echo :LAST_ERROR_SQLSTATE
SELECT (worklist.sweep(now() + interval '1 hour')).denied AS widest_kind_sweeps;
RESET ROLE;
SELECT worklist.grant_tenant('t', 'wl_group', 'member');
REVOKE wl_group FROM wl_m;

-- ------------------------------------------------------------------
-- bindings follow roles: DROP ROLE leaves a binding that grants nothing
-- and keeps the tenant closed (open_tenants or not); a new role of the
-- same name is not bound
-- ------------------------------------------------------------------
CREATE ROLE wl_gone LOGIN;
GRANT USAGE ON SCHEMA worklist TO wl_gone;
SELECT worklist.grant_tenant('v', 'wl_gone', 'admin');
SET worklist.tenant = 'v';
SET ROLE wl_gone;
SELECT (worklist.open_task('v1', 'c', '{r}')).id;
RESET ROLE;
REVOKE USAGE ON SCHEMA worklist FROM wl_gone;
DROP ROLE wl_gone;
SELECT tenant, role, kind FROM worklist.tenant_binding WHERE tenant = 'v';
SELECT tenant, role, kind FROM worklist.bindings WHERE tenant = 'v';
CREATE ROLE wl_gone LOGIN;		-- another person, the same name
GRANT USAGE ON SCHEMA worklist TO wl_gone;
SET ROLE wl_gone;
SELECT worklist.task('v1');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.grant_tenant('v', 'wl_gone', 'admin');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SET worklist.open_tenants = on;
SET ROLE wl_gone;
SELECT worklist.task('v1');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS sees_v FROM worklist.task;
RESET ROLE;
RESET worklist.open_tenants;
-- revoking the dropped role's binding is not possible by name; the new
-- role's binding is a binding of its own
SELECT worklist.grant_tenant('v', 'wl_gone', 'member');
SELECT tenant, role, kind FROM worklist.tenant_binding WHERE tenant = 'v' ORDER BY kind;
SET ROLE wl_gone;
SELECT (worklist.task('v1')).id AS new_member_reaches;
RESET ROLE;
SET worklist.tenant = 't';

-- role_ref: names in, names out; "(dropped)", unknown names and numbers
-- read as a role that does not exist, never as a role with that OID
SELECT 'wl_m'::worklist.role_ref AS by_name, '"wl_m"'::worklist.role_ref AS quoted;
SELECT '(dropped)'::worklist.role_ref::oid AS dropped,
       'wl_nobody'::worklist.role_ref::oid AS unknown,
       '10'::worklist.role_ref::oid AS number;
SELECT 'wl_m, wl_g'::worklist.role_ref;
\echo :LAST_ERROR_SQLSTATE
SELECT '"unterminated'::worklist.role_ref;
\echo :LAST_ERROR_SQLSTATE
SELECT 0::oid::worklist.role_ref AS zero;
SELECT ''::worklist.role_ref;
\echo :LAST_ERROR_SQLSTATE
SELECT left(v, 20) AS input, v::worklist.role_ref::text AS reads_as
  FROM (VALUES (repeat('x', 1000000)), (E'\x01\x1b[31m'), ('"a""b"'), ('-'), ('"(dropped)"'),
               ('"10"'), ('4294967295'), ('wl_m ')) v(v);
SELECT v::worklist.role_ref
  FROM (VALUES ('a b'), ('"'), ('""'), ('wl_m.wl_g')) v(v);
\echo :LAST_ERROR_SQLSTATE

-- clean up
RESET worklist.tenant;
SET worklist.tenant = 't';
SELECT worklist.erase_tenant() > 0 AS erased;
DROP VIEW task_rows, ticket_rows;
DELETE FROM worklist.tenant_binding WHERE tenant IN ('t', 'u', 'v');
SET worklist.tenant = 'v';
SELECT worklist.erase_tenant();
RESET worklist.tenant;
REVOKE USAGE ON SCHEMA worklist FROM wl_gone;
DROP ROLE wl_gone;
REVOKE EXECUTE ON FUNCTION worklist.take_over(text, text, text, text[]) FROM wl_m, wl_g;
REVOKE USAGE ON SCHEMA worklist FROM wl_m, wl_g, wl_svc, wl_adm, wl_adm2, wl_other;
DROP ROLE wl_m, wl_other, wl_svc, wl_adm, wl_adm2, wl_reviewers, wl_leads, wl_g, wl_group;
