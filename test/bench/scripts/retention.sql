-- the retention load: a new task is opened, and the next one claimed and
-- completed (three transactions), so the queue keeps its length and the
-- table gains a settled task per round
SELECT (worklist.open_task('k' || nextval('bench.keep_ids'), 'keep', '{reviewer}')).id;
SELECT (worklist.claim_next('w' || :client_id, '{reviewer,approver,legal}')).id AS id \gset
SELECT worklist.complete(:id, 'w' || :client_id, '{"approved": true}');
