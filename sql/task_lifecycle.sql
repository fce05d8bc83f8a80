-- Tasks over their life: claim timeouts, the inbox of held work, retried
-- completions (doc/reference.md, section 4).
SET worklist.tenant = 'task_lifecycle';
SET timezone = 'UTC';

-- claim_timeout: positive or NULL.
SELECT (worklist.open_task('bad', 'c', '{r}', claim_timeout => '0')).id;
\echo :LAST_ERROR_SQLSTATE
SELECT (worklist.open_task('bad', 'c', '{r}', claim_timeout => '-1 minute')).id;
\echo :LAST_ERROR_SQLSTATE
SELECT (worklist.open_task('bad', 'c', '{r}', claim_timeout => '1 mon -30 days')).id;
\echo :LAST_ERROR_SQLSTATE
-- ... and no longer than 10,000 years (claims stamp now() + claim_timeout)
SELECT (worklist.open_task('bad', 'c', '{r}', claim_timeout => '300000 years')).id;
\echo :LAST_ERROR_SQLSTATE
SET worklist.tenant = 'task_lifecycle_long';
SELECT (worklist.open_task('ok', 'c', '{r}', claim_timeout => '10000 years')).claim_timeout;
SELECT holder, claim_expires_at > now() + interval '9999 years' AS far FROM worklist.claim('ok', 'z', '{r}');
SELECT worklist.erase_tenant();
SET worklist.tenant = 'task_lifecycle';
SELECT count(*) AS nothing_opened FROM worklist.task WHERE tenant = 'task_lifecycle';
SELECT id, claim_timeout FROM worklist.open_task('none', 'c', '{r}', claim_timeout => NULL);

-- A claim held past its timeout is released by the sweep, as if its holder
-- had released it: claimed back to open, escalated stays escalated.
SELECT id, claim_timeout
  FROM worklist.open_task('t1', 'c', '{r}', claim_timeout => '10 minutes', priority => 3);
SELECT id FROM worklist.open_task('t2', 'c', '{r}', claim_timeout => '10 minutes',
                                  escalation_roles => '{lead}', priority => 2);
SELECT id FROM worklist.open_task('t3', 'c', '{r}', claim_timeout => '1 hour', priority => 1);
SELECT id FROM worklist.open_task('t4', 'c', '{r}');	-- no timeout
SELECT holder, state FROM worklist.claim('t1', 'ann', '{r}');
SELECT state FROM worklist.escalate('t2');
SELECT holder, state FROM worklist.claim('t2', 'lee', '{lead}');
SELECT holder, state FROM worklist.claim('t3', 'ann', '{r}');
SELECT holder, state FROM worklist.claim('t4', 'bob', '{r}');
SELECT id, holder, claim_expires_at - claimed_at AS timeout_left
  FROM worklist.task WHERE tenant = 'task_lifecycle' AND holder IS NOT NULL ORDER BY id;
-- At claimed_at + claim_timeout exactly (the boundary is "at or before").
SELECT claims_released FROM worklist.sweep((SELECT claimed_at + interval '10 minutes' - interval '1 microsecond'
                                             FROM worklist.task WHERE tenant = 'task_lifecycle' AND id = 't1'));
SELECT claims_released, denied, purged
  FROM worklist.sweep((SELECT greatest(a.claimed_at, b.claimed_at) + interval '10 minutes'
                         FROM worklist.task a, worklist.task b
                        WHERE a.tenant = 'task_lifecycle' AND a.id = 't1'
                          AND b.tenant = 'task_lifecycle' AND b.id = 't2'));
SELECT id, state, holder, claimed_at IS NULL AS claim_cleared,
       claim_expires_at IS NOT NULL AS timing_out
  FROM worklist.task WHERE tenant = 'task_lifecycle' AND id IN ('t1', 't2', 't3', 't4') ORDER BY id;
-- released tasks are claimable again, and a new claim starts a new timeout
SELECT id FROM worklist.queue('{r,lead}') ORDER BY id;
SELECT holder FROM worklist.claim('t1', 'cy', '{r}');
SELECT claim_expires_at - claimed_at AS new_timeout FROM worklist.task
 WHERE tenant = 'task_lifecycle' AND id = 't1';
