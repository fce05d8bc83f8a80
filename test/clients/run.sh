#!/usr/bin/env bash
#
# run.sh -- the unit tests of the client packages, clients/node and
# clients/python, against a running server.
#
# Each package's tests make databases of their own (worklist_clients_*)
# with the extension and roles of their own, and drop them at the end:
#   - node: npm ci of clients/node (its pg), node --test of
#     test/client.test.mjs, test/worker.test.mjs and the tests of the 0.4
#     verbs and workers, test/v04_verbs.test.mjs, and tsc --noEmit of
#     index.d.ts and test/types/check.mts (TypeScript pinned by
#     test/types/package-lock.json, installed with npm ci into the test's
#     directory);
#   - python: mypy of the package (its config in pyproject.toml; Debian's
#     mypy), and unittest of tests/test_*.py and tests/v04_verbs.py, run
#     by Debian's python3 with psycopg2.
#
#   bash test/clients/run.sh
#
# Environment: PGHOST, PGPORT and PGUSER (a superuser) of the server;
# PYTHON (default /usr/bin/python3); WL_CLIENTS_KEEP=1 keeps the work
# directory.
#
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLIENTS=$(cd "$HERE/../../clients" && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
OUT=$(mktemp -d /tmp/worklist-clients.XXXXXX)
PASSED=0
FAILED=0
T0=$SECONDS

say() { printf 'clients: %s\n' "$*"; }
die() { printf 'clients: %s\n' "$*" >&2; exit 2; }
cleanup() {
	local rc=$?
	if ((rc == 0 && FAILED == 0)) && [[ -z ${WL_CLIENTS_KEEP:-} ]]; then
		rm -rf "$OUT"
	else
		say "output kept in $OUT"
	fi
	exit "$rc"
}
trap cleanup EXIT

command -v node >/dev/null || die "no node (apt-get install nodejs)"
command -v npm >/dev/null || die "no npm (apt-get install npm)"
command -v mypy >/dev/null || die "no mypy (apt-get install mypy)"
"$PYTHON" -c 'import psycopg2' 2>/dev/null || die "$PYTHON cannot import psycopg2 (apt-get install python3-psycopg2)"

# step NAME COMMAND...: runs a step, its output in $OUT/NAME.log
step() {
	local name=$1 t=$SECONDS
	shift
	if "$@" >"$OUT/$name.log" 2>&1; then
		PASSED=$((PASSED + 1))
		printf '    ok    %s (%ss)\n' "$name" $((SECONDS - t))
	else
		FAILED=$((FAILED + 1))
		printf '    FAIL  %s (%ss)\n' "$name" $((SECONDS - t))
		tail -n 60 "$OUT/$name.log"
	fi
}

npm_ci() { (cd "$1" && npm ci --no-audit --no-fund --loglevel=error); }

say "node: clients/node"
step "npm ci (pg)" npm_ci "$CLIENTS/node"
step "node --test" env -C "$CLIENTS/node" node --test test/client.test.mjs test/worker.test.mjs test/v04_verbs.test.mjs
mkdir -p "$OUT/typescript"
cp "$CLIENTS/node/test/types/package.json" "$CLIENTS/node/test/types/package-lock.json" "$OUT/typescript/"
step "npm ci (typescript)" npm_ci "$OUT/typescript"
step "tsc --noEmit (index.d.ts)" "$OUT/typescript/node_modules/.bin/tsc" -p "$CLIENTS/node/test/types/tsconfig.json"

say "python: clients/python"
step "mypy (strict)" env -C "$CLIENTS/python" mypy --cache-dir "$OUT/mypy-cache"
step "unittest" env -C "$CLIENTS/python/tests" "$PYTHON" -m unittest -v test_client test_worker v04_verbs

say "$((SECONDS - T0))s"
printf 'clients: %d passed, %d failed\n' "$PASSED" "$FAILED"
((FAILED == 0))
