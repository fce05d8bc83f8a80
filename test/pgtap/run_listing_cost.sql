-- Runs: a page of list_durable_runs costs O(lim) however many runs exist.
-- Proof by the table access counters of this transaction: a page reads
-- lim + 1 run rows through an index, never scans the table, and a page
-- deep in the listing reads no more than the first one -- in every order
-- and scope, with and without a park filter.  The same for a page of
-- newest_checkpoints: the checkpoints it returns plus those its metadata
-- filter rejects, at any depth, in every scope; latest_checkpoint one.
BEGIN;
SELECT plan(27);

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

-- newest_checkpoints: 6,000 checkpoints of one project in 3 sessions and
-- 60 runs, one in seven from "input", the rest from "loop".
SELECT count(worklist.write_checkpoint('np', 's' || (i % 3), 'r' || (i % 60), 'c' || lpad(i::text, 5, '0'), '{}',
                                       created_at => '2024-01-01'::timestamptz + (i / 2) * interval '1 s',
                                       metadata => jsonb_build_object('source', CASE WHEN i % 7 = 0 THEN 'input' ELSE 'loop' END)))
  FROM generate_series(1, 6000) i;
ANALYZE worklist.run_checkpoint;

-- Checkpoint rows the call fetched through indexes; NULL when it scanned the table.
CREATE FUNCTION pg_temp.ck_fetched(call text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	f0 bigint; f1 bigint; s0 bigint; s1 bigint;
BEGIN
	SELECT idx_tup_fetch, seq_scan INTO f0, s0 FROM pg_stat_xact_user_tables
	 WHERE relid = 'worklist.run_checkpoint'::regclass;
	EXECUTE call;
	SELECT idx_tup_fetch, seq_scan INTO f1, s1 FROM pg_stat_xact_user_tables
	 WHERE relid = 'worklist.run_checkpoint'::regclass;
	RETURN CASE WHEN s1 = s0 THEN f1 - f0 END;
END
$$;
-- A checkpoint deep into a scope's newest-first order (a full page after it).
CREATE FUNCTION pg_temp.ck_deep(s text, r text) RETURNS worklist.checkpoint LANGUAGE sql AS $$
	SELECT c FROM worklist.run_checkpoint k,
	       LATERAL worklist.read_checkpoint(k.project, k.session, k.run, k.checkpoint_id) c
	 WHERE k.tenant = 'pgtap_run_cost' AND k.project = 'np'
	   AND (s IS NULL OR k.session = s) AND (r IS NULL OR k.run = r)
	 ORDER BY k.created_at DESC, k.checkpoint_id DESC, k.session DESC, k.run DESC
	OFFSET (SELECT count(*) * 9 / 10 - 10 FROM worklist.run_checkpoint k
	         WHERE k.tenant = 'pgtap_run_cost' AND k.project = 'np'
	           AND (s IS NULL OR k.session = s) AND (r IS NULL OR k.run = r)) LIMIT 1
$$;
-- Rows a filter on source rejects before the lim-th match, newest first.
CREATE FUNCTION pg_temp.ck_rejected(src text, lim int) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FILTER (WHERE k.metadata->>'source' <> src)
	  FROM (SELECT k.metadata, count(*) FILTER (WHERE k.metadata->>'source' = src)
	                 OVER (ORDER BY k.created_at DESC, k.checkpoint_id DESC, k.session DESC, k.run DESC) AS m
	          FROM worklist.run_checkpoint k
	         WHERE k.tenant = 'pgtap_run_cost' AND k.project = 'np') k
	 WHERE k.m < lim
$$;

SELECT cmp_ok(pg_temp.ck_fetched(format(
	'SELECT count(*) FROM worklist.newest_checkpoints(''np'', %L, %L, lim => 10)', s, r)), '<=', 10::bigint,
	format('newest_checkpoints, first page, scope np/%s/%s: at most lim checkpoints', s, r))
  FROM (VALUES (NULL, NULL), ('s1', NULL), ('s1', 'r1')) v(s, r);
SELECT cmp_ok(pg_temp.ck_fetched(format(
	'SELECT count(*) FROM worklist.newest_checkpoints(''np'', %L, %L, before_session => %L, before_run => %L,'
	' before_checkpoint_id => %L, lim => 10)', s, r, d.session, d.run, d.checkpoint_id)), '<=', 11::bigint,
	format('newest_checkpoints, a page deep into scope np/%s/%s: lim checkpoints and the one it starts after', s, r))
  FROM (VALUES (NULL, NULL), ('s1', NULL), ('s1', 'r1')) v(s, r), pg_temp.ck_deep(s, r) d;
SELECT is(ARRAY(SELECT (SELECT count(*) FROM worklist.newest_checkpoints('np', s, r, before_session => d.session,
                   before_run => d.run, before_checkpoint_id => d.checkpoint_id, lim => 10))
                   FROM (VALUES (NULL, NULL), ('s1', NULL), ('s1', 'r1')) v(s, r), pg_temp.ck_deep(s, r) d),
	ARRAY[10, 10, 10]::bigint[], 'the deep pages are full pages');
SELECT cmp_ok(pg_temp.ck_fetched($$SELECT count(*) FROM worklist.newest_checkpoints('np', metadata => '{"source": "input"}', lim => 10)$$),
	'<=', 10 + pg_temp.ck_rejected('input', 10),
	'a metadata filter reads the page and the rows it rejects on the way, no more');
SELECT cmp_ok(pg_temp.ck_rejected('input', 10), '>', 0::bigint, 'and that filter does reject rows');
SELECT is(pg_temp.ck_fetched($$SELECT worklist.latest_checkpoint('np', 's1', 'r1')$$), 1::bigint,
	'latest_checkpoint reads one checkpoint');
SELECT is((SELECT count(*) FROM worklist.newest_checkpoints('np', metadata => '{"source": "input"}', lim => 10)
            WHERE metadata->>'source' = 'input'), 10::bigint,
	'and returns a full page of matches');

SELECT * FROM finish();
ROLLBACK;
