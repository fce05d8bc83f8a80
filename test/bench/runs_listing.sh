#!/usr/bin/env bash
#
# runs_listing.sh -- list_durable_runs costs O(lim) however deep the page.
#
# Against a running server with worklist installed (libpq environment:
# PGHOST, PGPORT, PGUSER), in a database of its own (RUNS_BENCH_DB, default
# worklist_bench_runs, dropped and made again): writes RUNS_BENCH_N runs
# (default 100000) through write_checkpoint, then times the first page and a
# page 90% deep, in both orders, RUNS_BENCH_REPS times each (default 200),
# and reports the median of each and their ratio.  A ratio near 1 is the
# claim; absolute times depend on the machine and are not the point.
#
#   PGHOST=... PGPORT=... bash test/bench/runs_listing.sh
#
set -euo pipefail

DB=${RUNS_BENCH_DB:-worklist_bench_runs}
N=${RUNS_BENCH_N:-100000}
REPS=${RUNS_BENCH_REPS:-200}
LIM=${RUNS_BENCH_LIM:-100}

psql_() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

psql_ -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql_ -d "$DB" -c 'CREATE EXTENSION worklist'

echo "loading $N runs"
psql_ -d "$DB" <<SQL
SET worklist.tenant = 'bench';
SET worklist.notify = off;
SELECT count(worklist.write_checkpoint('p' || (i % 10), 's' || (i % 7), 'r' || lpad(i::text, 7, '0'),
                                       'c1', '{"step": 1}',
                                       run_created_at => '2024-01-01'::timestamptz + (i % 86400) * interval '1 s'))
  FROM generate_series(1, $N) i;
-- a lease on every tenth run, so the page joins leases too
SELECT count((worklist.claim_run('p' || (i % 10), 's' || (i % 7), 'r' || lpad(i::text, 7, '0'), 'w', '1 hour')).fence)
  FROM generate_series(1, $N, 10) i;
VACUUM ANALYZE worklist.run;
VACUUM ANALYZE worklist.run_claim;
SQL

psql_ -d "$DB" -At <<SQL
SET worklist.tenant = 'bench';
CREATE TEMP TABLE timing (ord text, depth text, ms float8);
DO \$\$
DECLARE
	ord text;
	pg worklist.durable_run_page;
	deep text;
	seen int;
	t0 timestamptz;
BEGIN
	FOREACH ord IN ARRAY ARRAY['run_id', 'created_at'] LOOP
		-- a cursor 90% into the listing
		deep := NULL;
		seen := 0;
		WHILE seen < $N * 9 / 10 LOOP
			pg := worklist.list_durable_runs(order_by => ord, lim => least(1000, $N * 9 / 10 - seen),
			                                 cursor => deep);
			seen := seen + cardinality(pg.entries);
			deep := pg.cursor;
		END LOOP;
		FOR i IN 1..$REPS LOOP
			t0 := clock_timestamp();
			pg := worklist.list_durable_runs(order_by => ord, lim => $LIM);
			INSERT INTO timing VALUES (ord, 'first', extract(epoch FROM clock_timestamp() - t0) * 1000);
			t0 := clock_timestamp();
			pg := worklist.list_durable_runs(order_by => ord, lim => $LIM, cursor => deep);
			INSERT INTO timing VALUES (ord, '90%', extract(epoch FROM clock_timestamp() - t0) * 1000);
			IF cardinality(pg.entries) <> $LIM THEN
				RAISE 'deep page is short: % entries', cardinality(pg.entries);
			END IF;
		END LOOP;
	END LOOP;
END
\$\$;
SELECT format('%-10s  first page median %s ms   page 90%% deep median %s ms   ratio deep/first %s',
              ord, round(f::numeric, 3), round(d::numeric, 3), round((d / f)::numeric, 2))
  FROM (SELECT ord,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE depth = 'first') AS f,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE depth = '90%') AS d
          FROM timing GROUP BY ord) m
 ORDER BY ord DESC;
SQL
echo "($N runs, lim $LIM, $REPS repetitions each)"
