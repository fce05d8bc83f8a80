-- Tickets: a corrupt fold_state.  The summary kept on the ticket row is
-- read back by every verb that appends (report, close_ticket, the
-- watchdog of sweep) and by those that judge it (open_ticket of an
-- existing id, overdue_tickets).  Whatever the row holds -- a truncated
-- state, counts and lengths far beyond its size, out-of-range values,
-- trailing bytes -- each of them must refuse with XX001 (data_corrupted)
-- naming the ticket, and ticket_state, which folds the log afresh, must
-- still answer what the log says.  The states are planted by the owner
-- with the guard trigger disabled: nothing else can write them.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET worklist.tenant = 'ticket_corrupt';

-- k: live and overdue, two actors (one abandoned with a reason), one
-- escalation.  c: closed by the watchdog's implicit confirmation, with a
-- cut, a not_before and an unauthorized close after it.
SELECT ticket FROM worklist.open_ticket('k', 'req', 'live', authorities => '{boss}',
	open_deadline => '2030-01-01', confirm_window => '1 hour', ladder => '{1 hour, 2 hours}');
SELECT ticket FROM worklist.open_ticket('c', 'req', 'closed', confirm_window => '1 hour');
SELECT state FROM worklist.report('k', 'ann', 'working', reason => 'on it', at => '2030-01-01 09:00');
SELECT state FROM worklist.report('k', 'bob', 'abandoned', reason => 'no time', at => '2030-01-01 09:30');
SELECT state FROM worklist.report('c', 'carl', 'delivered', not_before => '2030-01-02', at => '2030-01-01 09:00');
SELECT tickets_escalated, tickets_confirmed FROM worklist.sweep('2030-01-01 10:00');
SELECT state, closed_by, unauthorized_close FROM worklist.close_ticket('c', 'eve', 'done', at => '2030-01-01 11:00');
-- n: no events yet, due (a state planted on it cannot be one)
SELECT ticket FROM worklist.open_ticket('n', 'req', 'nothing said', open_deadline => '2030-01-01');

-- The stored format, byte for byte: databases keep these across upgrades.
SELECT id, last_seq, fold_state FROM worklist.ticket
 WHERE tenant = 'ticket_corrupt' ORDER BY id;
CREATE TEMP TABLE valid AS
	SELECT id, fold_state FROM worklist.ticket WHERE tenant = 'ticket_corrupt';
SELECT fold_state AS k_state FROM valid WHERE id = 'k' \gset
SELECT fold_state AS c_state FROM valid WHERE id = 'c' \gset

-- What the logs say, to hold ticket_state against.
CREATE TEMP TABLE truth AS
	SELECT id, worklist.ticket_state(id, '2030-06-01') AS fold
	  FROM worklist.ticket WHERE tenant = 'ticket_corrupt';
SELECT (fold).ticket, (fold).state, (fold).live_actors, (fold).abandoned,
	   (fold).escalation_rung, (fold).closed_by
  FROM truth ORDER BY id;

-- Plant a state behind the verbs' back, as the owner; put the valid ones
-- back.
CREATE FUNCTION pg_temp.plant(t text, planted bytea) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	ALTER TABLE worklist.ticket DISABLE TRIGGER verbs_only;
	UPDATE worklist.ticket SET fold_state = planted
	 WHERE tenant = 'ticket_corrupt' AND id = t;
	ALTER TABLE worklist.ticket ENABLE TRIGGER verbs_only;
END $$;
CREATE FUNCTION pg_temp.restore() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	ALTER TABLE worklist.ticket DISABLE TRIGGER verbs_only;
	UPDATE worklist.ticket t SET fold_state = v.fold_state
	  FROM valid v WHERE t.tenant = 'ticket_corrupt' AND t.id = v.id;
	ALTER TABLE worklist.ticket ENABLE TRIGGER verbs_only;
END $$;

-- What a statement answers: 'ok' or its SQLSTATE.  What it did is undone.
CREATE FUNCTION pg_temp.try(stmt text, OUT answer text, OUT detail text)
LANGUAGE plpgsql AS $$
DECLARE
	msg text;
