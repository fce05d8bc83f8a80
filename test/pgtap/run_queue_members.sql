-- Runs as a queue of work under a member binding (doc/reference.md,
-- section 6): holder of claim_next_run is the caller, now of park_run,
-- claim_next_run and conclude_run is a write clock, park_run and
-- conclude_run refuse a NULL fence and a fence another role holds; and
-- logins bound to nothing, or to another tenant, reach nothing (42501).
BEGIN;
SELECT plan(16);

CREATE ROLE rq_alice;
CREATE ROLE rq_bob;
CREATE ROLE rq_nobody;
CREATE ROLE rq_eve;
SELECT worklist.grant_tenant('rq_m', 'rq_alice', 'member');
SELECT worklist.grant_tenant('rq_m', 'rq_bob', 'member');
SELECT worklist.grant_tenant('rq_other', 'rq_eve', 'member');

SET LOCAL worklist.tenant = 'rq_m';
SELECT worklist.open_task('rq_t', 'rq_case', '{r}');
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c1', '{}');
SELECT worklist.write_checkpoint('p', 's', 'r2', 'c1', '{}');

SET LOCAL ROLE rq_alice;
SELECT throws_ok($$SELECT worklist.claim_next_run('p', 'rq_bob', '1 hour')$$, '42501', NULL,
	'claim_next_run: holder must be the caller');
SELECT throws_ok($$SELECT worklist.claim_next_run('p', 'rq_alice', '1 hour', now => now() + interval '1 hour')$$,
	'42501', NULL, 'claim_next_run: now is a write clock');
CREATE TEMP TABLE rq_fence AS
SELECT run, fence FROM worklist.claim_next_run('p', 'rq_alice', '1 hour');
SELECT is((SELECT run FROM rq_fence), 'r1', 'claim_next_run as the caller');
SELECT throws_ok($$SELECT worklist.park_run('p', 's', 'r1', 'c2', '{rq_t}')$$, '42501', NULL,
	'park_run: a NULL fence is refused to a member');
SELECT throws_ok($$SELECT worklist.conclude_run('p', 's', 'r1')$$, '42501', NULL,
	'conclude_run: a NULL fence is refused to a member');
SELECT throws_ok($$SELECT worklist.park_run('p', 's', 'r1', 'c2', '{rq_t}', fence => (SELECT fence FROM rq_fence),
                                           now => now() - interval '1 hour')$$, '42501', NULL,
	'park_run: now is a write clock');
SELECT throws_ok($$SELECT worklist.conclude_run('p', 's', 'r1', (SELECT fence FROM rq_fence), now() + interval '1 day')$$,
	'42501', NULL, 'conclude_run: now is a write clock');
RESET ROLE;
GRANT SELECT ON rq_fence TO PUBLIC;

SET LOCAL ROLE rq_bob;
SELECT throws_ok($$SELECT worklist.conclude_run('p', 's', 'r1', (SELECT fence FROM rq_fence))$$, '42501', NULL,
	'conclude_run: a fence another role holds is refused to a member');
SELECT throws_ok($$SELECT worklist.park_run('p', 's', 'r1', 'c2', '{rq_t}', fence => (SELECT fence FROM rq_fence))$$,
	'42501', NULL, 'park_run: a fence another role holds is refused to a member');
RESET ROLE;

SET LOCAL ROLE rq_alice;
SELECT is((SELECT park_tasks FROM worklist.park_run('p', 's', 'r1', 'c2', '{rq_t}', fence => (SELECT fence FROM rq_fence))),
	'{rq_t}'::text[], 'park_run with its own fence');
CREATE TEMP TABLE rq_fence2 AS
SELECT run, fence FROM worklist.claim_next_run('p', 'rq_alice', '1 hour');
SELECT is((SELECT run FROM rq_fence2), 'r2', 'the parked run is not offered; the next one is');
SELECT is(worklist.conclude_run('p', 's', 'r2', (SELECT fence FROM rq_fence2)), 0,
	'conclude_run with its own fence');
RESET ROLE;

-- Hostile logins: bound to nothing, or to another tenant.
SET LOCAL ROLE rq_nobody;
SELECT throws_ok($$SELECT worklist.claim_next_run('p', 'rq_nobody', '1 hour')$$, '42501', NULL,
	'a login bound to nothing cannot claim');
SELECT throws_ok($$SELECT worklist.conclude_run('p', 's', 'r1', 1)$$, '42501', NULL,
	'a login bound to nothing cannot conclude');
RESET ROLE;
SET LOCAL ROLE rq_eve;
SELECT throws_ok($$SELECT worklist.park_run('p', 's', 'r1', 'c3', '{rq_t}', fence => 1)$$, '42501', NULL,
	'a login bound to another tenant cannot park');
SELECT throws_ok($$SELECT worklist.claim_next_run('p', 'rq_eve', '1 hour')$$, '42501', NULL,
	'a login bound to another tenant cannot claim');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
