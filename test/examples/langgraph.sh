#!/usr/bin/env bash
#
# langgraph.sh -- the approval graph of examples/langgraph (LangGraph on
# @worklist/langgraph: an interrupt as a worklist task), against a running
# server, through a restart of it.
#
# In a database of its own, tenant approvals is bound to an agent login
# (service) and to two people's logins (member), both in the role of the
# approvers.  A worker (approval.js worker, the agent login) waits for
# runs; the agent starts a payment requested by one person: the graph's
# interrupt opens a task for the approvers with the requester excluded, and
# the run is parked on it.  Then the server restarts (pg_ctl -m fast), and
# it checks:
#   - the task is open for the approvers, the requester excluded, the run
#     parked (outstanding) on it;
#   - the requester's claim is refused by the database (WL002), as is a
#     claim naming the other person (42501, member binding);
#   - the other person claims and completes it as itself; the worker,
#     still running after the restart, listening again and polling only
#     once a minute, is woken by the notification and resumes the graph
#     within seconds, which pays with that decision; the run is concluded;
#   - a second payment, whose task is overdue and settled by its expiry
#     policy (proceed) in the sweep, resumes the graph with the policy;
#   - the worker stops cleanly on SIGTERM and logged no error.
# It exits non-zero when a check fails, keeping the logs.
#
#   bash test/examples/langgraph.sh
#
# Environment: PGHOST, PGPORT and PGUSER (a superuser) of the server;
# WL_PG_CTL, the command that controls it (./run sets it), or PGDATA;
# WL_EXAMPLES_KEEP=1 keeps the logs and the database.
#
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
EX=$(cd "$HERE/../../examples/langgraph" && pwd)
DB=worklist_examples_langgraph
TENANT=approvals
AGENT=wl_lg_agent APPROVERS=wl_lg_approvers ALICE=wl_lg_alice BOB=wl_lg_bob

say() { printf 'examples/langgraph: %s\n' "$*"; }
die() { printf 'examples/langgraph: %s\n' "$*" >&2; exit 2; }

if [[ -n ${WL_PG_CTL:-} ]]; then
	read -r -a PG_CTL <<<"$WL_PG_CTL"
elif [[ -n ${PGDATA:-} ]]; then
	PG_CTL=(pg_ctl -D "$PGDATA" -l "$PGDATA/examples-restart.log")
else
	die "set WL_PG_CTL (the pg_ctl command of the server) or PGDATA: the test restarts the server"
fi
command -v node >/dev/null || die "no node (apt-get install nodejs)"
command -v npm >/dev/null || die "no npm (apt-get install npm)"

OUT=$(mktemp -d /tmp/worklist-examples-langgraph.XXXXXX)
WORKER_PID=
PASSED=0
FAILED=0

