-- Tickets: the fold never depends on the order events are stored, arrive
-- or are fed in, and the summary kept on the ticket row always equals a
-- fresh fold of the log.
--
--   A. The aggregate worklist.fold over every permutation of small event
--      sets full of ties, demotions, closes and escalations.
--   B. The verbs: the same events appended in every arrival order, each
--      order into a ticket of its own; the summaries must be identical
--      and equal to a fresh fold (some orders force the summary to refold
--      the log, see src/ticket.h).
--   C. Large sets: shuffled orders through the aggregate and the verbs.
--
-- Only counts and verdicts are printed, so the expected output is the
-- same whatever the random orders were.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET worklist.tenant = 'ticket_order';

-- An event row, as ticket_history returns them.
CREATE FUNCTION pg_temp.ev(k text, actor text, at text, kind text, value text,
                           reason text DEFAULT NULL, not_before text DEFAULT NULL,
                           confirmation jsonb DEFAULT NULL)
RETURNS worklist.ticket_event LANGUAGE sql AS $$
	SELECT ROW(k, actor, at::timestamptz, kind, value, reason,
	           not_before::timestamptz, 0, actor = 'worklist.watchdog',
	           confirmation, 'ticket_order')::worklist.ticket_event
$$;

------------------------------------------------------------------------
-- A. Every permutation, through the aggregate
------------------------------------------------------------------------
SELECT count(*) FROM (
	SELECT worklist.open_ticket(id, 'req', 'order', authorities => '{lead}',
	                            open_deadline => '2030-01-01 10:20',
	                            confirm_window => '1 hour', ladder => '{1 hour}')
	  FROM unnest('{ties,closes,confirm}'::text[]) id) s;

CREATE TEMP TABLE agg_ev (set text, i int, e worklist.ticket_event);
INSERT INTO agg_ev
-- one actor saying four things at once, another two, an authorized close
SELECT 'ties', o, a[o] FROM (SELECT ARRAY[
	pg_temp.ev('ties', 'ann', '2030-01-01 10:00', 'participation', 'abandoned', 'x'),
	pg_temp.ev('ties', 'ann', '2030-01-01 10:00', 'participation', 'working', NULL, '2030-01-01 10:30'),
	pg_temp.ev('ties', 'ann', '2030-01-01 10:00', 'participation', 'acknowledged', NULL, '2030-01-01 11:00'),
	pg_temp.ev('ties', 'ann', '2030-01-01 10:00', 'participation', 'blocked'),
	pg_temp.ev('ties', 'bob', '2030-01-01 10:00', 'participation', 'delivered', NULL, '2030-01-01 10:10'),
	pg_temp.ev('ties', 'bob', '2030-01-01 10:00', 'participation', 'working', NULL, '2030-01-01 10:10'),
	pg_temp.ev('ties', 'ann', '2030-01-01 10:00', 'participation', 'abandoned', 'y')
	] AS a) s, generate_subscripts(a, 1) o
UNION ALL
-- closes at the same instant, a demoted close, late participation, rungs
SELECT 'closes', o, a[o] FROM (SELECT ARRAY[
	pg_temp.ev('closes', 'lead', '2030-01-01 10:00', 'outcome', 'archived', 'timeout'),
	pg_temp.ev('closes', 'req', '2030-01-01 10:00', 'outcome', 'done'),
	pg_temp.ev('closes', 'agent', '2030-01-01 09:45', 'outcome', 'archived', 'no repro'),
	pg_temp.ev('closes', 'ann', '2030-01-01 09:00', 'participation', 'working'),
	pg_temp.ev('closes', 'ann', '2030-01-01 10:30', 'participation', 'delivered'),
	pg_temp.ev('closes', 'worklist.watchdog', '2030-01-01 09:50', 'escalation', '1'),
	pg_temp.ev('closes', 'worklist.watchdog', '2030-01-01 09:50', 'escalation', '2')
	] AS a) s, generate_subscripts(a, 1) o
UNION ALL
-- the watchdog's implicit close against an authority's, and demotions
SELECT 'confirm', o, a[o] FROM (SELECT ARRAY[
	pg_temp.ev('confirm', 'ann', '2030-01-01 11:00', 'participation', 'delivered'),
	pg_temp.ev('confirm', 'bob', '2030-01-01 11:00', 'participation', 'delivered', NULL, '2030-01-01 13:00'),
	pg_temp.ev('confirm', 'agent', '2030-01-01 11:30', 'outcome', 'archived', 'gave up'),
	pg_temp.ev('confirm', 'worklist.watchdog', '2030-01-01 12:30', 'outcome', 'done', NULL, NULL,
	           '{"kind": "implicit", "window": "01:00:00", "delivered_by": ["ann", "bob"]}'),
	pg_temp.ev('confirm', 'lead', '2030-01-01 12:30', 'outcome', 'done'),
	pg_temp.ev('confirm', 'worklist.watchdog', '2030-01-01 12:00', 'escalation', '1'),
	pg_temp.ev('confirm', 'cy', '2030-01-01 12:45', 'participation', 'working')
	] AS a) s, generate_subscripts(a, 1) o;

