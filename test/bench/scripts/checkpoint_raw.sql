-- a raw upsert of a checkpoint-shaped row; each client writes its own run
\set c random(1, 20)
INSERT INTO bench.raw_checkpoint (tenant, project, session, run, checkpoint_id, created_at, body)
VALUES ('bench', 'bench', 's', 'r' || :client_id, 'c' || :c, now(), '{"step": 1, "state": "running"}')
ON CONFLICT (tenant, project, session, run, checkpoint_id)
DO UPDATE SET created_at = EXCLUDED.created_at, body = EXCLUDED.body;
