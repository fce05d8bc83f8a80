-- Runs: what an agent framework keeps beside its checkpoints -- the newest
-- checkpoints, pending writes, channel values -- and how they go with
-- their checkpoint and their run.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE.

SET worklist.tenant = 'run_state';
SET timezone = 'UTC';

-- ------------------------------------------------------------------
-- latest_checkpoint
-- ------------------------------------------------------------------
-- none yet: NULL
SELECT worklist.latest_checkpoint('p', 's1', 'r1') IS NULL AS no_checkpoint;
SELECT worklist.write_checkpoint('p', 's1', 'r1', 'c1', '{"n": 1}', created_at => '2024-01-01 10:00',
                                 metadata => '{"step": 1, "source": "input"}');
SELECT worklist.write_checkpoint('p', 's1', 'r1', 'c3', '{"n": 3}', created_at => '2024-01-01 11:00',
                                 metadata => '{"step": 2, "source": "loop"}', parent_checkpoint_id => 'c1');
-- same instant as c3: the higher id is the newer
SELECT worklist.write_checkpoint('p', 's1', 'r1', 'c2', '{"n": 2}', created_at => '2024-01-01 11:00',
                                 metadata => '{"step": 2, "source": "loop"}', parent_checkpoint_id => 'c1');
SELECT checkpoint_id, body, metadata, parent_checkpoint_id
  FROM worklist.latest_checkpoint('p', 's1', 'r1');