cleanup() {
	local rc=$?
	[[ -n $WORKER_PID ]] && kill -KILL "$WORKER_PID" 2>/dev/null
	if ((rc == 0 && FAILED == 0)) && [[ -z ${WL_EXAMPLES_KEEP:-} ]]; then
		psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
		for r in $AGENT $ALICE $BOB $APPROVERS; do psql -X -q -d postgres -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1 || true; done
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

check() {
	if [[ $2 == yes ]]; then
		PASSED=$((PASSED + 1))
		printf '    ok    %s\n' "$1"
	else
		FAILED=$((FAILED + 1))
		printf '    FAIL  %s\n' "$1"
	fi
}
check_eq() {
	if [[ $2 == "$3" ]]; then check "$1" yes; else check "$1 (expected $2, got $3)" no; fi
}
wait_until() {
	local limit=$1 what=$2 deadline=$((SECONDS + $1))
	shift 2
	until "$@"; do
		((SECONDS < deadline)) || die "timed out after ${limit}s waiting for $what"
		sleep 0.1
	done
}

# SQL in the tenant: as the superuser, or as a person's login (q_as LOGIN),
# errors reported by SQLSTATE alone
q() { PGOPTIONS="-c worklist.tenant=$TENANT" psql -X -At -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
q_as() { local who=$1; shift; PGUSER=$who q -v VERBOSITY=sqlstate "$@"; }
approval() { PGUSER=$AGENT PGDATABASE=$DB WORKLIST_TENANT=$TENANT PGOPTIONS= node "$EX/approval.js" "$@"; }
sweeper_up() { [[ $(q -c "SELECT count(*) FROM worklist.sweeper_status WHERE pid IS NOT NULL" 2>/dev/null) == 1 ]]; }
logged() { grep -q -F -- "$1" "$OUT/worker.log" 2>/dev/null; }

say "installing examples/langgraph (npm ci)"
(cd "$EX" && npm ci --no-audit --no-fund --loglevel=error >"$OUT/npm.log" 2>&1) \
	|| { cat "$OUT/npm.log"; die "npm ci failed"; }

say "database $DB: tenant $TENANT bound to $AGENT (service), $ALICE and $BOB (member), both in $APPROVERS"
psql -X -q -v ON_ERROR_STOP=1 -d postgres >/dev/null <<-EOF
	SET client_min_messages = warning;
	DROP DATABASE IF EXISTS $DB WITH (FORCE);
	DROP ROLE IF EXISTS $AGENT;
	DROP ROLE IF EXISTS $ALICE;
	DROP ROLE IF EXISTS $BOB;
	DROP ROLE IF EXISTS $APPROVERS;
	CREATE ROLE $APPROVERS;
	CREATE ROLE $AGENT LOGIN;
	CREATE ROLE $ALICE LOGIN IN ROLE $APPROVERS;
	CREATE ROLE $BOB LOGIN IN ROLE $APPROVERS;
	CREATE DATABASE $DB;
EOF
q >/dev/null <<-EOF
	CREATE EXTENSION worklist;
	SELECT worklist.grant_tenant('$TENANT', '$AGENT', 'service');
	SELECT worklist.grant_tenant('$TENANT', '$ALICE', 'member');
	SELECT worklist.grant_tenant('$TENANT', '$BOB', 'member');
EOF
wait_until 30 "the sweeper of $DB" sweeper_up

PGUSER=$AGENT PGDATABASE=$DB WORKLIST_TENANT=$TENANT PGOPTIONS= \
	node "$EX/approval.js" worker --holder lg-worker --poll-ms 60000 >"$OUT/worker.log" 2>&1 &
WORKER_PID=$!
wait_until 20 "the worker" logged 'lg-worker listening'

say "a payment of 120 requested by $ALICE: the graph asks the approvers"
rc=0
approval start pay-1 --holder lg-agent --requester "$ALICE" --amount 120 --approvers "$APPROVERS" >"$OUT/start-1.log" 2>&1 || rc=$?
check_eq "start exits 0 once the run is parked" 0 "$rc"
TASK=$(sed -n -E 's/^lg-agent parked pay-1 on ([^ ]+)$/\1/p' "$OUT/start-1.log")
check "the agent logged the task it parked the run on ($TASK)" "$([[ -n $TASK ]] && echo yes || echo no)"

"${PG_CTL[@]}" -m fast -w restart >/dev/null || die "the server did not restart"
wait_until 30 "the sweeper after the restart" sweeper_up
say "restarted (fast)"

check_eq "the task is open for the approvers, the requester excluded" "open|{$APPROVERS}|{$ALICE}|{\"amount\": 120, \"requester\": \"$ALICE\"}" \
	"$(q -c "SELECT state || '|' || roles::text || '|' || excluded::text || '|' || payload FROM worklist.task('$TASK')")"
check_eq "the run is parked, outstanding, on the task" "outstanding|{$TASK}" \
	"$(q -c "SELECT e.park_state || '|' || c.park_tasks::text FROM pg_catalog.unnest((worklist.list_durable_runs('approvals')).entries) e,
		LATERAL worklist.read_checkpoint(e.project, e.session, e.run, e.park_checkpoint_id) c WHERE e.run = 'pay-1'")"

say "the people decide, as themselves"
out=$(q_as "$ALICE" -c "SELECT worklist.claim('$TASK', '$ALICE', '{$APPROVERS}')" 2>&1 || true)
check_eq "the requester's claim is refused by the database (four-eyes)" "ERROR:  WL002" "$out"
out=$(q_as "$ALICE" -c "SELECT worklist.claim('$TASK', '$BOB', '{$APPROVERS}')" 2>&1 || true)
check_eq "a member cannot claim as another person" "ERROR:  42501" "$out"
check_eq "$BOB claims and approves" "claimed|t" \
	"$(q_as "$BOB" -c "SELECT state FROM worklist.claim('$TASK', '$BOB', '{$APPROVERS}')" \
		-c "SELECT worklist.complete('$TASK', '$BOB', '{\"approved\": true}')" | paste -sd '|')"
t=$SECONDS
wait_until 70 "the worker to finish pay-1" logged 'finished pay-1'
check "the worker resumed it within 15 s, woken by a notification after the restart (it polls once a minute: $((SECONDS - t))s)" \
	"$( ((SECONDS - t <= 15)) && echo yes || echo no)"
check_eq "the worker resumed the graph with the decision, after the restart" \
	"lg-worker finished pay-1: paid 120 (completed by $BOB)" "$(grep -F 'finished pay-1' "$OUT/worker.log")"
check_eq "the task's history names $BOB's login for the completion" "$BOB|$BOB" \
	"$(q -c "SELECT actor || '|' || login FROM worklist.task_history('$TASK') WHERE event = 'completed'")"

say "a payment of 50 whose task is overdue: its policy (proceed) decides"
rc=0
approval start pay-2 --holder lg-agent --requester "$ALICE" --amount 50 --approvers "$APPROVERS" \
	--due-seconds 1 --policy proceed >"$OUT/start-2.log" 2>&1 || rc=$?
check_eq "start exits 0 once the run is parked" 0 "$rc"
TASK2=$(sed -n -E 's/^lg-agent parked pay-2 on ([^ ]+)$/\1/p' "$OUT/start-2.log")
overdue() { [[ $(q -c "SELECT count(*) FROM worklist.overdue() WHERE id = '$TASK2'") == 1 ]]; }
wait_until 10 "the task's due time" overdue
# this server's sweeper ticks once an hour (worklist.sweep_interval): the
# test sweeps
check_eq "the sweep settles it by its policy" 1 "$(q -c "SELECT proceeded FROM worklist.sweep()")"
t=$SECONDS
wait_until 70 "the worker to finish pay-2" logged 'finished pay-2'
check "the worker resumed it within 15 s, woken by a notification ($((SECONDS - t))s)" \
	"$( ((SECONDS - t <= 15)) && echo yes || echo no)"
check_eq "the worker resumed the graph with the policy's outcome" \
	"lg-worker finished pay-2: paid 50 (expired: proceed)" "$(grep -F 'finished pay-2' "$OUT/worker.log")"
check_eq "both runs are concluded" "pay-1 pay-2" \
	"$(q -c "SELECT string_agg(run, ' ' ORDER BY run) FROM pg_catalog.unnest((worklist.list_durable_runs('approvals', concluded => true)).entries)")"

kill -TERM "$WORKER_PID"
rc=0
wait "$WORKER_PID" || rc=$?
WORKER_PID=
check_eq "the worker stops cleanly on SIGTERM" 0 "$rc"
check "the worker listened again after the restart" \
	"$( (($(grep -c -x 'lg-worker listening' "$OUT/worker.log") >= 2)) && echo yes || echo no)"
check_eq "errors logged" 0 "$(grep -c -E ' (error|failed|lost)' "$OUT"/*.log | awk -F: '{ n += $2 } END { print n }')"

printf 'examples/langgraph: %d passed, %d failed\n' "$PASSED" "$FAILED"
((FAILED == 0))
