-- one cycle through the PL/pgSQL floor (floor.sql)
SELECT (floor.claim_next('w' || :client_id, '{reviewer,approver,legal}')).id AS id \gset
SELECT floor.complete(:id, 'w' || :client_id, '{"approved": true}');
