-- worklist: upgrade from 0.2 to 0.3
--
-- Assembled from sql/upgrade/*.sql in name order, one part per concept,
-- like the install script from sql/parts/.

\echo Use "ALTER EXTENSION worklist UPDATE TO '0.3'" to load this file. \quit