-- lim bounds the releases; nothing is released twice
SELECT claims_released FROM worklist.sweep(now() + interval '2 hours', 1);
SELECT claims_released FROM worklist.sweep(now() + interval '2 hours', 1);
SELECT claims_released FROM worklist.sweep(now() + interval '2 hours', 1);
SELECT id, state, holder FROM worklist.task
 WHERE tenant = 'task_lifecycle' AND id IN ('t1', 't3', 't4') ORDER BY id;
-- release, take_over, escalation and settlement end the timeout with the claim
SELECT holder FROM worklist.claim('t3', 'ann', '{r}');
SELECT worklist.release('t3', 'ann');
SELECT holder FROM worklist.claim('t3', 'ann', '{r}');
SELECT holder, claim_expires_at - claimed_at AS restarted
  FROM worklist.take_over('t3', 'ann', 'dee', '{r}');
SELECT state, claim_expires_at FROM worklist.escalate('t3');
SELECT holder FROM worklist.claim('t1', 'cy', '{r}');
SELECT worklist.complete('t1', 'cy', '{"ok": true}');
SELECT id, claim_expires_at FROM worklist.task
 WHERE tenant = 'task_lifecycle' AND id IN ('t1', 't3') ORDER BY id;
SELECT (worklist.stats() -> 'counters' ->> 'claim_timeouts')::int >= 3 AS timeouts_counted;

-- held: the pending tasks an actor holds, oldest claim first, then id;
-- settled tasks and other tenants' are not listed; lim is clamped.
SELECT count(*) FROM generate_series(1, 4) g, worklist.open_task('h' || g, 'c', '{r}');
BEGIN;
SELECT holder FROM worklist.claim('h3', 'eve', '{r}');
SELECT holder FROM worklist.claim('h1', 'eve', '{r}');
COMMIT;
BEGIN;
SELECT holder FROM worklist.claim('h4', 'eve', '{r}');
SELECT holder FROM worklist.claim('h2', 'eve', '{r}');
COMMIT;
SELECT id FROM worklist.held('eve');
SELECT id FROM worklist.held('eve', 2);
SELECT count(*) FROM worklist.held('eve', 0);
SELECT count(*) FROM worklist.held('eve', NULL);
SELECT worklist.complete('h1', 'eve', '{}');
SELECT id FROM worklist.held('eve');
SELECT count(*) AS nobody FROM worklist.held('nobody');
SELECT worklist.held(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.held('');
\echo :LAST_ERROR_SQLSTATE
SET worklist.tenant = 'task_lifecycle_other';
SELECT id FROM worklist.open_task('h1', 'c', '{r}');
SELECT holder FROM worklist.claim('h1', 'eve', '{r}');
SELECT id FROM worklist.held('eve');
SET worklist.tenant = 'task_lifecycle';
SELECT id FROM worklist.held('eve');

-- complete, retried: true again for the same actor and an equal decision
-- (a lost answer converges); false for another decision, another actor,
-- or once the sweep settled it; WL006 while pending and not held.
SELECT id FROM worklist.open_task('r1', 'c', '{r}', due_at => now() - interval '1 minute');
SELECT holder FROM worklist.claim('r1', 'fay', '{r}');
SELECT worklist.complete('r1', 'fay', '{"approve": true, "n": 1}') AS first;
SELECT worklist.complete('r1', 'fay', '{"n": 1, "approve": true}') AS retried_equal;
SELECT worklist.complete('r1', 'fay', '{"approve": false}') AS retried_different;
SELECT worklist.complete('r1', 'gus', '{"approve": true, "n": 1}') AS other_actor;
SELECT state, decided_by, decision FROM worklist.task('r1');
SELECT id FROM worklist.open_task('r2', 'c', '{r}', due_at => now() - interval '1 minute');
SELECT holder FROM worklist.claim('r2', 'fay', '{r}');
SELECT denied FROM worklist.sweep();
SELECT worklist.complete('r2', 'fay', '{"policy": "deny"}') AS after_the_sweep;
SELECT id FROM worklist.open_task('r3', 'c', '{r}');
SELECT worklist.complete('r3', 'fay', '{}');
\echo :LAST_ERROR_SQLSTATE

SELECT worklist.erase_tenant() > 0 AS erased;
SET worklist.tenant = 'task_lifecycle_other';
SELECT worklist.erase_tenant() > 0 AS erased;
