-- Ticket scenarios: ten situations that happen, what the fold decides
-- about each, and what the watchdog does.  The expected output
-- (expected/ticket_scenarios.out) is meant to be read on its own, without
-- the C.
--
-- Every scenario happens on Monday 2030-03-04 (times are UTC) in a tenant
-- of its own, so a sweep there touches that scenario's ticket only.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET intervalstyle = 'postgres';
SET client_min_messages = warning;

-- "HH:MI" on the scenario's day
CREATE FUNCTION pg_temp.t(hhmi text) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$ SELECT ('2030-03-04 ' || hhmi || '+00')::timestamptz $$;
CREATE FUNCTION pg_temp.hm(ts timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', 'HH24:MI') $$;

-- What was said, in the order it arrived.
CREATE FUNCTION pg_temp.said(k text)
RETURNS TABLE ("#" bigint, "at" text, "who" text, "says" text, "not before" text, "reason" text)
LANGUAGE sql AS $$
	SELECT e.seq, pg_temp.hm(e.at), e.actor,
	       CASE e.kind WHEN 'escalation' THEN 'escalation, rung ' || e.value
	                   WHEN 'outcome' THEN 'closes it: ' || e.value
	                   ELSE e.value END,
	       pg_temp.hm(e.not_before), e.reason
	  FROM worklist.ticket_history(k) e ORDER BY e.seq
$$;

-- What the fold decides at an instant, one line per decision (empty ones
-- left out).
CREATE FUNCTION pg_temp.decides(k text, now text)
RETURNS TABLE ("the fold decides" text, " " text)
LANGUAGE sql AS $$
	SELECT d, v
	  FROM worklist.ticket_state(k, pg_temp.t(now)) f,
	       LATERAL (VALUES
		(1, 'judged at', now),
		(2, 'state', f.state::text),
		(3, 'deadline', CASE WHEN f.deadline IS NOT NULL THEN pg_temp.hm(f.deadline)
		                     WHEN f.state NOT IN ('done', 'archived') THEN 'none, so due now' END),
		(4, 'overdue', CASE WHEN f.overdue THEN 'yes' ELSE 'no' END),
		(5, 'live actors', nullif(array_to_string(f.live_actors, ', '), '')),
		(6, 'blocked', nullif(array_to_string(f.blocked_actors, ', '), '')),
		(7, 'abandoned', (SELECT string_agg(key || ': ' || value, '; ' ORDER BY key)
		                    FROM jsonb_each_text(f.abandoned))),
		(8, 'unauthorized close', nullif(array_to_string(f.unauthorized_close, ', '), '')),
		(9, 'interrupted', nullif(array_to_string(f.interrupted, ', '), '')),
		(10, 'closed by', f.closed_by || ' at ' || pg_temp.hm(f.closed_at)),
		(11, 'confirmation', f.confirmation::text),
		(12, 'close reason', f.close_reason),
		(13, 'escalation rung', nullif(f.escalation_rung, 0)::text)
	       ) AS x(n, d, v)
	 WHERE v IS NOT NULL ORDER BY n
$$;

-- An actor says something about its participation; one line of what
-- happened.
CREATE FUNCTION pg_temp.say(k text, actor text, value text, at text,
                            not_before text DEFAULT NULL, reason text DEFAULT NULL)
RETURNS text LANGUAGE sql AS $$
	SELECT at || '  ' || actor || ' says ' || value
	       || coalesce(', check by ' || not_before, '')
	       || coalesce(' ("' || reason || '")', '')
	       || '  =>  ticket ' || f.state
	  FROM worklist.report(k, actor, value::worklist.participation,
	                       pg_temp.t(not_before), reason, pg_temp.t(at)) f
$$;

-- An actor closes the ticket; one line of what happened.
CREATE FUNCTION pg_temp.close(k text, actor text, outcome text, at text, reason text DEFAULT NULL)
RETURNS text LANGUAGE sql AS $$
	SELECT at || '  ' || actor || ' closes it ' || outcome
	       || coalesce(' ("' || reason || '")', '')
	       || '  =>  ticket ' || f.state
	  FROM worklist.close_ticket(k, actor, outcome::worklist.outcome, reason, pg_temp.t(at)) f
$$;

-- Run the watchdog at an instant and say what it did.
CREATE FUNCTION pg_temp.watchdog(k text, now text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	r worklist.sweep_result := worklist.sweep(pg_temp.t(now));
	e worklist.ticket_event;
BEGIN
	SELECT * INTO e FROM worklist.ticket_history(k) ORDER BY seq DESC LIMIT 1;
	RETURN now || '  watchdog ' ||
		CASE WHEN r.tickets_confirmed > 0
		     THEN 'closes it done, implicit confirmation ' || e.confirmation::text
		     WHEN r.tickets_escalated > 0 THEN 'escalates it to rung ' || e.value
		     ELSE 'does nothing' END;
END
$$;

-- Try a statement and say how it was refused.
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
	RETURN 'refused (' || SQLSTATE || '): ' || SQLERRM;
END
$$;

\pset footer off
\pset tuples_only on

\echo 'Ten ticket scenarios.  Each lists what happened -- time, who, what they'
\echo 'said, and the state of the ticket after it -- with what the watchdog did'
\echo 'when sweeps ran at the times shown, then what the fold decides.'

\echo
\echo '=== 1. Nobody picked it up ==='
\echo 'maria opens a ticket to be picked up by 09:30, with an escalation ladder'
\echo 'of 30 minutes then 1 hour.  Nobody says anything.'
\echo
SET worklist.tenant = 'scenario-1';
SELECT 'maria opens INC-1' FROM worklist.open_ticket('INC-1', 'maria', 'Printer on fire',
	open_deadline => pg_temp.t('09:30'), ladder => '{30 minutes, 1 hour}');
\pset tuples_only off
SELECT * FROM pg_temp.decides('INC-1', '09:00');
\pset tuples_only on
SELECT pg_temp.watchdog('INC-1', '09:00')
UNION ALL SELECT pg_temp.watchdog('INC-1', '09:30')
UNION ALL SELECT pg_temp.watchdog('INC-1', '09:45')
UNION ALL SELECT pg_temp.watchdog('INC-1', '10:00')
UNION ALL SELECT pg_temp.watchdog('INC-1', '11:00')
UNION ALL SELECT pg_temp.watchdog('INC-1', '18:00');
\echo 'Due at 09:30 with nobody on it: rung 1 then, rung 2 thirty minutes'
\echo 'later, rung 3 an hour after that; the ladder is then exhausted and the'
\echo 'watchdog stops repeating itself until somebody speaks.'
\pset tuples_only off
SELECT * FROM pg_temp.decides('INC-1', '18:00');

\echo
\echo '=== 2. Healthy progress ==='
\echo 'ann acknowledges, works, delivers -- each time saying when to check on'
\echo 'her next -- and maria, who asked, confirms.'
\echo
\pset tuples_only on
SET worklist.tenant = 'scenario-2';
SELECT 'maria opens REQ-2' FROM worklist.open_ticket('REQ-2', 'maria', 'New laptop for Sam',
	open_deadline => pg_temp.t('10:00'));
SELECT pg_temp.say('REQ-2', 'ann', 'acknowledged', '09:05', '10:00')
UNION ALL SELECT pg_temp.say('REQ-2', 'ann', 'working', '09:40', '12:00')
UNION ALL SELECT pg_temp.say('REQ-2', 'ann', 'delivered', '11:50', '13:00')
UNION ALL SELECT pg_temp.watchdog('REQ-2', '11:55');
\pset tuples_only off
SELECT * FROM pg_temp.decides('REQ-2', '11:55');
\pset tuples_only on
SELECT pg_temp.close('REQ-2', 'maria', 'done', '12:10', 'Sam has it')
UNION ALL SELECT pg_temp.watchdog('REQ-2', '23:59');
\pset tuples_only off
SELECT * FROM pg_temp.decides('REQ-2', '23:59');

\echo
\echo '=== 3. Went quiet mid-work ==='
\echo 'bob starts and promises an update by 10:00.  None comes.'
\echo
\pset tuples_only on
SET worklist.tenant = 'scenario-3';
SELECT 'maria opens BUG-3' FROM worklist.open_ticket('BUG-3', 'maria', 'Login page fails');
SELECT pg_temp.say('BUG-3', 'bob', 'working', '09:00', '10:00')
UNION ALL SELECT pg_temp.watchdog('BUG-3', '09:59')
UNION ALL SELECT pg_temp.watchdog('BUG-3', '10:30');
\pset tuples_only off
SELECT * FROM pg_temp.decides('BUG-3', '10:30');
\echo 'bob speaks again: the ladder starts over.'
\pset tuples_only on
SELECT pg_temp.say('BUG-3', 'bob', 'working', '10:40', '12:00')
UNION ALL SELECT pg_temp.watchdog('BUG-3', '11:00');
\pset tuples_only off
SELECT * FROM pg_temp.decides('BUG-3', '11:00');

\echo
\echo '=== 4. One worker stalled behind a slow one ==='
\echo 'ann is on a long job due at 17:00; bob said he would check in by 10:00.'
\echo 'A ticket is due when its EARLIEST live deadline is: ann being on time'
\echo 'does not hide bob being late.'
\echo
\pset tuples_only on
SET worklist.tenant = 'scenario-4';
SELECT 'maria opens OPS-4' FROM worklist.open_ticket('OPS-4', 'maria', 'Migrate the mail server');
SELECT pg_temp.say('OPS-4', 'ann', 'working', '09:00', '17:00')
UNION ALL SELECT pg_temp.say('OPS-4', 'bob', 'working', '09:00', '10:00')
UNION ALL SELECT pg_temp.watchdog('OPS-4', '10:15');
\pset tuples_only off
SELECT * FROM pg_temp.decides('OPS-4', '10:15');

\echo
\echo '=== 5. Finished while another still worked ==='
\echo 'ann delivers while bob is still working; lead, an authority on the'
\echo 'ticket, closes it.  The close is obeyed, and bob is named as interrupted'
\echo 'rather than silently orphaned.'
\echo
\pset tuples_only on
SET worklist.tenant = 'scenario-5';
SELECT 'maria opens FEAT-5; lead may close it too' FROM worklist.open_ticket('FEAT-5', 'maria', 'Dark mode',
	authorities => '{lead}');
SELECT pg_temp.say('FEAT-5', 'ann', 'delivered', '10:00')
UNION ALL SELECT pg_temp.say('FEAT-5', 'bob', 'working', '10:00', '12:00')
UNION ALL SELECT pg_temp.close('FEAT-5', 'lead', 'done', '10:30', 'good enough to ship')
UNION ALL SELECT pg_temp.say('FEAT-5', 'bob', 'delivered', '11:00')
UNION ALL SELECT pg_temp.watchdog('FEAT-5', '23:00');
\pset tuples_only off
SELECT * FROM pg_temp.decides('FEAT-5', '23:00');
\echo 'bob''s later delivery is kept in the log but changes nothing: the'
\echo 'ticket is folded as it stood when it was closed.'

\echo
\echo '=== 6. Gave up with a reason ==='
\echo 'carl gives up and says why; dana gives up without a word.  Nobody is'
\echo 'left: the ticket is unowned, which is never terminal and always due.'
\echo
\pset tuples_only on
SET worklist.tenant = 'scenario-6';
SELECT 'maria opens DB-6' FROM worklist.open_ticket('DB-6', 'maria', 'Restore last night''s backup',
	open_deadline => pg_temp.t('18:00'));
SELECT pg_temp.say('DB-6', 'carl', 'working', '09:00', '12:00')
UNION ALL SELECT pg_temp.say('DB-6', 'carl', 'abandoned', '10:00', NULL, 'needs production access I do not have')
UNION ALL SELECT pg_temp.say('DB-6', 'dana', 'abandoned', '10:05')
UNION ALL SELECT pg_temp.watchdog('DB-6', '10:10');
\pset tuples_only off
SELECT * FROM pg_temp.decides('DB-6', '10:10');

\echo
\echo '=== 7. Blocked, then ignored ==='
\echo 'eve is blocked on a vendor and asks to be checked on at 11:00.  Nobody'
\echo 'helps.  The ladder is 1 hour, then 4 hours.'
\echo
\pset tuples_only on
SET worklist.tenant = 'scenario-7';
SELECT 'maria opens NET-7' FROM worklist.open_ticket('NET-7', 'maria', 'VPN drops every hour',
	ladder => '{1 hour, 4 hours}');
SELECT pg_temp.say('NET-7', 'eve', 'blocked', '10:00', '11:00', 'waiting for the vendor''s firmware')
UNION ALL SELECT pg_temp.watchdog('NET-7', '10:30')
UNION ALL SELECT pg_temp.watchdog('NET-7', '11:00')
UNION ALL SELECT pg_temp.watchdog('NET-7', '11:30')
UNION ALL SELECT pg_temp.watchdog('NET-7', '12:00')
UNION ALL SELECT pg_temp.watchdog('NET-7', '15:59')
UNION ALL SELECT pg_temp.watchdog('NET-7', '16:00')
UNION ALL SELECT pg_temp.watchdog('NET-7', '23:00');
\pset tuples_only off
SELECT * FROM pg_temp.decides('NET-7', '23:00');

\echo
\echo '=== 8. Out-of-order arrival ==='
\echo 'fay''s updates reach the log newest first.  Her participation is her'
\echo 'latest statement by time, not the last one to arrive.'
\echo
\pset tuples_only on
SET worklist.tenant = 'scenario-8';
SELECT 'maria opens DOC-8' FROM worklist.open_ticket('DOC-8', 'maria', 'Update the runbook');
SELECT pg_temp.say('DOC-8', 'fay', 'delivered', '11:00', '15:00')
UNION ALL SELECT pg_temp.say('DOC-8', 'fay', 'working', '10:00', '11:30')
UNION ALL SELECT pg_temp.say('DOC-8', 'fay', 'acknowledged', '09:00', '10:00')
UNION ALL SELECT pg_temp.watchdog('DOC-8', '12:00');
\pset tuples_only off
SELECT * FROM pg_temp.said('DOC-8');
SELECT * FROM pg_temp.decides('DOC-8', '12:00');

\echo
\echo '=== 9. An agent tried to close someone else''s ticket ==='
\echo 'agent-7 works on maria''s ticket and declares it done.  Only maria and'
\echo 'lead may end it: the close is read as agent-7''s own delivery and'
\echo 'recorded as an unauthorized close -- neither obeyed nor dropped.'
\echo
\pset tuples_only on
SET worklist.tenant = 'scenario-9';
SELECT 'maria opens SEC-9; lead may close it too' FROM worklist.open_ticket('SEC-9', 'maria',
	'Rotate the API keys', authorities => '{lead}', open_deadline => pg_temp.t('17:00'));
SELECT pg_temp.say('SEC-9', 'agent-7', 'working', '09:00')
UNION ALL SELECT pg_temp.close('SEC-9', 'agent-7', 'done', '09:30')
UNION ALL SELECT pg_temp.watchdog('SEC-9', '10:00');
\pset tuples_only off
SELECT * FROM pg_temp.decides('SEC-9', '10:00');
\echo 'Nor can it pose as the watchdog, or archive the ticket for everybody:'
\pset tuples_only on
SELECT '09:40  agent-7 closes it done as worklist.watchdog  =>  '
       || pg_temp.try($$SELECT worklist.close_ticket('SEC-9', 'worklist.watchdog', 'done',
                                                     at => '2030-03-04 09:40+00')$$)
UNION ALL SELECT pg_temp.close('SEC-9', 'agent-7', 'archived', '09:45', 'could not reach the vault')
UNION ALL SELECT pg_temp.close('SEC-9', 'lead', 'done', '11:00');
\pset tuples_only off
SELECT * FROM pg_temp.decides('SEC-9', '11:00');

\echo
\echo '=== 10. Delivered, and nobody objected ==='
\echo 'gus delivers; the ticket has a two-hour confirmation window.  With no'
\echo 'word from anybody for two hours, the watchdog closes it -- and records'
\echo 'that this is what happened, which never reads like a person''s'
\echo 'confirmation (compare scenario 2).'
\echo
\pset tuples_only on
SET worklist.tenant = 'scenario-10';
SELECT 'maria opens OPS-10' FROM worklist.open_ticket('OPS-10', 'maria', 'Renew the TLS certificate',
	open_deadline => pg_temp.t('18:00'), confirm_window => '2 hours');
SELECT pg_temp.say('OPS-10', 'gus', 'delivered', '10:00')
UNION ALL SELECT pg_temp.watchdog('OPS-10', '11:59')
UNION ALL SELECT pg_temp.watchdog('OPS-10', '12:00');
\pset tuples_only off
SELECT * FROM pg_temp.decides('OPS-10', '12:00');
SELECT * FROM pg_temp.said('OPS-10');
