-- Tickets: the watchdog (doc/reference.md, section 5), driven by sweep with a
-- moved clock.  Each case runs in a tenant of its own so the counts sweep
-- returns are that case's alone.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- What the watchdog reads and writes, compactly.
CREATE FUNCTION pg_temp.w(now timestamptz, lim int DEFAULT NULL)
RETURNS TABLE (escalated int, confirmed int)
LANGUAGE sql AS $$
	SELECT tickets_escalated, tickets_confirmed FROM worklist.sweep(now, lim)
$$;
CREATE FUNCTION pg_temp.log(k text)
RETURNS TABLE (seq bigint, actor text, at timestamptz, kind text, value text, watchdog boolean)
LANGUAGE sql AS $$
	SELECT seq, actor, at, kind, value, watchdog FROM worklist.ticket_history(k)
$$;

------------------------------------------------------------------------
-- The ladder: rung 1 once overdue, rung r + 1 once ladder[r] has passed
-- since rung r, up to array_length(ladder) + 1; a participation event
-- starts it again.
------------------------------------------------------------------------
SET worklist.tenant = 'ticket_watchdog_ladder';
SELECT ticket FROM worklist.open_ticket('k', 'req', 'ladder', ladder => '{1 hour, 2 hours}');
SELECT state, deadline FROM worklist.report('k', 'ann', 'working', not_before => '2030-01-01 10:00', at => '2030-01-01 09:00');
SELECT * FROM pg_temp.w('2030-01-01 09:59:59');		-- not overdue yet
SELECT * FROM pg_temp.w('2030-01-01 10:00');			-- at the deadline: rung 1
SELECT * FROM pg_temp.w('2030-01-01 10:00');			-- same instant: nothing more
SELECT * FROM pg_temp.w('2030-01-01 10:59:59');		-- ladder[1] not yet passed
SELECT escalation_rung, state, live_actors FROM worklist.ticket_state('k', '2030-01-01 10:59:59');
SELECT * FROM pg_temp.w('2030-01-01 11:00');			-- rung 2
SELECT * FROM pg_temp.w('2030-01-01 12:59:59');
SELECT * FROM pg_temp.w('2030-01-01 13:00');			-- rung 3 = array_length + 1
SELECT * FROM pg_temp.w('2031-01-01');				-- the top: nothing more, ever
SELECT escalation_rung FROM worklist.ticket_state('k', '2031-01-01');
-- a participation event starts the ladder again
SELECT state, deadline, escalation_rung
  FROM worklist.report('k', 'ann', 'working', not_before => '2030-01-01 14:00', at => '2030-01-01 13:30');
SELECT * FROM pg_temp.w('2030-01-01 13:59');
SELECT * FROM pg_temp.w('2030-01-01 14:00');
SELECT escalation_rung FROM worklist.ticket_state('k', '2030-01-01 14:00');
SELECT * FROM pg_temp.log('k');
-- each escalation appended one event and changed nothing else: the
-- definition is as it was opened, and nobody's participation moved
SELECT requester, title, authorities, open_deadline, confirm_window, ladder
  FROM worklist.ticket WHERE tenant = 'ticket_watchdog_ladder';
SELECT state, live_actors, deadline FROM worklist.ticket_state('k', '2030-01-01 14:00');
SELECT worklist.erase_tenant() AS erased;

------------------------------------------------------------------------
-- An empty ladder escalates once per stall.  A ticket nobody gave a
-- deadline is due now.
------------------------------------------------------------------------
SET worklist.tenant = 'ticket_watchdog_once';
SELECT ticket, overdue FROM worklist.open_ticket('k', 'req', 'no ladder');
SELECT * FROM pg_temp.w('2030-01-01 09:00');
SELECT * FROM pg_temp.w('2030-01-02 09:00');
SELECT * FROM pg_temp.w('2031-01-01 09:00');
SELECT state, escalation_rung FROM worklist.report('k', 'ann', 'blocked', at => '2031-01-01 10:00');
SELECT * FROM pg_temp.w('2031-01-01 10:00');		-- stalled again: once more
SELECT * FROM pg_temp.w('2031-01-01 11:00');
-- an escalation at the same instant as the latest participation counts
SELECT escalation_rung FROM worklist.ticket_state('k', '2031-01-01 11:00');
-- a sweep whose clock is behind the log escalates, but its escalation is
-- older than what was said, so the rung stays 0 and the next sweep
-- escalates again
SELECT state FROM worklist.report('k', 'ann', 'blocked', at => '2031-02-01');
SELECT * FROM pg_temp.w('2031-01-15');
SELECT escalation_rung FROM worklist.ticket_state('k', '2031-01-15');
SELECT * FROM pg_temp.w('2031-01-16');
SELECT * FROM pg_temp.log('k');
SELECT worklist.erase_tenant() AS erased;

