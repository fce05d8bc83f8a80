-- Runs: checkpoints (write, read, list, delete, prune) and the run facts
-- and summary they maintain.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE.

SET worklist.tenant = 'run_checkpoints';
SET timezone = 'UTC';

-- A run's summary as the listing shows it.
CREATE FUNCTION pg_temp.summary(p text, s text, r text, at timestamptz DEFAULT '2024-06-01')
RETURNS TABLE (checkpoint_count bigint, latest text, latest_at timestamptz,
               park_state worklist.park_state, park_checkpoint text, park_request text,
               parked_at timestamptz, park_deadline timestamptz, park_resolved_at timestamptz,
               run_created_at timestamptz, parent_run text)
LANGUAGE sql AS $$
	SELECT e.checkpoint_count, e.latest_checkpoint_id, e.latest_checkpoint_at,
	       e.park_state, e.park_checkpoint_id, e.park_request, e.parked_at,
	       e.park_deadline, e.park_resolved_at, e.run_created_at, e.parent_run
	  FROM worklist.list_durable_runs(p, s, now => at) pg, unnest(pg.entries) e
	 WHERE e.run = r
$$;

-- A first write creates the run; created_at defaults to now().
BEGIN;
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c1', '{"step": 1}');
SELECT checkpoint_id, body, created_at = now() AS created_now, parent_run, run_created_at,
       park_request IS NULL AS unparked
  FROM worklist.read_checkpoint('p', 's', 'r1', 'c1');
COMMIT;

-- Overwrite: same id, new body and created_at; still one checkpoint.
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c1', '{"step": 2}', created_at => '2024-01-01 10:00');
SELECT checkpoint_id, body, created_at FROM worklist.list_checkpoints('p', 's', 'r1');

-- parent_run and run_created_at: the first write that supplies each fixes
-- it; later values are ignored, and a write supplying neither keeps them.
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c2', '{}', created_at => '2024-01-01 11:00',
                                 run_created_at => '2024-01-01 09:00');
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c3', '{}', created_at => '2024-01-01 12:00',
                                 parent_run => 'root', run_created_at => '1999-01-01');
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c4', '{}', created_at => '2024-01-01 12:00',
                                 parent_run => 'other-root', run_created_at => '2030-01-01');
-- every checkpoint shows the run's values, whichever write it came from
SELECT checkpoint_id, parent_run, run_created_at FROM worklist.list_checkpoints('p', 's', 'r1');

-- list_checkpoints: oldest created_at first, then id (c3 and c4 tie).
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c0', '{}', created_at => '2024-01-01 12:00');
SELECT checkpoint_id, created_at FROM worklist.list_checkpoints('p', 's', 'r1');
SELECT * FROM pg_temp.summary('p', 's', 'r1');

-- Overwriting the newest checkpoint with an older created_at hands
-- "latest" to the next newest.
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c4', '{}', created_at => '2024-01-01 08:00');
SELECT checkpoint_count, latest, latest_at FROM pg_temp.summary('p', 's', 'r1');

-- Park: the run's park is the one on its newest checkpoint with a
-- park_request.
SELECT worklist.write_checkpoint('p', 's', 'r1', 'k1', '{}', created_at => '2024-02-01',
                                 park_request => 'approval', parked_at => '2024-02-01',
                                 park_deadline => '2024-03-01');
SELECT worklist.write_checkpoint('p', 's', 'r1', 'c5', '{}', created_at => '2024-02-02');
SELECT latest, park_state, park_checkpoint, park_request, parked_at, park_deadline
  FROM pg_temp.summary('p', 's', 'r1');
-- judged at now: deadline at or before now is expired
SELECT park_state FROM pg_temp.summary('p', 's', 'r1', '2024-02-29 23:59:59');
SELECT park_state FROM pg_temp.summary('p', 's', 'r1', '2024-03-01');
-- a newer parked checkpoint takes over; resolving it makes the run resolved
SELECT worklist.write_checkpoint('p', 's', 'r1', 'k2', '{}', created_at => '2024-02-03',
                                 park_request => 'review', parked_at => '2024-02-03');
SELECT park_state, park_checkpoint, park_request, park_deadline FROM pg_temp.summary('p', 's', 'r1');
SELECT worklist.write_checkpoint('p', 's', 'r1', 'k2', '{}', created_at => '2024-02-03',
                                 park_request => 'review', parked_at => '2024-02-03',
                                 park_resolved_at => '2024-02-04');
SELECT park_state, park_checkpoint, park_resolved_at FROM pg_temp.summary('p', 's', 'r1', 'infinity');
-- an older park does not displace a newer one
SELECT worklist.write_checkpoint('p', 's', 'r1', 'k0', '{}', created_at => '2023-01-01',
                                 park_request => 'old');
