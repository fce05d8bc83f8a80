
-- The bindings view reads a function that visits only what the caller may
-- see (sql/parts/00_core.sql creates both).
DROP VIEW worklist.bindings;
