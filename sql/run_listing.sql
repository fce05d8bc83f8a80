-- Runs: list_durable_runs -- orders, scopes, filters, limits, cursors.

SET worklist.tenant = 'run_listing';
SET timezone = 'UTC';

-- Walk a listing page by page; one row per entry, with its page number,
-- and a last row (run NULL) per page telling whether a cursor came back.
CREATE FUNCTION pg_temp.walk(p_project text, p_session text, p_order text,
                             p_park worklist.park_state[], p_claimed boolean,
                             p_lim int, p_now timestamptz DEFAULT '2024-06-01')
RETURNS TABLE (page int, project text, session text, run text, has_cursor boolean)
LANGUAGE plpgsql AS $$
DECLARE
	pg worklist.durable_run_page;
	c text := NULL;
	n int := 0;
BEGIN
	LOOP
		n := n + 1;
		pg := worklist.list_durable_runs(p_project, p_session, p_order, p_park, p_claimed,
		                                 p_lim, c, p_now);
		RETURN QUERY SELECT n, e.project, e.session, e.run, NULL::boolean
		               FROM unnest(pg.entries) e;
		RETURN QUERY SELECT n, NULL::text, NULL::text, NULL::text, pg.cursor IS NOT NULL;
		c := pg.cursor;
		EXIT WHEN c IS NULL OR n > 100;
	END LOOP;
END
$$;

-- Runs in two projects; run_created_at: absent, '-infinity', ties.
SELECT worklist.write_checkpoint('p1', 's1', 'b', 'c', '{}', run_created_at => '2024-01-02');
SELECT worklist.write_checkpoint('p1', 's1', 'a', 'c', '{}', run_created_at => '2024-01-03');
SELECT worklist.write_checkpoint('p1', 's2', 'a', 'c', '{}');
SELECT worklist.write_checkpoint('p2', 's1', 'a', 'c', '{}', run_created_at => '2024-01-02');
SELECT worklist.write_checkpoint('p2', 's1', 'c', 'c', '{}', run_created_at => '-infinity');
SELECT worklist.write_checkpoint('p2', 's2', 'd', 'c', '{}');
SELECT worklist.write_checkpoint('p1', 's1', 'sub', 'c', '{}', parent_run => 'a',
                                 run_created_at => '2024-01-01');
-- not listed: a run that was only claimed, and one whose checkpoints are gone
SELECT holder FROM worklist.claim_run('p1', 's1', 'claimed-only', 'w', '1 hour', '2024-06-01');
SELECT worklist.write_checkpoint('p1', 's1', 'emptied', 'c', '{}');
SELECT worklist.delete_checkpoint('p1', 's1', 'emptied', 'c');

-- order_by 'run_id': by run, then project, then session.
SELECT project, session, run, parent_run, run_created_at, checkpoint_count, latest_checkpoint_id
  FROM worklist.list_durable_runs() pg, unnest(pg.entries);
SELECT cursor IS NULL AS exhausted FROM worklist.list_durable_runs();
-- order_by 'created_at': no run_created_at first, then oldest first
-- ('-infinity' after the undated), then as run_id.
SELECT project, session, run, run_created_at
  FROM worklist.list_durable_runs(order_by => 'created_at') pg, unnest(pg.entries);
-- Scopes: a project, a project and session.
SELECT project, session, run FROM worklist.list_durable_runs('p1') pg, unnest(pg.entries);
SELECT project, session, run FROM worklist.list_durable_runs('p1', order_by => 'created_at') pg, unnest(pg.entries);
SELECT project, session, run FROM worklist.list_durable_runs('p1', 's1') pg, unnest(pg.entries);
SELECT project, session, run FROM worklist.list_durable_runs('p1', 's1', 'created_at') pg, unnest(pg.entries);
SELECT project, session, run FROM worklist.list_durable_runs('nope') pg, unnest(pg.entries);
-- session without project is refused, never widened
SELECT worklist.list_durable_runs(session => 's1');
\echo :LAST_ERROR_SQLSTATE

-- An entry is a run address usable as-is with every run verb.
SELECT (worklist.read_checkpoint(e.project, e.session, e.run, e.latest_checkpoint_id)).run_created_at
  FROM worklist.list_durable_runs('p1', 's1') pg, unnest(pg.entries) e WHERE e.run = 'sub';

-- Paging: every page but the last has a cursor; the pages together are
-- the listing; no cursor leads to an empty page, also when the count is an
-- exact multiple of lim (7 runs).
SELECT * FROM pg_temp.walk(NULL, NULL, 'run_id', NULL, NULL, 3);
SELECT * FROM pg_temp.walk(NULL, NULL, 'created_at', NULL, NULL, 7);
SELECT page, run FROM pg_temp.walk('p1', NULL, 'created_at', NULL, NULL, 1);
SELECT count(*) AS pages FROM pg_temp.walk('p1', 's1', 'run_id', NULL, NULL, 1) WHERE run IS NULL;
SELECT array_agg(run ORDER BY page) FILTER (WHERE run IS NOT NULL) =
       (SELECT array_agg(e.run) FROM worklist.list_durable_runs(order_by => 'created_at') pg, unnest(pg.entries) e)
       AS pages_equal_listing
  FROM pg_temp.walk(NULL, NULL, 'created_at', NULL, NULL, 2);

