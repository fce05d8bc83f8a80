-- claim_run's statement (src/run.c, "run.claim") sent bare by pgbench: each
-- client renews the lease of its own run, as renew.sql does through the
-- verb, but with no function call, no checks, no notification, and no
-- flush of the fence sequence before the answer
WITH g AS MATERIALIZED (
       SELECT (SELECT s.last_value - CASE WHEN s.is_called THEN 0 ELSE 1 END
                 FROM worklist.fence_seq s)
              >= COALESCE((SELECT max(l.fence) FROM worklist.run_claim l), 0) AS ok),
     mk AS (
       INSERT INTO worklist.run (tenant, project, session, run)
       VALUES ('bench', 'bare', 's', 'r' || :client_id) ON CONFLICT DO NOTHING),
     got AS (
       INSERT INTO worklist.run_claim AS l (tenant, project, session, run, holder, fence, expires_at)
       SELECT 'bench', 'bare', 's', 'r' || :client_id, 'h' || :client_id,
              nextval('worklist.fence_seq'), now() + interval '1 hour'
         FROM g WHERE g.ok
       ON CONFLICT (tenant, project, session, run) DO UPDATE
          SET holder = EXCLUDED.holder, fence = EXCLUDED.fence,
              expires_at = EXCLUDED.expires_at, released = false,
              reclaimed = (l.holder <> EXCLUDED.holder AND NOT l.released)
        WHERE l.holder = EXCLUDED.holder OR l.expires_at <= now()
       RETURNING l.holder, l.fence, l.expires_at, l.reclaimed)
SELECT g.ok,
       CASE WHEN got.fence IS NOT NULL THEN ROW(got.holder, got.fence, got.expires_at)::worklist.run_lease END,
       got.reclaimed
  FROM g LEFT JOIN got ON true;
