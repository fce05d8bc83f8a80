-- write_checkpoint with the run's current fence: the runs were claimed in
-- client order, so client n's fence is base + n
\set c random(1, 20)
\set fence :base + :client_id
SELECT worklist.write_checkpoint('bench', 's', 'r' || :client_id, 'c' || :c, '{"step": 1, "state": "running"}', :fence);
