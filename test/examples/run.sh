#!/usr/bin/env bash
#
# run.sh -- the worker and agent examples of examples/node and
# examples/python, written on the client packages of clients/node and
# clients/python, against a running server, through two restarts of it.
#
# In a database of its own (worklist_examples) with a tenant bound to a
# login role of its own (kind service), it runs two node and two python
# workers on one queue of 200 tasks (opened with a claim_timeout), and one
# agent of each language on a run of 100 steps.  The workers take 100 ms
# per task, so that at any moment each is most likely in the middle of a
# claim.  Midway it restarts the server with pg_ctl -m fast, then again
# with -m immediate (a crash), both while the workers are busy and the
# agents too, and opens more tasks once the workers have reconnected.
# Then it makes one agent's lease lapse so that another agent takes the
# run over, stops workers in the middle of a claim, and kills two others
# (SIGKILL) in the middle of one, whose tasks come back once their claim
# timeout has passed.  It kills a reviewer's connection after its review
# returned and before its completion committed (the test holds the task's
# row lock, so that the completion waits, and terminates the reviewer's
# backend meanwhile).  Finally it checks, in SQL and in what the programs
# logged:
#   - every task is completed, with decided_by, and none is pending;
#   - each completion was logged by exactly one worker, the one the task
#     names in decided_by, and no worker saw a task settled by another;
#   - every task a worker claimed (or found it held), that worker
#     completed or released;
#   - claims held at each restart were recovered after the reconnect,
#     through worklist.held(), and completed by the worker that held them;
#   - every worker did some of the work, reconnected after each restart,
#     and was woken by a notification after its last reconnect;
#   - each run has every checkpoint from 1 to its last step, the fences of
#     its checkpoints never go down, and the fences each agent was handed
#     went up at every claim;
#   - the agent whose lease was taken over was refused with WL007 and gave
#     up (exit 75) while the other finished the run from its checkpoint;
#   - a worker stopped during a claim gave the task back, and another
#     completed it; every worker stopped cleanly (exit 0) on SIGTERM;
#   - the claims of the killed workers were released by the sweep once
#     their timeout had passed, and other workers completed the tasks;
#   - the reviewer whose connection was killed between its decision and
#     the commit completed the task exactly once, with that decision, and
#     its review ran exactly once (the worker counts its handler's calls):
#     after the reconnect held() named the task, and the worker sent the
#     decision it had instead of reviewing again;
#   - a login with no binding of the tenant is refused (42501) and the
#     programs exit 78.
#   - the line counts examples/README.md gives are the files' (wc -l), and
#     each program is shorter than it was before the client packages.
# It exits non-zero when a check fails, keeping the logs.
#
#   bash test/examples/run.sh
#
# Environment: PGHOST, PGPORT and PGUSER (a superuser) of the server;
# WL_PG_CTL, the command that controls it (pg_ctl with its -D and -l;
# ./run sets it), or PGDATA to use plain pg_ctl; PYTHON (default
# /usr/bin/python3, the one python3-psycopg2 is installed for);
# WL_EXAMPLES_KEEP=1 keeps the logs and the database.
#
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
EX=$(cd "$HERE/../../examples" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
DB=worklist_examples
TENANT=examples
REFUND_TENANT=examples-refunds
ROLE=wl_example_worker
STRANGER=wl_example_stranger
TASKS_BEFORE=120 TASKS_DURING=60 TASKS_AFTER=20
AGENT_STEPS=100

say() { printf 'examples: %s\n' "$*"; }
die() { printf 'examples: %s\n' "$*" >&2; exit 2; }

if [[ -n ${WL_PG_CTL:-} ]]; then
	read -r -a PG_CTL <<<"$WL_PG_CTL"
elif [[ -n ${PGDATA:-} ]]; then
	PG_CTL=(pg_ctl -D "$PGDATA" -l "$PGDATA/examples-restart.log")
else
	die "set WL_PG_CTL (the pg_ctl command of the server) or PGDATA: the test restarts the server"
fi
command -v node >/dev/null || die "no node (apt-get install nodejs)"
command -v npm >/dev/null || die "no npm (apt-get install npm)"
"$PYTHON" -c 'import psycopg2' 2>/dev/null || die "$PYTHON cannot import psycopg2 (apt-get install python3-psycopg2)"

OUT=$(mktemp -d /tmp/worklist-examples.XXXXXX)
PIDS=()
PASSED=0
FAILED=0
T0=$SECONDS

cleanup() {
	local rc=$? pid
	for pid in "${PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	if ((rc == 0 && FAILED == 0)) && [[ -z ${WL_EXAMPLES_KEEP:-} ]]; then
		psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
			-c "DROP ROLE IF EXISTS $ROLE" -c "DROP ROLE IF EXISTS $STRANGER" >/dev/null 2>&1 || true
		rm -rf "$OUT"
	else
		for f in "$OUT"/*.log; do
			[[ -e $f ]] || continue
			echo "---- last lines of $f"
			tail -n 15 "$f"
		done
		say "logs kept in $OUT"
	fi
	exit "$rc"
}
trap cleanup EXIT

# SQL as the superuser, in the test's tenant
q() { PGOPTIONS="-c worklist.tenant=$TENANT" psql -X -At -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

check() {
	local what=$1 ok=$2
	if [[ $ok == yes ]]; then
		PASSED=$((PASSED + 1))
		printf '    ok    %s\n' "$what"
	else
		FAILED=$((FAILED + 1))
		printf '    FAIL  %s\n' "$what"
	fi
}

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
	if [[ $2 == "$3" ]]; then
		check "$1" yes
	else
		check "$1 (expected $2, got $3)" no
	fi
}

# wait_until SECONDS WHAT COMMAND...: poll until COMMAND succeeds
wait_until() {
	local limit=$1 what=$2 deadline=$((SECONDS + $1))
	shift 2
	until "$@"; do
		((SECONDS < deadline)) || die "timed out after ${limit}s waiting for $what"
		sleep 0.1
	done
}

# start NAME COMMAND...: a program in the background, as the worker login
start() {
	local name=$1
	shift
	PGUSER=$ROLE PGDATABASE=$DB WORKLIST_TENANT=$TENANT PGOPTIONS= \
		"$@" >"$OUT/$name.log" 2>&1 &
	PIDS+=($!)
	eval "PID_${name//-/_}=$!"
}
pid_of() { local v="PID_${1//-/_}"; echo "${!v}"; }
node_worker() { start "$1" node "$EX/node/worker.js" --actor "$1" "${@:2}"; }
py_worker() { start "$1" env PYTHONPATH="$PYLIB" "$PYTHON" "$EX/python/worker.py" --actor "$1" "${@:2}"; }
node_agent() { start "$1" node "$EX/node/agent.js" --holder "$1" "${@:2}"; }
py_agent() { start "$1" env PYTHONPATH="$PYLIB" "$PYTHON" "$EX/python/agent.py" --holder "$1" "${@:2}"; }

# exit_status NAME SECONDS: wait for a program to end and set RC to its
# exit status, or to "running" (and kill it) when it did not end in time.
# Not to be called in a $(...) subshell, which cannot wait for it.
exit_status() {
	local pid deadline=$((SECONDS + $2))
	pid=$(pid_of "$1")
	RC=0
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			kill -KILL "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			RC=running
			return
		fi
		sleep 0.1
	done
	wait "$pid" || RC=$?
}
# check_exit NAME SECONDS EXPECTED WHAT
check_exit() {
	exit_status "$1" "$2"
	check_eq "$4" "$3" "$RC"
}
stop() { kill -TERM "$(pid_of "$1")" 2>/dev/null || true; }

logged() { grep -c -E "^$1 $2" "$OUT/$1.log" || true; }
has_logged() { grep -q -E "^$1 $2" "$OUT/$1.log"; }
completed() { q -c "SELECT count(*) FROM worklist.task WHERE tenant = '$TENANT' AND state = 'completed'"; }
completed_at_least() { (($(completed) >= $1)); }
sweeper_up() { [[ $(q -c "SELECT count(*) FROM worklist.sweeper_status WHERE pid IS NOT NULL" 2>/dev/null) == 1 ]]; }
# open_tasks PREFIX FROM TO [ROLE [CLAIM_TIMEOUT]]: a claim held longer
# than the timeout (default 1 minute, far above a review and a reconnect)
# is released by the sweep
open_tasks() {
	q -c "SELECT count(worklist.open_task(format('%s-%s', '$1', lpad(i::text, 4, '0')), 'case-' || i % 7,
		'{${4:-reviewer}}', payload => jsonb_build_object('amount', i * 37 % 2000),
		claim_timeout => '${5:-1 minute}'))
		FROM generate_series($2, $3) i" >/dev/null
}
# lines LOG: how many lines a program has logged so far
lines() { wc -l <"$OUT/$1.log"; }
# recovered_since NAME...: the tasks the workers named recovered through
# held() after the log lines counted in SINCE_<name>
recovered_since() {
	local w v n=0
	for w in "$@"; do
		v="SINCE_${w//-/_}"
		n=$((n + $(tail -n +$((${!v} + 1)) "$OUT/$w.log" | grep -c -E "^$w recovered " || true)))
	done
	echo "$n"
}
mark() { local w; for w in "$@"; do eval "SINCE_${w//-/_}=$(lines "$w")"; done; }
restart() {
	local mode=$1
	"${PG_CTL[@]}" -m "$mode" -w restart >/dev/null || die "the server did not restart"
	wait_until 30 "the sweeper after the restart" sweeper_up
}

# ---------------------------------------------------------------------------
say "installing the client packages: clients/node with pg (npm ci), clients/python (pip)"
(cd "$EX/node" && npm ci --no-audit --no-fund --loglevel=error >"$OUT/npm.log" 2>&1) \
	|| { cat "$OUT/npm.log"; die "npm ci failed"; }
PYLIB=$OUT/pylib
"$PYTHON" -m pip install --quiet --no-build-isolation --no-deps --no-index --target "$PYLIB" \
	"$EX/../clients/python" >"$OUT/pip.log" 2>&1 \
	|| { cat "$OUT/pip.log"; die "pip install of clients/python failed"; }

say "database $DB, tenant $TENANT bound to $ROLE (service); $STRANGER bound to nothing"
psql -X -q -v ON_ERROR_STOP=1 -d postgres >/dev/null <<-EOF
	SET client_min_messages = warning;
	DROP DATABASE IF EXISTS $DB WITH (FORCE);
	DROP ROLE IF EXISTS $ROLE;
	DROP ROLE IF EXISTS $STRANGER;
	CREATE ROLE $ROLE LOGIN;
	CREATE ROLE $STRANGER LOGIN;
	CREATE DATABASE $DB;
EOF
q >/dev/null <<-EOF
	CREATE EXTENSION worklist;
	SELECT worklist.grant_tenant('$TENANT', '$ROLE', 'service');
	SELECT worklist.grant_tenant('$REFUND_TENANT', '$ROLE', 'service');
EOF
wait_until 30 "the sweeper of $DB" sweeper_up

# ---------------------------------------------------------------------------
say "closed tenancy: a login without a binding"
ROLE=$STRANGER node_worker node-stranger
ROLE=$STRANGER py_worker py-stranger
for w in node-stranger py-stranger; do
	check_exit "$w" 20 78 "$w exits 78 (configuration error)"
	check "$w reports 42501" "$(grep -q '42501' "$OUT/$w.log" && echo yes || echo no)"
done

# ---------------------------------------------------------------------------
say "workers and agents through a fast restart and a crash"
WORKERS=(node-1 node-2 py-1 py-2)
open_tasks t 1 "$TASKS_BEFORE"
# 100 ms between claim and completion: a restart lands in the middle of
# claims, which the workers must find again through held()
for w in node-1 node-2; do node_worker "$w" --work-ms 100 --poll-seconds 5; done
for w in py-1 py-2; do py_worker "$w" --work-ms 100 --poll-seconds 5; done
AGENT_ARGS=(--steps "$AGENT_STEPS" --ttl-seconds 3 --step-ms 100)
node_agent node-agent "${AGENT_ARGS[@]}" demo restart run-node
py_agent py-agent "${AGENT_ARGS[@]}" demo restart run-py
open_tasks t $((TASKS_BEFORE + 1)) $((TASKS_BEFORE + TASKS_DURING))
TOTAL=$((TASKS_BEFORE + TASKS_DURING))

held_now() { q -c "SELECT count(*) FROM worklist.task WHERE tenant = '$TENANT' AND state = 'claimed'"; }

wait_until 20 "40 completed tasks" completed_at_least 40
mark "${WORKERS[@]}"
held_before=$(held_now)
done_before=$(completed)
restart fast
say "restarted (fast) with $done_before of $TOTAL tasks completed, $held_before claimed"
check "the fast restart came while tasks were pending" \
	"$( ((done_before < TOTAL)) && echo yes || echo no)"
check "the workers held claims just before the fast restart ($held_before)" \
	"$( ((held_before > 0)) && echo yes || echo no)"

wait_until 30 "$((done_before + 60)) completed tasks" completed_at_least $((done_before + 60))
RECOVERED_FAST=$(recovered_since "${WORKERS[@]}")
mark "${WORKERS[@]}"
agents_running=yes
for a in node-agent py-agent; do kill -0 "$(pid_of $a)" 2>/dev/null || agents_running=no; done
held_before=$(held_now)
done_before=$(completed)
restart immediate
say "restarted (immediate) at $((SECONDS - T0))s with $done_before of $TOTAL tasks completed, $held_before claimed"
check "the agents were still working at the crash" "$agents_running"
check "the crash came while tasks were pending" \
	"$( ((done_before < TOTAL)) && echo yes || echo no)"
check "the workers held claims just before the crash ($held_before)" \
	"$( ((held_before > 0)) && echo yes || echo no)"

# Each worker has connected three times (start and two restarts) and is
# listening again; then new tasks must wake it by notification.
listening_again() {
	local w
	for w in "${WORKERS[@]}"; do
		(($(logged "$w" 'listening$') >= 3)) || return 1
	done
}
wait_until 30 "the workers listening after the crash" listening_again
wait_until 30 "all $TOTAL tasks completed" completed_at_least "$TOTAL"
RECOVERED_CRASH=$(recovered_since "${WORKERS[@]}")
sleep 0.5
open_tasks u 1 "$TASKS_AFTER"
TOTAL=$((TOTAL + TASKS_AFTER))
wait_until 20 "all $TOTAL tasks completed" completed_at_least "$TOTAL"

for a in node-agent py-agent; do
	check_exit "$a" 40 0 "$a finishes its run (exit 0)"
done

# ---------------------------------------------------------------------------
say "a lease taken over, claims given back on SIGTERM, claims of killed workers timing out"
# Agent A's steps outlast its 1 s lease; B waits for the lease to lapse,
# claims the run and finishes it from A's last checkpoint.  A's next
# write carries a superseded fence: WL007.
node_agent node-A --steps 4 --ttl-seconds 1 --step-ms 2500 demo takeover run-1
py_agent py-A --steps 4 --ttl-seconds 1 --step-ms 2500 demo takeover run-2
# Each hold worker claims its task and is stopped in the middle of it.
open_tasks slow 1 1 hold-1
open_tasks slow 2 2 hold-2
node_worker node-hold --roles hold-1 --work-ms 60000
py_worker py-hold --roles hold-2 --work-ms 60000
# Each gone worker claims its task (with a claim timeout of 1 s) and is
# killed in the middle of it: a holder that never comes back.
open_tasks gone 1 1 hold-3 '1 second'
open_tasks gone 2 2 hold-4 '1 second'
node_worker node-gone --roles hold-3 --work-ms 60000
py_worker py-gone --roles hold-4 --work-ms 60000

wait_until 20 "node-A's first checkpoint" has_logged node-A 'checkpoint step-0001'
py_agent py-B --steps 4 --ttl-seconds 3 --step-ms 100 --wait-seconds 20 demo takeover run-1
wait_until 20 "py-A's first checkpoint" has_logged py-A 'checkpoint step-0001'
node_agent node-B --steps 4 --ttl-seconds 3 --step-ms 100 --wait-seconds 20 demo takeover run-2

wait_until 20 "the gone workers' claims" eval 'has_logged node-gone "claimed gone-0001" && has_logged py-gone "claimed gone-0002"'
for w in node-gone py-gone; do
	kill -KILL "$(pid_of $w)"
	wait "$(pid_of $w)" 2>/dev/null || true
done
wait_until 20 "the hold workers' claims" eval 'has_logged node-hold "claimed slow-0001" && has_logged py-hold "claimed slow-0002"'
stop node-hold
stop py-hold
for w in node-hold py-hold; do
	check_exit "$w" 10 0 "$w stops cleanly in the middle of a claim (exit 0)"
done
check_eq "the claims given back are open again" "open||open|" \
	"$(q -c "SELECT string_agg(state || '|' || coalesce(holder, ''), '|' ORDER BY id) FROM worklist.task WHERE tenant = '$TENANT' AND id LIKE 'slow-%'")"
# The sweeper releases claims past their timeout at every tick; this
# test's server ticks once an hour (worklist.sweep_interval), so the test
# runs the sweep itself once the timeouts have passed.
gone_state() { q -c "SELECT string_agg(state || '|' || coalesce(holder, ''), '|' ORDER BY id) FROM worklist.task WHERE tenant = '$TENANT' AND id LIKE 'gone-%'"; }
check_eq "the killed workers still hold their claims" "claimed|node-gone|claimed|py-gone" "$(gone_state)"
timed_out() { [[ $(q -c "SELECT count(*) FROM worklist.task WHERE tenant = '$TENANT' AND id LIKE 'gone-%' AND claim_expires_at <= now()") == 2 ]]; }
wait_until 10 "the gone claims' timeout" timed_out
check_eq "the sweep releases the claims past their timeout" 2 "$(q -c "SELECT claims_released FROM worklist.sweep()")"
check_eq "the timed-out claims are open again" "open||open|" "$(gone_state)"
py_worker py-finish --roles hold-1,hold-3
node_worker node-finish --roles hold-2,hold-4
wait_until 20 "the given-back and timed-out tasks completed" completed_at_least $((TOTAL + 4))
TOTAL=$((TOTAL + 4))

for a in node-A py-A; do
	check_exit "$a" 30 75 "$a gives up when its lease is taken over (exit 75)"
	check "$a was refused with WL007" "$(has_logged $a 'lease lost: stale fence \(WL007\)' && echo yes || echo no)"
done
for a in py-B node-B; do
	check_exit "$a" 30 0 "$a finishes the run it took over (exit 0)"
done

# ---------------------------------------------------------------------------
say "a reviewer's connection killed after its decision, before the commit"
# Each once worker reviews its task for 3 s.  Meanwhile the test takes the
# task's row lock, so that the completion waits on it; once it waits, the
# test terminates the worker's backend, then lets the lock go.  The
# completion was sent, so its decision is made, and it did not commit.
open_tasks once 1 1 once-1
open_tasks once 2 2 once-2
node_worker node-once --roles once-1 --work-ms 3000 --poll-seconds 1
py_worker py-once --roles once-2 --work-ms 3000 --poll-seconds 1
waiting_on_lock() {
	[[ $(q -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'worker $1' AND wait_event_type = 'Lock'") == 1 ]]
}
for w in node-once:once-0001 py-once:once-0002; do
	IFS=: read -r name task <<<"$w"
	wait_until 20 "$name's claim" has_logged "$name" "claimed $task"
	PGAPPNAME="lock $task" q -c "BEGIN; SELECT FROM worklist.task WHERE tenant = '$TENANT' AND id = '$task' FOR UPDATE; SELECT pg_sleep(60)" >/dev/null 2>&1 &
	PIDS+=($!)
done
for w in node-once:once-0001 py-once:once-0002; do
	IFS=: read -r name task <<<"$w"
	wait_until 20 "$name's completion waiting on the row lock" waiting_on_lock "$name"
	check_eq "$name: its backend terminated while its completion waits" t \
		"$(q -c "SELECT bool_and(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'worker $name'")"
	q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock $task'" >/dev/null
done
once_done() { [[ $(q -c "SELECT count(*) FROM worklist.task WHERE tenant = '$TENANT' AND id LIKE 'once-%' AND state = 'completed'") == 2 ]]; }
wait_until 30 "the once tasks completed" once_done
TOTAL=$((TOTAL + 2))
for w in node-once:once-0001 py-once:once-0002; do
	IFS=: read -r name task <<<"$w"
	stop "$name"
	check_exit "$name" 15 0 "$name stops cleanly (exit 0)"
	check_eq "$task completed once, by $name, with the decision made before the kill" \
		"completed|$name|{\"approved\": true}" \
		"$(q -c "SELECT state || '|' || decided_by || '|' || decision FROM worklist.task('$task')")"
	check_eq "$name: the review ran exactly once" 1 "$(logged "$name" 'handler calls 1$')"
	check_eq "$name: logged the completion of $task once" 1 "$(logged "$name" "completed $task$")"
	check "$name: reconnected, found $task through held() and resent its decision" \
		"$( (($(logged "$name" 'connected$') >= 2)) && has_logged "$name" "recovered $task$" \
			&& has_logged "$name" "resending $task$" && echo yes || echo no)"
done

# ---------------------------------------------------------------------------
say "stopping the workers (SIGTERM)"
for w in "${WORKERS[@]}" py-finish node-finish; do stop "$w"; done
for w in "${WORKERS[@]}" py-finish node-finish; do
	check_exit "$w" 15 0 "$w stops cleanly (exit 0)"
done

# ---------------------------------------------------------------------------
say "refund agents: runs parked on tasks, resumed when the tasks settle"
# A node and a python agent, polling only every 60 s: a run resumed within
# seconds of its task's completion was woken by a notification, not found
# by a poll.  In a tenant of their own.
qr() { PGOPTIONS="-c worklist.tenant=$REFUND_TENANT" psql -X -At -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
for i in 1 2 3 4; do
	qr -c "SELECT worklist.write_checkpoint('refunds', 's', 'refund-$i', 'start', '{\"amount\": ${i}00}')" >/dev/null
done
start node-refund env WORKLIST_TENANT="$REFUND_TENANT" node "$EX/node/refund.js" --holder node-refund --ttl-seconds 5 --poll-seconds 60 refunds
start py-refund env WORKLIST_TENANT="$REFUND_TENANT" PYTHONPATH="$PYLIB" "$PYTHON" "$EX/python/refund.py" --holder py-refund \
	--ttl-seconds 5 --poll-seconds 60 refunds
parked() { [[ $(qr -c "SELECT count(*) FROM worklist.task WHERE tenant = '$REFUND_TENANT' AND id LIKE 'approve-refund-%'") == 4 ]]; }
wait_until 70 "four refunds parked on their tasks" parked
check_eq "the refund runs are parked, outstanding" 4 \
	"$(qr -c "SELECT count(*) FROM pg_catalog.unnest((worklist.list_durable_runs('refunds', park => '{outstanding}')).entries)")"
for i in 1 2 3 4; do
	approved=$([[ $i == 3 ]] && echo false || echo true)
	qr -c "SELECT worklist.claim('approve-refund-$i', 'lead', '{finance}')" \
		-c "SELECT worklist.complete('approve-refund-$i', 'lead', '{\"approved\": $approved}')" >/dev/null
done
t=$SECONDS
concluded() { [[ $(qr -c "SELECT count(*) FROM pg_catalog.unnest((worklist.list_durable_runs('refunds', concluded => true)).entries)") == 4 ]]; }
wait_until 70 "the refund runs concluded" concluded
check "the refund runs resumed and concluded within 15 s of the decisions (woken, not polled: $((SECONDS - t))s)" \
	"$( ((SECONDS - t <= 15)) && echo yes || echo no)"
check_eq "each refund paid or refused as its task was decided" "paid paid refused paid" \
	"$(qr -c "SELECT string_agg(c.checkpoint_id, ' ' ORDER BY r) FROM pg_catalog.unnest(array['refund-1', 'refund-2', 'refund-3', 'refund-4']) r,
		LATERAL worklist.list_checkpoints('refunds', 's', r) c WHERE c.checkpoint_id IN ('paid', 'refused')")"
for a in node-refund py-refund; do
	stop "$a"
	check_exit "$a" 10 0 "$a stopped cleanly on SIGTERM"
done

say "checks"
pending=$(q -c "SELECT worklist.open_count()")
check_eq "no task is pending" 0 "$pending"
check_eq "every task is completed with decided_by" "$TOTAL" \
	"$(q -c "SELECT count(*) FROM worklist.task WHERE tenant = '$TENANT' AND state = 'completed' AND decided_by IS NOT NULL")"

# What the workers logged as completed, against the tasks' decided_by.
{
	echo "CREATE TEMP TABLE logged (actor text, id text);"
	echo "COPY logged FROM STDIN;"
	cat "$OUT"/*.log | sed -n -E 's/^([^ ]+) completed ([^ ]+)$/\1\t\2/p'
	echo '\.'
	echo "SELECT count(*) FROM logged;"
	echo "SELECT count(*) FROM (SELECT id FROM logged GROUP BY id HAVING count(*) > 1) s;"
	echo "SELECT count(*) FROM worklist.task t WHERE t.tenant = '$TENANT'
		AND NOT EXISTS (SELECT FROM logged l WHERE l.id = t.id AND l.actor = t.decided_by);"
	echo "CREATE TEMP TABLE recovered (actor text, id text);"
	echo "COPY recovered FROM STDIN;"
	cat "$OUT"/*.log | sed -n -E 's/^([^ ]+) recovered ([^ ]+)$/\1\t\2/p'
	echo '\.'
	echo "SELECT count(*) FROM recovered r
		WHERE NOT EXISTS (SELECT FROM worklist.task t WHERE t.id = r.id AND t.decided_by = r.actor);"
} | q >"$OUT/completions.txt"
mapfile -t c <"$OUT/completions.txt"
check_eq "completions logged by the workers" "$TOTAL" "${c[0]}"
check_eq "tasks logged as completed more than once" 0 "${c[1]}"
check_eq "tasks whose decided_by did not log their completion" 0 "${c[2]}"
check_eq "tasks recovered through held() but completed by another worker" 0 "${c[3]}"
# every (worker, task) that a worker claimed or recovered, that worker
# completed or released; the killed workers excepted
pairs() {
	cat "$OUT"/*.log | sed -n -E "s/^([^ ]+) ($1) ([a-z]+-[0-9]+)( .*)?$/\1 \3/p" \
		| grep -v -E '^[^ ]+-gone ' | sort -u
}
taken=$(pairs 'claimed|recovered')
check "tasks the workers claimed or recovered ($(wc -l <<<"$taken")), each completed or released by the same worker" \
	"$([[ $taken == "$(pairs 'completed|released')" ]] && echo yes || echo no)"
check_eq "tasks a worker found settled by somebody else" 0 "$(cat "$OUT"/*.log | grep -c -E '^[^ ]+ lost ' || true)"
check "claims held at the fast restart recovered through held() ($RECOVERED_FAST)" \
	"$( ((RECOVERED_FAST > 0)) && echo yes || echo no)"
check "claims held at the crash recovered through held() ($RECOVERED_CRASH)" \
	"$( ((RECOVERED_CRASH > 0)) && echo yes || echo no)"

for w in "${WORKERS[@]}"; do
	n=$(logged "$w" 'completed ')
	check "$w completed tasks ($n)" "$( ((n > 0)) && echo yes || echo no)"
	check "$w reconnected after each restart ($(logged "$w" 'connected$') connections)" \
		"$( (($(logged "$w" 'connected$') >= 3)) && echo yes || echo no)"
	woken=$(awk -v w="$w" '$1 == w && $2 == "listening" { n = 0 } $1 == w && $0 ~ /woken by notification$/ { n++ } END { print n + 0 }' "$OUT/$w.log")
	check "$w was woken by a notification after its last reconnect" "$( ((woken > 0)) && echo yes || echo no)"
done

# run_checks RUN STEPS: checkpoints 1..STEPS, fences never going down
run_checks() {
	q -c "SELECT count(*) = $2
			AND bool_and(checkpoint_id = format('step-%s', lpad(((body->>'step')::int)::text, 4, '0')))
			AND array_agg((body->>'step')::int ORDER BY (body->>'step')::int)
				= array(SELECT generate_series(1, $2))
			AND coalesce(bool_and(fence >= prev), true)
		FROM (SELECT checkpoint_id, body, (body->>'fence')::bigint AS fence,
				lag((body->>'fence')::bigint) OVER (ORDER BY (body->>'step')::int) AS prev
			FROM worklist.list_checkpoints('demo', '$1', '$3')) s"
}
# fences_rise AGENT: the fences an agent was handed rose at every claim
fences_rise() {
	sed -n -E "s/^$1 (claimed|renewed) fence=([0-9]+)$/\2/p" "$OUT/$1.log" \
		| awk 'NR > 1 && $1 <= prev { bad = 1 } { prev = $1; n++ } END { exit (bad || n == 0) }' \
		&& echo yes || echo no
}
for pair in node-agent:run-node py-agent:run-py; do
	a=${pair%%:*} r=${pair#*:}
	check "$r: checkpoints 1..$AGENT_STEPS present, fences never down" \
		"$([[ $(run_checks restart "$AGENT_STEPS" "$r") == t ]] && echo yes || echo no)"
	check "$a: fences rose at every claim" "$(fences_rise "$a")"
	check "$a reconnected after each restart" \
		"$( (($(logged "$a" 'connected$') >= 3)) && echo yes || echo no)"
done
for run in run-1:node-A:py-B run-2:py-A:node-B; do
	IFS=: read -r r a b <<<"$run"
	check "$r: checkpoints 1..4 present, fences never down" \
		"$([[ $(run_checks takeover 4 "$r") == t ]] && echo yes || echo no)"
	# A wrote the steps it logged, B resumed after them and wrote the rest
	k=$(logged "$a" 'checkpoint ')
	want=$(for i in 1 2 3 4; do if ((i <= k)); then echo "$a"; else echo "$b"; fi; done | paste -sd ' ')
	check_eq "$r: the first steps by $a (as many as it logged), the rest by $b" "$want" \
		"$(q -c "SELECT string_agg(body->>'holder', ' ' ORDER BY checkpoint_id) FROM worklist.list_checkpoints('demo', 'takeover', '$r')")"
	check "$r: $a wrote at least one step and $b took over before the end ($k)" \
		"$( ((k >= 1 && k < 4)) && echo yes || echo no)"
	check "$a, $b: fences rose at every claim" \
		"$([[ $(fences_rise "$a") == yes && $(fences_rise "$b") == yes ]] && echo yes || echo no)"
done
for w in node-hold:slow-0001:py-finish py-hold:slow-0002:node-finish; do
	IFS=: read -r h t f <<<"$w"
	check "$h gave $t back" "$(has_logged "$h" "released $t$" && echo yes || echo no)"
	check_eq "$t completed by $f" "$f" "$(q -c "SELECT decided_by FROM worklist.task('$t')")"
done
for t in gone-0001:py-finish gone-0002:node-finish; do
	check_eq "${t%%:*} (its holder killed) completed by ${t#*:}" "${t#*:}" \
		"$(q -c "SELECT decided_by FROM worklist.task('${t%%:*}')")"
done
check_eq "errors logged (but by the login without a binding)" 0 \
	"$(grep -h -E '^[^ ]+ (error|configuration error):' "$OUT"/*.log | grep -c -v -E '^[^ ]+-stranger ' || true)"

# The table of line counts in examples/README.md: each count under "now"
# is the file's (wc -l), each file is shorter than before, a file marked
# with a dash under "now" is gone.
COUNTED=0
while IFS='|' read -r _ file before now _; do
	file=$(echo "$file" | tr -d ' `') before=${before// /} now=${now// /}
	COUNTED=$((COUNTED + 1))
	if [[ $now == — ]]; then
		check "README: $file is gone" "$([[ ! -e $EX/$file ]] && echo yes || echo no)"
		continue
	fi
	check_eq "README: $file has $now lines" "$now" "$(wc -l 2>/dev/null <"$EX/$file" || echo none)"
	[[ $before == — ]] ||
		check "README: $file is shorter than before ($now < $before)" "$( ((now < before)) && echo yes || echo no)"
done < <(sed -n '/^## Line counts/,/^## /p' "$EX/README.md" | grep -E '^\| `(node|python)/')
check_eq "README: the line counts of the eight files" 8 "$COUNTED"

say "$((SECONDS - T0))s"
printf 'examples: %d passed, %d failed\n' "$PASSED" "$FAILED"
((FAILED == 0))
