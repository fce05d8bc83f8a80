#!/usr/bin/env bash
#
# bench.sh -- worklist benchmarks: throughput, median latency and ratios
# against baselines measured in the same run.
#
#   ./run bench [--quick] [--duration S] [--runs N] [--clients "1 4 8"]
#               [--only WORKLOADS]
#
# Run by ./run (which builds and installs the extension) as the postgres
# user, with PGBIN (the server's bin directory) and WORK (a scratch
# directory) in the environment.  Makes its own throwaway cluster under
# $WORK/bench, tunes it, and stops it on exit, failure included.
#
# Workloads (--only takes a comma-separated list of these names):
#   cycle       claim_next + complete over a queue of 100k open tasks, against
#               the ceiling (pgbench's raw single-row UPDATE on 100k rows) and
#               the floor (test/bench/floor.sql, PL/pgSQL) and the verbs' two
#               statements sent bare by pgbench (on the task table, and on a
#               copy with only the primary key and the queue index); at the most clients
#               also with worklist.notify on, with synchronous_commit on, and
#               the floor with generic plans
#   race        every client claims one of the same 10 tasks (WL005 counted)
#   checkpoint  write_checkpoint fenced vs unfenced vs a raw upsert
#   renew       claim_run renewals, against the ceiling
#   sweep       sweep of 1,000 overdue tasks beside 100k and 1M settled ones
#   listing     list_durable_runs: first page vs a page 90% deep, 100k runs
#   tickets     report and ticket_state on tickets with 10 and 1,000 events
#
# Every pgbench row is run --runs times (default 3; interleaved with its
# baselines and the other client counts) for --duration seconds (default
# 5); throughput is pgbench's tps, latency the median of its
# per-transaction log; the table shows the median over the runs.  Peak
# memory of the server's client backends is sampled every half second.
# --quick: one 3-second run per row, 1 and 8 clients, smaller data.
# Numbers on a shared machine are noisy: read the ratios, not the times.
# BENCHMARKS.md explains the table.
#
set -Eeuo pipefail

: "${PGBIN:?set PGBIN to the directory of the server binaries}"
: "${WORK:?set WORK to a scratch directory}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$PGBIN:$PATH"

QUICK=0
DURATION=
RUNS=
CLIENTS=
ONLY=cycle,race,checkpoint,renew,sweep,listing,tickets
while (($#)); do
	case $1 in
		--quick) QUICK=1 ;;
		--duration) DURATION=$2; shift ;;
		--runs) RUNS=$2; shift ;;
		--clients) CLIENTS=$2; shift ;;
		--only) ONLY=$2; shift ;;
		-h|--help) sed -n '3,36p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done

if ((QUICK)); then
	: "${DURATION:=3}" "${RUNS:=1}" "${CLIENTS:=1 8}"
	RUNS_N=20000 SETTLED_SMALL=10000 SETTLED_BIG=100000
	TICKETS=16 SHARED_BUFFERS=256MB
else
	: "${DURATION:=5}" "${RUNS:=3}" "${CLIENTS:=1 4 8}"
	RUNS_N=100000 SETTLED_SMALL=100000 SETTLED_BIG=1000000
	TICKETS=48 SHARED_BUFFERS=1GB
fi
# The queue of the cycle rows: 100k open tasks, more for long runs, so that
# a run never drains it (reloaded before every run; 20k cycles a second is
# far beyond 2 cores).
QUEUE=$((DURATION > 5 ? 20000 * DURATION : 100000))
DUE=1000			# overdue tasks per sweep
SWEEP_REPS=$((QUICK ? 3 : 7))
MAXC=0
for c in $CLIENTS; do ((c > MAXC)) && MAXC=$c; done
((TICKETS % 8 == 0)) || { echo "bench.sh: TICKETS must be a multiple of 8" >&2; exit 2; }

wants() { [[ ,$ONLY, == *,$1,* ]]; }

B=$WORK/bench
DATA=$B/data
SOCK=$B/sock
LOGS=$B/logs
RES=$B/results.tsv
SCRIPTS=$HERE/scripts
rm -rf "$B"
mkdir -p "$SOCK" "$LOGS"
: >"$RES"

