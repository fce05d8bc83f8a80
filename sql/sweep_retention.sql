-- Retention (doc/reference.md, section 8): each tenant says how long settled work
-- is kept; the sweep purges, in batches, what is past it.
SET worklist.tenant = 'sweep_retention';
SET timezone = 'UTC';

-- The policy: none at first (kept forever); each kind positive or NULL.
SELECT * FROM worklist.retention();
SELECT worklist.set_retention(tasks => '0');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_retention(tickets => '-1 day');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_retention(runs => '1 mon -30 days');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.set_retention(tasks => '300000 years');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.retention();
SELECT worklist.set_retention(tasks => '1 day', tickets => '2 days', runs => '3 days');
SELECT * FROM worklist.retention();
-- each call sets the whole policy
SELECT worklist.set_retention(tasks => '1 day');
SELECT * FROM worklist.retention();
SELECT worklist.set_retention();
SELECT * FROM worklist.retention();

-- Who may set it: service and admin bindings, never a member.
CREATE ROLE wl_ret_member;
CREATE ROLE wl_ret_service;
CREATE ROLE wl_ret_outsider;
SELECT worklist.grant_tenant('sweep_retention', 'wl_ret_member');
SELECT worklist.grant_tenant('sweep_retention', 'wl_ret_service', 'service');
SET ROLE wl_ret_member;
SELECT worklist.set_retention(tasks => '1 hour');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.retention();
SET ROLE wl_ret_outsider;
SELECT worklist.set_retention(tasks => '1 hour');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.retention();
\echo :LAST_ERROR_SQLSTATE
SET ROLE wl_ret_service;
SELECT worklist.set_retention(tasks => '1 day', tickets => '1 day', runs => '1 day');
SELECT * FROM worklist.retention();
RESET ROLE;
SELECT worklist.revoke_tenant('sweep_retention', 'wl_ret_member');
SELECT worklist.revoke_tenant('sweep_retention', 'wl_ret_service');
DROP ROLE wl_ret_member, wl_ret_service, wl_ret_outsider;

-- Tasks: settled ones go at settled_at + tasks (inclusive); pending ones
-- never, however old.
SELECT count(*) FROM generate_series(1, 5) g, worklist.open_task('t' || g, 'c', '{r}');
SELECT holder FROM worklist.claim('t1', 'ann', '{r}');
BEGIN;		-- settled at one instant
SELECT worklist.complete('t1', 'ann', '{}');
SELECT worklist.set_state('t2', 'withdrawn');
SELECT worklist.withdraw_run('nothing', '{t3}');
COMMIT;
CREATE TEMP TABLE settled AS
SELECT max(settled_at) AS at FROM worklist.task WHERE tenant = 'sweep_retention';
SELECT purged FROM worklist.sweep((SELECT at FROM settled) + interval '1 day' - interval '1 microsecond');
SELECT count(*) AS tasks_left FROM worklist.task WHERE tenant = 'sweep_retention';
SELECT purged FROM worklist.sweep((SELECT at FROM settled) + interval '1 day');
SELECT id, state FROM worklist.task WHERE tenant = 'sweep_retention' ORDER BY id;
SELECT purged FROM worklist.sweep(now() + interval '10 years');
SELECT id, state FROM worklist.task WHERE tenant = 'sweep_retention' ORDER BY id;

-- Tickets: closed ones go with their whole log at latest event + tickets;
-- live ones never; other tickets' logs are untouched.
SELECT state FROM worklist.open_ticket('k1', 'req', 'closed early');
SELECT state FROM worklist.report('k1', 'ann', 'working', at => '2030-01-01 10:00');
SELECT state FROM worklist.close_ticket('k1', 'req', 'done', at => '2030-01-01 11:00');
SELECT state FROM worklist.report('k1', 'ann', 'delivered', at => '2030-01-01 12:00');	-- after the close: still its age
SELECT state FROM worklist.open_ticket('k2', 'req', 'archived');
SELECT state FROM worklist.close_ticket('k2', 'req', 'archived', at => '2030-01-05 00:00');
SELECT state FROM worklist.open_ticket('k3', 'req', 'still live');
SELECT state FROM worklist.report('k3', 'bo', 'working', at => '2029-01-01 00:00');
SELECT ticket, count(*) AS events FROM worklist.ticket_event WHERE tenant = 'sweep_retention'
 GROUP BY 1 ORDER BY 1;
