-- Tickets: the documented surface (names, argument lists, defaults,
-- return types, volatility, PUBLIC access), the log's guards as seen by a
-- role that was granted every privilege, and the refusals.
BEGIN;
SELECT plan(42);

-- Types
SELECT enum_has_labels('worklist', 'participation',
	ARRAY['acknowledged', 'working', 'blocked', 'delivered', 'abandoned'], 'participation values, in rank order');
SELECT enum_has_labels('worklist', 'outcome', ARRAY['done', 'archived'], 'outcome values');
SELECT enum_has_labels('worklist', 'ticket_status',
	ARRAY['open', 'acknowledged', 'working', 'blocked', 'delivered', 'unowned', 'done', 'archived'],
	'ticket_status values');
SELECT has_composite('worklist', 'ticket_fold', 'ticket_fold is a composite type');
SELECT is(
	ARRAY(SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute
	       WHERE attrelid = 'worklist.ticket_fold'::regclass AND attnum BETWEEN 1 AND 13 ORDER BY attnum),
	ARRAY['ticket text', 'state worklist.ticket_status', 'deadline timestamp with time zone',
	      'overdue boolean', 'live_actors text[]', 'blocked_actors text[]', 'abandoned jsonb',
	      'unauthorized_close text[]', 'interrupted text[]', 'confirmation jsonb', 'closed_by text',
	      'closed_at timestamp with time zone', 'escalation_rung integer'],
	'ticket_fold has the documented fields in the documented order');
SELECT is(
	ARRAY(SELECT attname::text FROM pg_attribute
	       WHERE attrelid = 'worklist.ticket_event'::regclass AND attnum BETWEEN 1 AND 7 ORDER BY attnum),
	ARRAY['ticket', 'actor', 'at', 'kind', 'value', 'reason', 'not_before'],
	'ticket_event starts with the documented fields in the documented order');

-- Verbs: argument names, defaults, results
SELECT is(pg_get_function_arguments('worklist.open_ticket'::regproc),
	'id text, requester text, title text, body jsonb DEFAULT ''{}''::jsonb, authorities text[] DEFAULT ''{}''::text[], open_deadline timestamp with time zone DEFAULT NULL::timestamp with time zone, confirm_window interval DEFAULT NULL::interval, ladder interval[] DEFAULT ''{}''::interval[]',
	'open_ticket arguments');
SELECT is(pg_get_function_arguments('worklist.report'::regproc),
	'ticket text, actor text, value worklist.participation, not_before timestamp with time zone DEFAULT NULL::timestamp with time zone, reason text DEFAULT NULL::text, at timestamp with time zone DEFAULT now()',
	'report arguments');
SELECT is(pg_get_function_arguments('worklist.close_ticket'::regproc),
	'ticket text, actor text, outcome worklist.outcome, reason text DEFAULT NULL::text, at timestamp with time zone DEFAULT now()',
	'close_ticket arguments');
SELECT is(pg_get_function_arguments('worklist.ticket_state'::regproc),
	'ticket text, now timestamp with time zone DEFAULT now()', 'ticket_state arguments');
SELECT is(pg_get_function_arguments('worklist.ticket_history'::regproc), 'ticket text',
	'ticket_history arguments');
SELECT is(pg_get_function_arguments('worklist.overdue_tickets'::regproc),
	'now timestamp with time zone DEFAULT now(), lim integer DEFAULT 100', 'overdue_tickets arguments');
SELECT function_returns('worklist', 'open_ticket', 'worklist.ticket_fold', 'open_ticket returns ticket_fold');
SELECT function_returns('worklist', 'report', 'worklist.ticket_fold', 'report returns ticket_fold');
SELECT function_returns('worklist', 'close_ticket', 'worklist.ticket_fold', 'close_ticket returns ticket_fold');
SELECT function_returns('worklist', 'ticket_state', 'worklist.ticket_fold', 'ticket_state returns ticket_fold');
SELECT function_returns('worklist', 'ticket_history', 'setof worklist.ticket_event', 'ticket_history returns setof ticket_event');
SELECT function_returns('worklist', 'overdue_tickets', 'setof worklist.ticket_fold', 'overdue_tickets returns setof ticket_fold');
SELECT volatility_is('worklist', 'ticket_state', 'stable', 'ticket_state is STABLE');
SELECT volatility_is('worklist', 'report', 'volatile', 'report is VOLATILE');
SELECT is_aggregate('worklist', 'fold', ARRAY['worklist.ticket_event', 'worklist.ticket', 'timestamp with time zone'],
	'fold is an aggregate over events, the ticket and now');