BEGIN
	EXECUTE stmt;
	RAISE EXCEPTION 'undo';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS answer = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		detail = PG_EXCEPTION_DETAIL;
	IF answer = 'P0001' AND msg = 'undo' THEN
		answer := 'ok';
		detail := NULL;
	END IF;
END $$;

CREATE FUNCTION pg_temp.report(t text) RETURNS text
LANGUAGE sql AS $$
	SELECT format($q$SELECT worklist.report(%L, 'ann', 'working', at => '2030-01-01 12:00')$q$, t)
$$;

-- What report finds in ticket t with state planted on it.
CREATE FUNCTION pg_temp.found(t text, state bytea, OUT answer text, OUT detail text)
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_temp.plant(t, state);
	SELECT * INTO answer, detail FROM pg_temp.try(pg_temp.report(t));
	PERFORM pg_temp.restore();
END $$;

-- Every verb that reads ticket t, with state planted on it.
CREATE FUNCTION pg_temp.verbs(t text, state bytea,
	OUT report text, OUT close_ticket text, OUT open_ticket text,
	OUT overdue_tickets text, OUT sweep text, OUT ticket_state text)
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_temp.plant(t, state);
	report := (pg_temp.try(pg_temp.report(t))).answer;
	close_ticket := (pg_temp.try(format(
		$q$SELECT worklist.close_ticket(%L, 'req', 'done', at => '2030-01-01 12:00')$q$, t))).answer;
	open_ticket := (pg_temp.try(format(
		$q$SELECT worklist.open_ticket(%L, 'req', 'again')$q$, t))).answer;
	overdue_tickets := (pg_temp.try(
		$q$SELECT count(*) FROM worklist.overdue_tickets('2030-06-01')$q$)).answer;
	sweep := (pg_temp.try($q$SELECT worklist.sweep('2030-06-01')$q$)).answer;
	BEGIN
		ticket_state := CASE
			WHEN worklist.ticket_state(t, '2030-06-01') IS NOT DISTINCT FROM
				 (SELECT fold FROM truth WHERE id = t)
			THEN 'as the log says' ELSE 'WRONG' END;
	EXCEPTION WHEN OTHERS THEN
		ticket_state := SQLSTATE;
	END;
	PERFORM pg_temp.restore();
END $$;

