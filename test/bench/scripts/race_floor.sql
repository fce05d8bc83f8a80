-- the race through the PL/pgSQL floor
\set k random(1, 10)
SELECT bench.try_claim_floor('race' || :k, 'w' || :client_id) AS got \gset
\if :got
SELECT floor.release('race' || :k, 'w' || :client_id);
\endif