CREATE TEMP TABLE agg_fold AS
WITH RECURSIVE n AS (SELECT set, count(*)::int AS n FROM agg_ev GROUP BY set),
perm(set, p) AS (
	SELECT set, ARRAY[]::int[] FROM n
	UNION ALL
	SELECT perm.set, perm.p || i
	  FROM perm JOIN n USING (set), generate_series(1, n.n) i
	 WHERE i <> ALL (perm.p)),
complete AS (SELECT set, p FROM perm JOIN n USING (set) WHERE cardinality(p) = n.n)
SELECT c.set, c.p,
       worklist.fold(a.e, t, '2030-01-01 12:00' ORDER BY array_position(c.p, a.i)) AS fold
  FROM complete c
  JOIN agg_ev a USING (set)
  JOIN worklist.ticket t ON t.tenant = 'ticket_order' AND t.id = c.set
 GROUP BY c.set, c.p;

SELECT set, count(*) AS permutations, count(DISTINCT fold::text) AS distinct_folds
  FROM agg_fold GROUP BY set ORDER BY set;
-- what they all agree on
SELECT DISTINCT (fold).* FROM agg_fold ORDER BY 1;

------------------------------------------------------------------------
-- B. Every arrival order, through the verbs
------------------------------------------------------------------------
CREATE TEMP TABLE arrive_ev (set text, i int, actor text, kind text, value text,
                             reason text, not_before timestamptz, at timestamptz);
INSERT INTO arrive_ev VALUES
	-- the close lands before or after what ann said on either side of it
	('late', 1, 'ann', 'participation', 'working', NULL, '2030-01-01 12:00', '2030-01-01 09:00'),
	('late', 2, 'ann', 'participation', 'delivered', NULL, NULL, '2030-01-01 11:00'),
	('late', 3, 'lead', 'outcome', 'done', NULL, NULL, '2030-01-01 10:00'),
	('late', 4, 'bob', 'participation', 'blocked', 'waiting on infra', NULL, '2030-01-01 09:30'),
	('late', 5, 'agent', 'outcome', 'archived', 'no repro', NULL, '2030-01-01 09:45'),
	-- everything at one instant
	('same', 1, 'ann', 'participation', 'acknowledged', NULL, '2030-01-01 10:30', '2030-01-01 10:00'),
	('same', 2, 'ann', 'participation', 'working', NULL, '2030-01-01 10:15', '2030-01-01 10:00'),
	('same', 3, 'req', 'outcome', 'archived', 'dup', NULL, '2030-01-01 10:00'),
	('same', 4, 'lead', 'outcome', 'done', NULL, NULL, '2030-01-01 10:00'),
	('same', 5, 'bob', 'participation', 'abandoned', NULL, NULL, '2030-01-01 10:00'),
	-- two closes, the later one moving the cut past late participation
	('recut', 1, 'req', 'outcome', 'archived', 'superseded', NULL, '2030-01-01 12:00'),
	('recut', 2, 'lead', 'outcome', 'done', NULL, NULL, '2030-01-01 11:00'),
	('recut', 3, 'ann', 'participation', 'working', NULL, NULL, '2030-01-01 11:30'),
	('recut', 4, 'bob', 'participation', 'delivered', NULL, NULL, '2030-01-01 12:30'),
	('recut', 5, 'ann', 'participation', 'blocked', NULL, NULL, '2030-01-01 10:00'),
	-- no close: the summary's own deadline and watch instants
	('live', 1, 'ann', 'participation', 'working', NULL, '2030-01-01 15:00', '2030-01-01 10:00'),
	('live', 2, 'bob', 'participation', 'delivered', NULL, '2030-01-01 14:00', '2030-01-01 10:05'),
	('live', 3, 'ann', 'participation', 'delivered', NULL, NULL, '2030-01-01 10:10'),
	('live', 4, 'agent', 'outcome', 'done', NULL, NULL, '2030-01-01 10:20'),
	('live', 5, 'cy', 'participation', 'abandoned', 'later', NULL, '2030-01-01 09:00');

DO $$
DECLARE
	perm int[];
	k text;
	n int := 0;
	x record;
