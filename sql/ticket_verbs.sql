-- Tickets: the verbs, their arguments and their refusals (doc/reference.md,
-- section 5).  The fold's rules have their own tests in ticket_fold; the
-- watchdog in ticket_watchdog.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE so the
-- expected output pins the SQLSTATE as well as the message.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET worklist.tenant = 'ticket_verbs';

-- open_ticket creates the ticket in state open; its deadline is the
-- open_deadline until somebody speaks.
SELECT * FROM worklist.open_ticket('k1', 'req', 'Fix the build',
	body => '{"repo": "x"}', authorities => '{lead}',
	open_deadline => '2030-01-01 12:00', confirm_window => '2 hours',
	ladder => '{1 hour, 4 hours}');
SELECT id, requester, title, body, authorities, open_deadline, confirm_window,
       ladder, state, deadline
  FROM worklist.ticket WHERE tenant = 'ticket_verbs';

-- Opening it again returns the existing ticket unchanged, whatever the
-- other arguments say.
SELECT ticket, state, deadline FROM worklist.open_ticket('k1', 'other', 'Another title',
	open_deadline => '2040-01-01');
SELECT requester, title, open_deadline FROM worklist.ticket WHERE tenant = 'ticket_verbs' AND id = 'k1';
-- ... and so does it after events: the fold, not the definition.
SELECT state, live_actors FROM worklist.report('k1', 'ann', 'working', at => '2030-01-01 09:00');
SELECT ticket, state, live_actors FROM worklist.open_ticket('k1', 'req', 'Fix the build');

-- Defaults: no body, no authorities, no deadline, no window, no ladder.
SELECT ticket, state, deadline, overdue FROM worklist.open_ticket('k2', 'req', '');
SELECT body, authorities, open_deadline, confirm_window, ladder
  FROM worklist.ticket WHERE tenant = 'ticket_verbs' AND id = 'k2';

-- report appends a participation event and returns the fold; close_ticket
-- appends an outcome.
SELECT state, live_actors, deadline
  FROM worklist.report('k1', 'bob', 'acknowledged', not_before => '2030-01-01 10:00',
	reason => 'looking', at => '2030-01-01 09:05');
SELECT state, closed_by, closed_at, confirmation
  FROM worklist.close_ticket('k1', 'lead', 'done', reason => 'shipped', at => '2030-01-01 11:00');

-- ticket_history: every event in arrival order, the documented fields
-- first.
SELECT * FROM worklist.ticket_history('k1');
SELECT attname FROM pg_attribute
 WHERE attrelid = 'worklist.ticket_event'::regclass AND attnum > 0 AND NOT attisdropped
 ORDER BY attnum;

-- ticket_state judges at the `now` it is given.
SELECT ticket, state, overdue FROM worklist.ticket_state('k2', '2020-01-01');
SELECT ticket, state, overdue FROM worklist.ticket_state('k1', '2020-01-01');

-- ticket_fold has the documented fields, in the documented order.
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'worklist.ticket_fold'::regclass AND attnum > 0
 ORDER BY attnum;

-- Unknown ticket: WL001 from every verb that names one.
SELECT * FROM worklist.report('nope', 'ann', 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('nope', 'req', 'done');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.ticket_state('nope');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.ticket_history('nope');
\echo :LAST_ERROR_SQLSTATE
-- ... and ids are per tenant.
SET worklist.tenant = 'ticket_verbs_other';
SELECT * FROM worklist.ticket_state('k1');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM worklist.overdue_tickets('infinity');
SET worklist.tenant = 'ticket_verbs';

-- Identifiers: NULL, empty, longer than 256 characters (also 1 MB).
SELECT * FROM worklist.open_ticket(NULL, 'req', 't');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('', 'req', 't');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket(repeat('k', 257), 'req', 't');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket(repeat('k', 1000000), 'req', 't');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', NULL, 't');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', '', 't');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', repeat('r', 257), 't');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report(NULL, 'ann', 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('', 'ann', 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report(repeat('k', 1000000), 'ann', 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k1', NULL, 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k1', '', 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k1', repeat('a', 257), 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k1', repeat('a', 1000000), 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket(NULL, 'req', 'done');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k1', NULL, 'done');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k1', repeat('a', 257), 'done');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.ticket_state(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.ticket_state(repeat('k', 257));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.ticket_history(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.ticket_history('');
\echo :LAST_ERROR_SQLSTATE
-- 256 characters is fine, however many bytes they take.
SELECT length(ticket), state FROM worklist.open_ticket(repeat('é', 256), repeat('é', 256), 't');
SELECT length(ticket), live_actors = ARRAY[repeat('ü', 256)] AS actor_kept
  FROM worklist.report(repeat('é', 256), repeat('ü', 256), 'working', at => '2030-01-01');

