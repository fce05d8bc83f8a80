
-- A ladder is at most 32 rungs from 0.4 on; one stored longer (0.3 took
-- any length) would make every tick of the watchdog read it.  Its rungs
-- past the 32nd could only fire after 32 escalations of one stall.
UPDATE worklist.ticket SET ladder = ladder[1:32]
 WHERE pg_catalog.cardinality(ladder) OPERATOR(pg_catalog.>) 32;