SELECT park_checkpoint FROM pg_temp.summary('p', 's', 'r1');
-- overwriting the park's checkpoint without a park_request falls back to
-- the previous parked checkpoint
SELECT worklist.write_checkpoint('p', 's', 'r1', 'k2', '{}', created_at => '2024-02-03');
SELECT park_state, park_checkpoint, park_request FROM pg_temp.summary('p', 's', 'r1');
-- deleting it falls back again
SELECT worklist.delete_checkpoint('p', 's', 'r1', 'k1');
SELECT checkpoint_count, park_state, park_checkpoint, park_request FROM pg_temp.summary('p', 's', 'r1');

-- delete_checkpoint: the newest one hands "latest" on; absent is a no-op.
SELECT worklist.delete_checkpoint('p', 's', 'r1', 'c5');
SELECT checkpoint_count, latest, latest_at FROM pg_temp.summary('p', 's', 'r1');
SELECT worklist.delete_checkpoint('p', 's', 'r1', 'nope');
SELECT worklist.delete_checkpoint('p', 's', 'no-such-run', 'c1');
SELECT checkpoint_count FROM pg_temp.summary('p', 's', 'r1');

-- read_checkpoint of an absent checkpoint or run is NULL.
SELECT worklist.read_checkpoint('p', 's', 'r1', 'nope') IS NULL AS absent;
SELECT worklist.read_checkpoint('p', 's', 'nope', 'c1') IS NULL AS absent;
SELECT count(*) FROM worklist.list_checkpoints('p', 's', 'nope');

-- prune_checkpoints: keeps the newest keep, returns how many went.
SELECT checkpoint_id, created_at FROM worklist.list_checkpoints('p', 's', 'r1');
SELECT worklist.prune_checkpoints('p', 's', 'r1', 3) AS pruned;
SELECT checkpoint_id FROM worklist.list_checkpoints('p', 's', 'r1');
SELECT checkpoint_count, latest, park_state, park_checkpoint FROM pg_temp.summary('p', 's', 'r1');
SELECT worklist.prune_checkpoints('p', 's', 'r1', 3) AS pruned_again;
SELECT worklist.prune_checkpoints('p', 's', 'r1', 100) AS keep_more_than_there_are;
SELECT worklist.prune_checkpoints('p', 's', 'no-such-run', 0) AS absent_run;
-- pruning away the parked checkpoint clears the park; run_created_at and
-- parent_run survive pruning everything
SELECT worklist.write_checkpoint('p', 's', 'r1', 'k9', '{}', created_at => '2000-01-01',
                                 park_request => 'ancient');
SELECT park_checkpoint FROM pg_temp.summary('p', 's', 'r1');
SELECT worklist.prune_checkpoints('p', 's', 'r1', 1) AS pruned;
SELECT checkpoint_count, latest, park_state FROM pg_temp.summary('p', 's', 'r1');
SELECT worklist.prune_checkpoints('p', 's', 'r1', 0) AS pruned_all;
SELECT count(*) AS listed FROM pg_temp.summary('p', 's', 'r1');
SELECT worklist.write_checkpoint('p', 's', 'r1', 'again', '{}', run_created_at => '2031-01-01',
                                 parent_run => 'late');
SELECT checkpoint_count, run_created_at, parent_run FROM pg_temp.summary('p', 's', 'r1');

-- keep must be given and not negative.
SELECT worklist.prune_checkpoints('p', 's', 'r1', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.prune_checkpoints('p', 's', 'r1', NULL);
\echo :LAST_ERROR_SQLSTATE

-- Runs are addressed by (project, session, run): same run id elsewhere is
-- another run.
SELECT worklist.write_checkpoint('p', 's2', 'r1', 'x', '{}');
SELECT worklist.write_checkpoint('p2', 's', 'r1', 'y', '{}');
SELECT project, session, run, checkpoint_id FROM worklist.list_checkpoints('p', 's2', 'r1')
UNION ALL
SELECT project, session, run, checkpoint_id FROM worklist.list_checkpoints('p2', 's', 'r1');

-- Another tenant sees none of it and has runs of the same name.
SET worklist.tenant = 'run_checkpoints_other';
SELECT worklist.read_checkpoint('p', 's', 'r1', 'again') IS NULL AS invisible;
SELECT worklist.write_checkpoint('p', 's', 'r1', 'mine', '{"t": "other"}');
SELECT checkpoint_id, body FROM worklist.list_checkpoints('p', 's', 'r1');
SELECT worklist.erase_tenant();
SET worklist.tenant = 'run_checkpoints';
SELECT checkpoint_id FROM worklist.list_checkpoints('p', 's', 'r1');

-- Bodies are stored as given, large ones too.
SELECT worklist.write_checkpoint('p', 's', 'big', 'c', jsonb_build_object('blob', repeat('x', 1000000)));
SELECT length(body->>'blob') FROM worklist.read_checkpoint('p', 's', 'big', 'c');

SELECT worklist.erase_tenant();
