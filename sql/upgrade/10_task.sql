-- worklist 0.3 -> 0.4: tasks

-- claim_next gains skip: the two-argument function goes, and
-- sql/parts/10_task.sql creates the new one (its privileges are kept by
-- 00_begin.sql and 99_end.sql).
DROP FUNCTION worklist.claim_next(text, text[]);