SELECT purged FROM worklist.sweep('2030-01-02 12:00'::timestamptz - interval '1 microsecond');
SELECT purged FROM worklist.sweep('2030-01-02 12:00');
SELECT id, state FROM worklist.ticket WHERE tenant = 'sweep_retention' ORDER BY id;
SELECT ticket, count(*) AS events FROM worklist.ticket_event WHERE tenant = 'sweep_retention'
 GROUP BY 1 ORDER BY 1;
SELECT worklist.ticket_state('k1');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.report('k1', 'ann', 'working');
\echo :LAST_ERROR_SQLSTATE

-- Runs: a run goes with its checkpoints and lease once its newest
-- checkpoint is old enough and it has no unexpired lease; a run with no
-- checkpoint never; fences never rewind.
SELECT worklist.write_checkpoint('p', 's', 'old', 'c1', '{}', created_at => '2030-01-01 00:00');
SELECT worklist.write_checkpoint('p', 's', 'old', 'c2', '{}', created_at => '2030-01-01 06:00');
SELECT worklist.write_checkpoint('p', 's', 'leased', 'c1', '{}', created_at => '2030-01-01 00:00');
SELECT worklist.write_checkpoint('p', 's', 'young', 'c1', '{}', created_at => '2030-01-10 00:00');
SELECT holder FROM worklist.claim_run('p', 's', 'old', 'w1', '1 hour', '2030-01-01 06:00');
SELECT holder FROM worklist.claim_run('p', 's', 'leased', 'w2', '10 days', '2030-01-01 06:00');
SELECT holder FROM worklist.claim_run('p', 's', 'bare', 'w3', '1 hour', '2029-01-01 00:00');
CREATE TEMP TABLE fences AS SELECT run, fence FROM worklist.run_claim WHERE tenant = 'sweep_retention';
SELECT purged FROM worklist.sweep('2030-01-02 06:00'::timestamptz - interval '1 microsecond');
SELECT purged FROM worklist.sweep('2030-01-02 06:00');
SELECT run FROM worklist.run WHERE tenant = 'sweep_retention' ORDER BY 1;
SELECT run, count(*) FROM worklist.run_checkpoint WHERE tenant = 'sweep_retention' GROUP BY 1 ORDER BY 1;
SELECT run FROM worklist.run_claim WHERE tenant = 'sweep_retention' ORDER BY 1;
-- the lease expires: the run goes (and so do the young run and the
-- archived ticket, whose time has come by then)
SELECT purged FROM worklist.sweep('2030-01-11 06:00');
SELECT run FROM worklist.run WHERE tenant = 'sweep_retention' ORDER BY 1;
SELECT id FROM worklist.ticket WHERE tenant = 'sweep_retention' ORDER BY 1;
SELECT (worklist.claim_run('p', 's', 'old', 'w9', '1 hour', '2031-01-01')).fence
       > (SELECT max(fence) FROM fences) AS fence_above_every_purged_one;

-- One sweep purges at most lim items of the three kinds together.
SELECT worklist.set_retention(tasks => '1 hour', tickets => '1 hour', runs => '1 hour');
SELECT count(*) FROM generate_series(1, 3) g, worklist.open_task('b' || g, 'c', '{r}'),
       worklist.set_state('b' || g, 'withdrawn');
SELECT count(*) FROM generate_series(1, 3) g,
       worklist.open_ticket('bk' || g, 'req', 't'),
       worklist.close_ticket('bk' || g, 'req', 'archived', at => '2030-01-01');
SELECT count(*) FROM generate_series(1, 3) g,
       worklist.write_checkpoint('p', 's', 'br' || g, 'c', '{}', created_at => '2030-01-01');