-- an older one overwritten with the newest instant becomes the latest
SELECT worklist.write_checkpoint('p', 's1', 'r1', 'c1', '{"n": 1}', created_at => '2024-01-01 12:00');
SELECT checkpoint_id, created_at FROM worklist.latest_checkpoint('p', 's1', 'r1');
SELECT worklist.latest_checkpoint('p', 's1', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.latest_checkpoint('p', '', 'r1');
\echo :LAST_ERROR_SQLSTATE

-- ------------------------------------------------------------------
-- newest_checkpoints
-- ------------------------------------------------------------------
-- Checkpoints in two sessions and three runs, with ties on created_at
-- broken by checkpoint_id, then session, then run (all descending).
SELECT worklist.write_checkpoint('p', s, r, c, '{}', created_at => at, metadata => m)
  FROM (VALUES ('s1', 'r2', 'c2', '2024-01-01 11:00'::timestamptz, '{"step": 2, "source": "loop"}'::jsonb),
               ('s2', 'r1', 'c2', '2024-01-01 11:00', '{"step": 5, "source": "update"}'),
               ('s2', 'r1', 'c9', '2024-01-01 09:00', '{"step": 0, "source": "input"}'),
               ('s2', 'r3', 'c2', '2024-01-01 11:00', '{"step": 2, "source": "loop"}')) v(s, r, c, at, m);
-- another project, and another tenant, are never listed
SELECT worklist.write_checkpoint('q', 's1', 'r1', 'c1', '{}', created_at => '2024-01-01 11:00');
SET worklist.tenant = 'run_state_other';
SELECT worklist.write_checkpoint('p', 's1', 'r1', 'x1', '{}', created_at => '2024-01-01 11:00');
SET worklist.tenant = 'run_state';

-- the project, newest first
SELECT session, run, checkpoint_id, created_at FROM worklist.newest_checkpoints('p');
-- one session; one run
SELECT session, run, checkpoint_id FROM worklist.newest_checkpoints('p', 's2');
SELECT session, run, checkpoint_id FROM worklist.newest_checkpoints('p', 's1', 'r1');
-- metadata containment
SELECT session, run, checkpoint_id FROM worklist.newest_checkpoints('p', metadata => '{"source": "loop"}');
SELECT session, run, checkpoint_id FROM worklist.newest_checkpoints('p', metadata => '{"step": 2, "source": "loop"}');
SELECT count(*) AS everything FROM worklist.newest_checkpoints('p', metadata => '{}');
SELECT count(*) AS nothing FROM worklist.newest_checkpoints('p', metadata => '{"source": "elsewhere"}');
-- paging, two at a time: each page starts after the last row of the one
-- before, and together they are the whole listing, in order
CREATE FUNCTION pg_temp.pages(lim int)
RETURNS TABLE (page int, session text, run text, checkpoint_id text)
LANGUAGE plpgsql AS $$
DECLARE
	c worklist.checkpoint;
	after worklist.checkpoint;
	got int;
BEGIN
	page := 0;
	LOOP
		page := page + 1;
		got := 0;
		FOR c IN SELECT * FROM worklist.newest_checkpoints('p', before_session => after.session,
		             before_run => after.run, before_checkpoint_id => after.checkpoint_id, lim => lim)
		LOOP
			session := c.session; run := c.run; checkpoint_id := c.checkpoint_id;
			RETURN NEXT;
			got := got + 1;
			after := c;
		END LOOP;
		EXIT WHEN got < lim;
	END LOOP;
END
$$;
SELECT * FROM pg_temp.pages(2);
SELECT array_agg(checkpoint_id || '@' || session || '/' || run) IS NOT DISTINCT FROM
       (SELECT array_agg(checkpoint_id || '@' || session || '/' || run) FROM worklist.newest_checkpoints('p'))
       AS pages_are_the_listing
  FROM pg_temp.pages(3);
-- a page after a given checkpoint: its run defaults to the scope's
SELECT session, run, checkpoint_id
  FROM worklist.newest_checkpoints('p', 's1', 'r1', before_checkpoint_id => 'c3');
SELECT session, run, checkpoint_id
  FROM worklist.newest_checkpoints('p', 's2', before_run => 'r3', before_checkpoint_id => 'c2');
-- the starting checkpoint may lie in another run of the project
SELECT session, run, checkpoint_id
  FROM worklist.newest_checkpoints('p', before_session => 's2', before_run => 'r1',
                                   before_checkpoint_id => 'c2', metadata => '{"source": "loop"}');
-- lim: NULL is 100, clamped to [1, 1000]
SELECT count(*) AS lim_0 FROM worklist.newest_checkpoints('p', lim => 0);
SELECT count(*) AS lim_null FROM worklist.newest_checkpoints('p', lim => NULL);
SELECT count(*) AS lim_huge FROM worklist.newest_checkpoints('p', lim => 2147483647);
-- the rows carry the run's facts like every checkpoint
SELECT worklist.write_checkpoint('p', 's1', 'r1', 'c0', '{}', created_at => '2023-01-01',
                                 parent_run => 'root', run_created_at => '2023-01-01');
SELECT checkpoint_id, parent_run, run_created_at FROM worklist.newest_checkpoints('p', 's1', 'r1');
-- refusals
SELECT * FROM worklist.newest_checkpoints('p', run => 'r1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.newest_checkpoints(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.newest_checkpoints('p', metadata => '[1]');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.newest_checkpoints('p', metadata => '"loop"');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.newest_checkpoints('p', before_checkpoint_id => 'c2');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.newest_checkpoints('p', 's1', before_checkpoint_id => 'c2');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.newest_checkpoints('p', 's1', 'r1', before_checkpoint_id => 'nope');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.newest_checkpoints('p', 's1', 'r1', before_checkpoint_id => '');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.newest_checkpoints('p', 's1', 'r1', before_checkpoint_id => repeat('x', 257));
\echo :LAST_ERROR_SQLSTATE
SET worklist.max_document_size = 100;
SELECT * FROM worklist.newest_checkpoints('p', metadata => jsonb_build_object('k', repeat('x', 200)));
\echo :LAST_ERROR_SQLSTATE
RESET worklist.max_document_size;

-- ------------------------------------------------------------------
-- put_writes and pending_writes
-- ------------------------------------------------------------------
-- The checkpoint need not exist yet; the returned count is of rows
-- stored.
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'task-b', '{0,1}', '{messages,route}',
                           ARRAY['"hello"', '{"to": "b"}']::jsonb[], task_path => 'node/b');
-- An existing non-negative index keeps its first value; a negative one
-- is replaced; new indexes are added.  Returns 2: idx -1 (new), idx 2.
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'task-b', '{0,-1,2}', '{messages,__error__,extra}',
                           ARRAY['"second"', '"boom"', '3']::jsonb[], task_path => 'node/b');
