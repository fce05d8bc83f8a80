-- Tickets: the fold, one rule at a time (doc/reference.md, section 5, "The fold").
--
-- Every case writes concrete events with explicit `at` values through the
-- verbs and reads the fold back with ticket_state at an explicit `now`.
-- Where a rule is about ties or late arrivals, the same events are written
-- in both orders into two tickets and both folds are shown.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET worklist.tenant = 'ticket_fold';

-- A fold, compactly.
CREATE FUNCTION pg_temp.f(k text, now timestamptz DEFAULT '2030-01-01 12:00')
RETURNS TABLE (ticket text, state worklist.ticket_status, deadline timestamptz,
               overdue boolean, live text[], blocked text[], abandoned jsonb,
               unauthorized text[], interrupted text[])
LANGUAGE sql AS $$
	SELECT f.ticket, f.state, f.deadline, f.overdue, f.live_actors,
	       f.blocked_actors, f.abandoned, f.unauthorized_close, f.interrupted
	  FROM worklist.ticket_state(k, now) f
$$;

------------------------------------------------------------------------
-- Rule 1: an actor's current participation is its latest event by `at`,
-- not the last one to arrive.
------------------------------------------------------------------------
SELECT ticket FROM worklist.open_ticket('r1-latest', 'req', 'rule 1');
SELECT state FROM worklist.report('r1-latest', 'ann', 'blocked', at => '2030-01-01 10:00');
-- an older event arriving late changes nothing
SELECT state FROM worklist.report('r1-latest', 'ann', 'acknowledged', at => '2030-01-01 09:00');
SELECT * FROM pg_temp.f('r1-latest');
-- a newer one does
SELECT state FROM worklist.report('r1-latest', 'ann', 'working', at => '2030-01-01 11:00');
SELECT * FROM pg_temp.f('r1-latest');

