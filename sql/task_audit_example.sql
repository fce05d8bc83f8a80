-- The worked example of doc/reference.md (section 4, History): the audit
-- of one refund task from open to completion, through a hand-over and a
-- claim timeout, made by an application server with a service binding
-- that names the people acting.  The history printed here is the one the
-- reference shows; this test keeps the two equal.

SET worklist.tenant = 'task_audit_example';
CREATE ROLE wl_refund_app;
GRANT USAGE ON SCHEMA worklist TO wl_refund_app;
SELECT worklist.grant_tenant('task_audit_example', 'wl_refund_app', 'service');
SET ROLE wl_refund_app;

-- The sweep below stands in for one that runs 31 minutes later.
SELECT now() + interval '31 minutes' AS sweep_at \gset

SELECT id, state FROM worklist.open_task('refund-4711', 'order-4711', '{refunds}',
       payload => '{"amount": 120, "currency": "EUR"}', claim_timeout => '30 minutes');
SELECT state, holder FROM worklist.claim('refund-4711', 'alice', '{refunds}');
SELECT state, holder FROM worklist.hand_over('refund-4711', 'alice', 'bob', '{refunds}');
SELECT claims_released FROM worklist.sweep(:'sweep_at');
SELECT state, holder FROM worklist.task('refund-4711');
SELECT state, holder FROM worklist.claim('refund-4711', 'carol', '{refunds}');
SELECT seq, event FROM worklist.note('refund-4711', 'carol', 'Receipt checked against the order.');
SELECT worklist.complete('refund-4711', 'carol', '{"approve": true}');

SELECT seq, event, actor, login, detail FROM worklist.task_history('refund-4711');
SELECT state, holder, decided_by, decision FROM worklist.task('refund-4711');

-- Each event at the instant it was judged at: the claim timeout at the
-- sweep's now, every other one at its call's now(), one after another.
SELECT (SELECT at = :'sweep_at' FROM worklist.task_history('refund-4711')
         WHERE event = 'claim_timed_out') AS timeout_at_sweep_now,
       (SELECT bool_and(at >= prev) AND max(at) < :'sweep_at'
          FROM (SELECT at, lag(at) OVER (ORDER BY seq) AS prev
                  FROM worklist.task_history('refund-4711')
                 WHERE event <> 'claim_timed_out') h) AS others_in_order;

RESET ROLE;
-- The reference shows this history: the rows of its block (the one after
-- the query above, up to "(N rows)") are these rows, field by field.
\getenv abs_srcdir PG_ABS_SRCDIR
\set reference :abs_srcdir '/doc/reference.md'
CREATE TEMP TABLE shown AS
SELECT l.n::int AS seq, ARRAY(SELECT btrim(f) FROM unnest(string_to_array(l.line, '|')) f) AS fields
  FROM (SELECT (regexp_match(pg_read_file(:'reference'),
          'task_history\(''refund-4711''\);\n```\n+```\n[^\n]*\n[-+]+\n([^`]*?)\n\(\d+ rows\)\n```'))[1] AS block) b,
       regexp_split_to_table(b.block, '\n') WITH ORDINALITY l(line, n);
SELECT count(*) AS rows_shown FROM shown;
-- Rows that differ (the reference's, then the history's): none.
SELECT coalesce(s.seq, h.seq) AS seq, s.fields AS shown, h.fields AS history
  FROM shown s
  FULL JOIN (SELECT seq, ARRAY[seq::text, event, coalesce(actor, ''), coalesce(login, ''), detail::text] AS fields
               FROM worklist.task_history('refund-4711')) h ON h.seq = s.seq
 WHERE s.fields IS DISTINCT FROM h.fields
 ORDER BY 1;

SELECT worklist.erase_tenant() > 0 AS erased;
SELECT worklist.revoke_tenant('task_audit_example', 'wl_refund_app');
REVOKE USAGE ON SCHEMA worklist FROM wl_refund_app;
DROP ROLE wl_refund_app;