-- Replaced again: -1 counts, 0 does not.
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'task-b', '{-1,0}', '{__error__,messages}',
                           ARRAY['"boom again"', '"third"']::jsonb[], task_path => 'node/b');
-- Within one call, an index given twice: the first element for idx >= 0,
-- the last for a negative one.
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'task-c', '{5,5,-3,-3}', '{first,second,early,late}',
                           ARRAY['1', '2', '3', '4']::jsonb[]);
-- Task ids and paths compare by code point: 'Z' < 'a' < 'z' < 'é' < '😀'.
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', t, '{0}', '{ch}', ARRAY[to_jsonb(t)])
  FROM unnest(ARRAY['é', 'a', '😀', 'Z', 'z']) t;
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'task-' || p, '{0}', '{ch}', ARRAY[to_jsonb(p)], task_path => p)
  FROM unnest(ARRAY['node/é', 'node/a', 'Node', 'node/😀']) p;
-- NULL task_path means ''; an empty call stores nothing
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'task-n', '{0}', '{ch}', ARRAY['null']::jsonb[], task_path => NULL);
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'task-n', '{}', '{}', '{}');
SELECT checkpoint_id, task_id, idx, channel, value, task_path
  FROM worklist.pending_writes('p', 's1', 'r1', 'c3');
-- another checkpoint, run, project or tenant has none of them
SELECT count(*) AS other_checkpoint FROM worklist.pending_writes('p', 's1', 'r1', 'c2');
SELECT count(*) AS other_run FROM worklist.pending_writes('p', 's1', 'r2', 'c3');
SELECT count(*) AS other_project FROM worklist.pending_writes('q', 's1', 'r1', 'c3');
SET worklist.tenant = 'run_state_other';
SELECT count(*) AS other_tenant FROM worklist.pending_writes('p', 's1', 'r1', 'c3');
SET worklist.tenant = 'run_state';
-- refusals, each naming its argument
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', NULL, '{0}', '{ch}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', repeat('t', 257), '{0}', '{ch}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', '', 't', '{0}', '{ch}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', NULL, '{ch}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{0,NULL}', '{ch,ch}', ARRAY['1', '2']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{{0},{1}}', '{ch,ch}', ARRAY['1', '2']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{0,1}', '{ch}', ARRAY['1', '2']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{0,1}', '{ch,ch}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{0}', '{""}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{0}', ARRAY[repeat('c', 257)], ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{0}', '{ch}', ARRAY[NULL]::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', ARRAY(SELECT generate_series(1, 1001)),
                           ARRAY(SELECT 'ch' FROM generate_series(1, 1001)),
                           ARRAY(SELECT '1'::jsonb FROM generate_series(1, 1001)));
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{0}', '{ch}', ARRAY['1']::jsonb[],
                           task_path => repeat('é', 1025));
\echo :LAST_ERROR_SQLSTATE
SET worklist.max_document_size = 100;
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{0,1}', '{ch,ch}',
                           ARRAY['1', jsonb_build_object('k', repeat('x', 200))]);
\echo :LAST_ERROR_SQLSTATE
RESET worklist.max_document_size;
-- the bounds themselves are accepted: 1000 writes, a 1024-character path
SELECT worklist.put_writes('p', 's1', 'r1', 'big', 't', ARRAY(SELECT generate_series(1, 1000)),
                           ARRAY(SELECT 'ch' FROM generate_series(1, 1000)),
                           ARRAY(SELECT '1'::jsonb FROM generate_series(1, 1000)),
                           task_path => repeat('é', 1024)) AS thousand;
SELECT worklist.pending_writes('p', 's1', 'r1', NULL);
\echo :LAST_ERROR_SQLSTATE

