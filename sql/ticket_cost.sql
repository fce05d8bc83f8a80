-- Tickets: what each verb reads, counted by the statistics system inside
-- one transaction (pg_stat_xact_user_tables), so the test does not depend
-- on timing:
--   report / close_ticket   read the ticket row, never the log (the same
--                           for a log of 10 events and one of 1000);
--   ticket_state            reads the events of that ticket only;
--   overdue_tickets, sweep  read the tickets that are due, not the others.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET worklist.tenant = 'ticket_cost';

-- 3000 tickets nobody needs to look at before 2040, two with a log
-- (10 and 1000 events), and five due now.
SELECT count(*) FROM (
	SELECT worklist.open_ticket('quiet' || i, 'req', 't', open_deadline => '2040-01-01')
	  FROM generate_series(1, 3000) i) s;
SELECT count(*) FROM (
	SELECT worklist.open_ticket(id, 'req', 't', open_deadline => '2040-01-01')
	  FROM unnest('{small,big}'::text[]) id) s;
DO $$
BEGIN
	FOR i IN 1..1000 LOOP
		PERFORM worklist.report('big', 'a' || (i % 7), 'working', not_before => '2040-01-01',
		                        at => '2030-01-01'::timestamptz + i * interval '1 second');
		IF i <= 10 THEN
			PERFORM worklist.report('small', 'a' || (i % 7), 'working', not_before => '2040-01-01',
			                        at => '2030-01-01'::timestamptz + i * interval '1 second');
		END IF;
	END LOOP;
END
$$;
SELECT count(*) FROM (
	SELECT worklist.open_ticket('due' || i, 'req', 't', open_deadline => '2031-01-01')
	  FROM generate_series(1, 5) i) s;
SELECT id, last_seq FROM worklist.ticket WHERE tenant = 'ticket_cost' AND last_seq > 0 ORDER BY id;
ANALYZE worklist.ticket, worklist.ticket_event;

-- What this transaction has done to the two tables so far.
CREATE FUNCTION pg_temp.counts()
RETURNS TABLE (rel name, seq_scans bigint, rows_read bigint, inserted bigint, updated bigint)
LANGUAGE sql AS $$
	SELECT relname, seq_scan, seq_tup_read + coalesce(idx_tup_fetch, 0), n_tup_ins, n_tup_upd
	  FROM pg_stat_xact_user_tables
	 WHERE relid IN ('worklist.ticket'::regclass, 'worklist.ticket_event'::regclass)
$$;
CREATE TEMP TABLE mark (rel name, seq_scans bigint, rows_read bigint, inserted bigint, updated bigint);
CREATE FUNCTION pg_temp.mark() RETURNS void LANGUAGE sql AS $$
	DELETE FROM mark; INSERT INTO mark SELECT * FROM pg_temp.counts();
$$;
CREATE FUNCTION pg_temp.since()
RETURNS TABLE (rel name, seq_scans bigint, rows_read bigint, inserted bigint, updated bigint)
LANGUAGE sql AS $$
	SELECT c.rel, c.seq_scans - m.seq_scans, c.rows_read - m.rows_read,
	       c.inserted - m.inserted, c.updated - m.updated
	  FROM pg_temp.counts() c JOIN mark m USING (rel) ORDER BY 1
$$;

-- report: one row read and updated, one event inserted, no event read --
-- for the 10-event log and the 1000-event log alike.
BEGIN;
SELECT pg_temp.mark();
SELECT state FROM worklist.report('small', 'zed', 'working', not_before => '2040-01-01', at => '2030-02-01');
SELECT * FROM pg_temp.since();
SELECT pg_temp.mark();
SELECT state FROM worklist.report('big', 'zed', 'working', not_before => '2040-01-01', at => '2030-02-01');
SELECT * FROM pg_temp.since();
-- close_ticket likewise
SELECT pg_temp.mark();
SELECT state FROM worklist.close_ticket('big', 'agent', 'done', at => '2030-02-02');
SELECT * FROM pg_temp.since();
COMMIT;

-- ticket_state folds the log afresh: the ticket's own events, no more.
BEGIN;
SELECT pg_temp.mark();
SELECT state, live_actors FROM worklist.ticket_state('small', '2030-03-01');
SELECT * FROM pg_temp.since();
COMMIT;

-- overdue_tickets and the watchdog read the five due tickets, not the
-- 3002 others.
BEGIN;
SELECT pg_temp.mark();
SELECT count(*) AS overdue FROM worklist.overdue_tickets('2035-01-01');
SELECT * FROM pg_temp.since();
SELECT pg_temp.mark();
SELECT tickets_escalated FROM worklist.sweep('2035-01-01');
SELECT * FROM pg_temp.since();
-- nothing left to do: nothing read
SELECT pg_temp.mark();
SELECT tickets_escalated FROM worklist.sweep('2035-01-01');
SELECT * FROM pg_temp.since();
COMMIT;

-- The one case the summary cannot decide alone (ticket.h): an authorized
-- close dated before what somebody already said.  Then, and only then,
-- the log is read once.
BEGIN;
SELECT pg_temp.mark();
SELECT state, live_actors FROM worklist.close_ticket('big', 'req', 'archived', reason => 'obsolete', at => '2030-01-01 00:00:05');
SELECT rel, rows_read >= 1002 AS read_whole_log, inserted, updated FROM pg_temp.since();
COMMIT;

SELECT worklist.erase_tenant() AS erased;
