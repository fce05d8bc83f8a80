-- report on a ticket of the group :grp, rolled back so every log keeps its
-- length; clients use disjoint tickets, so none waits for another
\set k 1 + :client_id + 8 * random(0, :per_client - 1)
\set a :k % 4
BEGIN;
SELECT (worklist.report(:grp || :k, 'a' || :a, 'working')).state;
ROLLBACK;
