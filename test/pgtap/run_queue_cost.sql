-- Runs: claim_next_run costs what the runs it passes over cost (those
-- somebody holds a live lease on), never the number of concluded, parked
-- or finished runs.  Proof by the table access counters of this
-- transaction on a bulk-loaded tenant: 100k concluded runs, 10k parked,
-- 10k from before 0.4, 1k ready of which the 20 oldest are held; a call
-- reads a few dozen run rows through indexes and scans nothing, and
-- reads no more after another 100k concluded and 10k parked runs.
BEGIN;
SELECT plan(6);

SET LOCAL worklist.tenant = 'pgtap_queue_cost';
CREATE FUNCTION pg_temp.load(n_concluded int, n_parked int, n_old int, tag text) RETURNS void
LANGUAGE sql AS $$
	-- concluded, older than every ready run
	INSERT INTO worklist.run (tenant, project, session, run, listed, checkpoint_count,
	                          latest_checkpoint_id, latest_checkpoint_at, queued, concluded_at)
	SELECT 'pgtap_queue_cost', 'p', 's' || (i % 10), tag || 'done' || i, true, 1, 'c',
	       '2024-01-01'::timestamptz + i * interval '1 ms', true, '2024-06-01'
	  FROM generate_series(1, n_concluded) i;
	-- parked, outstanding: half without a deadline, half with one far ahead
	INSERT INTO worklist.run (tenant, project, session, run, listed, checkpoint_count,
	                          latest_checkpoint_id, latest_checkpoint_at, queued,
	                          park_checkpoint_id, park_request, parked_at, park_deadline)
	SELECT 'pgtap_queue_cost', 'p', 's' || (i % 10), tag || 'parked' || i, true, 1, 'c',
	       '2024-01-01'::timestamptz + i * interval '1 ms', true, 'c', 'ask', '2024-01-01',
	       CASE WHEN i % 2 = 0 THEN '2100-01-01'::timestamptz END
	  FROM generate_series(1, n_parked) i;
	-- finished under 0.3: never queued
	INSERT INTO worklist.run (tenant, project, session, run, listed, checkpoint_count,
	                          latest_checkpoint_id, latest_checkpoint_at)
	SELECT 'pgtap_queue_cost', 'p', 's' || (i % 10), tag || 'old' || i, true, 1, 'c',
	       '2024-01-01'::timestamptz + i * interval '1 ms'
	  FROM generate_series(1, n_old) i;
$$;
SELECT pg_temp.load(100000, 10000, 10000, 'a');
-- ready, newer; the 20 oldest held by somebody until 2100
INSERT INTO worklist.run (tenant, project, session, run, listed, checkpoint_count,
                          latest_checkpoint_id, latest_checkpoint_at, queued)
SELECT 'pgtap_queue_cost', 'p', 's' || (i % 10), 'ready' || lpad(i::text, 4, '0'), true, 1, 'c',
       '2024-03-01'::timestamptz + i * interval '1 s', true
  FROM generate_series(1, 1000) i;
INSERT INTO worklist.run_claim (tenant, project, session, run, holder, fence, expires_at)
SELECT 'pgtap_queue_cost', 'p', 's' || (i % 10), 'ready' || lpad(i::text, 4, '0'), 'other',
       nextval('worklist.fence_seq'), '2100-01-01'
  FROM generate_series(1, 20) i;
ANALYZE worklist.run;
ANALYZE worklist.run_claim;

-- Run rows claim_next_run fetched through indexes; NULL when it scanned the table.
CREATE FUNCTION pg_temp.fetched(s text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	f0 bigint; f1 bigint; s0 bigint; s1 bigint; got text;
BEGIN
	SELECT idx_tup_fetch, seq_scan INTO f0, s0 FROM pg_stat_xact_user_tables
	 WHERE relid = 'worklist.run'::regclass;
	SELECT c.run INTO got FROM worklist.claim_next_run('p', 'me', '1 hour', s, '2024-12-01') c;
	IF got IS NULL THEN
		RAISE EXCEPTION 'nothing claimed';
	END IF;
	SELECT idx_tup_fetch, seq_scan INTO f1, s1 FROM pg_stat_xact_user_tables
	 WHERE relid = 'worklist.run'::regclass;
	RETURN CASE WHEN s1 = s0 THEN f1 - f0 END;
END
$$;

CREATE TEMP TABLE cost (k text PRIMARY KEY, n bigint);
INSERT INTO cost VALUES ('project', pg_temp.fetched(NULL)), ('session', pg_temp.fetched('s5'));
SELECT cmp_ok((SELECT n FROM cost WHERE k = 'project'), '<=', 40::bigint,
	'a claim of a project passes 20 held runs and reads at most 40 run rows, none by a scan');
SELECT cmp_ok((SELECT n FROM cost WHERE k = 'session'), '<=', 20::bigint,
	'a claim of a session reads at most 20 run rows, none by a scan');
SELECT is((SELECT run FROM worklist.run_claim WHERE tenant = 'pgtap_queue_cost' AND holder = 'me'
            ORDER BY run LIMIT 1), 'ready0021', 'the oldest ready run not held was taken');

-- Ten times the concluded runs and twice the parked ones: no more reads.
SELECT pg_temp.load(100000, 10000, 0, 'b');
ANALYZE worklist.run;
SELECT cmp_ok(pg_temp.fetched(NULL), '<=', (SELECT n FROM cost WHERE k = 'project') + 2,
	'project: as many reads with 200k concluded and 20k parked runs');
SELECT cmp_ok(pg_temp.fetched('s5'), '<=', (SELECT n FROM cost WHERE k = 'session') + 2,
	'session: as many reads with 200k concluded and 20k parked runs');

-- Parks whose deadline passed are read from their own index: 5k of them
-- expire, and the claim takes the oldest.
UPDATE worklist.run SET park_deadline = '2024-11-01'
 WHERE tenant = 'pgtap_queue_cost' AND run LIKE 'aparked%' AND park_deadline IS NOT NULL;
ANALYZE worklist.run;
SELECT is((SELECT run FROM worklist.claim_next_run('p', 'me', '1 hour', now => '2024-12-01')),
	'aparked2', 'an expired park is claimable, oldest first');

SELECT * FROM finish();
ROLLBACK;
