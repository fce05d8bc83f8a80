-- COPY under tenancy: a role granted SELECT on the tables sees, through
-- COPY ... TO STDOUT, only the rows of a tenant it may act in, whatever
-- tenant it sets; it cannot switch row-level security off to see more;
-- and COPY ... FROM is refused, with or without INSERT granted.

SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE ROLE hostile_copy_a;
CREATE ROLE hostile_copy_b;
SELECT worklist.grant_tenant('hostile_copy_a', 'hostile_copy_a');
SELECT worklist.grant_tenant('hostile_copy_b', 'hostile_copy_b');

-- Rows of both tenants in every table.
SET worklist.tenant = 'hostile_copy_a';
SELECT (worklist.open_task('a1', 'case', '{r}')).id;
SELECT (worklist.open_ticket('ka', 'req', 'a ticket')).state;
SELECT (worklist.report('ka', 'ann', 'working', at => '2030-01-01')).state;
SELECT worklist.write_checkpoint('p', 's', 'ra', 'c1', '{}', created_at => '2030-01-01');
SELECT (worklist.claim_run('p', 's', 'ra', 'ann', '1 hour', '2030-01-01')).holder;
SET worklist.tenant = 'hostile_copy_b';
SELECT (worklist.open_task('b1', 'case', '{r}')).id;
SELECT (worklist.open_ticket('kb', 'req', 'b ticket')).state;
SELECT (worklist.report('kb', 'bob', 'blocked', at => '2030-01-01')).state;
SELECT worklist.write_checkpoint('p', 's', 'rb', 'c1', '{}', created_at => '2030-01-01');
SELECT (worklist.claim_run('p', 's', 'rb', 'bob', '1 hour', '2030-01-01')).holder;
RESET worklist.tenant;

GRANT SELECT ON ALL TABLES IN SCHEMA worklist TO hostile_copy_a;
SET ROLE hostile_copy_a;

-- Its own tenant: its rows, and only those.
SET worklist.tenant = 'hostile_copy_a';
COPY worklist.task (tenant, id, state) TO STDOUT;
COPY worklist.ticket (tenant, id, state) TO STDOUT;
COPY worklist.ticket_event (tenant, ticket, actor, value) TO STDOUT;
COPY worklist.run (tenant, project, session, run, checkpoint_count) TO STDOUT;
COPY worklist.run_checkpoint (tenant, run, checkpoint_id) TO STDOUT;
COPY worklist.run_claim (tenant, run, holder) TO STDOUT;
COPY worklist.tenant_binding TO STDOUT;
COPY (SELECT tenant, id FROM worklist.task ORDER BY id) TO STDOUT;

-- Tenant B set: nothing at all, from any table.
SET worklist.tenant = 'hostile_copy_b';
COPY worklist.task (tenant, id) TO STDOUT;
COPY worklist.ticket (tenant, id) TO STDOUT;
COPY worklist.ticket_event (tenant, ticket) TO STDOUT;
COPY worklist.run (tenant, run) TO STDOUT;
COPY worklist.run_checkpoint (tenant, run) TO STDOUT;
COPY worklist.run_claim (tenant, run) TO STDOUT;
COPY worklist.tenant_binding TO STDOUT;
COPY (SELECT tenant, id FROM worklist.task) TO STDOUT;
-- ... nor with an empty or an unbound tenant.
SET worklist.tenant = '';
COPY worklist.task (tenant, id) TO STDOUT;
SET worklist.tenant = 'hostile_copy_nobody';
COPY worklist.task (tenant, id) TO STDOUT;

-- Switching row-level security off is refused rather than obeyed.
SET row_security = off;
COPY worklist.task (tenant, id) TO STDOUT;
\echo :LAST_ERROR_SQLSTATE
RESET row_security;

-- COPY FROM: refused without INSERT ...  (psql skips the data of a
-- refused COPY up to its end marker)
SET worklist.tenant = 'hostile_copy_a';
COPY worklist.task (tenant, id, case_id, roles) FROM STDIN;
hostile_copy_a	a3	case	{r}
hostile_copy_b	b3	case	{r}
\.
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- ... and with it: row-level security does not admit COPY FROM.
GRANT INSERT ON worklist.task, worklist.ticket_event, worklist.run_claim TO hostile_copy_a;
SET ROLE hostile_copy_a;
COPY worklist.task (tenant, id, case_id, roles) FROM STDIN;
hostile_copy_a	a3	case	{r}
hostile_copy_b	b3	case	{r}
\.
\echo :LAST_ERROR_SQLSTATE
COPY worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value) FROM STDIN;
hostile_copy_b	kb	2	mallory	2030-01-02 00:00:00+00	outcome	done
\.
\echo :LAST_ERROR_SQLSTATE
COPY worklist.run_claim (tenant, project, session, run, holder, fence, expires_at) FROM STDIN;
hostile_copy_b	p	s	rb2	mallory	9223372036854775807	infinity
\.
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;

-- Nothing changed.
SELECT tenant, id, state FROM worklist.task WHERE tenant LIKE 'hostile\_copy\_%' ORDER BY 1, 2;
SELECT tenant, run, holder FROM worklist.run_claim WHERE tenant LIKE 'hostile\_copy\_%' ORDER BY 1, 2;

-- Clean up.
REVOKE ALL ON ALL TABLES IN SCHEMA worklist FROM hostile_copy_a;
SET worklist.tenant = 'hostile_copy_a';
SELECT worklist.erase_tenant();
SET worklist.tenant = 'hostile_copy_b';
SELECT worklist.erase_tenant();
RESET worklist.tenant;
SELECT worklist.revoke_tenant('hostile_copy_a', 'hostile_copy_a');
SELECT worklist.revoke_tenant('hostile_copy_b', 'hostile_copy_b');
DROP ROLE hostile_copy_a;
DROP ROLE hostile_copy_b;