SELECT purged FROM worklist.sweep(now() + interval '20 years', 4);
SELECT purged FROM worklist.sweep(now() + interval '20 years', 4);
SELECT purged FROM worklist.sweep(now() + interval '20 years', 4);
SELECT (SELECT count(*) FROM worklist.task WHERE tenant = 'sweep_retention' AND id LIKE 'b%') AS tasks,
       (SELECT count(*) FROM worklist.ticket WHERE tenant = 'sweep_retention' AND id LIKE 'bk%') AS tickets,
       (SELECT count(*) FROM worklist.run WHERE tenant = 'sweep_retention' AND run LIKE 'br%') AS runs;

-- The longest policy purges nothing, and a sweep at any instant, however
-- far, computes its cutoffs without leaving the range of timestamps.
SELECT worklist.set_retention(tasks => '10000 years', tickets => '10000 years', runs => '10000 years');
SELECT purged FROM worklist.sweep('294276-01-01');
SELECT purged FROM worklist.sweep('4713-01-01 BC');
SELECT purged FROM worklist.sweep();

-- The policy is kept through erasure, and belongs to its tenant only.
SELECT worklist.erase_tenant() > 0 AS erased;
SELECT * FROM worklist.retention();
SET worklist.tenant = 'sweep_retention_other';
SELECT * FROM worklist.retention();
SET worklist.tenant = 'sweep_retention';
SELECT worklist.set_retention();
SELECT tenant, tasks, next_purge FROM worklist.retention_policy WHERE tenant LIKE 'sweep_retention%';

-- The schedule: a sweep at the present sets when the sweeper next looks
-- (the oldest candidate's age plus the interval, from now when there is
-- none), and a sweep judged at another instant leaves it alone.
BEGIN;
SELECT worklist.set_retention(tasks => '1 day', runs => '2 days');
SELECT next_purge = now() AS due_at_once FROM worklist.retention_policy WHERE tenant = 'sweep_retention';
SELECT purged FROM worklist.sweep();
SELECT next_purge = now() + interval '1 day' AS next_in_a_day
  FROM worklist.retention_policy WHERE tenant = 'sweep_retention';
COMMIT;
CREATE TEMP TABLE schedule AS
SELECT next_purge FROM worklist.retention_policy WHERE tenant = 'sweep_retention';
SELECT purged FROM worklist.sweep(now() + interval '10 years');
SELECT p.next_purge = s.next_purge AS unchanged
  FROM worklist.retention_policy p, schedule s WHERE p.tenant = 'sweep_retention';
SELECT id FROM worklist.open_task('late', 'c', '{r}');
SELECT worklist.set_state('late', 'expired');
BEGIN;
SELECT purged FROM worklist.sweep();
-- (not yet due: the schedule stands, and is never later than the new
-- candidate comes of age)
SELECT p.next_purge <= t.settled_at + interval '1 day' AS not_later_than_the_task_comes_of_age
  FROM worklist.retention_policy p, worklist.task t
 WHERE p.tenant = 'sweep_retention' AND t.tenant = p.tenant AND t.id = 'late';
COMMIT;
-- After a purge, the schedule follows what is left, not what was purged:
-- the young task comes of age in 50 minutes, so that is when the sweeper
-- looks next (not in a minute, as if an old one had been passed over).
SELECT worklist.set_retention(tasks => '1 hour');
SELECT id FROM worklist.open_task('old', 'c', '{r}');
SELECT id FROM worklist.open_task('young', 'c', '{r}');
SELECT worklist.set_state('old', 'expired');
SELECT worklist.set_state('young', 'expired');
UPDATE worklist.task SET settled_at = now() - interval '2 hours'
 WHERE tenant = 'sweep_retention' AND id = 'old';
UPDATE worklist.task SET settled_at = now() - interval '10 minutes'
 WHERE tenant = 'sweep_retention' AND id = 'young';
BEGIN;
SELECT purged FROM worklist.sweep();
SELECT p.next_purge = t.settled_at + interval '1 hour' AS when_the_young_task_comes_of_age
  FROM worklist.retention_policy p, worklist.task t
 WHERE p.tenant = 'sweep_retention' AND t.tenant = p.tenant AND t.id = 'young';
COMMIT;
SELECT id FROM worklist.task WHERE tenant = 'sweep_retention' ORDER BY id;
SELECT worklist.erase_tenant();
SELECT worklist.set_retention();
