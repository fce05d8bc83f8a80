-- all clients race for the same ten tasks; a winner gives its task back
\set k random(1, 10)
SELECT bench.try_claim_worklist('race' || :k, 'w' || :client_id) AS got \gset
\if :got
SELECT worklist.release('race' || :k, 'w' || :client_id);
\endif
