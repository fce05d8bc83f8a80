-- the ceiling: one indexed single-row UPDATE per transaction
\set aid random(1, :rows)
UPDATE bench.ceiling SET abalance = abalance + 1 WHERE aid = :aid;
