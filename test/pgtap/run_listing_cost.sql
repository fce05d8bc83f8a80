-- Runs: a page of list_durable_runs costs O(lim) however many runs exist.
-- Proof by the table access counters of this transaction: a page reads
-- lim + 1 run rows through an index, never scans the table, and a page
-- deep in the listing reads no more than the first one -- in every order
-- and scope, with and without a park filter.
BEGIN;
SELECT plan(16);

SET LOCAL worklist.tenant = 'pgtap_run_cost';
SELECT count(worklist.write_checkpoint('p' || (i % 3), 's' || (i % 2), 'r' || lpad(i::text, 6, '0'), 'c', '{}',
                                       run_created_at => CASE WHEN i % 10 <> 0
                                           THEN '2024-01-01'::timestamptz + (i % 5000) * interval '1 s' END,
                                       park_request => CASE WHEN i % 4 = 0 THEN 'ask' END))
  FROM generate_series(1, 20000) i;
-- with statistics, as autovacuum keeps them
ANALYZE worklist.run;
ANALYZE worklist.run_claim;

-- Run rows the call fetched through indexes; NULL when it scanned the table.
CREATE FUNCTION pg_temp.fetched(p text, s text, o text, park worklist.park_state[], c text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	f0 bigint; f1 bigint; s0 bigint; s1 bigint;
BEGIN
	SELECT idx_tup_fetch, seq_scan INTO f0, s0 FROM pg_stat_xact_user_tables
	 WHERE relid = 'worklist.run'::regclass;
	PERFORM worklist.list_durable_runs(p, s, o, park, lim => 10, cursor => c);
	SELECT idx_tup_fetch, seq_scan INTO f1, s1 FROM pg_stat_xact_user_tables
	 WHERE relid = 'worklist.run'::regclass;
	RETURN CASE WHEN s1 = s0 THEN f1 - f0 END;
END
$$;

-- A cursor about 90% into a listing.
CREATE FUNCTION pg_temp.deep(p text, s text, o text, park worklist.park_state[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	pg worklist.durable_run_page;
	total int;
	c text := NULL;
	seen int := 0;
BEGIN
	SELECT count(*) INTO total FROM worklist.run r
	 WHERE r.tenant = 'pgtap_run_cost' AND (p IS NULL OR r.project = p) AND (s IS NULL OR r.session = s)
	   AND (park IS NULL OR r.park_checkpoint_id IS NOT NULL);
	WHILE seen < total * 9 / 10 LOOP
		pg := worklist.list_durable_runs(p, s, o, park, lim => least(1000, total * 9 / 10 - seen), cursor => c);
		seen := seen + cardinality(pg.entries);
		c := pg.cursor;
	END LOOP;
	RETURN c;
END
$$;

SELECT cmp_ok(pg_temp.fetched(p, s, o, k, NULL), '<=', 11::bigint,
              format('first page, %s order, scope %s/%s, park %s: at most lim + 1 rows', o, p, s, k))
  FROM (VALUES (NULL, NULL, 'run_id', NULL::worklist.park_state[]), ('p1', NULL, 'run_id', NULL),
               ('p1', 's1', 'run_id', NULL), (NULL, NULL, 'created_at', NULL), ('p2', NULL, 'created_at', NULL),
               ('p2', 's0', 'created_at', NULL), (NULL, NULL, 'run_id', '{outstanding}'),
               (NULL, NULL, 'created_at', '{outstanding}')) v(p, s, o, k);
SELECT cmp_ok(pg_temp.fetched(p, s, o, k, pg_temp.deep(p, s, o, k)), '<=', 11::bigint,
              format('page 90%% deep, %s order, scope %s/%s, park %s: at most lim + 1 rows', o, p, s, k))
  FROM (VALUES (NULL, NULL, 'run_id', NULL::worklist.park_state[]), ('p1', NULL, 'run_id', NULL),
               ('p1', 's1', 'run_id', NULL), (NULL, NULL, 'created_at', NULL), ('p2', NULL, 'created_at', NULL),
               ('p2', 's0', 'created_at', NULL), (NULL, NULL, 'run_id', '{outstanding}'),
               (NULL, NULL, 'created_at', '{outstanding}')) v(p, s, o, k);

SELECT * FROM finish();
ROLLBACK;
