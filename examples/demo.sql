-- worklist demo: run by ./run demo on a throwaway cluster.
\pset footer off
\echo '== CREATE EXTENSION worklist'
CREATE EXTENSION worklist;
SELECT extname, extversion FROM pg_extension WHERE extname = 'worklist';

\echo '== tenants: every verb works in the tenant named by worklist.tenant'
SET worklist.tenant = 'acme';
SELECT * FROM worklist.sweep();
