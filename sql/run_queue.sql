-- Runs: claim_next_run hands out the claimable run whose newest checkpoint
-- is oldest, with a new fence, as claim_run would.

SET worklist.tenant = 'run_queue';
SET timezone = 'UTC';

SELECT (worklist.open_task('t1', 'case', '{r}')).id;

-- Runs of project p, newest checkpoint at 00:0N for rN.
SELECT worklist.write_checkpoint('p', 's' || (g % 2), 'r' || g, 'c1', '{}',
                                 created_at => '2024-01-01 00:00'::timestamptz + g * interval '1 minute')
  FROM generate_series(1, 9) g;
-- r1: parked on a pending task (outstanding): never offered
SELECT park_resolved_at FROM worklist.park_run('p', 's1', 'r1', 'c2', '{t1}', now => '2024-01-01 00:01');
-- r2: concluded
SELECT worklist.conclude_run('p', 's0', 'r2', now => '2024-01-01 00:10');
-- r3: held by somebody, unexpired at 00:30
SELECT count(*) FROM worklist.claim_run('p', 's1', 'r3', 'other', '1 hour', '2024-01-01 00:10');
-- r4: a run from before 0.4 (never written since the update)
UPDATE worklist.run SET queued = false WHERE tenant = 'run_queue' AND run = 'r4';
-- r5: parked with a deadline that passes at 00:20
SELECT count(*) FROM worklist.write_checkpoint('p', 's1', 'r5', 'c2', '{}', created_at => '2024-01-01 00:05',
                                               park_request => 'ask', parked_at => '2024-01-01 00:05',
                                               park_deadline => '2024-01-01 00:20');
-- r6: the caller's own live lease: not offered either (renew with claim_run)
SELECT count(*) FROM worklist.claim_run('p', 's0', 'r6', 'me', '1 hour', '2024-01-01 00:10');
-- a run claimed but never written: no checkpoint, never offered
SELECT count(*) FROM worklist.claim_run('p', 's0', 'r0', 'x', '1 second', '2024-01-01 00:00');
-- another project, older
SELECT worklist.write_checkpoint('q', 's0', 'r1', 'c1', '{}', created_at => '2023-01-01');

-- At 00:15: r5's park is outstanding; the order is r7, r8, r9.
SELECT project, session, run, holder, fence IS NOT NULL AS fenced, expires_at
  FROM worklist.claim_next_run('p', 'me', '10 minutes', now => '2024-01-01 00:15');
-- the lease is the run's, as claim_run takes it
SELECT holder, expires_at FROM worklist.run_claim WHERE tenant = 'run_queue' AND project = 'p' AND run = 'r7';
-- at 00:20 r5's park expired: r5 comes first (its newest checkpoint is
-- 00:05), then r8
SELECT run FROM worklist.claim_next_run('p', 'me', '10 minutes', now => '2024-01-01 00:20');
SELECT run FROM worklist.claim_next_run('p', 'me', '10 minutes', now => '2024-01-01 00:20');
-- session scope (s0 has nothing left: r2 concluded, r4 from before
-- 0.4, r6 and r8 held)
SELECT worklist.claim_next_run('p', 'me', '10 minutes', 's0', '2024-01-01 00:20') IS NULL AS none_left_in_s0;
SELECT run FROM worklist.claim_next_run('p', 'me', '10 minutes', 's1', '2024-01-01 00:20');
SELECT worklist.claim_next_run('p', 'me', '10 minutes', now => '2024-01-01 00:20') IS NULL AS none_left;
-- the park of r1 resolves when its task settles: r1 is offered
SELECT worklist.set_state('t1', 'completed'::worklist.task_state);
SELECT run FROM worklist.claim_next_run('p', 'me', '10 minutes', now => '2024-01-01 00:21');
-- leases expire: the runs come back, oldest first
SELECT run, holder FROM worklist.claim_next_run('p', 'w2', '10 minutes', now => '2024-01-01 01:30');
SELECT run FROM worklist.claim_next_run('p', 'w2', '10 minutes', now => '2024-01-01 01:30');
-- project q has its own queue
SELECT project, run FROM worklist.claim_next_run('q', 'w2', '10 minutes', now => '2024-01-01 01:30');

-- Many runs passed over (held), more than one batch: still found.
SELECT count(*) FROM generate_series(1, 300) g,
       worklist.write_checkpoint('big', 's', 'h' || lpad(g::text, 3, '0'), 'c1', '{}',
                                 created_at => '2024-01-01'::timestamptz + g * interval '1 second');
SELECT count(*) FROM generate_series(1, 299) g,
       worklist.claim_run('big', 's', 'h' || lpad(g::text, 3, '0'), 'x', '1 hour', '2024-01-01 00:10');
SELECT run FROM worklist.claim_next_run('big', 'me', '10 minutes', now => '2024-01-01 00:20');
SELECT run FROM worklist.claim_next_run('big', 'me', '10 minutes', 's', '2024-01-01 00:20');

-- Concluded runs are never offered, even with their lease expired.
SELECT worklist.conclude_run('big', 's', 'h300', now => '2024-01-01 00:40');
SELECT worklist.claim_next_run('big', 'me', '10 minutes', now => '2024-01-01 00:45') IS NULL AS none;

-- Arguments.
SELECT worklist.claim_next_run(NULL, 'me', '1 hour');
SELECT worklist.claim_next_run('p', NULL, '1 hour');
SELECT worklist.claim_next_run('p', '', '1 hour');
SELECT worklist.claim_next_run('p', 'me', NULL);
SELECT worklist.claim_next_run('p', 'me', '0');
SELECT worklist.claim_next_run('p', 'me', '-1 second');
SELECT worklist.claim_next_run('p', 'me', '1 mon -30 days');
SELECT worklist.claim_next_run('p', 'me', '20000 years');
SELECT worklist.claim_next_run('p', 'me', '1 hour', '');
SELECT worklist.claim_next_run('p', 'me', '1 hour', repeat('s', 257));
SELECT worklist.claim_next_run('p', 'me', '1 hour', now => NULL);
SELECT worklist.claim_next_run('p', 'me', '1 hour', now => 'infinity');

-- Leave no fence behind for the tests that follow (they set the sequence).
SELECT worklist.erase_tenant() > 0 AS erased;
