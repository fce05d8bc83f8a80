-- Tickets: the summary kept on the ticket row always equals a fresh fold
-- of the log, and the watchdog acts exactly at the instant the summary
-- says.  A randomized property test: 40 tickets with random definitions
-- (each in a tenant of its own), 1200 random reports, closes and sweeps
-- at random instants (whole minutes over one day, so ties are common);
-- after every one of them the fold read from the summary is compared
-- with ticket_state (which folds the log afresh) and with the aggregate.
BEGIN;
SELECT plan(7);
SET LOCAL timezone = 'UTC';
SELECT setseed(0.17);

CREATE TEMP TABLE mismatch (k int, op int, what text) ON COMMIT DROP;

CREATE FUNCTION pg_temp.at() RETURNS timestamptz LANGUAGE sql AS
	$$ SELECT timestamptz '2030-01-01 08:00+00' + (random() * 720)::int * interval '1 minute' $$;
CREATE FUNCTION pg_temp.pick(a text[]) RETURNS text LANGUAGE sql AS
	$$ SELECT a[1 + floor(random() * cardinality(a))::int] $$;

-- Compare, for the ticket of the current tenant, the summary with a fresh
-- fold; record what differs.
CREATE FUNCTION pg_temp.check(k int, op int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	summary worklist.ticket_fold := worklist.open_ticket('k', 'x', 'x');
	fresh worklist.ticket_fold := worklist.ticket_state('k', now());
	agg worklist.ticket_fold;
	t worklist.ticket;
	overdue_from timestamptz;
BEGIN
	SELECT * INTO t FROM worklist.ticket
	 WHERE tenant = current_setting('worklist.tenant') AND id = 'k';
	agg := (SELECT worklist.fold(e, t, now() ORDER BY random())
	          FROM worklist.ticket_history('k') e);
	IF agg IS NULL THEN
		agg := fresh;		-- no events yet: nothing to aggregate
	END IF;
	IF summary::text <> fresh::text THEN
		INSERT INTO mismatch VALUES (k, op, 'summary fold ' || summary::text || ' fresh ' || fresh::text);
	END IF;
	IF agg::text <> fresh::text THEN
		INSERT INTO mismatch VALUES (k, op, 'aggregate ' || agg::text || ' fresh ' || fresh::text);
	END IF;
	-- a live ticket is overdue from its deadline on, or at once without one
	overdue_from := CASE WHEN fresh.state IN ('done', 'archived') THEN NULL
	                     ELSE coalesce(fresh.deadline, '-infinity') END;
	IF t.state <> fresh.state OR t.deadline IS DISTINCT FROM fresh.deadline
	   OR t.overdue_from IS DISTINCT FROM overdue_from THEN
		INSERT INTO mismatch VALUES (k, op, 'columns ' || t.state || ' ' || coalesce(t.deadline::text, '-'));
	END IF;
END
$$;

-- The watchdog acts exactly at the summary's next_check: a microsecond
-- before, it does nothing to the ticket; at next_check it appends one
-- event; at -infinity (due at once) it acts at any instant; without one it
-- never acts.  Each probe is undone.
CREATE TEMP TABLE probe (kind text, before int, at_check int) ON COMMIT DROP;
CREATE FUNCTION pg_temp.probe(k int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	nc timestamptz;
	kind text;
	b int;
	a int;
BEGIN
	SELECT next_check INTO nc FROM worklist.ticket
	 WHERE tenant = current_setting('worklist.tenant') AND id = 'k';
	kind := CASE WHEN nc IS NULL THEN 'never' WHEN nc = '-infinity' THEN 'now' ELSE 'finite' END;
	BEGIN
		IF kind = 'finite' THEN
			SELECT tickets_escalated + tickets_confirmed INTO b
			  FROM worklist.sweep(nc - interval '1 microsecond');
			SELECT tickets_escalated + tickets_confirmed INTO a FROM worklist.sweep(nc);
		ELSIF kind = 'now' THEN
			SELECT tickets_escalated + tickets_confirmed INTO a FROM worklist.sweep(pg_temp.at());
		ELSE
			SELECT tickets_escalated + tickets_confirmed INTO a FROM worklist.sweep('2200-01-01');
		END IF;
		RAISE EXCEPTION 'undo';
	EXCEPTION WHEN raise_exception THEN
		NULL;
	END;
	INSERT INTO probe VALUES (kind, coalesce(b, 0), a);
END
$$;

DO $$
DECLARE
	k int;
	r float8;
BEGIN
	FOR k IN 1..40 LOOP
		PERFORM set_config('worklist.tenant', 'tap_summary_' || k, true);
		PERFORM worklist.open_ticket('k', 'req', 'random', authorities => '{lead}',
			open_deadline => CASE WHEN random() < 0.5 THEN pg_temp.at() END,
			confirm_window => CASE WHEN random() < 0.6 THEN (random() * 180)::int * interval '1 minute' END,
			ladder => (ARRAY['{}', '{30 minutes}', '{1 hour, 2 hours}', '{0}'])[1 + floor(random() * 4)::int]::interval[]);
		PERFORM pg_temp.check(k, 0);
	END LOOP;
	FOR op IN 1..1200 LOOP
		k := 1 + floor(random() * 40)::int;
		PERFORM set_config('worklist.tenant', 'tap_summary_' || k, true);
		r := random();
		IF r < 0.65 THEN
			PERFORM worklist.report('k', pg_temp.pick('{ann,bob,cy,dee,req}'),
				pg_temp.pick('{acknowledged,working,blocked,delivered,abandoned}')::worklist.participation,
				CASE WHEN random() < 0.5 THEN pg_temp.at() END,
				pg_temp.pick(ARRAY[NULL, '', 'a reason', 'another reason']),
				pg_temp.at());
		ELSIF r < 0.8 THEN
			PERFORM worklist.close_ticket('k', pg_temp.pick('{req,lead,ann,bob}'),
				pg_temp.pick('{done,archived}')::worklist.outcome,
				pg_temp.pick(ARRAY[NULL, 'why']), pg_temp.at());
		ELSE
			PERFORM worklist.sweep(pg_temp.at());
		END IF;
		PERFORM pg_temp.check(k, op);
		IF op % 3 = 0 THEN
			PERFORM pg_temp.probe(k);
		END IF;
	END LOOP;
END
$$;

SELECT is((SELECT count(*)::int FROM mismatch), 0,
	'after every append, the summary equals a fresh fold of the log');
SELECT diag(what) FROM mismatch LIMIT 5;
SELECT cmp_ok((SELECT count(*)::int FROM worklist.ticket_event WHERE tenant LIKE 'tap\_summary\_%'),
	'>', 900, 'the random logs are not trivial');
SELECT cmp_ok((SELECT count(*)::int FROM worklist.ticket_event
                WHERE tenant LIKE 'tap\_summary\_%' AND watchdog), '>', 20,
	'the watchdog took part');

SELECT is((SELECT count(*)::int FROM probe WHERE kind = 'finite' AND (before <> 0 OR at_check <> 1)),
	0, 'the watchdog acts at next_check, not a microsecond before');
SELECT is((SELECT count(*)::int FROM probe WHERE kind = 'now' AND at_check <> 1),
	0, 'a ticket due at once (next_check -infinity) is acted on at any instant');
SELECT is((SELECT count(*)::int FROM probe WHERE kind = 'never' AND at_check <> 0),
	0, 'a ticket without next_check is never acted on');
SELECT is((SELECT count(*)::int FROM (SELECT FROM probe GROUP BY kind HAVING count(*) > 10) s), 3,
	'each kind of watch instant was probed more than ten times');

SELECT * FROM finish();
ROLLBACK;