-- The corrupt states.  Offsets are 1-based (overlay's); k's state is
-- version (1), actor count (2-5), ann: name length (6-9), name (10-12),
-- flags (13), participation (14), at (15-22), has not_before (23),
-- reason (24-33); bob (34-63); closed (64), last (65-73), escalation
-- (74-82) and its rung (83-86).  In c's, the closed flag is at 72, the
-- outcome at 73, the actor of the close ('worklist.watchdog') at 86-102,
-- its watchdog flag at 103 and its confirmation from 105 on (the JSON
-- text from 110).
CREATE TEMP TABLE corrupt (n int, name text, t text, state bytea);
INSERT INTO corrupt VALUES
	(1, 'empty', 'k', '\x'),
	(2, 'format version 2', 'k', overlay(:'k_state'::bytea placing '\x02' from 1)),
	(3, 'the version byte alone', 'k', substr(:'k_state'::bytea, 1, 1)),
	(4, 'the first 10 bytes', 'k', substr(:'k_state'::bytea, 1, 10)),
	(5, 'truncated inside a reason', 'k', substr(:'k_state'::bytea, 1, 60)),
	(6, 'truncated inside the rung', 'k', substr(:'k_state'::bytea, 1, 84)),
	(7, 'actor count 2^31-1', 'k', overlay(:'k_state'::bytea placing '\x7fffffff' from 2)),
	(8, 'actor count 2^32-1', 'k', overlay(:'k_state'::bytea placing '\xffffffff' from 2)),
	(9, 'one actor more than stored', 'k', overlay(:'k_state'::bytea placing '\x00000003' from 2)),
	(10, 'name length 2^31-1', 'k', overlay(:'k_state'::bytea placing '\x7fffffff' from 6)),
	(11, 'name length 2^32-1', 'k', overlay(:'k_state'::bytea placing '\xffffffff' from 6)),
	(12, 'reason longer than the state', 'k', overlay(:'k_state'::bytea placing '\x00001000' from 25)),
	(13, 'participation 5', 'k', overlay(:'k_state'::bytea placing '\x05' from 14)),
	(14, 'participation 255', 'k', overlay(:'k_state'::bytea placing '\xff' from 14)),
	(15, 'actor flags 4', 'k', overlay(:'k_state'::bytea placing '\x04' from 13)),
	(16, 'a flag byte 2', 'k', overlay(:'k_state'::bytea placing '\x02' from 23)),
	(17, 'outcome 2', 'c', overlay(:'c_state'::bytea placing '\x02' from 73)),
	(18, 'rung 0', 'k', overlay(:'k_state'::bytea placing '\x00000000' from 83)),
	(19, 'rung -1', 'k', overlay(:'k_state'::bytea placing '\xffffffff' from 83)),
	(20, 'rung 2^31-1', 'k', overlay(:'k_state'::bytea placing '\x7fffffff' from 83)),
	(21, 'rung 4, two past a ladder of 2', 'k', overlay(:'k_state'::bytea placing '\x00000004' from 83)),
	(22, 'rung 3, the top of a ladder of 2', 'k', overlay(:'k_state'::bytea placing '\x00000003' from 83)),
	(23, 'one trailing byte', 'k', :'k_state'::bytea || '\x00'),
	(24, 'four trailing bytes', 'k', :'k_state'::bytea || '\xdeadbeef'),
	(25, 'names out of order', 'k', overlay(:'k_state'::bytea placing '\x616161' from 38)),
	(26, 'a name twice', 'k', overlay(:'k_state'::bytea placing '\x616e6e' from 38)),
	(27, 'a zero byte in a name', 'k', overlay(:'k_state'::bytea placing '\x00' from 11)),
	(28, 'a name not in UTF-8', 'k', overlay(:'k_state'::bytea placing '\xff' from 11)),
	(29, 'an instant at infinity', 'k', overlay(:'k_state'::bytea placing '\x7fffffffffffffff' from 15)),
	(30, 'no latest instant', 'k', overlay(:'k_state'::bytea placing '\x00' from 65)),
	(31, 'the watchdog''s close unmarked', 'c', overlay(:'c_state'::bytea placing '\x00' from 103)),
	(32, 'another''s close marked', 'c', overlay(:'c_state'::bytea placing '\x68' from 102)),
	(33, 'a confirmation not JSON', 'c', overlay(:'c_state'::bytea placing '\x7d' from 110)),
	(34, 'a cut, not closed', 'c', overlay(:'c_state'::bytea placing '\x00' from 72)),
	(35, 'a state of no events', 'k', '\x0100000000000000'),
	(36, 'no state, with events', 'k', NULL),
	(37, 'a state, without events', 'n', :'k_state'::bytea);

-- What the reader finds in each.
SELECT n, name, f.* FROM corrupt, pg_temp.found(t, state) f ORDER BY n;

-- Every verb on every corrupt state: XX001 from each that reads the
-- state (overdue_tickets and sweep never read a closed ticket's), and
-- ticket_state as the log says.
SELECT n, name, v.* FROM corrupt, pg_temp.verbs(t, state) v ORDER BY n;

-- The same, as a client sees it: the ticket named, what was found.
SELECT pg_temp.plant('k', overlay(:'k_state'::bytea placing '\x7fffffff' from 2));
SELECT state FROM worklist.report('k', 'ann', 'working', at => '2030-01-01 12:00');
\echo :LAST_ERROR_SQLSTATE
SELECT state FROM worklist.close_ticket('k', 'req', 'done', at => '2030-01-01 12:00');
\echo :LAST_ERROR_SQLSTATE
SELECT ticket FROM worklist.overdue_tickets('2030-06-01');
\echo :LAST_ERROR_SQLSTATE
SELECT tickets_escalated FROM worklist.sweep('2030-06-01');
\echo :LAST_ERROR_SQLSTATE
SELECT state, live_actors, abandoned, escalation_rung FROM worklist.ticket_state('k', '2030-06-01');
SELECT pg_temp.plant('k', overlay(:'k_state'::bytea placing '\x00000000' from 83));
SELECT state FROM worklist.report('k', 'ann', 'working', at => '2030-01-01 12:00');
\echo :LAST_ERROR_SQLSTATE
SELECT pg_temp.plant('k', '\x');
SELECT state FROM worklist.report('k', 'ann', 'working', at => '2030-01-01 12:00');
\echo :LAST_ERROR_SQLSTATE
SELECT pg_temp.restore();

-- Every truncation of both states, and every byte of them set to each of
-- a few values: report either refuses with XX001 or folds (a changed
-- instant or letter can still make a state), never anything else.
CREATE FUNCTION pg_temp.mutants(t text, OUT tried int, OUT answers text[])
LANGUAGE plpgsql AS $$
DECLARE
	good bytea := (SELECT fold_state FROM valid WHERE id = t);
	states bytea[] := '{}';
	b text;
	answer text;
	seen text[] := '{}';
BEGIN
	FOR i IN 0 .. length(good) - 1 LOOP
		states := states || substr(good, 1, i);
		FOREACH b IN ARRAY '{00,01,02,7f,80,ff}'::text[] LOOP
			states := states || overlay(good placing decode(b, 'hex') from i + 1);
		END LOOP;
	END LOOP;
	ALTER TABLE worklist.ticket DISABLE TRIGGER verbs_only;
	FOR i IN 1 .. array_length(states, 1) LOOP
		UPDATE worklist.ticket SET fold_state = states[i]
		 WHERE tenant = 'ticket_corrupt' AND id = t;
		answer := (pg_temp.try(pg_temp.report(t))).answer;
		IF NOT answer = ANY (seen) THEN
			seen := seen || answer;
		END IF;
	END LOOP;
	ALTER TABLE worklist.ticket ENABLE TRIGGER verbs_only;
	PERFORM pg_temp.restore();
	tried := array_length(states, 1);
	answers := ARRAY(SELECT unnest(seen) ORDER BY 1);
END $$;
SELECT t, m.* FROM (VALUES ('k'), ('c')) v(t), pg_temp.mutants(t) m;

-- The valid states are back.  A report that changes nothing the state
-- keeps (an older word of the same actor) reads it and writes it again:
-- byte for byte the same.
SELECT id, fold_state = CASE id WHEN 'k' THEN :'k_state'::bytea
							   WHEN 'c' THEN :'c_state'::bytea END AS restored
  FROM worklist.ticket WHERE tenant = 'ticket_corrupt' AND id <> 'n' ORDER BY id;
SELECT state FROM worklist.report('k', 'ann', 'working', at => '2030-01-01 08:00');
SELECT state FROM worklist.report('c', 'carl', 'delivered', not_before => '2030-01-02', at => '2030-01-01 08:00');
SELECT id, last_seq, fold_state = CASE id WHEN 'k' THEN :'k_state'::bytea
										 WHEN 'c' THEN :'c_state'::bytea END AS round_trip
  FROM worklist.ticket WHERE tenant = 'ticket_corrupt' AND id <> 'n' ORDER BY id;
-- and the verbs go on from it
SELECT state, escalation_rung FROM worklist.report('k', 'ann', 'delivered', at => '2030-01-01 12:00');
SELECT tickets_escalated, tickets_confirmed FROM worklist.sweep('2030-01-01 13:00');
SELECT (fold).state, (fold).escalation_rung FROM (SELECT worklist.ticket_state('k', '2030-06-01') AS fold) f;
SELECT worklist.erase_tenant() AS erased;
