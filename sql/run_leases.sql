-- Runs: leases and fences (claim_run, release_run, fenced writes).
--
-- Fences come from one sequence; it is moved to a known position first so
-- the fences (and the DETAIL of WL007) are the same on every run.

SET worklist.tenant = 'run_leases';
SET timezone = 'UTC';
SELECT setval('worklist.fence_seq', 1000);

-- The lease of a run as the listing shows it.
CREATE FUNCTION pg_temp.claim(p text, s text, r text, at timestamptz)
RETURNS TABLE (claim_holder text, claim_fence bigint, claim_expires_at timestamptz, claim_expired boolean)
LANGUAGE sql AS $$
	SELECT e.claim_holder, e.claim_fence, e.claim_expires_at, e.claim_expired
	  FROM worklist.list_durable_runs(p, s, now => at) pg, unnest(pg.entries) e
	 WHERE e.run = r
$$;

-- First claim: creates the run (not listed: it has no checkpoint) and
-- mints a fence.
SELECT * FROM worklist.claim_run('p', 's', 'r', 'w1', '10 minutes', '2024-01-01 00:00');
SELECT fence AS f1 FROM worklist.run_claim WHERE tenant = 'run_leases' AND run = 'r' \gset
SELECT count(*) AS listed FROM worklist.list_durable_runs() pg, unnest(pg.entries);

-- Another holder, lease unexpired: NULL, not an error, nothing changes.
SELECT worklist.claim_run('p', 's', 'r', 'w2', '10 minutes', '2024-01-01 00:05') IS NULL AS lost;
SELECT worklist.claim_run('p', 's', 'r', 'w2', '10 minutes', '2024-01-01 00:09:59.999999') IS NULL AS lost;

-- Renewal by the same holder: a new, higher fence, a new expiry.
SELECT fence > :f1 AS higher, holder, expires_at
  FROM worklist.claim_run('p', 's', 'r', 'w1', '10 minutes', '2024-01-01 00:06');
SELECT fence AS f2 FROM worklist.run_claim WHERE tenant = 'run_leases' AND run = 'r' \gset

-- Fenced writes: the current fence is admitted ...
SELECT worklist.write_checkpoint('p', 's', 'r', 'c1', '{}', fence => :f2);
-- ... a superseded one is refused with both fences in the DETAIL ...
SELECT worklist.write_checkpoint('p', 's', 'r', 'c2', '{}', fence => :f1);
\echo :LAST_ERROR_SQLSTATE
-- ... and so is one never issued for this run, higher or foreign.
SELECT worklist.write_checkpoint('p', 's', 'r', 'c2', '{}', fence => 99999);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r', 'c2', '{}', fence => 0);
\echo :LAST_ERROR_SQLSTATE
-- A run never claimed has no current fence: any fence is refused.
SELECT worklist.write_checkpoint('p', 's', 'never', 'c1', '{}', fence => :f2);
\echo :LAST_ERROR_SQLSTATE
-- A refused write leaves nothing behind (not even the run).
SELECT worklist.read_checkpoint('p', 's', 'r', 'c2') IS NULL AS not_written,
       NOT EXISTS (SELECT FROM worklist.run WHERE tenant = 'run_leases' AND run = 'never') AS no_run;
-- Unfenced writes are always admitted, whoever holds the lease.
SELECT worklist.write_checkpoint('p', 's', 'r', 'c3', '{}');
SELECT worklist.write_checkpoint('p', 's', 'never', 'c1', '{}', fence => NULL);
SELECT checkpoint_id FROM worklist.list_checkpoints('p', 's', 'r');

-- Expiry is at or before now: at expires_at the lease is expired and
-- another holder reclaims it with a higher fence.
SELECT * FROM pg_temp.claim('p', 's', 'r', '2024-01-01 00:15:59.999999');
SELECT * FROM pg_temp.claim('p', 's', 'r', '2024-01-01 00:16');
SELECT fence > :f2 AS higher, holder, expires_at
  FROM worklist.claim_run('p', 's', 'r', 'w2', '1 minute', '2024-01-01 00:16');
SELECT fence AS f3 FROM worklist.run_claim WHERE tenant = 'run_leases' AND run = 'r' \gset
-- the old holder's fence is now stale; so is its renewal attempt
SELECT worklist.write_checkpoint('p', 's', 'r', 'late', '{}', fence => :f2);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w1', '10 minutes', '2024-01-01 00:16:30') IS NULL AS lost;

