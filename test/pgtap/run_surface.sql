-- Runs: the SQL surface of doc/reference.md section 6, to the letter.
BEGIN;
SELECT plan(25);

SELECT is(pg_get_function_identity_arguments('worklist.write_checkpoint'::regproc),
	'project text, session text, run text, checkpoint_id text, body jsonb, fence bigint, parent_run text, created_at timestamp with time zone, run_created_at timestamp with time zone, park_request text, parked_at timestamp with time zone, park_deadline timestamp with time zone, park_resolved_at timestamp with time zone, metadata jsonb, parent_checkpoint_id text',
	'write_checkpoint arguments');
SELECT is(pg_get_expr(proargdefaults, 0),
	'NULL::bigint, NULL::text, now(), NULL::timestamp with time zone, NULL::text, NULL::timestamp with time zone, NULL::timestamp with time zone, NULL::timestamp with time zone, ''{}''::jsonb, NULL::text',
	'write_checkpoint defaults')
  FROM pg_proc WHERE oid = 'worklist.write_checkpoint'::regproc;
SELECT is(pg_get_function_identity_arguments('worklist.read_checkpoint'::regproc),
	'project text, session text, run text, checkpoint_id text', 'read_checkpoint arguments');
SELECT is(pg_get_function_identity_arguments('worklist.list_checkpoints'::regproc),
	'project text, session text, run text', 'list_checkpoints arguments');
SELECT is(pg_get_function_identity_arguments('worklist.delete_checkpoint'::regproc),
	'project text, session text, run text, checkpoint_id text', 'delete_checkpoint arguments');
SELECT is(pg_get_function_identity_arguments('worklist.prune_checkpoints'::regproc),
	'project text, session text, run text, keep integer', 'prune_checkpoints arguments');
SELECT is(pg_get_function_identity_arguments('worklist.claim_run'::regproc),
	'project text, session text, run text, holder text, ttl interval, now timestamp with time zone',
	'claim_run arguments');
SELECT is(pg_get_function_identity_arguments('worklist.release_run'::regproc),
	'project text, session text, run text, fence bigint, now timestamp with time zone',
	'release_run arguments');
SELECT is(pg_get_function_identity_arguments('worklist.list_durable_runs'::regproc),
	'project text, session text, order_by text, park worklist.park_state[], claimed boolean, lim integer, cursor text, now timestamp with time zone, concluded boolean',
	'list_durable_runs arguments');
SELECT is(pg_get_expr(proargdefaults, 0),
	'NULL::text, NULL::text, ''run_id''::text, NULL::worklist.park_state[], NULL::boolean, 100, NULL::text, now(), NULL::boolean',
	'list_durable_runs defaults')
  FROM pg_proc WHERE oid = 'worklist.list_durable_runs'::regproc;

SELECT is(pg_get_function_identity_arguments('worklist.park_run'::regproc),
	'project text, session text, run text, checkpoint_id text, tasks text[], fence bigint, body jsonb, park_request text, park_deadline timestamp with time zone, now timestamp with time zone, metadata jsonb, parent_checkpoint_id text',
	'park_run arguments');
SELECT is(pg_get_expr(proargdefaults, 0),
	'NULL::bigint, ''{}''::jsonb, ''tasks''::text, NULL::timestamp with time zone, now(), ''{}''::jsonb, NULL::text',
	'park_run defaults')
  FROM pg_proc WHERE oid = 'worklist.park_run'::regproc;
SELECT is(pg_get_function_identity_arguments('worklist.claim_next_run'::regproc),
	'project text, holder text, ttl interval, session text, now timestamp with time zone',
	'claim_next_run arguments');
SELECT is(pg_get_expr(proargdefaults, 0), 'NULL::text, now()', 'claim_next_run defaults')
  FROM pg_proc WHERE oid = 'worklist.claim_next_run'::regproc;
SELECT is(pg_get_function_identity_arguments('worklist.conclude_run'::regproc),
	'project text, session text, run text, fence bigint, now timestamp with time zone',
	'conclude_run arguments');
SELECT is(pg_get_expr(proargdefaults, 0), 'NULL::bigint, now()', 'conclude_run defaults')
  FROM pg_proc WHERE oid = 'worklist.conclude_run'::regproc;

