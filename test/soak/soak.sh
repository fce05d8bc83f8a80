#!/usr/bin/env bash
#
# soak.sh -- load soak of the worklist extension, with an audit.
#
# Creates a throwaway cluster of its own (data directory under a mktemp
# directory, its own socket and port, the library preloaded, the sweeper
# working in the soak database every 500 ms), installs the harness of
# test/soak/setup.sql, and runs 8 pgbench clients for WL_SOAK_SECONDS
# (default 20) in two tenants: five task workers (tasks.pgbench) open,
# claim, complete, release, take over and escalate tasks and let them
# expire under the sweeper; three run workers (runs.pgbench) claim runs
# with 250 ms leases and write fenced checkpoints while the leases expire
# under them.  The wrappers record the refusals the reference allows;
# anything else aborts a client and fails the soak.  Afterwards it waits
# for every task to fall due, decides what the policies escalated, and
# runs soak.audit() (see setup.sql): nothing lost, every task settled
# exactly once by one decider or one policy, nothing left overdue, the
# policies on time, no fence issued twice, no checkpoint written under a
# superseded fence, and the counters of stats() equal to the audit.  The
# soak exits non-zero when a check fails.
#
#   bash test/soak/soak.sh                    (as the postgres user, with
#                                              the server binaries on PATH)
#   WL_SOAK_SECONDS=600 ./run test soak       longer, through ./run
#
# Environment: WL_SOAK_SECONDS (duration), WL_SOAK_CLIENTS (default 8),
# WL_SOAK_KEEP=1 (keep the cluster's directory and log).
#
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DURATION=${WL_SOAK_SECONDS:-20}
CLIENTS=${WL_SOAK_CLIENTS:-8}
INTERVAL_MS=500

if [[ $EUID -eq 0 ]]; then
	exec runuser -u postgres -- env PATH="$PATH" WL_SOAK_SECONDS="$DURATION" \
		WL_SOAK_CLIENTS="$CLIENTS" WL_SOAK_KEEP="${WL_SOAK_KEEP:-}" bash "$0" "$@"
fi

PGBIN=$(pg_config --bindir 2>/dev/null || dirname "$(command -v postgres)")
[[ -x $PGBIN/postgres && -x $PGBIN/pgbench ]] || { echo "soak: no server binaries on PATH" >&2; exit 2; }

WORK=$(mktemp -d /tmp/worklist-soak.XXXXXX)
DATA=$WORK/data
LOG=$WORK/server.log
UP=0

say() { printf 'soak: %s\n' "$*"; }

cleanup() {
	local rc=$?
	((UP)) && "$PGBIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
	if ((rc != 0)); then
		[[ -f $LOG ]] && { echo "---- last lines of $LOG"; tail -n 40 "$LOG"; }
		WL_SOAK_KEEP=1
	fi
	if [[ -n ${WL_SOAK_KEEP:-} ]]; then
		say "kept $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PORT=$(shuf -i 20000-60000 -n 1)
"$PGBIN/initdb" -D "$DATA" -A trust -U postgres --no-sync -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1 \
	|| { cat "$WORK/initdb.log"; exit 2; }
cat >>"$DATA/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$WORK'
shared_preload_libraries = 'worklist'
worklist.database = 'soak'
worklist.sweep_interval = $INTERVAL_MS
worklist.sweep_batch = 100
track_commit_timestamp = on
max_connections = 30
fsync = off
autovacuum_naptime = 2s
log_line_prefix = '%m [%p] %q%a '
EOF
# The database exists before the server starts, so the sweeper finds it at once.
echo 'CREATE DATABASE soak' | "$PGBIN/postgres" --single -D "$DATA" postgres >"$WORK/single.log" 2>&1 \
	|| { cat "$WORK/single.log"; exit 2; }
"$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -w start >/dev/null || { cat "$LOG"; exit 2; }
UP=1
export PGHOST=$WORK PGPORT=$PORT PGUSER=postgres PGDATABASE=soak

psql() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

psql -f "$HERE/setup.sql" >/dev/null
say "cluster on port $PORT; $CLIENTS clients for ${DURATION}s, sweeper every ${INTERVAL_MS} ms"

# The monitor samples the most overdue task while the load runs.
psql -c "CALL soak.monitor($DURATION)" &
MONITOR=$!

# Task workers and run workers, side by side.
RUN_CLIENTS=$((CLIENTS * 3 / 8))
((RUN_CLIENTS >= 1)) || RUN_CLIENTS=1
TASK_CLIENTS=$((CLIENTS - RUN_CLIENTS))
((TASK_CLIENTS >= 1)) || TASK_CLIENTS=1
"$PGBIN/pgbench" -n -c "$TASK_CLIENTS" -j 1 -T "$DURATION" -f "$HERE/tasks.pgbench" soak \
	>"$WORK/pgbench-tasks.log" 2>&1 &
TASKS=$!
"$PGBIN/pgbench" -n -c "$RUN_CLIENTS" -j 1 -T "$DURATION" -f "$HERE/runs.pgbench" soak \
	>"$WORK/pgbench-runs.log" 2>&1 &
RUNS=$!
failed=0
for job in "$TASKS:tasks" "$RUNS:runs"; do
	rc=0
	wait "${job%%:*}" || rc=$?
	log=$WORK/pgbench-${job#*:}.log
	say "${job#*:}: $(grep -E '^number of clients' "$log" | tr -d '\n'), $(grep -E '^number of transactions actually' "$log"), $(grep -E '^tps' "$log" | sed 's/ (.*//')"
	if ((rc != 0)) || grep -q 'aborted' "$log"; then
		grep -E 'error|ERROR|aborted' "$log" | head -n 20
		say "pgbench (${job#*:}) failed with exit $rc: a call ended in an error the reference does not allow"
		failed=1
	fi
done
wait "$MONITOR"
((failed == 0)) || exit 1

# Let every task fall due and the sweeper apply its policy, then decide
# the escalated ones.
psql -c "SELECT pg_sleep(extract(epoch FROM max(due_at) - clock_timestamp()) + 3 * $INTERVAL_MS / 1000.0)
           FROM worklist.task" >/dev/null
psql -At -c "SELECT 'decided ' || soak.drain() || ' escalated tasks'" | sed 's/^/soak: /'

say "what the calls came to:"
psql -At -F ': ' -c "SELECT verb, string_agg(result || ' ' || n, ', ' ORDER BY n DESC)
                       FROM (SELECT verb, result, count(*) n FROM soak.outcome GROUP BY 1, 2) x
                      GROUP BY verb ORDER BY verb" | sed 's/^/    /'
psql -c "CREATE TABLE soak.result AS SELECT * FROM soak.audit(1, true)"
psql -c "SELECT CASE WHEN ok THEN 'ok' ELSE 'FAILED' END AS \" \", check_name, detail FROM soak.result" \
	| sed 's/^/    /'
failed=$(psql -At -c "SELECT count(*) FROM soak.result WHERE NOT ok")
if ((failed > 0)); then
	say "$failed audit checks failed"
	exit 1
fi
say "audit passed"