-- Paging while runs are added between pages: every run that existed when
-- paging began comes exactly once, in order (new runs may or may not).
CREATE TEMP TABLE seen (ord int, run text, project text, session text);
DO $$
DECLARE
	pg worklist.durable_run_page;
	c text := NULL;
	i int := 0;
BEGIN
	FOR ord IN 1..2 LOOP
		c := NULL;
		LOOP
			pg := worklist.list_durable_runs(order_by => (ARRAY['run_id', 'created_at'])[ord],
			                                 lim => 2, cursor => c);
			INSERT INTO seen SELECT ord, e.run, e.project, e.session FROM unnest(pg.entries) e;
			c := pg.cursor;
			EXIT WHEN c IS NULL;
			-- new runs before, among and after the ones listed so far
			i := i + 1;
			PERFORM worklist.write_checkpoint('p1', 's9', k || i || '-' || ord, 'c', '{}',
			                                  run_created_at => t)
			   FROM (VALUES ('0', NULL::timestamptz), ('b', '2024-01-02'), ('z', '2099-01-01'),
			                ('a', '-infinity')) v(k, t);
		END LOOP;
	END LOOP;
END
$$;
SELECT ord, project, session, run, count(*) FROM seen
 WHERE project <> 'p1' OR session <> 's9'
 GROUP BY 1, 2, 3, 4 ORDER BY 1, 4, 2, 3;
SELECT count(*) > 0 AS some_new_runs_listed FROM seen WHERE session = 's9';
SELECT sum(worklist.prune_checkpoints('p1', 's9', e.run, 0)) AS removed
  FROM worklist.list_durable_runs('p1', 's9', lim => 1000) pg, unnest(pg.entries) e;

-- Parks and claims, judged at one now.
SELECT worklist.write_checkpoint('p3', 's', 'outstanding', 'k', '{}', park_request => 'approve',
                                 parked_at => '2024-05-01', park_deadline => '2024-06-01 00:00:01');
SELECT worklist.write_checkpoint('p3', 's', 'expired', 'k', '{}', park_request => 'approve',
                                 parked_at => '2024-05-01', park_deadline => '2024-06-01');
SELECT worklist.write_checkpoint('p3', 's', 'resolved', 'k', '{}', park_request => 'approve',
                                 parked_at => '2024-05-01', park_deadline => '2024-05-02',
                                 park_resolved_at => '2024-05-03');
SELECT worklist.write_checkpoint('p3', 's', 'unparked', 'k', '{}');
SELECT holder FROM worklist.claim_run('p3', 's', 'outstanding', 'w', '1 day', '2024-06-01');
SELECT holder FROM worklist.claim_run('p3', 's', 'expired', 'w', '1 day', '2024-05-31');
SELECT holder FROM worklist.claim_run('p3', 's', 'resolved', 'w', '1 day', '2024-05-01');
SELECT run, park_state, park_checkpoint_id, park_request, parked_at, park_deadline, park_resolved_at,
       claim_holder, claim_expires_at, claim_expired
  FROM worklist.list_durable_runs('p3', now => '2024-06-01') pg, unnest(pg.entries);
SELECT run FROM worklist.list_durable_runs('p3', park => '{outstanding}', now => '2024-06-01') pg, unnest(pg.entries);
SELECT run FROM worklist.list_durable_runs('p3', park => '{expired}', now => '2024-06-01') pg, unnest(pg.entries);
SELECT run FROM worklist.list_durable_runs('p3', park => '{resolved,expired}', now => '2024-06-01') pg, unnest(pg.entries);
SELECT run FROM worklist.list_durable_runs('p3', park => '{outstanding,expired,resolved}', now => '2024-06-01') pg, unnest(pg.entries);
SELECT entries, cursor IS NULL AS exhausted
  FROM worklist.list_durable_runs('p3', park => '{}', now => '2024-06-01');
-- the same runs a second later: the outstanding park has expired
SELECT run FROM worklist.list_durable_runs('p3', park => '{expired}', now => '2024-06-01 00:00:01') pg, unnest(pg.entries);
-- claimed: an unexpired lease; an expired one (at expires_at) counts as not held
SELECT run FROM worklist.list_durable_runs('p3', claimed => true, now => '2024-06-01') pg, unnest(pg.entries);
SELECT run FROM worklist.list_durable_runs('p3', claimed => false, now => '2024-06-01') pg, unnest(pg.entries);
SELECT run FROM worklist.list_durable_runs('p3', claimed => false, park => '{outstanding,expired}',
                                           now => '2024-06-01 00:00:01') pg, unnest(pg.entries);