-- The watchdog's name is nobody else's: refused as actor, requester or
-- authority, so no caller can write an escalation or pose as the watchdog.
SELECT * FROM worklist.report('k2', 'worklist.watchdog', 'working');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k2', 'worklist.watchdog', 'done');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'worklist.watchdog', 't');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', authorities => '{lead,worklist.watchdog}');
\echo :LAST_ERROR_SQLSTATE
-- (a name that merely resembles it is an ordinary actor)
SELECT live_actors FROM worklist.report('k2', 'worklist.watchdog2', 'working', at => '2030-01-01');

-- Unknown participation or outcome values fail as enum input does.
SELECT * FROM worklist.report('k2', 'ann', 'finished');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k2', 'ann', '');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k2', 'req', 'failed');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k2', 'req', 'delivered');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k2', 'ann', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k2', 'req', NULL);
\echo :LAST_ERROR_SQLSTATE

-- Timestamps: `at` NULL is refused; non-finite `at`, not_before and
-- open_deadline are refused (an event at infinity would outrank every
-- later one forever; a deadline at infinity would silence the watchdog).
SELECT * FROM worklist.report('k2', 'ann', 'working', at => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k2', 'req', 'done', at => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k2', 'ann', 'working', at => 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k2', 'ann', 'working', at => '-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k2', 'req', 'done', at => 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k2', 'ann', 'working', not_before => 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', open_deadline => 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', open_deadline => '-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.ticket_state('k2', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.overdue_tickets(NULL);
\echo :LAST_ERROR_SQLSTATE
-- far past and far future instants are ordinary
SELECT state, deadline FROM worklist.open_ticket('k4', 'req', 't',
	open_deadline => '4713-11-24 00:00:00+00 BC', ladder => '{1000 years}',
	confirm_window => '1000 years');
SELECT state, deadline FROM worklist.report('k4', 'ann', 'working',
	not_before => '294276-12-31 23:59:59+00', at => '4713-11-24 00:00:00+00 BC');
SELECT state, deadline FROM worklist.report('k4', 'ann', 'delivered',
	at => '294276-12-31 23:59:59+00');
SELECT state, deadline, overdue FROM worklist.ticket_state('k4', 'infinity');
SELECT state, deadline, overdue FROM worklist.ticket_state('k4', '-infinity');

-- The rest of open_ticket's arguments.
SELECT * FROM worklist.open_ticket('k3', 'req', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', body => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', authorities => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', authorities => '{lead,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', authorities => '{lead,""}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', authorities => ARRAY[repeat('a', 257)]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', authorities => '{{a},{b}}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', confirm_window => '-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', confirm_window => '1 mon -31 days');
\echo :LAST_ERROR_SQLSTATE
-- an interval with a negative field can land before its base, even when it
-- compares equal to zero
SELECT * FROM worklist.open_ticket('k3', 'req', 't', confirm_window => '1 mon -30 days');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', ladder => '{1 hour, 1 day -24 hours}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', ladder => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', ladder => '{1 hour,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', ladder => '{1 hour,-1 hour}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', ladder => '{{1 hour},{2 hours}}');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS k3_exists FROM worklist.ticket WHERE tenant = 'ticket_verbs' AND id = 'k3';
-- Titles and reasons are bounded (4,096 characters, however many bytes),
-- bodies by worklist.max_document_size (54000).
SELECT * FROM worklist.open_ticket('k3', 'req', repeat('t', 4097));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', repeat('t', 1000000));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k3', 'req', 't', body => jsonb_build_object('x', repeat('b', 1048576)));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.report('k1', 'ann', 'abandoned', reason => repeat('r', 4097));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k1', 'ann', 'archived', reason => repeat('r', 4097));
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS k3_exists FROM worklist.ticket WHERE tenant = 'ticket_verbs' AND id = 'k3';
-- zero is a valid window and a valid rung; reasons and titles may be as
-- long as the bound
SELECT ticket, state FROM worklist.open_ticket('k3', 'req', repeat('té', 2048),
	confirm_window => '0', ladder => '{0, 0}');
SELECT abandoned->>'ann' = repeat('ré', 2048) AS long_reason_kept
  FROM worklist.report('k3', 'ann', 'abandoned', reason => repeat('ré', 2048), at => '2030-01-01');