------------------------------------------------------------------------
-- Implicit confirmation: every live actor delivered and nothing said for
-- confirm_window -- closed done by the watchdog, confirmation first (the
-- ticket is not escalated by the sweep that closes it).
------------------------------------------------------------------------
SET worklist.tenant = 'ticket_watchdog_confirm';
SELECT ticket FROM worklist.open_ticket('k', 'req', 'confirm', confirm_window => '1 hour');
SELECT state FROM worklist.report('k', 'ann', 'delivered', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('k', 'bob', 'abandoned', reason => 'not needed', at => '2030-01-01 10:10');
SELECT state FROM worklist.report('k', 'cy', 'delivered', at => '2030-01-01 10:20');
-- overdue (no deadline) but the window has not passed: escalated
SELECT * FROM pg_temp.w('2030-01-01 11:19:59');
-- window passed since the latest event: confirmed, and not escalated
SELECT * FROM pg_temp.w('2030-01-01 11:20');
SELECT state, closed_by, closed_at, confirmation, overdue, deadline
  FROM worklist.ticket_state('k', '2030-01-01 11:20');
SELECT * FROM pg_temp.w('2031-01-01');				-- terminal: never again
SELECT * FROM pg_temp.log('k');
SELECT worklist.erase_tenant() AS erased;

-- Whether or not it is overdue: a far deadline does not delay it.
SET worklist.tenant = 'ticket_watchdog_confirm_far';
SELECT ticket FROM worklist.open_ticket('k', 'req', 'confirm far', confirm_window => '30 minutes',
	open_deadline => '2040-01-01');
SELECT state FROM worklist.report('k', 'ann', 'delivered', at => '2030-01-01 10:00');
SELECT overdue FROM worklist.ticket_state('k', '2030-01-01 10:30');
SELECT * FROM pg_temp.w('2030-01-01 10:29:59');
SELECT * FROM pg_temp.w('2030-01-01 10:30');
SELECT state, confirmation->>'kind' AS kind, confirmation->'delivered_by' AS delivered_by
  FROM worklist.ticket_state('k', '2030-01-01 10:30');
SELECT worklist.erase_tenant() AS erased;

-- Not confirmed: somebody is still working; nobody is live; no window;
-- an objection (any participation) inside the window restarts it.
SET worklist.tenant = 'ticket_watchdog_no_confirm';
SELECT ticket FROM worklist.open_ticket('working', 'req', 't', confirm_window => '1 hour', open_deadline => '2040-01-01');
SELECT state FROM worklist.report('working', 'ann', 'delivered', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('working', 'bob', 'working', not_before => '2040-01-01', at => '2030-01-01 10:00');
SELECT ticket FROM worklist.open_ticket('gone', 'req', 't', confirm_window => '1 hour', open_deadline => '2040-01-01');
SELECT state FROM worklist.report('gone', 'ann', 'delivered', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('gone', 'ann', 'abandoned', reason => 'wrong fix', at => '2030-01-01 10:05');
SELECT ticket FROM worklist.open_ticket('nowindow', 'req', 't', open_deadline => '2040-01-01');
SELECT state FROM worklist.report('nowindow', 'ann', 'delivered', at => '2030-01-01 10:00');
SELECT ticket FROM worklist.open_ticket('objection', 'req', 't', confirm_window => '1 hour', open_deadline => '2040-01-01');
SELECT state FROM worklist.report('objection', 'ann', 'delivered', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('objection', 'ann', 'delivered', reason => 'one more fix', at => '2030-01-01 10:45');
SELECT * FROM pg_temp.w('2030-01-01 11:00');
SELECT ticket, state FROM worklist.ticket_state('working', '2030-01-01 11:00')
UNION ALL SELECT ticket, state FROM worklist.ticket_state('gone', '2030-01-01 11:00')
UNION ALL SELECT ticket, state FROM worklist.ticket_state('nowindow', '2030-01-01 11:00')
UNION ALL SELECT ticket, state FROM worklist.ticket_state('objection', '2030-01-01 11:00');
SELECT * FROM pg_temp.w('2030-01-01 11:45');
SELECT ticket, state, closed_at FROM worklist.ticket_state('objection', '2030-01-01 11:45');
-- an escalation is not an objection: it does not restart the window
SELECT ticket FROM worklist.open_ticket('escalated', 'req', 't', confirm_window => '1 hour');
SELECT state FROM worklist.report('escalated', 'ann', 'delivered', at => '2030-01-02 10:00');
SELECT * FROM pg_temp.w('2030-01-02 10:30');
SELECT * FROM pg_temp.w('2030-01-02 11:00');
SELECT ticket, state, closed_at FROM worklist.ticket_state('escalated', '2030-01-02 11:00');
SELECT worklist.erase_tenant() AS erased;

-- A delivery by an agent without authority (a demoted done) is a
-- delivery like any other: confirmed after the window.
SET worklist.tenant = 'ticket_watchdog_demoted';
SELECT ticket FROM worklist.open_ticket('k', 'req', 't', confirm_window => '1 hour', open_deadline => '2040-01-01');
SELECT state, unauthorized_close FROM worklist.close_ticket('k', 'agent', 'done', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.w('2030-01-01 11:00');
SELECT state, closed_by, confirmation, unauthorized_close FROM worklist.ticket_state('k', '2030-01-01 11:00');
SELECT worklist.erase_tenant() AS erased;

------------------------------------------------------------------------
-- Terminal tickets are left alone; `lim` bounds the tickets acted on;
-- the earliest due go first.
------------------------------------------------------------------------
SET worklist.tenant = 'ticket_watchdog_lim';
SELECT count(*) FROM (
	SELECT worklist.open_ticket('t' || i, 'req', 't',
	       open_deadline => '2030-01-01'::timestamptz + i * interval '1 hour')
	  FROM generate_series(1, 5) i) s;
SELECT ticket FROM worklist.open_ticket('closed', 'req', 't', open_deadline => '2020-01-01');
SELECT state FROM worklist.close_ticket('closed', 'req', 'archived', reason => 'dup', at => '2029-01-01');
SELECT * FROM pg_temp.w('2031-01-01', 2);
SELECT ticket, escalation_rung FROM worklist.overdue_tickets('2031-01-01') ORDER BY 1;
SELECT * FROM pg_temp.w('2031-01-01', 0);		-- clamped to 1
SELECT * FROM pg_temp.w('2031-01-01', -7);
SELECT * FROM pg_temp.w('2031-01-01', NULL);		-- the default, 1000
SELECT * FROM pg_temp.w('2031-01-01');
SELECT count(*) AS events FROM worklist.ticket_history('closed');
-- what the watchdog keeps on each row: when it next has something to do
SELECT id, state, deadline, overdue_from, next_check FROM worklist.ticket
 WHERE tenant = 'ticket_watchdog_lim' ORDER BY id;
SELECT worklist.erase_tenant() AS erased;

------------------------------------------------------------------------
-- The summary's watch instants follow the ladder and the window.
------------------------------------------------------------------------
SET worklist.tenant = 'ticket_watchdog_next';
SELECT ticket FROM worklist.open_ticket('k', 'req', 't', open_deadline => '2030-01-01 10:00',
	confirm_window => '3 hours', ladder => '{1 mon, 1 day}');
SELECT next_check FROM worklist.ticket WHERE tenant = 'ticket_watchdog_next';
SELECT * FROM pg_temp.w('2030-01-31 10:00');
-- a month after January 31st is the end of February
SELECT next_check FROM worklist.ticket WHERE tenant = 'ticket_watchdog_next';
-- days are added in UTC whatever the session's time zone: one day after
-- 12:00 UTC on the eve of New York's switch to summer time is 12:00 UTC
-- the next day (New York's wall clock would say 11:00 UTC)
SET timezone = 'America/New_York';
SELECT * FROM pg_temp.w('2030-03-09 12:00+00');
SELECT next_check AT TIME ZONE 'UTC' AS next_check_utc
  FROM worklist.ticket WHERE tenant = 'ticket_watchdog_next';
SELECT * FROM pg_temp.w('2030-03-10 11:59:59+00');
SET timezone = 'UTC';
SELECT * FROM pg_temp.w('2030-03-10 12:00');
-- a delivery: not overdue before June, confirmed three hours later
SELECT state, escalation_rung
  FROM worklist.report('k', 'ann', 'delivered', not_before => '2030-06-01', at => '2030-03-10 13:00');
SELECT next_check FROM worklist.ticket WHERE tenant = 'ticket_watchdog_next';
SELECT * FROM pg_temp.w('2030-03-10 15:59:59');
SELECT * FROM pg_temp.w('2030-03-10 16:00');
SELECT state, overdue_from, next_check FROM worklist.ticket WHERE tenant = 'ticket_watchdog_next';
SELECT worklist.erase_tenant() AS erased;

-- A window or rung that would end past the end of time never comes, and
-- never makes an append fail.
SET worklist.tenant = 'ticket_watchdog_far';
SELECT ticket FROM worklist.open_ticket('k', 'req', 't', confirm_window => '100000 years',
	ladder => '{100000 years}');
SELECT state FROM worklist.report('k', 'ann', 'delivered', at => '294276-12-31');
SELECT * FROM pg_temp.w('294276-12-31');
SELECT * FROM pg_temp.w('294276-12-31 23:59:59');
SELECT escalation_rung, state FROM worklist.ticket_state('k', '294276-12-31 23:59:59');
SELECT next_check FROM worklist.ticket WHERE tenant = 'ticket_watchdog_far';
SELECT worklist.erase_tenant() AS erased;

-- The watchdog writes its events at `now`, so `now` must be finite.
SET worklist.tenant = 'ticket_watchdog_far';
SELECT * FROM worklist.sweep('infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.sweep('-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM worklist.sweep(NULL);
\echo :LAST_ERROR_SQLSTATE
