-- worklist: upgrade from 0.3 to 0.4
--
-- Assembled by the Makefile (sql/upgrade.awk) from two kinds of pieces,
-- taken in the order of their file names, a piece of sql/upgrade/ before
-- the part of sql/parts/ of the same name:
--   sql/upgrade/*.sql   what changes objects that 0.3 already has (ALTER,
--                       DROP, moving rows), written only here;
--   sql/parts/*.sql     the blocks marked "-- @since 0.4" ... "-- @end"
--                       (objects new in 0.4, written only there, where a
--                       fresh install takes them from too) and the blocks
--                       marked "-- @always" ... "-- @end" (what every
--                       update applies again, such as the privileges).

\echo Use "ALTER EXTENSION worklist UPDATE TO '0.4'" to load this file. \quit