SELECT is(
	(SELECT count(*)::int FROM pg_proc
	  WHERE pronamespace = 'worklist'::regnamespace
	    AND proname IN ('open_ticket', 'report', 'close_ticket', 'ticket_state', 'ticket_history', 'overdue_tickets')
	    AND has_function_privilege('public', oid, 'EXECUTE')),
	6, 'PUBLIC may execute every ticket verb');

-- Storage: the guards and the indexes the watchdog and overdue_tickets use
SELECT trigger_is('worklist', 'ticket_event', 'append_only', 'worklist', 'ticket_log_guard',
	'the log has its append-only trigger');
SELECT trigger_is('worklist', 'ticket', 'verbs_only', 'worklist', 'ticket_log_guard',
	'tickets have their verbs-only trigger');
SELECT has_index('worklist', 'ticket', 'ticket_overdue', ARRAY['tenant', 'overdue_from', 'id'],
	'partial index for overdue_tickets');
SELECT has_index('worklist', 'ticket', 'ticket_watchdog', ARRAY['tenant', 'next_check', 'id'],
	'partial index for the watchdog');

-- A role granted every privilege on the tables still cannot rewrite,
-- remove or forge events.
SET LOCAL worklist.tenant = 'tap_surface';
SET LOCAL timezone = 'UTC';
SELECT lives_ok($$SELECT worklist.open_ticket('k', 'req', 't')$$, 'open a ticket');
SELECT lives_ok($$SELECT worklist.report('k', 'ann', 'abandoned', reason => 'first reason', at => '2030-01-01')$$,
	'ann abandons with a reason');
CREATE ROLE tap_ticket_writer;
GRANT USAGE ON SCHEMA worklist TO tap_ticket_writer;
SELECT worklist.grant_tenant('tap_surface', 'tap_ticket_writer', 'service');
GRANT ALL ON worklist.ticket, worklist.ticket_event TO tap_ticket_writer;
SET LOCAL ROLE tap_ticket_writer;
SELECT throws_ok($$UPDATE worklist.ticket_event SET reason = NULL$$, '42501', NULL,
	'UPDATE of the log is refused even with the privilege');
SELECT throws_ok($$DELETE FROM worklist.ticket_event$$, '42501', NULL,
	'DELETE from the log is refused even with the privilege');
SELECT throws_ok($$TRUNCATE worklist.ticket_event$$, '42501', NULL,
	'TRUNCATE of the log is refused even with the privilege');
SELECT throws_ok($$UPDATE worklist.ticket SET state = 'done'$$, '42501', NULL,
	'a ticket''s state cannot be overwritten even with the privilege');
SELECT throws_ok($$INSERT INTO worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value)
                   VALUES ('tap_surface', 'k', 2, 'ann', now(), 'participation', 'working')$$, '42501', NULL,
	'inserting behind the verbs is refused');
SELECT throws_ok($$SELECT worklist.report('k', 'worklist.watchdog', 'working')$$, '22023', NULL,
	'nobody reports as the watchdog');
SELECT throws_ok($$SELECT worklist.close_ticket('k', 'worklist.watchdog', 'done')$$, '22023', NULL,
	'nobody closes as the watchdog');
RESET ROLE;
SELECT is((SELECT reason FROM worklist.ticket_history('k') WHERE seq = 1), 'first reason',
	'the reason ann gave is still in the log');
SELECT throws_ok($$UPDATE worklist.ticket_event SET reason = NULL$$, '42501', NULL,
	'the owner cannot rewrite the log either');

-- Refusals
SELECT throws_ok($$SELECT worklist.report('missing', 'ann', 'working')$$, 'WL001', NULL,
	'events for a missing ticket: WL001');
SELECT throws_ok($$SELECT worklist.report('k', 'ann', 'done')$$, '22P02', NULL,
	'an unknown participation value: 22P02');
SELECT throws_ok($$SELECT worklist.close_ticket('k', 'req', 'abandoned')$$, '22P02', NULL,
	'an unknown outcome value: 22P02');
SELECT throws_ok($$SELECT worklist.report('k', NULL, 'working')$$, '22023', NULL, 'NULL actor: 22023');
SELECT throws_ok($$SELECT worklist.report('k', 'ann', 'working', at => NULL)$$, '22023', NULL, 'NULL at: 22023');

SELECT * FROM finish();
ROLLBACK;
