-- Tickets: the log is append-only.  No verb changes or removes an event;
-- a direct UPDATE, DELETE or TRUNCATE is refused for every role, the
-- owner and roles granted the privilege included; only erase_tenant()
-- removes events.  So no actor can erase a reason it gave before.

SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
SET worklist.tenant = 'ticket_log';

SELECT ticket FROM worklist.open_ticket('k', 'req', 'append-only');
SELECT abandoned FROM worklist.report('k', 'ann', 'abandoned', reason => 'the API key leaked', at => '2030-01-01 10:00');
-- ann takes it back and abandons again without a reason: the fold shows
-- what ann says now, the log keeps what ann said then
SELECT abandoned FROM worklist.report('k', 'ann', 'working', at => '2030-01-01 10:05');
SELECT abandoned FROM worklist.report('k', 'ann', 'abandoned', at => '2030-01-01 10:10');
SELECT seq, actor, at, value, reason FROM worklist.ticket_history('k');

-- The owner (this superuser) cannot rewrite or remove an event ...
UPDATE worklist.ticket_event SET reason = NULL WHERE tenant = 'ticket_log';
\echo :LAST_ERROR_SQLSTATE
UPDATE worklist.ticket_event SET reason = NULL WHERE false;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM worklist.ticket_event WHERE tenant = 'ticket_log' AND seq = 1;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE worklist.ticket_event;
\echo :LAST_ERROR_SQLSTATE
-- ... nor overwrite a ticket's definition or summary (its state is what
-- the log says, never a column somebody sets) ...
UPDATE worklist.ticket SET state = 'done' WHERE tenant = 'ticket_log';
\echo :LAST_ERROR_SQLSTATE
UPDATE worklist.ticket SET requester = 'ann' WHERE tenant = 'ticket_log';
\echo :LAST_ERROR_SQLSTATE
SELECT state, abandoned FROM worklist.open_ticket('k', 'req', 'append-only');
-- ... nor remove a ticket, which would orphan its log
DELETE FROM worklist.ticket WHERE tenant = 'ticket_log';
\echo :LAST_ERROR_SQLSTATE
TRUNCATE worklist.ticket;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE worklist.ticket, worklist.ticket_event;
\echo :LAST_ERROR_SQLSTATE
-- ... not even from inside a function or a savepoint
DO $$ BEGIN DELETE FROM worklist.ticket_event; END $$;
\echo :LAST_ERROR_SQLSTATE
BEGIN;
SAVEPOINT s;
DELETE FROM worklist.ticket_event;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK TO s;
COMMIT;

-- A role granted every privilege on the log, and bound to the tenant as
-- service, is refused the same way (row-level security alone would have
-- made these silently match nothing; the refusal says so instead).
CREATE ROLE wl_ticket_writer;
SELECT worklist.grant_tenant('ticket_log', 'wl_ticket_writer', 'service');
GRANT USAGE ON SCHEMA worklist TO wl_ticket_writer;
GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON worklist.ticket_event, worklist.ticket TO wl_ticket_writer;
SET ROLE wl_ticket_writer;
SELECT count(*) AS sees FROM worklist.ticket_event;
UPDATE worklist.ticket_event SET reason = 'rewritten';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM worklist.ticket_event;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE worklist.ticket_event;
\echo :LAST_ERROR_SQLSTATE
DELETE FROM worklist.ticket;
\echo :LAST_ERROR_SQLSTATE
UPDATE worklist.ticket SET state = 'archived';
\echo :LAST_ERROR_SQLSTATE
-- nor can it append behind the verbs' back: the policies admit reads only
INSERT INTO worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value)
VALUES ('ticket_log', 'k', 99, 'ann', now(), 'participation', 'working');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
REVOKE ALL ON worklist.ticket_event, worklist.ticket FROM wl_ticket_writer;
REVOKE ALL ON SCHEMA worklist FROM wl_ticket_writer;
SELECT worklist.revoke_tenant('ticket_log', 'wl_ticket_writer');
DROP ROLE wl_ticket_writer;

-- The log's own checks hold even for the owner writing directly: only
-- the watchdog escalates or confirms implicitly, under its own name, and
-- events happen at finite instants.
INSERT INTO worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value)
VALUES ('ticket_log', 'k', 90, 'ann', '2030-01-01', 'escalation', '3');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value)
VALUES ('ticket_log', 'k', 90, 'worklist.watchdog', '2030-01-01', 'participation', 'working');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value, watchdog, confirmation)
VALUES ('ticket_log', 'k', 90, 'ann', '2030-01-01', 'outcome', 'done', false, '{"kind": "implicit"}');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value)
VALUES ('ticket_log', 'k', 90, 'ann', 'infinity', 'participation', 'working');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value)
VALUES ('ticket_log', 'k', 90, 'ann', '2030-01-01', 'participation', 'finished');
\echo :LAST_ERROR_SQLSTATE

-- Nothing above changed the log.
SELECT seq, actor, at, value, reason FROM worklist.ticket_history('k');

-- erase_tenant() is the only way out, and only for its own tenant.
SET worklist.tenant = 'ticket_log_other';
SELECT ticket FROM worklist.open_ticket('k', 'req', 'another tenant');
SELECT state FROM worklist.report('k', 'bob', 'working', at => '2030-01-01');
SET worklist.tenant = 'ticket_log';
SELECT worklist.erase_tenant() AS erased;
SELECT tenant, count(*) FROM worklist.ticket_event
 WHERE tenant LIKE 'ticket_log%' GROUP BY tenant ORDER BY 1;
-- and the guards are back once it returns, or once a verb has written
DELETE FROM worklist.ticket_event WHERE tenant = 'ticket_log_other';
\echo :LAST_ERROR_SQLSTATE
UPDATE worklist.ticket SET state = 'open' WHERE tenant = 'ticket_log_other';
\echo :LAST_ERROR_SQLSTATE
-- ... also after a verb failed in the middle of writing: here an event
-- the owner slipped in takes the arrival number the next append needs
INSERT INTO worklist.ticket_event (tenant, ticket, seq, actor, at, kind, value)
VALUES ('ticket_log_other', 'k', 2, 'eve', '2030-01-01', 'participation', 'working');
SET worklist.tenant = 'ticket_log_other';
SELECT state FROM worklist.report('k', 'bob', 'blocked', at => '2030-01-02');
\echo :LAST_ERROR_SQLSTATE
UPDATE worklist.ticket SET state = 'open' WHERE tenant = 'ticket_log_other';
\echo :LAST_ERROR_SQLSTATE
SET worklist.tenant = 'ticket_log_other';
SELECT worklist.erase_tenant() AS erased;
