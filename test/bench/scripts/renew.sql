-- each client renews the lease of its own run (a new fence every time)
SELECT worklist.claim_run('renew', 's', 'r' || :client_id, 'h' || :client_id, '1 hour');