SELECT is(string_agg(format('%s %s%s %s', p.proname, CASE WHEN p.proretset THEN 'setof ' ELSE '' END,
                             format_type(p.prorettype, NULL), p.provolatile), '; ' ORDER BY p.proname),
	'claim_next_run worklist.claimed_run v; claim_run worklist.run_lease v; conclude_run integer v; '
	'delete_checkpoint void v; list_checkpoints setof worklist.checkpoint s; '
	'list_durable_runs worklist.durable_run_page s; park_run worklist.checkpoint v; prune_checkpoints integer v; '
	'read_checkpoint worklist.checkpoint s; release_run void v; write_checkpoint void v',
	'return types and volatility')
  FROM pg_proc p
 WHERE p.pronamespace = 'worklist'::regnamespace
   AND p.proname IN ('write_checkpoint', 'read_checkpoint', 'list_checkpoints', 'delete_checkpoint',
                     'prune_checkpoints', 'claim_run', 'release_run', 'list_durable_runs',
                     'park_run', 'claim_next_run', 'conclude_run');

-- Row types: exact field lists and order.
CREATE FUNCTION pg_temp.fields(t regtype) RETURNS text LANGUAGE sql AS $$
	SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
	  FROM pg_attribute a JOIN pg_type ty ON ty.typrelid = a.attrelid
	 WHERE ty.oid = t AND a.attnum > 0 AND NOT a.attisdropped
$$;
SELECT is(pg_temp.fields('worklist.checkpoint'),
	'project text, session text, run text, parent_run text, checkpoint_id text, created_at timestamp with time zone, run_created_at timestamp with time zone, body jsonb, park_request text, parked_at timestamp with time zone, park_deadline timestamp with time zone, park_resolved_at timestamp with time zone, park_tasks text[], metadata jsonb, parent_checkpoint_id text',
	'worklist.checkpoint fields');
SELECT is(pg_temp.fields('worklist.run_lease'),
	'holder text, fence bigint, expires_at timestamp with time zone', 'worklist.run_lease fields');
SELECT is(pg_temp.fields('worklist.durable_run'),
	'project text, session text, run text, parent_run text, run_created_at timestamp with time zone, checkpoint_count bigint, latest_checkpoint_id text, latest_checkpoint_at timestamp with time zone, park_state worklist.park_state, park_checkpoint_id text, park_request text, parked_at timestamp with time zone, park_deadline timestamp with time zone, park_resolved_at timestamp with time zone, claim_holder text, claim_fence bigint, claim_expires_at timestamp with time zone, claim_expired boolean, concluded_at timestamp with time zone',
	'worklist.durable_run fields');
SELECT is(pg_temp.fields('worklist.durable_run_page'),
	'entries worklist.durable_run[], cursor text', 'worklist.durable_run_page fields');
SELECT is(pg_temp.fields('worklist.claimed_run'),
	'project text, session text, run text, holder text, fence bigint, expires_at timestamp with time zone',
	'worklist.claimed_run fields');
SELECT enum_has_labels('worklist', 'park_state', ARRAY['outstanding', 'expired', 'resolved'],
	'park_state labels');

-- PUBLIC may call every run verb.
SELECT ok(bool_and(has_function_privilege('public', p.oid, 'EXECUTE')), 'PUBLIC executes the run verbs')
  FROM pg_proc p
 WHERE p.pronamespace = 'worklist'::regnamespace
   AND p.proname IN ('write_checkpoint', 'read_checkpoint', 'list_checkpoints', 'delete_checkpoint',
                     'prune_checkpoints', 'claim_run', 'release_run', 'list_durable_runs',
                     'park_run', 'claim_next_run', 'conclude_run');
SELECT is(count(*)::int, 11, 'eleven run verbs')
  FROM pg_proc p
 WHERE p.pronamespace = 'worklist'::regnamespace
   AND p.proname IN ('write_checkpoint', 'read_checkpoint', 'list_checkpoints', 'delete_checkpoint',
                     'prune_checkpoints', 'claim_run', 'release_run', 'list_durable_runs',
                     'park_run', 'claim_next_run', 'conclude_run');

SELECT * FROM finish();
ROLLBACK;