-- Limits are clamped, never an error.
SELECT count(*) FROM worklist.overdue_tickets('infinity', NULL);
SELECT count(*) FROM worklist.overdue_tickets('infinity', 0);
SELECT count(*) FROM worklist.overdue_tickets('infinity', -5);
SELECT count(*) FROM worklist.overdue_tickets('infinity', 2147483647);

-- Checks come in the documented order: empty tenant, binding, arguments.
SET worklist.tenant = '';
SELECT * FROM worklist.report(NULL, NULL, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.overdue_tickets();
\echo :LAST_ERROR_SQLSTATE
CREATE ROLE wl_ticket_outsider;
CREATE ROLE wl_ticket_team;
SELECT worklist.grant_tenant('ticket_verbs', 'wl_ticket_team');
SET worklist.tenant = 'ticket_verbs';
SET ROLE wl_ticket_outsider;
SELECT * FROM worklist.report(NULL, NULL, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.open_ticket('k9', 'req', 't');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.close_ticket('k1', 'req', 'archived');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.ticket_state('k1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.ticket_history('k1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.overdue_tickets();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- A role bound as service reaches the tenant, and needs no table privilege.
SELECT worklist.grant_tenant('ticket_verbs', 'wl_ticket_outsider', 'service');
SET ROLE wl_ticket_outsider;
SELECT state FROM worklist.report('k2', 'ann', 'working', at => '2030-01-02');
SELECT count(*) FROM worklist.ticket_history('k2');
RESET ROLE;
SELECT worklist.revoke_tenant('ticket_verbs', 'wl_ticket_outsider');
SELECT worklist.revoke_tenant('ticket_verbs', 'wl_ticket_team');
DROP ROLE wl_ticket_outsider, wl_ticket_team;

-- Which verbs PUBLIC may execute: all of them.
SELECT p.oid::regprocedure, has_function_privilege('public', p.oid, 'EXECUTE') AS public
  FROM pg_proc p
 WHERE p.pronamespace = 'worklist'::regnamespace
   AND p.proname IN ('open_ticket', 'report', 'close_ticket', 'ticket_state',
                     'ticket_history', 'overdue_tickets', 'fold')
 ORDER BY 1::text;
-- Volatility: readers are STABLE, writers VOLATILE.
SELECT p.proname, p.provolatile
  FROM pg_proc p
 WHERE p.pronamespace = 'worklist'::regnamespace
   AND p.proname IN ('open_ticket', 'report', 'close_ticket', 'ticket_state',
                     'ticket_history', 'overdue_tickets')
 ORDER BY 1;

-- search_path tricks change nothing: an "=" for text and a "<=" for
-- timestamptz that are always true, and a lookalike now(), first on the
-- path.
SELECT ticket, overdue FROM worklist.open_ticket('k5', 'req', 'not due before 2031',
	open_deadline => '2031-01-01');
SET worklist.tenant = 'ticket_verbs_other';
SELECT ticket, overdue FROM worklist.open_ticket('other', 'req', 'another tenant''s');
SET worklist.tenant = 'ticket_verbs';
CREATE SCHEMA ticket_evil;
CREATE FUNCTION ticket_evil.yes(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE FUNCTION ticket_evil.yes(timestamptz, timestamptz) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR ticket_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = ticket_evil.yes);
CREATE OPERATOR ticket_evil.<= (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = ticket_evil.yes);
CREATE FUNCTION ticket_evil.now() RETURNS timestamptz LANGUAGE sql AS $$SELECT 'epoch'::timestamptz$$;
SET search_path = ticket_evil, pg_catalog, public;
SELECT 'a'::text = 'b'::text AS hijacked_equals, now() = 'epoch' AS hijacked_now;
SELECT ticket, state, overdue FROM worklist.ticket_state('k4', '2000-01-01');
SELECT count(*) AS history_k2 FROM worklist.ticket_history('k2');
SELECT count(*) AS overdue, count(*) FILTER (WHERE ticket OPERATOR(pg_catalog.=) ANY ('{k5,other}')) AS wrongly
  FROM worklist.overdue_tickets('2030-01-01 12:00');
SELECT state, live_actors FROM worklist.report('k2', 'cy', 'blocked', at => '2030-01-03');
SELECT tickets_escalated FROM worklist.sweep('2000-01-01');
RESET search_path;
DROP SCHEMA ticket_evil CASCADE;

SELECT worklist.erase_tenant() > 0 AS erased;
SET worklist.tenant = 'ticket_verbs_other';
SELECT worklist.erase_tenant() AS erased_other;
