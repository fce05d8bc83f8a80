-- one cycle: claim the next task, then complete it (two transactions)
SELECT (worklist.claim_next('w' || :client_id, '{reviewer,approver,legal}')).id AS id \gset
SELECT worklist.complete(:id, 'w' || :client_id, '{"approved": true}');