BEGIN
	FOR perm IN
		WITH RECURSIVE p(p) AS (
			SELECT ARRAY[]::int[]
			UNION ALL
			SELECT p || i FROM p, generate_series(1, 5) i WHERE i <> ALL (p))
		SELECT p FROM p WHERE cardinality(p) = 5
	LOOP
		n := n + 1;
		FOR x IN SELECT DISTINCT set FROM arrive_ev LOOP
			k := x.set || '/' || n;
			PERFORM worklist.open_ticket(k, 'req', 'order', authorities => '{lead}',
			                             open_deadline => '2030-01-01 10:20',
			                             confirm_window => '1 hour', ladder => '{1 hour}');
		END LOOP;
		FOR x IN
			SELECT e.* FROM unnest(perm) WITH ORDINALITY AS o(i, ord)
			  JOIN arrive_ev e USING (i) ORDER BY e.set, o.ord
		LOOP
			k := x.set || '/' || n;
			IF x.kind = 'participation' THEN
				PERFORM worklist.report(k, x.actor, x.value::worklist.participation,
				                        x.not_before, x.reason, x.at);
			ELSE
				PERFORM worklist.close_ticket(k, x.actor, x.value::worklist.outcome,
				                              x.reason, x.at);
			END IF;
		END LOOP;
	END LOOP;
END
$$;

-- The summaries are byte for byte the same whatever the arrival order.
SELECT split_part(id, '/', 1) AS set, count(*) AS orders,
       count(DISTINCT fold_state) AS distinct_summaries,
       count(DISTINCT (state, deadline, overdue_from, next_check)) AS distinct_watch
  FROM worklist.ticket WHERE tenant = 'ticket_order' AND id LIKE '%/%'
 GROUP BY 1 ORDER BY 1;

-- Each summary equals a fresh fold of its log: the fold read from the
-- summary (open_ticket of an existing ticket returns it), the summary's
-- columns, and ticket_state all agree -- with each other and with the
-- aggregate over the events in arrival order and reversed.
CREATE TEMP TABLE arrive_check AS
SELECT t.id, split_part(t.id, '/', 1) AS set,
       (SELECT s FROM worklist.open_ticket(t.id, 'x', 'x') s) AS summary,
       worklist.ticket_state(t.id, now()) AS fresh,
       (SELECT worklist.fold(e, t, now() ORDER BY e.seq)
          FROM worklist.ticket_history(t.id) e) AS arrival,
       (SELECT worklist.fold(e, t, now() ORDER BY e.seq DESC)
          FROM worklist.ticket_history(t.id) e) AS reversed,
       t.state, t.deadline, t.overdue_from
  FROM worklist.ticket t
 WHERE t.tenant = 'ticket_order' AND t.id LIKE '%/%';
SELECT set,
       count(*) FILTER (WHERE summary::text <> fresh::text) AS summary_differs,
       count(*) FILTER (WHERE arrival::text <> fresh::text
                           OR reversed::text <> fresh::text) AS aggregate_differs,
       count(*) FILTER (WHERE state <> (fresh).state
                           OR deadline IS DISTINCT FROM (fresh).deadline
                           OR overdue_from IS DISTINCT FROM
                              CASE WHEN (fresh).state IN ('done', 'archived') THEN NULL
                                   ELSE coalesce((fresh).deadline, '-infinity') END)
         AS columns_differ,
       count(DISTINCT to_jsonb(fresh) - 'ticket') AS distinct_folds
  FROM arrive_check GROUP BY set ORDER BY set;
SELECT DISTINCT set, (fresh).state, (fresh).deadline, (fresh).live_actors,
       (fresh).abandoned, (fresh).unauthorized_close, (fresh).interrupted,
       (fresh).closed_by, (fresh).close_reason
  FROM arrive_check ORDER BY set;
-- and when the watchdog next looks at the live one: at its deadline,
-- 10:20 (ann's delivery names no not_before, nor does the agent's demoted
-- done, so the open_deadline stands in), before the confirmation it
-- would give at 11:20 (every live actor delivered, last event 10:20)
SELECT DISTINCT next_check FROM worklist.ticket
 WHERE tenant = 'ticket_order' AND id LIKE 'live/%';

------------------------------------------------------------------------
-- C. Large sets, shuffled
------------------------------------------------------------------------
SELECT setseed(0.42);
SELECT ticket FROM worklist.open_ticket('big', 'req', 'big', authorities => '{lead,boss}',
                                        open_deadline => '2030-01-01 10:20', ladder => '{1 hour}');
