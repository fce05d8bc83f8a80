-- one cycle as the bare statements worklist.claim_next and worklist.complete
-- run (src/task.c, "task.claim_next" and "task.complete"), sent by pgbench:
-- no function call, no checks, and the claim always starts at the head of
-- the queue (the lowest key), where claim_next starts when its tenant has
-- no hint (src/hint.c).  The table's indexes tell pending rows by
-- settled_at (the task layout of 0.4), so a claim is a HOT update; the
-- claim row, the history and the notification the verbs also write are not
-- here.
WITH first AS MATERIALIZED (
       SELECT (- q.priority::int8), q.created_at, q.id FROM worklist.task q
        WHERE q.tenant = 'cycle'
          AND (q.settled_at IS NULL AND q.holder IS NULL)
          AND ROW((- q.priority::int8), q.created_at, q.id) >= ROW(-9223372036854775808, '-infinity'::timestamptz, '')
        ORDER BY (- q.priority::int8), q.created_at, q.id LIMIT 1),
     pick AS (
       SELECT q.id FROM worklist.task q
        WHERE q.tenant = 'cycle'
          AND (q.settled_at IS NULL AND q.holder IS NULL)
          AND ROW((- q.priority::int8), q.created_at, q.id) >= ROW(-9223372036854775808, '-infinity'::timestamptz, '')
          AND (q.roles && '{reviewer,approver,legal}'::text[]
               OR (q.state = 'escalated' AND q.escalation_roles && '{reviewer,approver,legal}'::text[]))
          AND NOT ('w' || :client_id = ANY (q.excluded))
        ORDER BY (- q.priority::int8), q.created_at, q.id
        LIMIT 1 FOR NO KEY UPDATE OF q SKIP LOCKED),
     took AS (
       UPDATE worklist.task t SET holder = 'w' || :client_id, claimed_at = now(),
              claim_expires_at = now() + t.claim_timeout,
              state = CASE WHEN t.state = 'open' THEN 'claimed'::worklist.task_state ELSE t.state END
        WHERE t.tenant = 'cycle' AND t.id = (SELECT pick.id FROM pick)
       RETURNING t.id)
SELECT (SELECT took.id FROM took) AS id FROM (SELECT) one LEFT JOIN first f ON true \gset
UPDATE worklist.task t SET state = 'completed', settled_at = now(), claim_expires_at = NULL,
       decided_by = 'w' || :client_id, decision = '{"approved": true}'
 WHERE t.tenant = 'cycle' AND t.id = :id AND (t.holder = 'w' || :client_id) IS TRUE
   AND t.state = ANY ('{open,claimed,escalated}'::worklist.task_state[]);