-- Fences: a non-NULL fence must be the run's current one.
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 't', '{0}', '{ch}', ARRAY['1']::jsonb[], fence => 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence AS f1 FROM worklist.claim_run('p', 's1', 'r1', 'w1', '1 hour') \gset
-- (fences depend on what ran before: their DETAIL is not shown)
\set VERBOSITY terse
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'fenced', '{0}', '{ch}', ARRAY['1']::jsonb[], fence => :f1);
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'fenced', '{1}', '{ch}', ARRAY['1']::jsonb[], fence => :f1 + 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence AS f2 FROM worklist.claim_run('p', 's1', 'r1', 'w1', '1 hour') \gset
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'fenced', '{1}', '{ch}', ARRAY['1']::jsonb[], fence => :f1);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
-- unfenced writes are admitted whatever the lease
SELECT worklist.put_writes('p', 's1', 'r1', 'c3', 'fenced', '{1}', '{ch}', ARRAY['2']::jsonb[]);
SELECT task_id, idx, value FROM worklist.pending_writes('p', 's1', 'r1', 'c3') WHERE task_id = 'fenced';

-- ------------------------------------------------------------------
-- put_values and run_values
-- ------------------------------------------------------------------
-- returns how many were new; of a pair given twice, the first is stored
SELECT worklist.put_values('p', 's1', 'r1', '{messages,messages,route,messages}', '{v1,v2,v1,v1}',
                           ARRAY['["a"]', '["a","b"]', '"b"', '"ignored"']::jsonb[]);
-- a version is immutable: an existing one keeps its value
SELECT worklist.put_values('p', 's1', 'r1', '{messages,route}', '{v1,v2}',
                           ARRAY['"changed"', '"c"']::jsonb[]);
SELECT worklist.put_values('p', 's1', 'r1', '{}', '{}', '{}');
-- in argument order, those that exist (a pair named twice comes twice)
SELECT channel, version, value
  FROM worklist.run_values('p', 's1', 'r1', '{route,messages,messages,nope,route,messages}',
                           '{v2,v1,v2,v1,v1,v1}');