-- 1000 events over two hours at whole minutes: plenty of same-`at` ties.
-- Three in four are participation, then demoted closes, authorized
-- closes, the watchdog's implicit closes and its escalations.
CREATE TEMP TABLE big_ev AS
SELECT i, pg_temp.ev('big',
	CASE WHEN r3 < 0.85 THEN 'actor' || (r1 * 20)::int
	     WHEN r3 < 0.93 THEN (ARRAY['lead', 'boss'])[1 + (r1 * 1)::int]
	     ELSE 'worklist.watchdog' END,
	(timestamptz '2030-01-01 09:00' + (r2 * 120)::int * interval '1 minute')::text,
	CASE WHEN r3 < 0.75 THEN 'participation'
	     WHEN r3 < 0.96 THEN 'outcome'
	     ELSE 'escalation' END,
	CASE WHEN r3 < 0.75
	     THEN (ARRAY['acknowledged', 'working', 'blocked', 'delivered', 'abandoned'])[1 + (r4 * 4)::int]
	     WHEN r3 < 0.93 THEN (ARRAY['done', 'archived'])[1 + (r4 * 1)::int]
	     WHEN r3 < 0.96 THEN 'done'
	     ELSE (1 + (r4 * 3)::int)::text END,
	CASE WHEN r3 < 0.93 AND r4 < 0.5 THEN 'reason ' || (r4 * 10)::int END,
	CASE WHEN r3 < 0.75 AND r4 > 0.3
	     THEN (timestamptz '2030-01-01 10:00' + (r2 * 60)::int * interval '1 minute')::text END,
	CASE WHEN r3 >= 0.93 AND r3 < 0.96
	     THEN '{"kind": "implicit", "window": "01:00:00", "delivered_by": ["actor1"]}'::jsonb END) AS e
  FROM (SELECT i, random() r1, random() r2, random() r3, random() r4
          FROM generate_series(1, 1000) i) s;
SELECT (e).kind, (e).actor IN ('lead', 'boss') AS authority,
       (e).actor = 'worklist.watchdog' AS watchdog, count(*) > 0 AS present
  FROM big_ev GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;

SELECT count(*) AS shuffles, count(DISTINCT fold::text) AS distinct_folds
  FROM (SELECT s, worklist.fold(b.e, t, '2030-01-01 12:00' ORDER BY random()) AS fold
          FROM generate_series(1, 20) s, big_ev b, worklist.ticket t
         WHERE t.tenant = 'ticket_order' AND t.id = 'big'
         GROUP BY s) f;
-- the same events without the closes, so the fold has live actors
SELECT count(*) AS shuffles, count(DISTINCT fold::text) AS distinct_folds,
       min(cardinality((fold).live_actors)) > 0 AS has_live_actors
  FROM (SELECT s, worklist.fold(b.e, t, '2030-01-01 12:00' ORDER BY random()) AS fold
          FROM generate_series(1, 20) s, big_ev b, worklist.ticket t
         WHERE t.tenant = 'ticket_order' AND t.id = 'big' AND (b.e).kind <> 'outcome'
         GROUP BY s) f;

-- Through the verbs: the participation and outcome events (the verbs
-- cannot write the watchdog's) in three shuffled arrival orders.
DO $$
DECLARE
	x record;
BEGIN
	FOR s IN 1..3 LOOP
		PERFORM worklist.open_ticket('big/' || s, 'req', 'big', authorities => '{lead,boss}',
		                             open_deadline => '2030-01-01 10:20', ladder => '{1 hour}');
		FOR x IN SELECT (e).* FROM big_ev WHERE NOT (e).watchdog ORDER BY random() LOOP
			IF x.kind = 'participation' THEN
				PERFORM worklist.report('big/' || s, x.actor, x.value::worklist.participation,
				                        x.not_before, x.reason, x.at);
			ELSE
				PERFORM worklist.close_ticket('big/' || s, x.actor, x.value::worklist.outcome,
				                              x.reason, x.at);
			END IF;
		END LOOP;
	END LOOP;
END
$$;
SELECT count(*) AS orders, count(DISTINCT fold_state) AS distinct_summaries,
       count(DISTINCT last_seq) AS distinct_lengths
  FROM worklist.ticket WHERE tenant = 'ticket_order' AND id LIKE 'big/%';
SELECT count(*) FILTER (WHERE (SELECT s FROM worklist.open_ticket(id, 'x', 'x') s)::text
                              <> worklist.ticket_state(id, now())::text) AS summary_differs,
       count(DISTINCT to_jsonb(worklist.ticket_state(id, '2030-01-01 12:00')) - 'ticket') AS distinct_folds
  FROM worklist.ticket WHERE tenant = 'ticket_order' AND id LIKE 'big/%';

SELECT worklist.erase_tenant() > 0 AS erased;