-- Rule 1, same `at`, first tie-break: the event that keeps the actor live
-- wins over abandoned, in either arrival order.
SELECT ticket FROM worklist.open_ticket('r1-live-a', 'req', 'rule 1 live');
SELECT ticket FROM worklist.open_ticket('r1-live-b', 'req', 'rule 1 live');
SELECT state FROM worklist.report('r1-live-a', 'ann', 'abandoned', reason => 'gone', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-live-a', 'ann', 'delivered', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-live-b', 'ann', 'delivered', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-live-b', 'ann', 'abandoned', reason => 'gone', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.f('r1-live-a') UNION ALL SELECT * FROM pg_temp.f('r1-live-b');

-- Rule 1, second tie-break: the earlier effective deadline wins, even
-- against rank.  working with not_before 10:30 beats acknowledged with
-- not_before 11:00 (rank alone would pick acknowledged and the looser
-- deadline, and the watchdog would look half an hour late).
SELECT ticket FROM worklist.open_ticket('r1-deadline-a', 'req', 'rule 1 deadline');
SELECT ticket FROM worklist.open_ticket('r1-deadline-b', 'req', 'rule 1 deadline');
SELECT state FROM worklist.report('r1-deadline-a', 'ann', 'acknowledged', not_before => '2030-01-01 11:00', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-deadline-a', 'ann', 'working', not_before => '2030-01-01 10:30', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-deadline-b', 'ann', 'working', not_before => '2030-01-01 10:30', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-deadline-b', 'ann', 'acknowledged', not_before => '2030-01-01 11:00', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.f('r1-deadline-a', '2030-01-01 10:15')
UNION ALL SELECT * FROM pg_temp.f('r1-deadline-b', '2030-01-01 10:15')
UNION ALL SELECT * FROM pg_temp.f('r1-deadline-b', '2030-01-01 10:30');

-- ... no deadline at all counts as the earliest (it means due now):
-- blocked without not_before beats working with one.
SELECT ticket FROM worklist.open_ticket('r1-none-a', 'req', 'rule 1 no deadline');
SELECT ticket FROM worklist.open_ticket('r1-none-b', 'req', 'rule 1 no deadline');
SELECT state FROM worklist.report('r1-none-a', 'ann', 'working', not_before => '2030-01-01 11:00', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-none-a', 'ann', 'blocked', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-none-b', 'ann', 'blocked', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-none-b', 'ann', 'working', not_before => '2030-01-01 11:00', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.f('r1-none-a', '2030-01-01 10:15')
UNION ALL SELECT * FROM pg_temp.f('r1-none-b', '2030-01-01 10:15');

-- ... an event without not_before has the ticket's open_deadline as its
-- effective deadline: blocked (open_deadline 10:15) beats working (10:45).
SELECT ticket FROM worklist.open_ticket('r1-open-a', 'req', 'rule 1 open_deadline', open_deadline => '2030-01-01 10:15');
SELECT ticket FROM worklist.open_ticket('r1-open-b', 'req', 'rule 1 open_deadline', open_deadline => '2030-01-01 10:15');
SELECT state FROM worklist.report('r1-open-a', 'ann', 'working', not_before => '2030-01-01 10:45', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-open-a', 'ann', 'blocked', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-open-b', 'ann', 'blocked', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-open-b', 'ann', 'working', not_before => '2030-01-01 10:45', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.f('r1-open-a', '2030-01-01 10:10')
UNION ALL SELECT * FROM pg_temp.f('r1-open-b', '2030-01-01 10:15');

-- Rule 1, third tie-break: the same effective deadline, the lower value
-- in rank order wins (working over delivered).
SELECT ticket FROM worklist.open_ticket('r1-rank-a', 'req', 'rule 1 rank');
SELECT ticket FROM worklist.open_ticket('r1-rank-b', 'req', 'rule 1 rank');
SELECT state FROM worklist.report('r1-rank-a', 'ann', 'delivered', not_before => '2030-01-01 11:00', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-rank-a', 'ann', 'working', not_before => '2030-01-01 11:00', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-rank-b', 'ann', 'working', not_before => '2030-01-01 11:00', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-rank-b', 'ann', 'delivered', not_before => '2030-01-01 11:00', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.f('r1-rank-a') UNION ALL SELECT * FROM pg_temp.f('r1-rank-b');

-- Rule 1, everything the rules look at equal (two abandonments, same
-- `at`): still one answer whatever the arrival order -- a given reason
-- over none, then the lower reason.
SELECT ticket FROM worklist.open_ticket('r1-total-a', 'req', 'rule 1 total');
SELECT ticket FROM worklist.open_ticket('r1-total-b', 'req', 'rule 1 total');
SELECT state FROM worklist.report('r1-total-a', 'ann', 'abandoned', reason => 'b-reason', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-total-a', 'ann', 'abandoned', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-total-a', 'ann', 'abandoned', reason => 'a-reason', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-total-b', 'ann', 'abandoned', reason => 'a-reason', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-total-b', 'ann', 'abandoned', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-total-b', 'ann', 'abandoned', reason => 'b-reason', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.f('r1-total-a') UNION ALL SELECT * FROM pg_temp.f('r1-total-b');
-- an empty reason is no reason: at the same `at`, a given one is kept,
-- whichever arrived first
SELECT ticket FROM worklist.open_ticket('r1-empty-a', 'req', 'empty reason first');
SELECT state FROM worklist.report('r1-empty-a', 'ann', 'abandoned', reason => '', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-empty-a', 'ann', 'abandoned', reason => 'disk failed', at => '2030-01-01 10:00');
SELECT ticket FROM worklist.open_ticket('r1-empty-b', 'req', 'empty reason last');
SELECT state FROM worklist.report('r1-empty-b', 'ann', 'abandoned', reason => 'disk failed', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r1-empty-b', 'ann', 'abandoned', reason => '', at => '2030-01-01 10:00');
SELECT ticket, abandoned FROM worklist.ticket_state('r1-empty-a')
UNION ALL SELECT ticket, abandoned FROM worklist.ticket_state('r1-empty-b');

------------------------------------------------------------------------
-- Rule 2: live actors are those not currently abandoned; `abandoned`
-- maps each currently abandoned actor to its reason, MISSING_REASON when
-- it gave none (NULL or empty), never an empty field.
------------------------------------------------------------------------
SELECT ticket FROM worklist.open_ticket('r2', 'req', 'rule 2');
SELECT state FROM worklist.report('r2', 'ann', 'abandoned', reason => 'no access to prod', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r2', 'bob', 'abandoned', at => '2030-01-01 10:01');
SELECT state FROM worklist.report('r2', 'cy', 'abandoned', reason => '', at => '2030-01-01 10:02');
SELECT state FROM worklist.report('r2', 'dee', 'working', at => '2030-01-01 10:03');
-- eve gave up, then came back: live again, and out of `abandoned`
SELECT state FROM worklist.report('r2', 'eve', 'abandoned', reason => 'busy', at => '2030-01-01 10:04');
SELECT state FROM worklist.report('r2', 'eve', 'acknowledged', at => '2030-01-01 10:05');
SELECT * FROM pg_temp.f('r2');
-- ... while the log keeps every reason ever given
SELECT seq, actor, value, reason FROM worklist.ticket_history('r2') WHERE value = 'abandoned';

-- Everybody left: unowned, deadline NULL, overdue (rule 6) -- at any now.
SELECT ticket FROM worklist.open_ticket('r2-unowned', 'req', 'rule 2 unowned', open_deadline => '2031-01-01');
SELECT state FROM worklist.report('r2-unowned', 'ann', 'working', not_before => '2031-01-01', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r2-unowned', 'ann', 'abandoned', reason => 'reassigned', not_before => '2031-01-01', at => '2030-01-01 11:00');
SELECT * FROM pg_temp.f('r2-unowned', '-infinity');

------------------------------------------------------------------------
-- Rule 3: an outcome from a non-authority is demoted -- done to that
-- actor's delivered, archived to its abandoned (reason kept) -- and the
-- actor is named in unauthorized_close.  Neither obeyed nor dropped.
------------------------------------------------------------------------
SELECT ticket FROM worklist.open_ticket('r3', 'req', 'rule 3', authorities => '{lead}');
SELECT state FROM worklist.report('r3', 'agent', 'working', at => '2030-01-01 10:00');
SELECT state FROM worklist.report('r3', 'rev', 'working', at => '2030-01-01 10:00');
SELECT state, closed_by, unauthorized_close
  FROM worklist.close_ticket('r3', 'agent', 'done', at => '2030-01-01 10:30');
SELECT state, closed_by, unauthorized_close, abandoned
  FROM worklist.close_ticket('r3', 'rev', 'archived', reason => 'cannot reproduce', at => '2030-01-01 10:31');
SELECT * FROM pg_temp.f('r3');
-- an archive without a reason reads MISSING_REASON like any abandonment
SELECT abandoned FROM worklist.close_ticket('r3', 'intern', 'archived', at => '2030-01-01 10:32');
-- the log keeps the outcome as written
SELECT seq, actor, kind, value, reason FROM worklist.ticket_history('r3');

------------------------------------------------------------------------
-- Rule 4: an authorized outcome ends the ticket whatever live work
-- exists; the fold of a closed ticket uses only events at or before the
-- close; `interrupted` names the others who were acknowledged, working
-- or blocked there.  The requester is an authority too.
------------------------------------------------------------------------
SELECT ticket FROM worklist.open_ticket('r4', 'req', 'rule 4', authorities => '{lead}');
SELECT state FROM worklist.report('r4', 'ann', 'working', at => '2030-01-01 09:00');
SELECT state FROM worklist.report('r4', 'bob', 'blocked', at => '2030-01-01 09:00');
SELECT state FROM worklist.report('r4', 'cy', 'delivered', at => '2030-01-01 09:00');
SELECT state FROM worklist.report('r4', 'dee', 'acknowledged', at => '2030-01-01 09:00');
SELECT state FROM worklist.report('r4', 'eve', 'abandoned', reason => 'out', at => '2030-01-01 09:00');
SELECT state FROM worklist.report('r4', 'lead', 'working', at => '2030-01-01 09:00');
SELECT state FROM worklist.close_ticket('r4', 'lead', 'done', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.f('r4');
SELECT closed_by, closed_at, confirmation, escalation_rung, close_reason FROM worklist.ticket_state('r4');
-- later participation is kept but changes nothing
SELECT state FROM worklist.report('r4', 'ann', 'delivered', at => '2030-01-01 10:00:01');
SELECT state FROM worklist.report('r4', 'fay', 'working', at => '2030-01-01 11:00');
SELECT * FROM pg_temp.f('r4');
SELECT count(*) AS events FROM worklist.ticket_history('r4');
-- a late-arriving event from before the close does count
SELECT state, live_actors, interrupted
  FROM worklist.report('r4', 'gus', 'working', at => '2030-01-01 09:30');

-- The latest authorized outcome wins: the requester archives after the
-- lead's done ...
SELECT state, closed_by, close_reason
  FROM worklist.close_ticket('r4', 'req', 'archived', reason => 'superseded', at => '2030-01-01 12:00');
-- ... which moves the cut: fay (11:00) now counts, ann's delivery too
SELECT * FROM pg_temp.f('r4');
-- an older authorized outcome arriving late does not win
SELECT state, closed_by FROM worklist.close_ticket('r4', 'lead', 'done', at => '2030-01-01 11:59');

-- At the same `at`, done wins over archived, in either arrival order.
SELECT ticket FROM worklist.open_ticket('r4-tie-a', 'req', 'rule 4 tie', authorities => '{lead}');
SELECT ticket FROM worklist.open_ticket('r4-tie-b', 'req', 'rule 4 tie', authorities => '{lead}');
SELECT state FROM worklist.close_ticket('r4-tie-a', 'lead', 'archived', reason => 'timeout', at => '2030-01-01 10:00');
SELECT state FROM worklist.close_ticket('r4-tie-a', 'req', 'done', at => '2030-01-01 10:00');
SELECT state FROM worklist.close_ticket('r4-tie-b', 'req', 'done', at => '2030-01-01 10:00');
SELECT state FROM worklist.close_ticket('r4-tie-b', 'lead', 'archived', reason => 'timeout', at => '2030-01-01 10:00');
SELECT ticket, state, closed_by, confirmation FROM worklist.ticket_state('r4-tie-a')
UNION ALL SELECT ticket, state, closed_by, confirmation FROM worklist.ticket_state('r4-tie-b');

-- Closing before everything an actor said: the fold at the close knows
-- nothing of that actor.
SELECT ticket FROM worklist.open_ticket('r4-early', 'req', 'rule 4 early close');
SELECT state FROM worklist.report('r4-early', 'ann', 'working', at => '2030-01-01 10:00');
SELECT state, live_actors FROM worklist.report('r4-early', 'bob', 'working', at => '2030-01-01 08:00');
SELECT * FROM worklist.close_ticket('r4-early', 'req', 'archived', reason => 'dup', at => '2030-01-01 09:00');
SELECT * FROM pg_temp.f('r4-early');

------------------------------------------------------------------------
-- Rule 5: `confirmation` on done -- explicit when an authority closed it,
-- implicit when the watchdog did after confirm_window; the two never
-- render alike.  Archived has none.
------------------------------------------------------------------------
-- (a tenant of its own, so the sweep below touches nothing else)
SET worklist.tenant = 'ticket_fold_r5';
SELECT ticket FROM worklist.open_ticket('r5-explicit', 'req', 'rule 5', confirm_window => '1 hour');
SELECT ticket FROM worklist.open_ticket('r5-implicit', 'req', 'rule 5', confirm_window => '1 hour');
SELECT state FROM worklist.report('r5-explicit', 'bob', 'delivered', at => '2030-01-01 09:00');
SELECT state FROM worklist.report('r5-explicit', 'ann', 'delivered', at => '2030-01-01 09:00');
SELECT state FROM worklist.report('r5-implicit', 'bob', 'delivered', at => '2030-01-01 09:00');
SELECT state FROM worklist.report('r5-implicit', 'ann', 'delivered', at => '2030-01-01 09:00');
SELECT state FROM worklist.close_ticket('r5-explicit', 'req', 'done', at => '2030-01-01 09:30');
SELECT tickets_confirmed FROM worklist.sweep('2030-01-01 10:00');
SELECT ticket, state, closed_by, closed_at, confirmation, confirmation->>'kind' AS kind
  FROM worklist.ticket_state('r5-explicit')
UNION ALL
SELECT ticket, state, closed_by, closed_at, confirmation, confirmation->>'kind'
  FROM worklist.ticket_state('r5-implicit');
-- what tells them apart is in the event itself, not only the actor's name
SELECT actor, kind, value, watchdog, confirmation FROM worklist.ticket_history('r5-implicit')
 WHERE kind = 'outcome';
SELECT ticket FROM worklist.open_ticket('r5-archived', 'req', 'rule 5');
SELECT state, confirmation, close_reason FROM worklist.close_ticket('r5-archived', 'req', 'archived', at => '2030-01-01 09:00');
SELECT worklist.erase_tenant() AS erased;
SET worklist.tenant = 'ticket_fold';

------------------------------------------------------------------------
-- Rule 6: the deadline is the earliest effective deadline among live
-- actors; NULL when any live actor has neither not_before nor an
-- open_deadline to fall back on; with no events, open_deadline.  A live
-- ticket is overdue when its deadline is at or before now, or NULL.
------------------------------------------------------------------------
SELECT ticket FROM worklist.open_ticket('r6', 'req', 'rule 6', open_deadline => '2030-01-01 15:00');
SELECT * FROM pg_temp.f('r6', '2030-01-01 14:59:59');
SELECT * FROM pg_temp.f('r6', '2030-01-01 15:00');	-- at the deadline: overdue
SELECT state, deadline FROM worklist.report('r6', 'ann', 'working', not_before => '2030-01-01 13:00', at => '2030-01-01 10:00');
SELECT state, deadline FROM worklist.report('r6', 'bob', 'working', not_before => '2030-01-01 12:00', at => '2030-01-01 10:00');
-- no not_before: the open_deadline stands in (15:00, later than 12:00)
SELECT state, deadline FROM worklist.report('r6', 'cy', 'acknowledged', at => '2030-01-01 10:00');
-- an abandoned actor's deadline does not count
SELECT state, deadline FROM worklist.report('r6', 'bob', 'abandoned', reason => 'sick', not_before => '2030-01-01 12:00', at => '2030-01-01 10:30');
-- delivered is live, and watched like any other live state
SELECT state, deadline FROM worklist.report('r6', 'ann', 'delivered', not_before => '2030-01-01 16:00', at => '2030-01-01 11:00');
SELECT * FROM pg_temp.f('r6', '2030-01-01 14:00');
SELECT * FROM pg_temp.f('r6', '2030-01-01 15:00');

-- No deadline anywhere: a live ticket is due now.
SELECT ticket FROM worklist.open_ticket('r6-none', 'req', 'rule 6 none');
SELECT * FROM pg_temp.f('r6-none', '-infinity');		-- open, nothing said
SELECT state, deadline FROM worklist.report('r6-none', 'ann', 'working', not_before => '2030-06-01', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.f('r6-none', '2030-01-01 12:00');
-- one live actor without a deadline makes the whole ticket due now
SELECT state, deadline FROM worklist.report('r6-none', 'bob', 'acknowledged', at => '2030-01-01 10:00');
SELECT * FROM pg_temp.f('r6-none', '-infinity');

-- Terminal tickets have no deadline and are never overdue.
SELECT ticket FROM worklist.open_ticket('r6-closed', 'req', 'rule 6 closed', open_deadline => '2020-01-01');
SELECT state FROM worklist.report('r6-closed', 'ann', 'working', at => '2030-01-01 10:00');
SELECT state FROM worklist.close_ticket('r6-closed', 'req', 'done', at => '2030-01-01 11:00');
SELECT * FROM pg_temp.f('r6-closed', 'infinity');

------------------------------------------------------------------------
-- Rule 7: escalation events change no participation and resolve nothing.
------------------------------------------------------------------------
SET worklist.tenant = 'ticket_fold_r7';
SELECT ticket FROM worklist.open_ticket('r7', 'req', 'rule 7', open_deadline => '2030-01-01 10:00',
	ladder => '{1 hour}');
SELECT state FROM worklist.report('r7', 'ann', 'blocked', at => '2030-01-01 09:00');
SELECT * FROM pg_temp.f('r7', '2030-01-01 11:00');
SELECT tickets_escalated FROM worklist.sweep('2030-01-01 11:00');
SELECT tickets_escalated FROM worklist.sweep('2030-01-01 12:00');
SELECT * FROM pg_temp.f('r7', '2030-01-01 12:00');
SELECT escalation_rung, closed_by FROM worklist.ticket_state('r7', '2030-01-01 12:00');
SELECT seq, actor, at, kind, value, watchdog FROM worklist.ticket_history('r7');
SELECT worklist.erase_tenant() AS erased;
SET worklist.tenant = 'ticket_fold';

-- The overdue list: live tickets only, NULL deadlines first, then the
-- earliest deadline, then id.
SELECT ticket, state, deadline FROM worklist.overdue_tickets('2030-01-01 15:00', 1000);
SELECT ticket, state, deadline FROM worklist.overdue_tickets('2030-01-01 15:00', 3);

SELECT worklist.erase_tenant() > 0 AS erased;