SELECT count(*) AS other_run FROM worklist.run_values('p', 's1', 'r2', '{messages}', '{v1}');
SELECT count(*) AS none_asked FROM worklist.run_values('p', 's1', 'r1', '{}', '{}');
-- refusals
SELECT worklist.put_values('p', 's1', 'r1', '{a,b}', '{v1}', ARRAY['1', '2']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_values('p', 's1', 'r1', '{a}', '{v1}', ARRAY['1', '2']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_values('p', 's1', 'r1', '{a}', '{""}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_values('p', 's1', 'r1', '{a}', '{NULL}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_values('p', 's1', 'r1', NULL, '{v1}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_values('p', 's1', 'r1', '{a}', '{v1}', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_values('p', 's1', 'r1', ARRAY(SELECT 'c' || i FROM generate_series(1, 1001) i),
                           ARRAY(SELECT 'v' FROM generate_series(1, 1001)),
                           ARRAY(SELECT '1'::jsonb FROM generate_series(1, 1001)));
\echo :LAST_ERROR_SQLSTATE
SET worklist.max_document_size = 100;
SELECT worklist.put_values('p', 's1', 'r1', '{a}', '{v1}', ARRAY[jsonb_build_object('k', repeat('x', 200))]);
\echo :LAST_ERROR_SQLSTATE
RESET worklist.max_document_size;
\set VERBOSITY terse
SELECT worklist.put_values('p', 's1', 'r1', '{a}', '{v1}', ARRAY['1']::jsonb[], fence => :f1);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT worklist.put_values('p', 's1', 'r1', '{a}', '{v1}', ARRAY['1']::jsonb[], fence => :f2);
SELECT worklist.run_values('p', 's1', 'r1', '{a,b}', '{v1}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.run_values('p', 's1', 'r1', '{a}', NULL);
\echo :LAST_ERROR_SQLSTATE

-- ------------------------------------------------------------------
-- A concluded run takes no writes (WL008), fenced or not, before the
-- fence is judged; reads still work.
-- ------------------------------------------------------------------
SELECT worklist.write_checkpoint('p', 's3', 'done', 'c1', '{}');
SELECT fence AS f3 FROM worklist.claim_run('p', 's3', 'done', 'w1', '1 hour') \gset
SELECT worklist.put_writes('p', 's3', 'done', 'c1', 't', '{0}', '{ch}', ARRAY['1']::jsonb[], fence => :f3);
SELECT worklist.conclude_run('p', 's3', 'done', fence => :f3, now => '2024-02-01') AS withdrawn;
SELECT worklist.put_writes('p', 's3', 'done', 'c1', 't', '{0}', '{ch}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's3', 'done', 'c1', 't', '{0}', '{ch}', ARRAY['1']::jsonb[], fence => :f3);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_writes('p', 's3', 'done', 'c1', 't', '{0}', '{ch}', ARRAY['1']::jsonb[], fence => :f3 + 1);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_values('p', 's3', 'done', '{a}', '{v1}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_values('p', 's3', 'done', '{a}', '{v1}', ARRAY['1']::jsonb[], fence => :f3);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS still_read FROM worklist.pending_writes('p', 's3', 'done', 'c1');
SELECT checkpoint_id FROM worklist.latest_checkpoint('p', 's3', 'done');

-- ------------------------------------------------------------------
-- Writes go with their checkpoint; writes and values with their run.
-- ------------------------------------------------------------------
CREATE FUNCTION pg_temp.writes(s text, r text)
RETURNS TABLE (checkpoint_id text, n bigint) LANGUAGE sql AS $$
	SELECT c, count(w.*) FROM unnest('{k1,k2,k3,k4}'::text[]) c
	  LEFT JOIN LATERAL worklist.pending_writes('p', s, r, c) w ON true
	 WHERE w IS NOT NULL GROUP BY c ORDER BY c
$$;
SELECT worklist.write_checkpoint('p', 'gone', r, k, '{}', created_at => '2024-01-01'::timestamptz + i * interval '1 hour'),
       worklist.put_writes('p', 'gone', r, k, 't', '{0,1}', '{a,b}', ARRAY['1', '2']::jsonb[]),
       worklist.put_values('p', 'gone', r, ARRAY['ch'], ARRAY[k], ARRAY['1']::jsonb[])
  FROM unnest('{k1,k2,k3,k4}'::text[]) WITH ORDINALITY k(k, i), unnest('{ra,rb}'::text[]) r;
-- delete_checkpoint: that checkpoint's writes go, the others stay
SELECT worklist.delete_checkpoint('p', 'gone', 'ra', 'k2');
SELECT * FROM pg_temp.writes('gone', 'ra');
-- prune_checkpoints: the writes of the pruned ones go (k1, the oldest)
SELECT worklist.prune_checkpoints('p', 'gone', 'ra', 2);
SELECT * FROM pg_temp.writes('gone', 'ra');
-- values stay with the run
SELECT count(*) AS values_kept FROM worklist.run_values('p', 'gone', 'ra', '{ch,ch,ch,ch}', '{k1,k2,k3,k4}');
-- the other run is untouched
SELECT * FROM pg_temp.writes('gone', 'rb');
-- retention: an old run goes with its writes and values
SELECT worklist.set_retention(runs => '1 day');
SELECT purged FROM worklist.sweep('2024-06-01', 1000);
SELECT * FROM pg_temp.writes('gone', 'rb');
SELECT count(*) AS values_purged FROM worklist.run_values('p', 'gone', 'rb', '{ch,ch,ch,ch}', '{k1,k2,k3,k4}');
SELECT count(*) AS rows_left FROM worklist.run_pending_write WHERE tenant = 'run_state' AND session = 'gone';
SELECT count(*) AS values_left FROM worklist.run_channel_value WHERE tenant = 'run_state' AND session = 'gone';
SELECT worklist.set_retention();

-- ------------------------------------------------------------------
-- delete_run: the run's data and parks go, the pending tasks of its
-- current park are withdrawn, its lease ends and its fence is superseded
-- by one nobody holds; fences never rewind; a conclusion stays.
-- ------------------------------------------------------------------
SELECT count(*) AS opened
  FROM unnest('{del-1,del-2,del-done,del-other}'::text[]) t, worklist.open_task(t, 'del-case', '{r}');
SELECT (worklist.claim('del-done', 'x', '{r}')).holder AS claimed_by,
       worklist.complete('del-done', 'x', '{}') AS completed;
SELECT worklist.write_checkpoint('p', 'sd', 'del', 'c1', '{}', created_at => '2024-03-01 10:00');
-- the run parks on three tasks, one of them settled already
SELECT checkpoint_id, park_tasks
  FROM worklist.park_run('p', 'sd', 'del', 'c2', '{del-1,del-2,del-done}', now => '2024-03-01 11:00');
SELECT worklist.put_writes('p', 'sd', 'del', 'c2', 't', '{0,-1}', '{a,__error__}', ARRAY['1', '2']::jsonb[]),
       worklist.put_values('p', 'sd', 'del', '{a,b}', '{v1,v1}', ARRAY['1', '2']::jsonb[]);
SELECT fence AS fd FROM worklist.claim_run('p', 'sd', 'del', 'w1', '1 hour', now => '2024-03-01 12:00') \gset
-- the fence rule of conclude_run: NULL refused while the lease is
-- unexpired, a fence not the current one refused
\set VERBOSITY terse
SELECT worklist.delete_run('p', 'sd', 'del', now => '2024-03-01 12:30');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.delete_run('p', 'sd', 'del', fence => :fd + 1, now => '2024-03-01 12:30');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT worklist.delete_run('p', 'sd', 'never-claimed', fence => 1);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.delete_run('p', 'sd', 'del', fence => :fd, now => 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.delete_run('p', 'sd', 'del', fence => :fd, now => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.delete_run('p', 'sd', NULL, fence => :fd);
\echo :LAST_ERROR_SQLSTATE
-- nothing changed
SELECT count(*) AS checkpoints FROM worklist.list_checkpoints('p', 'sd', 'del');
-- the holder deletes it: returns the checkpoints removed
SELECT worklist.delete_run('p', 'sd', 'del', fence => :fd, now => '2024-03-01 12:30') AS removed;
SELECT count(*) AS checkpoints FROM worklist.list_checkpoints('p', 'sd', 'del');
SELECT worklist.latest_checkpoint('p', 'sd', 'del') IS NULL AS no_latest;
SELECT count(*) AS writes FROM worklist.pending_writes('p', 'sd', 'del', 'c2');
SELECT count(*) AS vals FROM worklist.run_values('p', 'sd', 'del', '{a,b}', '{v1,v1}');
SELECT count(*) AS park_records FROM worklist.run_park_task WHERE tenant = 'run_state' AND run = 'del';
SELECT cardinality(p.entries) AS listed FROM worklist.list_durable_runs('p', 'sd') p;
-- the pending tasks of the park were withdrawn; settled and other tasks are as they were
SELECT id, state FROM unnest('{del-1,del-2,del-done,del-other}'::text[]) t, worklist.task(t) ORDER BY id;
-- the lease ended at now, under a new fence nobody holds: the former
-- holder's fence is stale for every write, and a new claim gets a higher one
SELECT l.holder, l.fence > :fd AS superseded, l.expires_at, l.released
  FROM worklist.run_claim l WHERE l.tenant = 'run_state' AND l.run = 'del';
SELECT fence AS fnew FROM worklist.run_claim WHERE tenant = 'run_state' AND run = 'del' \gset
\set VERBOSITY terse
SELECT worklist.put_writes('p', 'sd', 'del', 'c3', 't', '{0}', '{a}', ARRAY['1']::jsonb[], fence => :fd);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.put_values('p', 'sd', 'del', '{a}', '{v2}', ARRAY['1']::jsonb[], fence => :fd);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.write_checkpoint('p', 'sd', 'del', 'c3', '{}', fence => :fd);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release_run('p', 'sd', 'del', :fd);
\set VERBOSITY default
SELECT fence > :fnew AS higher, holder FROM worklist.claim_run('p', 'sd', 'del', 'w2', '1 hour', now => '2024-03-01 12:31');
SELECT fence AS f2 FROM worklist.run_claim WHERE tenant = 'run_state' AND run = 'del' \gset
SELECT worklist.write_checkpoint('p', 'sd', 'del', 'c3', '{}', fence => :f2, created_at => '2024-03-01 12:32');
-- deleted again by the new holder; then with NULL once nobody holds it
SELECT worklist.delete_run('p', 'sd', 'del', fence => :f2, now => '2024-03-01 12:33') AS removed;
SELECT worklist.delete_run('p', 'sd', 'del', now => '2024-03-01 12:34') AS removed;
SELECT fence > :f2 AS never_rewinds FROM worklist.run_claim WHERE tenant = 'run_state' AND run = 'del';
-- a run nobody ever claimed goes entirely; so do writes of a run that
-- has no row at all
SELECT worklist.write_checkpoint('p', 'sd', 'plain', 'c1', '{}', parent_run => 'root');
SELECT worklist.put_writes('p', 'sd', 'orphan', 'c1', 't', '{0}', '{a}', ARRAY['1']::jsonb[]);
SELECT worklist.delete_run('p', 'sd', 'plain') AS removed, worklist.delete_run('p', 'sd', 'orphan') AS removed;
SELECT count(*) AS rows FROM worklist.run WHERE tenant = 'run_state' AND run IN ('plain', 'orphan');
SELECT count(*) AS writes FROM worklist.pending_writes('p', 'sd', 'orphan', 'c1');
-- a new write starts the run afresh
SELECT worklist.write_checkpoint('p', 'sd', 'plain', 'c9', '{}');
SELECT checkpoint_id, parent_run FROM worklist.latest_checkpoint('p', 'sd', 'plain');
-- a concluded run: its data goes, its conclusion stays
SELECT worklist.write_checkpoint('p', 'sd', 'ended', 'c1', '{}');
SELECT worklist.conclude_run('p', 'sd', 'ended', now => '2024-04-01') AS withdrawn;
SELECT worklist.delete_run('p', 'sd', 'ended') AS removed;
SELECT concluded_at, checkpoint_count, listed FROM worklist.run WHERE tenant = 'run_state' AND run = 'ended';
SELECT worklist.put_writes('p', 'sd', 'ended', 'c1', 't', '{0}', '{a}', ARRAY['1']::jsonb[]);
\echo :LAST_ERROR_SQLSTATE

-- erase_tenant removes every pending write and value of the tenant, and
-- nothing of another's
SELECT worklist.put_writes('p', 's1', 'r1', 'x1', 't', '{0}', '{ch}', ARRAY['1']::jsonb[]);
SET worklist.tenant = 'run_state_other';
SELECT worklist.put_writes('p', 's1', 'r1', 'x1', 't', '{0}', '{ch}', ARRAY['1']::jsonb[]),
       worklist.put_values('p', 's1', 'r1', '{ch}', '{v}', ARRAY['1']::jsonb[]);
SELECT worklist.erase_tenant() > 0 AS erased;
SELECT count(*) AS writes_left FROM worklist.run_pending_write WHERE tenant = 'run_state_other';
SELECT count(*) AS values_left FROM worklist.run_channel_value WHERE tenant = 'run_state_other';
SET worklist.tenant = 'run_state';
SELECT count(*) > 0 AS others_kept FROM worklist.run_pending_write WHERE tenant = 'run_state';
SELECT worklist.erase_tenant() > 0 AS erased;
SELECT count(*) AS writes_left FROM worklist.run_pending_write WHERE tenant = 'run_state';
SELECT count(*) AS values_left FROM worklist.run_channel_value WHERE tenant = 'run_state';