-- release_run with a stale fence does nothing.
SELECT worklist.release_run('p', 's', 'r', :f2, '2024-01-01 00:16:10');
SELECT * FROM pg_temp.claim('p', 's', 'r', '2024-01-01 00:16:10');
-- with the current fence it ends the lease now; the holder stays for the
-- record and the released fence stays current (its writes are admitted).
SELECT worklist.release_run('p', 's', 'r', :f3, '2024-01-01 00:16:20');
SELECT * FROM pg_temp.claim('p', 's', 'r', '2024-01-01 00:16:20');
SELECT worklist.write_checkpoint('p', 's', 'r', 'after-release', '{}', fence => :f3);
-- a second release does nothing: expires_at does not move
SELECT worklist.release_run('p', 's', 'r', :f3, '2024-01-01 00:16:25');
SELECT claim_expires_at FROM pg_temp.claim('p', 's', 'r', '2024-01-01 00:16:25');
-- not even when it names an instant before the first release
SELECT worklist.release_run('p', 's', 'r', :f3, '2024-01-01 00:16:05');
SELECT claim_expires_at FROM pg_temp.claim('p', 's', 'r', '2024-01-01 00:16:05');
-- a released run can be claimed at once, by anybody
SELECT fence > :f3 AS higher, holder, expires_at
  FROM worklist.claim_run('p', 's', 'r', 'w3', '1 hour', '2024-01-01 00:16:20');
SELECT fence AS f4 FROM worklist.run_claim WHERE tenant = 'run_leases' AND run = 'r' \gset
-- releasing what nobody holds, or a run that does not exist: nothing
SELECT worklist.release_run('p', 's', 'nobody-claimed', 1, '2024-01-01');
SELECT worklist.release_run('p', 's', 'r', :f4, '2024-01-01 05:00');
SELECT claim_holder, claim_fence = :f4 AS same_fence, claim_expires_at FROM pg_temp.claim('p', 's', 'r', '2024-01-01 05:00');

-- Fences never rewind: not across deletion of every checkpoint ...
SELECT worklist.prune_checkpoints('p', 's', 'r', 0);
SELECT fence > :f4 AS higher FROM worklist.claim_run('p', 's', 'r', 'w4', '1 hour', '2024-01-02');
-- ... nor across erasure of the tenant.
SELECT last_value AS before_erase FROM worklist.fence_seq \gset
SELECT worklist.erase_tenant() > 0 AS erased;
SELECT fence > :before_erase AS higher FROM worklist.claim_run('p', 's', 'r', 'w1', '1 hour', '2024-01-02');

-- Fences are unique across runs: one sequence serves them all.
SELECT count(DISTINCT fence) = 3 AS distinct_fences
  FROM (SELECT (worklist.claim_run('p', 's', 'x' || i, 'w', '1 hour', '2024-01-02')).fence
          FROM generate_series(1, 3) i) f;

-- Guard: a sequence behind the stored fences (as after restoring an older
-- dump) is moved past the highest stored fence before minting.
SELECT max(fence) AS highest FROM worklist.run_claim \gset
SELECT setval('worklist.fence_seq', 5);
SELECT fence > :highest AS above_every_stored
  FROM worklist.claim_run('p', 's', 'after-restore', 'w', '1 hour', '2024-01-02');
SELECT last_value > :highest AS sequence_moved FROM worklist.fence_seq;
-- ... also when the sequence was never called (is_called false)
SELECT max(fence) AS highest FROM worklist.run_claim \gset
SELECT setval('worklist.fence_seq', :highest, false);
SELECT fence > :highest AS above_every_stored
  FROM worklist.claim_run('p', 's', 'after-restore-2', 'w', '1 hour', '2024-01-02');
-- ... and a sequence ahead is left alone
SELECT setval('worklist.fence_seq', 5000000);
SELECT fence AS next_fence FROM worklist.claim_run('p', 's', 'ahead', 'w', '1 hour', '2024-01-02');

-- ttl must be positive; holder an identifier; now given.
SELECT worklist.claim_run('p', 's', 'r', 'w', '0 seconds', '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w', '-1 hour', '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w', '1 month -31 days', '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w', '1 month -30 days', '2024-02-01');
\echo :LAST_ERROR_SQLSTATE
-- positive by interval comparison, yet ends before it starts
SELECT worklist.claim_run('p', 's', 'r', 'w', '1 month -29 days', '2024-02-01');
\echo :LAST_ERROR_SQLSTATE
-- no longer than 10,000 years, and ending within the range of timestamps
SELECT worklist.claim_run('p', 's', 'r', 'w', '178000000 years', '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w', '1000 years', '294000-01-01');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w', NULL, '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', NULL, '1 hour', '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', '', '1 hour', '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', repeat('h', 257), '1 hour', '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w', '1 hour', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w', '1 hour', 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w', '1 hour', '-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'w', '100000000 years', '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release_run('p', 's', 'r', NULL, '2024-01-02');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release_run('p', 's', 'r', 1, NULL);
\echo :LAST_ERROR_SQLSTATE
-- a far-past claim is fine
SELECT holder FROM worklist.claim_run('p', 's', 'old', 'w', '1 second', '4713-01-01 BC');

-- Tenants: a lease of one tenant is invisible to another, which may hold
-- the same run name itself.
SET worklist.tenant = 'run_leases_other';
SELECT holder FROM worklist.claim_run('p', 's', 'r', 'someone', '1 hour', '2024-01-02');
SELECT worklist.erase_tenant();
SET worklist.tenant = 'run_leases';

SELECT worklist.erase_tenant() > 0 AS erased;
