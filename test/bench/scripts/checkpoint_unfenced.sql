-- write_checkpoint without a fence; each client writes its own run
\set c random(1, 20)
SELECT worklist.write_checkpoint('bench', 's', 'r' || :client_id, 'c' || :c, '{"step": 1, "state": "running"}');
