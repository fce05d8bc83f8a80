-- Runs: bad input to every verb gives a clean error naming the argument,
-- never a crash.  Checks come in the documented order: tenant, then
-- arguments in order.

SET worklist.tenant = 'run_badinput';
SET timezone = 'UTC';

-- Identifiers: NULL, empty, 257 characters, 1 MB; 256 characters is fine.
SELECT worklist.write_checkpoint(NULL, 's', 'r', 'c', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('', 's', 'r', 'c', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', repeat('s', 257), 'r', 'c', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', repeat('r', 1000000), 'c', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r', '', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r', NULL, '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r', 'c', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r', 'c', '{}', parent_run => '');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r', 'c', '{}', parent_run => repeat('x', 257));
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r', 'c', '{}', created_at => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r', 'c', '{}', park_request => '');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 'r', 'c', '{}', park_request => repeat('q', 257));
\echo :LAST_ERROR_SQLSTATE
-- the first bad argument is the one named
SELECT worklist.write_checkpoint('', '', '', '', NULL);
\echo :LAST_ERROR_SQLSTATE
-- the tenant comes first
SET worklist.tenant = '';
SELECT worklist.write_checkpoint('', 's', 'r', 'c', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', 's', 'r', 'h', '-1 hour');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.list_durable_runs(cursor => 'garbage');
\echo :LAST_ERROR_SQLSTATE
SET worklist.tenant = 'run_badinput';
SET timezone = 'UTC';
SELECT worklist.write_checkpoint(repeat('é', 256), repeat('é', 256), repeat('é', 256),
                                 repeat('é', 256), '{}', parent_run => repeat('é', 256),
                                 park_request => repeat('é', 256));
SELECT length(project), length(checkpoint_id), length(parent_run), length(park_request)
  FROM worklist.list_checkpoints(repeat('é', 256), repeat('é', 256), repeat('é', 256));
SELECT length((entries[1]).run), cursor IS NULL AS exhausted
  FROM worklist.list_durable_runs(repeat('é', 256), repeat('é', 256));
-- a cursor over 256-character ids round-trips
SELECT worklist.write_checkpoint(repeat('é', 256), repeat('é', 256), repeat('é', 255) || 'z', 'c', '{}');
SELECT length((p2.entries[1]).run)
  FROM worklist.list_durable_runs(repeat('é', 256), repeat('é', 256), lim => 1) p1,
       worklist.list_durable_runs(repeat('é', 256), repeat('é', 256), lim => 1, cursor => p1.cursor) p2;

-- Every reader and writer refuses bad addresses the same way.
SELECT worklist.read_checkpoint('p', 's', NULL, 'c');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.read_checkpoint('p', 's', 'r', repeat('c', 257));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.list_checkpoints('p', NULL, 'r');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.list_checkpoints('', 's', 'r');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.delete_checkpoint('p', 's', 'r', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.delete_checkpoint('p', 's', repeat('r', 1000000), 'c');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.prune_checkpoints(NULL, 's', 'r', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim_run('p', '', 'r', 'h', '1 hour');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release_run('p', 's', '', 1);
\echo :LAST_ERROR_SQLSTATE

-- Timestamps: far past, far future and infinity are stored as given.
SELECT worklist.write_checkpoint('p', 's', 't', 'c1', '{}', created_at => '4713-01-01 BC',
                                 run_created_at => 'infinity', park_request => 'x',
                                 parked_at => '-infinity', park_deadline => '294276-12-31');
SELECT worklist.write_checkpoint('p', 's', 't', 'c2', '{}', created_at => 'infinity');
SELECT checkpoint_id, created_at FROM worklist.list_checkpoints('p', 's', 't');
SELECT run, run_created_at, latest_checkpoint_id, park_state
  FROM worklist.list_durable_runs('p', 's', 'created_at', now => '294276-12-31') pg, unnest(pg.entries);
-- an infinite run_created_at pages too
SELECT worklist.write_checkpoint('p', 's', 'u', 'c', '{}', run_created_at => 'infinity');
SELECT (p2.entries[1]).run
  FROM worklist.list_durable_runs('p', 's', 'created_at', lim => 1) p1,
       worklist.list_durable_runs('p', 's', 'created_at', lim => 1, cursor => p1.cursor) p2;
SELECT worklist.write_checkpoint('p', 's', 't', 'c3', '{}', created_at => 'epoch'::timestamptz + interval '1000000 years');
\echo :LAST_ERROR_SQLSTATE

-- Fences: negative and huge fences are just fences nobody holds.
SELECT worklist.write_checkpoint('p', 's', 't', 'c', '{}', fence => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 's', 't', 'c', '{}', fence => 9223372036854775807);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release_run('p', 's', 't', -9223372036854775808);

-- JSON bodies of every kind.
SELECT worklist.write_checkpoint('p', 's', 'j', 'c' || i, b)
  FROM (VALUES (1, 'null'::jsonb), (2, '[]'), (3, '"text"'), (4, '{"a": {"b": [1, 2.5, true]}}')) v(i, b);
SELECT checkpoint_id, body FROM worklist.list_checkpoints('p', 's', 'j');

SELECT worklist.erase_tenant() > 0 AS erased;