-- filters page like everything else
SELECT * FROM pg_temp.walk(NULL, NULL, 'run_id', '{outstanding,expired,resolved}', NULL, 2);
SELECT * FROM pg_temp.walk('p3', NULL, 'created_at', NULL, false, 1);
-- unknown park states fail as enum input does; NULL elements are refused
SELECT worklist.list_durable_runs(park => '{waiting}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(park => '{outstanding,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(park => '{{outstanding},{expired}}');
\echo :LAST_ERROR_SQLSTATE

-- lim: NULL means 100, clamped to [1, 1000].
SELECT count(worklist.write_checkpoint('bulk', 's', 'r' || lpad(i::text, 4, '0'), 'c', '{}'))
  FROM generate_series(1, 1001) i;
SELECT cardinality(entries), cursor IS NOT NULL AS more FROM worklist.list_durable_runs('bulk', lim => NULL);
SELECT cardinality(entries), cursor IS NOT NULL AS more FROM worklist.list_durable_runs('bulk');
SELECT cardinality(entries), cursor IS NOT NULL AS more FROM worklist.list_durable_runs('bulk', lim => 0);
SELECT cardinality(entries), cursor IS NOT NULL AS more FROM worklist.list_durable_runs('bulk', lim => -2147483648);
SELECT cardinality(entries), cursor IS NOT NULL AS more FROM worklist.list_durable_runs('bulk', lim => 5000);
SELECT cardinality(entries), cursor IS NOT NULL AS more FROM worklist.list_durable_runs('bulk', lim => 2147483647);
SELECT cardinality(p2.entries), p2.cursor IS NULL AS exhausted, (p2.entries[1]).run
  FROM worklist.list_durable_runs('bulk', lim => 1000) p1,
       worklist.list_durable_runs('bulk', lim => 1000, cursor => p1.cursor) p2;
SELECT count(*) AS pages FROM pg_temp.walk('bulk', 's', 'created_at', NULL, NULL, 1000) WHERE run IS NULL;

CREATE FUNCTION pg_temp.refused(c text, o text DEFAULT 'run_id') RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM worklist.list_durable_runs(order_by => o, lim => 2, cursor => c);
	RETURN false;
EXCEPTION WHEN invalid_parameter_value THEN
	RETURN true;
END
$$;

-- Cursors: opaque; refused when malformed, altered, or made for the other
-- order or another listing.
SELECT cursor AS c_id FROM worklist.list_durable_runs(lim => 2) \gset
SELECT cursor AS c_created FROM worklist.list_durable_runs(order_by => 'created_at', lim => 2) \gset
SELECT cursor AS c_p1 FROM worklist.list_durable_runs('p1', lim => 1) \gset
SELECT :'c_id' ~ '^[A-Za-z0-9_-]+$' AS base64url;
-- the cursor works where it was made
SELECT (entries[1]).run FROM worklist.list_durable_runs(lim => 2, cursor => :'c_id');
-- other order
SELECT worklist.list_durable_runs(order_by => 'created_at', cursor => :'c_id');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(order_by => 'run_id', cursor => :'c_created');
\echo :LAST_ERROR_SQLSTATE
-- other scope, filter or tenant
SELECT worklist.list_durable_runs('p2', cursor => :'c_p1');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => :'c_p1');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(claimed => true, cursor => :'c_id');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(park => '{resolved}', cursor => :'c_id');
\echo :LAST_ERROR_SQLSTATE
SET worklist.tenant = 'run_listing_other';
SELECT worklist.list_durable_runs(lim => 2, cursor => :'c_id');
\echo :LAST_ERROR_SQLSTATE
SET worklist.tenant = 'run_listing';
-- lim and now may change between pages
SELECT (entries[1]).run FROM worklist.list_durable_runs(lim => 1, cursor => :'c_id', now => 'infinity');
-- altered: every single character changed in turn is refused
SELECT count(*) AS accepted, length(:'c_id') AS chars
  FROM generate_series(1, length(:'c_id')) i,
       LATERAL (SELECT overlay(:'c_id' placing
                       CASE WHEN substr(:'c_id', i, 1) = 'A' THEN 'B' ELSE 'A' END
                       from i for 1) AS c) t
 WHERE NOT (SELECT pg_temp.refused(t.c));
-- malformed
SELECT worklist.list_durable_runs(cursor => '');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => 'not a cursor');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => 'AQ');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => :'c_id' || '=');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => left(:'c_id', -1));
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => :'c_id' || 'AAAA');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => repeat('A', 1000000));
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => repeat('A', 200));
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => translate(encode(convert_to(repeat('x', 60), 'UTF8'), 'base64'), '+/=', '-_'));
\echo :LAST_ERROR_SQLSTATE
SELECT pg_temp.refused(:'c_created', 'created_at') AS refused_where_valid;

-- Other argument errors.
SELECT worklist.list_durable_runs(order_by => 'run');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(order_by => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(now => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(project => '');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(project => 'p', session => repeat('s', 257));
\echo :LAST_ERROR_SQLSTATE
-- far-away now is fine
SELECT cardinality(entries) FROM worklist.list_durable_runs('p3', now => '-infinity');
SELECT cardinality(entries) FROM worklist.list_durable_runs('p3', claimed => true, now => 'infinity');

SELECT worklist.erase_tenant() > 0 AS erased;
