-- the fold of a ticket of the group :grp
\set k 1 + :client_id + 8 * random(0, :per_client - 1)
SELECT (worklist.ticket_state(:grp || :k)).state;
