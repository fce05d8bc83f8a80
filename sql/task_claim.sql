-- Tasks: claim, release, take_over, and the claim order.
--
-- Expected refusals are followed by \echo :LAST_ERROR_SQLSTATE so the
-- expected output pins the SQLSTATE as well as the message and DETAIL.

SET worklist.tenant = 'task_claim';

SELECT id, state FROM worklist.open_task('t', 'c', '{reviewer}',
	excluded => '{author}', escalation_roles => '{manager}');
SELECT id, state FROM worklist.open_task('done', 'c', '{reviewer}',
	excluded => '{author}');
SELECT state, holder FROM worklist.claim('done', 'bob', '{reviewer}');
SELECT worklist.complete('done', 'bob', '{"ok": true}');

-- Claiming an open task makes it claimed.
SELECT id, state, holder, claimed_at IS NOT NULL AS has_claimed_at
  FROM worklist.claim('t', 'bob', '{clerk,reviewer}');
SELECT claimed_at AS bob_claimed_at FROM worklist.task('t') \gset

-- Same-holder claim is success: the task unchanged, same claimed_at.
SELECT id, state, holder, claimed_at = :'bob_claimed_at' AS same_claimed_at
  FROM worklist.claim('t', 'bob', '{reviewer}');
SELECT id, state, holder, claimed_at = :'bob_claimed_at' AS same_claimed_at
  FROM worklist.claim('t', 'bob', '{reviewer}');

-- The claim order: WL001 -> WL002 -> WL003 -> WL004 -> WL005, the first
-- failure reported.  While bob holds t:
-- WL001: no such task.
SELECT worklist.claim('nope', 'author', '{}');
\echo :LAST_ERROR_SQLSTATE
-- WL002: barred, even with a good role; neither message nor DETAIL names
-- the holder or says whether there is one.
SELECT worklist.claim('t', 'author', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
-- WL002 before WL003: barred and without a role.
SELECT worklist.claim('t', 'author', '{clerk}');
\echo :LAST_ERROR_SQLSTATE
-- WL003: no role in the audience; again nothing about the holder.
SELECT worklist.claim('t', 'carol', '{clerk}');
\echo :LAST_ERROR_SQLSTATE
-- An empty roles array meets no audience.
SELECT worklist.claim('t', 'carol', '{}');
\echo :LAST_ERROR_SQLSTATE
-- An escalation role is not in the audience before escalation.
SELECT worklist.claim('t', 'mia', '{manager}');
\echo :LAST_ERROR_SQLSTATE
-- WL005: eligible, but somebody else holds it; DETAIL names the holder.
SELECT worklist.claim('t', 'carol', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
-- On a settled task: eligibility first (WL002, WL003), then WL004.
SELECT worklist.claim('done', 'author', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('done', 'carol', '{clerk}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('done', 'carol', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
-- ... and its former holder cannot claim it back either.
SELECT worklist.claim('done', 'bob', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
-- Nothing of the refused claims changed the task.
SELECT id, state, holder, claimed_at = :'bob_claimed_at' AS same_claimed_at
  FROM worklist.task('t');

-- release: WL001, WL002 (barred: never told the holder), WL006 unless the
-- actor holds the task; DETAIL says who does.
SELECT worklist.release('nope', 'bob');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release('t', 'author');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release('t', 'carol');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release('done', 'bob');
\echo :LAST_ERROR_SQLSTATE
-- The holder releases: open again, nobody holds it.
SELECT worklist.release('t', 'bob');
SELECT id, state, holder, claimed_at FROM worklist.task('t');
-- Releasing again: nobody holds it.
SELECT worklist.release('t', 'bob');
\echo :LAST_ERROR_SQLSTATE

-- take_over: claim's order for the new actor, then WL006 naming
-- from_actor when it is not the holder -- nobody holding it included.
SELECT worklist.take_over('t', 'bob', 'carol', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
SELECT state, holder FROM worklist.claim('t', 'bob', '{reviewer}');
SELECT claimed_at AS bob_claimed_at FROM worklist.task('t') \gset
SELECT worklist.take_over('nope', 'bob', 'carol', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', 'bob', 'author', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', 'bob', 'author', '{clerk}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', 'bob', 'carol', '{clerk}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', 'bob', 'carol', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('done', 'bob', 'author', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('done', 'bob', 'carol', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
-- A stale from_actor.
SELECT worklist.take_over('t', 'dave', 'carol', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
-- Taking over from oneself changes nothing.
SELECT state, holder, claimed_at = :'bob_claimed_at' AS same_claimed_at
  FROM worklist.take_over('t', 'bob', 'bob', '{reviewer}');
-- The take-over: holder moves, a new claimed_at, state stays claimed.
BEGIN;
SELECT state, holder, claimed_at = now() AS claimed_now
  FROM worklist.take_over('t', 'bob', 'carol', '{reviewer}');
COMMIT;
-- bob no longer holds it.
SELECT worklist.release('t', 'bob');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t', 'bob', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE

-- Escalated tasks: the audience widens to the escalation roles; claiming
-- keeps state escalated, so does releasing.
SELECT state, holder FROM worklist.escalate('t');
SELECT state, holder, claimed_at IS NOT NULL AS has_claimed_at
  FROM worklist.claim('t', 'mia', '{manager}');
SELECT worklist.claim('t', 'carol', '{reviewer}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release('t', 'mia');
SELECT state, holder, claimed_at FROM worklist.task('t');
-- The original roles stay in the audience.
SELECT state, holder FROM worklist.claim('t', 'carol', '{reviewer}');
-- A take-over of an escalated task keeps it escalated; the escalation
-- audience may take over too.
SELECT state, holder FROM worklist.take_over('t', 'carol', 'mia', '{manager}');
-- The barred actor stays barred after escalation.
SELECT worklist.claim('t', 'author', '{manager}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', 'mia', 'author', '{manager}');
\echo :LAST_ERROR_SQLSTATE

-- Bad input.
SELECT worklist.claim(NULL, 'a', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('', 'a', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim(repeat('x', 257), 'a', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim(repeat('x', 1024 * 1024), 'a', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t', NULL, '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t', '', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t', repeat('x', 257), '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t', 'a', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t', 'a', '{reviewer,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t', 'a', '{""}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t', 'a', ARRAY[repeat('x', 1024 * 1024)]);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.claim('t', 'a', '{{reviewer}}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release(NULL, 'a');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release('t', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.release('t', repeat('x', 257));
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over(NULL, 'a', 'b', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', NULL, 'b', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', '', 'b', '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', 'a', repeat('x', 257), '{r}');
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', 'a', 'b', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT worklist.take_over('t', 'a', 'b', '{NULL}');
\echo :LAST_ERROR_SQLSTATE
-- The arguments are judged before the task: a bad actor on a missing
-- task is 22023, not WL001.
SELECT worklist.claim('nope', '', '{r}');
\echo :LAST_ERROR_SQLSTATE
-- Nothing above changed the task.
SELECT state, holder FROM worklist.task('t');

SELECT worklist.erase_tenant();
RESET worklist.tenant;
