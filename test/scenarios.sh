#!/usr/bin/env bash
#
# scenarios.sh -- run test/scenarios.sql against the running test cluster
# (PGHOST/PGPORT as set by ./run) in a fresh database with the extension,
# and compare its output with test/expected/scenarios.out.  Exits non-zero
# and prints the difference when they differ.
#
#   bash test/scenarios.sh            check
#   bash test/scenarios.sh --accept   check, and on a difference replace
#                                     the expected output (then review it)
#
set -Eeuo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DB=${WL_SCENARIOS_DB:-worklist_scenarios}
EXPECTED=$HERE/expected/scenarios.out
OUT=$(mktemp /tmp/worklist-scenarios.XXXXXX)
trap 'rm -f "$OUT" "$OUT.diff"' EXIT

dropdb --if-exists "$DB" >/dev/null 2>&1
createdb "$DB"
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c 'CREATE EXTENSION worklist'
if ! psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -f "$HERE/scenarios.sql" >"$OUT" 2>&1; then
	cat "$OUT"
	echo "scenarios: test/scenarios.sql failed" >&2
	dropdb --if-exists "$DB" >/dev/null 2>&1 || true
	exit 1
fi
dropdb --if-exists "$DB" >/dev/null 2>&1 || true

if diff -u "$EXPECTED" "$OUT" >"$OUT.diff"; then
	echo "scenarios: output matches test/expected/scenarios.out"
	exit 0
fi
cat "$OUT.diff"
if [[ ${1:-} == --accept ]]; then
	cp "$OUT" "$EXPECTED"
	echo "scenarios: expected output replaced; review it before committing" >&2
fi
echo "scenarios: output differs from test/expected/scenarios.out" >&2
exit 1
