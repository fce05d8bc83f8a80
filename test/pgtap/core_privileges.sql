-- A role that is not the owner, bound to two tenants as service: can call
-- the verbs, cannot write the tables, and reads only its current tenant
-- through row-level security; a tenant it is not bound to shows nothing.
BEGIN;
SELECT plan(10);

CREATE ROLE wl_tap_user;
GRANT SELECT ON worklist.task TO wl_tap_user;
SELECT worklist.grant_tenant('tap_a', 'wl_tap_user', 'service');
SELECT worklist.grant_tenant('tap_b', 'wl_tap_user', 'service');
SELECT worklist.grant_tenant('tap_c', 'pg_monitor');
INSERT INTO worklist.task (tenant, id, case_id, roles)
VALUES ('tap_a', 't1', 'c', '{r}'), ('tap_a', 't2', 'c', '{r}'), ('tap_b', 't1', 'c', '{r}'),
       ('tap_c', 't1', 'c', '{r}'), ('tap_d', 't1', 'c', '{r}');

SET LOCAL ROLE wl_tap_user;
SET LOCAL worklist.tenant = 'tap_a';

SELECT lives_ok($$SELECT worklist.sweep()$$, 'a non-owner can call a verb');
SELECT throws_ok($$INSERT INTO worklist.task (tenant, id, case_id, roles) VALUES ('tap_a', 'x', 'c', '{r}')$$,
	'42501', NULL, 'a non-owner cannot insert, even with a grant');
SELECT throws_ok($$INSERT INTO worklist.ticket (tenant, id, requester, title) VALUES ('tap_a', 'x', 'r', 't')$$,
	'42501', NULL, 'a non-owner cannot insert into a table it has no grant on');
SELECT throws_ok($$SELECT * FROM worklist.run$$,
	'42501', NULL, 'a non-owner cannot read a table it has no grant on');
SELECT results_eq($$SELECT tenant, id FROM worklist.task ORDER BY 1, 2$$,
	$$VALUES ('tap_a'::text, 't1'::text), ('tap_a', 't2')$$,
	'RLS shows only the current tenant');

SET LOCAL worklist.tenant = 'tap_b';
SELECT results_eq($$SELECT tenant, id FROM worklist.task ORDER BY 1, 2$$,
	$$VALUES ('tap_b'::text, 't1'::text)$$,
	'switching tenant switches what RLS shows');

SET LOCAL worklist.tenant = 'tap_c';
SELECT is((SELECT count(*) FROM worklist.task), 0::bigint,
	'a tenant bound to other roles shows nothing');
SELECT throws_ok($$SELECT worklist.sweep()$$, '42501', NULL,
	'and its verbs refuse that role');
SET LOCAL worklist.tenant = 'tap_d';
SELECT is((SELECT count(*) FROM worklist.task), 0::bigint,
	'a tenant bound to nobody shows nothing either (tenancy is closed)');

RESET ROLE;
SELECT is((SELECT count(*) FROM worklist.task WHERE tenant LIKE 'tap\_%'), 5::bigint,
	'the owner sees every tenant');

SELECT * FROM finish();
ROLLBACK;
