-- one cycle as the bare statements worklist.claim_next and worklist.complete
-- run (src/task.c), sent by pgbench: no function call, no checks
UPDATE worklist.task t SET holder = 'w' || :client_id, claimed_at = now(),
       state = CASE WHEN t.state = 'open' THEN 'claimed'::worklist.task_state ELSE t.state END
 WHERE t.tenant = 'cycle' AND t.id = (
       SELECT q.id FROM worklist.task q
        WHERE q.tenant = 'cycle'
          AND (q.state = 'open' OR (q.state = 'escalated' AND q.holder IS NULL))
          AND (q.roles && '{reviewer,approver,legal}'::text[]
               OR (q.state = 'escalated' AND q.escalation_roles && '{reviewer,approver,legal}'::text[]))
          AND NOT ('w' || :client_id = ANY (q.excluded))
        ORDER BY q.priority DESC, q.created_at, q.id
        LIMIT 1 FOR NO KEY UPDATE OF q SKIP LOCKED)
RETURNING t.id \gset
UPDATE worklist.task t SET state = 'completed', settled_at = now(),
       decided_by = 'w' || :client_id, decision = '{"approved": true}'
 WHERE t.tenant = 'cycle' AND t.id = :id AND t.holder = 'w' || :client_id
   AND t.state = ANY ('{open,claimed,escalated}'::worklist.task_state[]);
