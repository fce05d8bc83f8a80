-- Every statement the verbs keep (src/spi.c), listed from the library
-- itself, without running a verb.  Their texts are printed below, so that
-- a change to the C macros that build them shows in a diff as SQL.
--
-- Under PostgreSQL's default settings (jit on, jit_above_cost 100000) no
-- plan of theirs would be compiled by JIT: the verbs plan them with jit
-- off.  That matters: with sequential scans disabled, as the verbs plan
-- them, some plans cost more than jit_above_cost.
SHOW jit;
SHOW jit_above_cost;
SELECT count(*) AS statements, count(DISTINCT name) AS names
  FROM worklist.kept_statements();
SELECT name AS would_jit FROM worklist.kept_statements() WHERE jit;
SELECT count(*) > 0 AS some_plans_cost_more_than_jit_above_cost
  FROM worklist.kept_statements()
 WHERE cost > current_setting('jit_above_cost')::float8;
-- ... which a verb's own settings hide from the caller: the caller's jit
-- setting is what it was.
SHOW jit;

-- Not for PUBLIC.
CREATE ROLE wl_statements_reader;
SET ROLE wl_statements_reader;
SELECT count(*) FROM worklist.kept_statements();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE wl_statements_reader;

\pset format unaligned
\pset tuples_only on
SELECT name || ':' || E'\n    ' || sql FROM worklist.kept_statements() ORDER BY name;