# ---------------------------------------------------------------------------
# The cluster: one configuration for every row
# ---------------------------------------------------------------------------
SETTINGS=(
	"shared_buffers = $SHARED_BUFFERS"
	"synchronous_commit = off"
	"autovacuum_naptime = 1s"
	"max_wal_size = 8GB"
	"checkpoint_timeout = 30min"
	"jit = off"
	"max_connections = 40"
	"shared_preload_libraries = 'worklist'"
	"worklist.notify = off"
	"worklist.database = 'postgres'"
)

SERVER_UP=0
SAMPLER=
stop_all() {
	local rc=$?
	[[ -n $SAMPLER ]] && kill "$SAMPLER" 2>/dev/null && wait "$SAMPLER" 2>/dev/null
	if ((SERVER_UP)); then
		pg_ctl -D "$DATA" -m fast -w stop >/dev/null 2>&1 \
			|| pg_ctl -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	((rc == 0)) || echo "bench.sh: failed (exit $rc); logs in $B" >&2
	exit "$rc"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

initdb -D "$DATA" -A trust -U postgres -E UTF8 --locale=C >"$B/initdb.log" 2>&1 \
	|| { cat "$B/initdb.log"; exit 1; }
{
	echo "listen_addresses = ''"
	echo "unix_socket_directories = '$SOCK'"
	echo "port = 5432"
	printf '%s\n' "${SETTINGS[@]}"
} >>"$DATA/postgresql.conf"
pg_ctl -D "$DATA" -l "$B/server.log" -w start >/dev/null || { cat "$B/server.log"; exit 1; }
SERVER_UP=1
export PGHOST=$SOCK PGPORT=5432 PGUSER=postgres PGDATABASE=bench

psql_() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
val() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

psql_ -d postgres -c 'CREATE DATABASE bench'
psql_ -c 'CREATE EXTENSION worklist' -f "$HERE/floor.sql" -f "$HERE/setup.sql"

# Peak memory: every half second, the resident set (VmRSS, which counts the
# shared buffers a backend has touched) and the private memory (RssAnon) of
# every client backend, tagged with the workload running.
PM=$(head -1 "$DATA/postmaster.pid")
echo "setup 0" >"$B/phase"
(
	set +e
	while :; do
		phase=$(<"$B/phase")
		for pid in $(ps -o pid= --ppid "$PM"); do
			[[ -r /proc/$pid/cmdline ]] || continue
			cmd=$(tr '\0' ' ' </proc/$pid/cmdline 2>/dev/null) || continue
			[[ $cmd == *'[local]'* ]] || continue
			awk -v p="$phase" '/^VmRSS:/ {r = $2} /^RssAnon:/ {a = $2}
				END {if (r) {sub(/ /, "\t", p); print p "\t" r "\t" a}}' "/proc/$pid/status" 2>/dev/null || true
		done
		sleep 0.5
	done
) >"$B/memory.tsv" 2>/dev/null &
SAMPLER=$!

# ---------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------
say() { printf '%s  %s\n' "$(date +%T)" "$*" >&2; }

# median of the numbers on stdin (empty when there are none)
median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# pgbench ROW CLIENTS RUN SCRIPT [pgbench options...]
# One timed pgbench run; appends "row clients run tps median_latency_ms" to
# the results.  PGOPTIONS (worklist.tenant, ...) comes from the caller.
bench() {
	local row=$1 clients=$2 run=$3 script=$4
	shift 4
	local dir=$LOGS/$row.c$clients.r$run
	local jobs=$((clients < 2 ? 1 : 2))
	local rc=0 tps lat
	[[ $script == /* ]] || script=$SCRIPTS/$script
	mkdir -p "$dir"
	echo "$row $clients" >"$B/phase"
	pgbench -n -M prepared -c "$clients" -j "$jobs" -T "$DURATION" \
		-l --log-prefix="$dir/tx" -f "$script" "$@" bench >"$dir/out" 2>&1 || rc=$?
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$dir/out")
	if ((rc != 0)) || [[ -z $tps ]] || grep -q 'aborted' "$dir/out"; then
		echo "bench.sh: pgbench failed for $row ($clients clients, run $run):" >&2
		cat "$dir/out" >&2
		grep -q 'argument "id" must not be' "$dir/out" \
			&& echo "bench.sh: the queue ran dry (claim_next returned NULL); shorten --duration" >&2
		exit 1
	fi
	# field 3 of a per-transaction log line is its latency in microseconds
	lat=$(cat "$dir"/tx.* | awk '{print $3 / 1000}' | median)
	printf '%s\t%s\t%s\t%s\t%s\n' "$row" "$clients" "$run" "$tps" "$lat" >>"$RES"
	rm -f "$dir"/tx.*
	say "$row  clients=$clients run=$run  tps=$tps  median=${lat}ms"
}

# A row measured outside pgbench (a single call timed in SQL): ms per call.
record() { printf '%s\t1\t%s\t%s\t%s\n' "$1" "$2" "$(awk -v m="$3" 'BEGIN {print 1000 / m}')" "$3" >>"$RES"; }

# after loading: write the dirty buffers out now rather than during a row
settle() { psql_ -c CHECKPOINT; }

# before a workload: leave autovacuum nothing of the previous one to do
quiesce() {
	echo "setup 0" >"$B/phase"
	vacuumdb -q -d bench
	settle
}

reset_queue() {
	psql_ -c "SELECT bench.load_queue('$1', $QUEUE)" -c "VACUUM ANALYZE $1.task" >/dev/null
	settle
}

# ---------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------
if wants cycle || wants renew; then
	psql_ -c "SELECT bench.load_ceiling($QUEUE)" -c 'VACUUM ANALYZE bench.ceiling' >/dev/null
	settle
fi

if wants cycle; then
	# cycle_sql.sql's statements on minimal.task (setup.sql)
	sed 's/worklist\.task /minimal.task /g' "$SCRIPTS/cycle_sql.sql" >"$B/cycle_minimal.sql"
	quiesce
	say "cycle: claim_next + complete over $QUEUE open tasks"
	for r in $(seq "$RUNS"); do
		for c in $CLIENTS; do
			bench ceiling "$c" "$r" ceiling.sql -D rows="$QUEUE"
			reset_queue worklist
			PGOPTIONS='-c worklist.tenant=cycle' bench cycle.worklist "$c" "$r" cycle_worklist.sql
			reset_queue floor
			PGOPTIONS='-c worklist.tenant=cycle' bench cycle.floor "$c" "$r" cycle_floor.sql
			# the same statements without the extension, and on a table
			# with only the primary key and the queue index
			reset_queue worklist
			bench cycle.sql "$c" "$r" cycle_sql.sql
			reset_queue minimal
			bench cycle.sql.minimal "$c" "$r" "$B/cycle_minimal.sql"
		done
	done
	# the cost of NOTIFY and of waiting for the WAL flush, at the most clients
	for r in $(seq "$RUNS"); do
		reset_queue worklist
		PGOPTIONS='-c worklist.tenant=cycle -c worklist.notify=on' \
			bench cycle.worklist.notify "$MAXC" "$r" cycle_worklist.sql
		reset_queue floor
		PGOPTIONS='-c worklist.tenant=cycle -c worklist.notify=on' \
			bench cycle.floor.notify "$MAXC" "$r" cycle_floor.sql
		# the floor as it runs when its statements keep their generic plans,
		# as the extension's do (by default PL/pgSQL plans them afresh)
		reset_queue floor
		PGOPTIONS='-c worklist.tenant=cycle -c plan_cache_mode=force_generic_plan' \
			bench cycle.floor.generic "$MAXC" "$r" cycle_floor.sql
		PGOPTIONS='-c synchronous_commit=on' \
			bench ceiling.sync "$MAXC" "$r" ceiling.sql -D rows="$QUEUE"
		reset_queue worklist
		PGOPTIONS='-c worklist.tenant=cycle -c synchronous_commit=on' \
			bench cycle.worklist.sync "$MAXC" "$r" cycle_worklist.sql
	done
fi

if wants race; then
	quiesce
	say "race: every client claims one of the same 10 tasks"
	psql_ -c 'SELECT bench.load_race()' >/dev/null
	for r in $(seq "$RUNS"); do
		for c in $CLIENTS; do
			for v in worklist floor; do
				before=$(val -c "SELECT last_value + (NOT is_called)::int - 1 FROM bench.conflicts_$v")
				PGOPTIONS='-c worklist.tenant=race' bench "race.$v" "$c" "$r" "race_$v.sql"
				after=$(val -c "SELECT last_value FROM bench.conflicts_$v")
				attempts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' \
					"$LOGS/race.$v.c$c.r$r/out")
				printf 'conflicts.%s\t%s\t%s\t%s\n' "$v" "$c" "$r" \
					"$(awk -v a="$attempts" -v n="$((after - before))" 'BEGIN {print (a ? 100 * n / a : 0)}')" \
					>>"$B/conflicts.tsv"
			done
		done
	done
fi

if wants checkpoint; then
	quiesce
	say "checkpoint: write_checkpoint fenced vs unfenced vs a raw upsert"
	# Claim runs r0 .. r(MAXC-1) in client order, so that client n's current
	# fence is base + n, and check that the fences did come out that way.
	base=$(val -c "SET worklist.tenant = 'bench'" -c "
		SELECT min(f) FROM (
			SELECT (worklist.claim_run('bench', 's', 'r' || i, 'h' || i, '1 day')).fence - i AS f
			  FROM generate_series(0, $MAXC - 1) i) s
		HAVING min(f) = max(f)")
	[[ -n $base ]] || { echo "bench.sh: the fences of the claimed runs are not consecutive" >&2; exit 1; }
	for r in $(seq "$RUNS"); do
		for c in $CLIENTS; do
			bench checkpoint.raw "$c" "$r" checkpoint_raw.sql
			PGOPTIONS='-c worklist.tenant=bench' bench checkpoint.unfenced "$c" "$r" checkpoint_unfenced.sql
			PGOPTIONS='-c worklist.tenant=bench' bench checkpoint.fenced "$c" "$r" checkpoint_fenced.sql -D base="$base"
		done
	done
fi

if wants renew; then
	quiesce
	say "renew: claim_run renewals by the holder"
	for r in $(seq "$RUNS"); do
		for c in $CLIENTS; do
			wants cycle || bench ceiling "$c" "$r" ceiling.sql -D rows="$QUEUE"
			PGOPTIONS='-c worklist.tenant=bench' bench renew "$c" "$r" renew.sql
		done
	done
fi

if wants sweep; then
	say "sweep: $DUE overdue tasks beside $SETTLED_SMALL settled ones, and beside $SETTLED_BIG"
	echo "setup 0" >"$B/phase"
	# two databases, so the two sizes can be timed turn about
	psql_ -d postgres -c 'CREATE DATABASE bench_big'
	psql_ -d bench_big -c 'CREATE EXTENSION worklist' -f "$HERE/setup.sql" >/dev/null
	psql_ -c 'TRUNCATE worklist.task' -c "SELECT bench.load_sweep($SETTLED_SMALL, $DUE)" \
		-c 'VACUUM ANALYZE worklist.task' >/dev/null
	psql_ -d bench_big -c "SELECT bench.load_sweep($SETTLED_BIG, $DUE)" \
		-c 'VACUUM ANALYZE worklist.task' >/dev/null
	settle
	for r in $(seq "$SWEEP_REPS"); do
		for size in small big; do
			db=bench
			[[ $size == big ]] && db=bench_big
			echo "sweep.$size 1" >"$B/phase"
			# put the due tasks back and vacuum, warm the session up with a
			# sweep that finds nothing due, then time one that must expire
			# every due task
			ms=$(psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" <<-SQL
				SET worklist.tenant = 'sweep';
				SELECT bench.reopen_due() \g /dev/null
				VACUUM worklist.task;
				SELECT worklist.sweep(now() - interval '1 day', $DUE) \g /dev/null
				SELECT clock_timestamp() AS t0 \gset
				SELECT denied AS n FROM worklist.sweep(now(), $DUE) \gset
				SELECT CASE WHEN :n <> $DUE THEN 1 / 0 END \g /dev/null
				SELECT extract(epoch FROM clock_timestamp() - :'t0') * 1000;
			SQL
			) || { echo "bench.sh: sweep failed" >&2; exit 1; }
			record "sweep.$size" "$r" "$ms"
			say "sweep.$size  run=$r  ${ms}ms"
		done
	done
fi

if wants listing; then
	quiesce
	say "listing: loading $RUNS_N runs"
	echo "setup 0" >"$B/phase"
	# the data of test/bench/runs_listing.sh
	psql_ <<-SQL
		SET worklist.tenant = 'list';
		SELECT count(worklist.write_checkpoint('p' || (i % 10), 's' || (i % 7), 'r' || lpad(i::text, 7, '0'),
		                                       'c1', '{"step": 1}',
		                                       run_created_at => '2024-01-01'::timestamptz + (i % 86400) * interval '1 s'))
		  FROM generate_series(1, $RUNS_N) i;
		SELECT count((worklist.claim_run('p' || (i % 10), 's' || (i % 7), 'r' || lpad(i::text, 7, '0'), 'w', '1 day')).fence)
		  FROM generate_series(1, $RUNS_N, 10) i;
		VACUUM ANALYZE worklist.run;
		VACUUM ANALYZE worklist.run_claim;
	SQL
	settle
	# the cursor of the page 90% deep
	cursor=$(val <<-SQL
		SET worklist.tenant = 'list';
		DO \$\$
		DECLARE
			pg worklist.durable_run_page;
			seen int := 0;
			cur text;
		BEGIN
			WHILE seen < $RUNS_N * 9 / 10 LOOP
				pg := worklist.list_durable_runs(lim => least(1000, $RUNS_N * 9 / 10 - seen), cursor => cur);
				seen := seen + cardinality(pg.entries);
				cur := pg.cursor;
			END LOOP;
			PERFORM set_config('bench.cursor', cur, false);
		END
		\$\$;
		SELECT current_setting('bench.cursor');
	SQL
	)
	for r in $(seq "$RUNS"); do
		for c in $CLIENTS; do
			PGOPTIONS='-c worklist.tenant=list' bench listing.first "$c" "$r" list_first.sql
			PGOPTIONS='-c worklist.tenant=list' bench listing.deep "$c" "$r" list_deep.sql -D cursor="$cursor"
		done
	done
fi

if wants tickets; then
	quiesce
	say "tickets: loading $TICKETS tickets with 10 events and $TICKETS with 1000"
	echo "setup 0" >"$B/phase"
	# events by four actors, one millisecond apart, ending a day ago
	psql_ <<-SQL
		SET worklist.tenant = 'tix';
		SELECT count(*) FROM (
			SELECT worklist.open_ticket(g || i, 'req', 'benchmark ticket', authorities => '{lead}',
			                            open_deadline => now() + interval '30 days')
			  FROM unnest('{small,big}'::text[]) g, generate_series(1, $TICKETS) i) s;
		SELECT count(worklist.report(g || i, 'a' || (e % 4),
		                             (ARRAY['acknowledged', 'working', 'blocked', 'working']::worklist.participation[])[1 + e % 4],
		                             at => now() - interval '1 day' - (n - e) * interval '1 ms'))
		  FROM (VALUES ('small', 10), ('big', 1000)) v(g, n), generate_series(1, $TICKETS) i,
		       generate_series(1, n) e;
		VACUUM ANALYZE worklist.ticket;
		VACUUM ANALYZE worklist.ticket_event;
	SQL
	settle
	for r in $(seq "$RUNS"); do
		for c in $CLIENTS; do
			for g in small big; do
				PGOPTIONS='-c worklist.tenant=tix' bench "report.$g" "$c" "$r" report.sql \
					-D grp=$g -D per_client=$((TICKETS / 8))
				PGOPTIONS='-c worklist.tenant=tix' bench "ticket_state.$g" "$c" "$r" ticket_state.sql \
					-D grp=$g -D per_client=$((TICKETS / 8))
			done
		done
	done
fi

echo "done 0" >"$B/phase"
kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null || true
SAMPLER=

# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------
touch "$B/conflicts.tsv"
psql_ -d postgres -v quick="$QUICK" <<-SQL
	CREATE TEMP TABLE res (row text, clients int, run int, tps float8, lat float8);
	\copy res FROM '$RES'
	CREATE TEMP TABLE conflicts (row text, clients int, run int, pct float8);
	\copy conflicts FROM '$B/conflicts.tsv'
	CREATE TEMP TABLE mem (phase text, clients int, rss bigint, anon bigint);
	\copy mem FROM '$B/memory.tsv'
	CREATE TEMP VIEW med AS
		SELECT row, clients, count(*) AS runs,
		       percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) AS tps,
		       percentile_cont(0.5) WITHIN GROUP (ORDER BY lat) AS lat
		  FROM res GROUP BY row, clients;
	\pset footer off
	\pset null ''

	\echo
	\echo 'Throughput (transactions per second; a cycle is claim_next + complete) and'
	\echo 'median latency in ms, medians over the runs; peak memory of one client backend'
	\echo '(RSS counts the shared buffers it touched; anon is its private memory).'
	SELECT m.row AS "row", m.clients AS "clients", m.runs AS "runs",
	       round(m.tps::numeric, CASE WHEN m.tps < 100 THEN 1 ELSE 0 END) AS "tps",
	       round(m.lat::numeric, 3) AS "median ms",
	       (SELECT string_agg(round(r.tps::numeric, CASE WHEN r.tps < 100 THEN 1 ELSE 0 END)::text, ' ' ORDER BY r.run)
	          FROM res r WHERE r.row = m.row AND r.clients = m.clients) AS "tps of each run",
	       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY c.pct)::numeric, 1)
	          FROM conflicts c
	         WHERE c.row = 'conflicts' || substr(m.row, 5) AND c.clients = m.clients
	           AND m.row LIKE 'race.%') AS "WL005 %",
	       (SELECT round(max(x.rss) / 1024.0) FROM mem x WHERE x.phase = m.row AND x.clients = m.clients) AS "peak RSS MB",
	       (SELECT round(max(x.anon) / 1024.0, 1) FROM mem x WHERE x.phase = m.row AND x.clients = m.clients) AS "anon MB"
	  FROM med m
	 ORDER BY array_position(ARRAY['ceiling', 'ceiling.sync', 'cycle.worklist', 'cycle.floor',
	                               'cycle.sql', 'cycle.sql.minimal',
	                               'cycle.floor.generic', 'cycle.worklist.notify', 'cycle.floor.notify',
	                               'cycle.worklist.sync',
	                               'race.worklist', 'race.floor', 'checkpoint.raw',
	                               'checkpoint.unfenced', 'checkpoint.fenced', 'renew',
	                               'sweep.small', 'sweep.big', 'listing.first', 'listing.deep',
	                               'report.small', 'report.big', 'ticket_state.small',
	                               'ticket_state.big'], m.row), m.clients;

	-- ratios: (what, numerator row, denominator row, by tps or by latency,
	--          target, the clients the target is judged at (NULL: every))
	CREATE TEMP TABLE ratio_def (what text, num text, den text, by text, op text,
	                             target float8, judged_at int, ord serial);
	INSERT INTO ratio_def (what, num, den, by, op, target, judged_at) VALUES
		('cycle / ceiling', 'cycle.worklist', 'ceiling', 'tps', '>=', 0.45, $MAXC),
		('cycle / floor', 'cycle.worklist', 'cycle.floor', 'tps', '>=', 1.5, $MAXC),
		('statements alone / ceiling', 'cycle.sql', 'ceiling', 'tps', NULL, NULL, NULL),
		('statements alone, two indexes / ceiling', 'cycle.sql.minimal', 'ceiling', 'tps', NULL, NULL, NULL),
		('cycle / statements alone', 'cycle.worklist', 'cycle.sql', 'tps', NULL, NULL, NULL),
		('cycle / floor with generic plans', 'cycle.worklist', 'cycle.floor.generic', 'tps', NULL, NULL, NULL),
		('cycle with notify / without', 'cycle.worklist.notify', 'cycle.worklist', 'tps', NULL, NULL, NULL),
		('floor with notify / without', 'cycle.floor.notify', 'cycle.floor', 'tps', NULL, NULL, NULL),
		('cycle / ceiling, synchronous_commit on', 'cycle.worklist.sync', 'ceiling.sync', 'tps', NULL, NULL, NULL),
		('race / floor race', 'race.worklist', 'race.floor', 'tps', NULL, NULL, NULL),
		('fenced / unfenced write', 'checkpoint.fenced', 'checkpoint.unfenced', 'tps', '>=', 0.9, NULL),
		('unfenced write / raw upsert', 'checkpoint.unfenced', 'checkpoint.raw', 'tps', NULL, NULL, NULL),
		('claim_run renewal / ceiling', 'renew', 'ceiling', 'tps', NULL, NULL, NULL),
		('sweep time, $SETTLED_BIG / $SETTLED_SMALL settled', 'sweep.big', 'sweep.small', 'lat', '<=', 1.3, NULL),
		('page 90% deep / first page, time', 'listing.deep', 'listing.first', 'lat', '<=', 1.5, NULL),
		('report time, 1000 / 10 events', 'report.big', 'report.small', 'lat', '<=', 2.0, NULL),
		('ticket_state time, 1000 / 10 events', 'ticket_state.big', 'ticket_state.small', 'lat', NULL, NULL, NULL);
	\echo
	\echo 'Ratios, each of two rows measured in this run.  Throughput ratios (higher is'
	\echo 'better) are judged on tps; time ratios (lower is better) on median latency.'
	\echo 'The other column is the same ratio from the other measure: on a busy machine'
	\echo 'a client that is not scheduled lowers tps but hardly moves the median.'
	CREATE TEMP VIEW ratio AS
		SELECT d.*, n.clients,
		       CASE d.by WHEN 'tps' THEN n.tps / dn.tps ELSE n.lat / dn.lat END AS v,
		       CASE d.by WHEN 'tps' THEN dn.lat / n.lat ELSE dn.tps / n.tps END AS other
		  FROM ratio_def d
		  JOIN med n ON n.row = d.num
		  JOIN med dn ON dn.row = d.den AND dn.clients = n.clients;
	SELECT what AS "ratio", clients AS "clients", round(v::numeric, 2) AS "value",
	       round(other::numeric, 2) AS "from the other measure",
	       CASE WHEN op IS NOT NULL AND (judged_at IS NULL OR judged_at = clients)
	            THEN op || ' ' || target END AS "target",
	       CASE WHEN op IS NULL OR (judged_at IS NOT NULL AND judged_at <> clients) THEN ''
	            WHEN (op = '>=' AND v >= target) OR (op = '<=' AND v <= target) THEN 'met'
	            ELSE 'MISSED' END AS "verdict"
	  FROM ratio
	 ORDER BY ord, clients;
SQL

cat <<-EOF

Settings (every row): $(printf '%s; ' "${SETTINGS[@]}")fsync on.
PostgreSQL: $(val -c 'SHOW server_version'); machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) memory.
Rows: $DURATION s per pgbench run, $RUNS run(s) per row, pgbench -M prepared, clients: $CLIENTS.
Queue $QUEUE open tasks (reloaded before every cycle run; ceiling on $QUEUE rows);
race: 10 tasks; checkpoint: one run per client, 20 checkpoint ids; listing: $RUNS_N runs;
tickets: $TICKETS per group, report rolled back so every log keeps its length;
sweep: $DUE overdue beside $SETTLED_SMALL / $SETTLED_BIG settled (two databases), $SWEEP_REPS timed sweeps each, after a VACUUM.
Rows ending in .notify ran with worklist.notify = on, .sync with synchronous_commit = on,
.generic with plan_cache_mode = force_generic_plan.
EOF
