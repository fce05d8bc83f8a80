-- The verbs that persist an agent framework's state (latest_checkpoint,
-- newest_checkpoints, put_writes, pending_writes, put_values, run_values,
-- delete_run): their privileges and tables, the member rules, and logins
-- that may not reach the tenant.
BEGIN;
\ir security_calls.psql
SELECT plan(17);

CREATE ROLE rs_nobody;
CREATE ROLE rs_other;
CREATE ROLE rs_member;
CREATE ROLE rs_group;
CREATE ROLE rs_in_group IN ROLE rs_group;
SELECT worklist.grant_tenant('rs', 'rs_member', 'member');
SELECT worklist.grant_tenant('rs', 'rs_group', 'member');
SELECT worklist.grant_tenant('rs_o', 'rs_other', 'service');
-- a run with a checkpoint, a pending write, a value and alice's lease
SELECT pg_temp.sec_fixture('rs');
RESET worklist.tenant;

-- One call of each verb, on the fixture's run, as text.
CREATE TEMP TABLE rs_call (verb text, writes boolean, call text);
INSERT INTO rs_call VALUES
	('latest_checkpoint', false,
	 $$SELECT (worklist.latest_checkpoint('sec_p', 'sec_s', 'sec_r')).checkpoint_id$$),
	('newest_checkpoints', false,
	 $$SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.newest_checkpoints('sec_p')$$),
	('pending_writes', false,
	 $$SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.pending_writes('sec_p', 'sec_s', 'sec_r', 'sec_c1')$$),
	('run_values', false,
	 $$SELECT pg_catalog.count(*)::pg_catalog.text FROM worklist.run_values('sec_p', 'sec_s', 'sec_r', '{ch}', '{v0}')$$),
	('put_writes', true,
	 $$SELECT worklist.put_writes('sec_p', 'sec_s', 'sec_r', 'sec_c1', 'rs_t', '{0}', '{ch}', '{1}')::pg_catalog.text$$),
	('put_values', true,
	 $$SELECT worklist.put_values('sec_p', 'sec_s', 'sec_r', '{ch}', '{v9}', '{1}')::pg_catalog.text$$),
	('delete_run', true,
	 $$SELECT worklist.delete_run('sec_p', 'sec_s', 'sec_r', (SELECT f.fence FROM pg_temp.sec_fence f WHERE f.tenant OPERATOR(pg_catalog.=) 'rs'))::pg_catalog.text$$);
GRANT SELECT ON rs_call TO PUBLIC;

-- Privileges: PUBLIC executes every verb; the tables are private and
-- under row-level security; the row types are not PUBLIC's to build on.
SELECT is_empty($$
	SELECT p.oid::regprocedure FROM pg_proc p
	 WHERE p.pronamespace = 'worklist'::regnamespace
	   AND p.proname IN (SELECT verb FROM rs_call)
	   AND NOT has_function_privilege('rs_nobody', p.oid, 'EXECUTE')$$,
	'every one of the verbs is executable by PUBLIC');
SELECT is((SELECT count(*)::int FROM pg_proc p
            WHERE p.pronamespace = 'worklist'::regnamespace
              AND p.proname IN (SELECT verb FROM rs_call)), 7,
	'all seven verbs exist');
SELECT is_empty($$
	SELECT c.relname, a.privilege_type
	  FROM pg_class c, aclexplode(c.relacl) a
	 WHERE c.oid IN ('worklist.run_pending_write'::regclass, 'worklist.run_channel_value'::regclass)
	   AND a.grantee = 0$$,
	'PUBLIC has no privilege on run_pending_write or run_channel_value');
SELECT ok((SELECT bool_and(c.relrowsecurity) FROM pg_class c
            WHERE c.oid IN ('worklist.run_pending_write'::regclass, 'worklist.run_channel_value'::regclass)),
	'both tables are under row-level security');
SELECT ok(NOT has_type_privilege('rs_nobody', 'worklist.run_write', 'USAGE')
          AND NOT has_type_privilege('rs_nobody', 'worklist.run_value', 'USAGE'),
	'PUBLIC has no USAGE on the types run_write and run_value');

-- Hostile logins: a role bound to nothing, and a role bound to another
-- tenant, are refused with 42501 by every verb, reads included.
SELECT is_empty($$
	SELECT c.verb, t.code, t.result FROM rs_call c, pg_temp.sec_try(c.call, NULL, 'rs_nobody', 'rs') t
	 WHERE t.code <> '42501' OR t.result <> 'permission denied for tenant "rs"'$$,
	'a login bound to nothing gets 42501 from every verb');
SELECT is_empty($$
	SELECT c.verb, t.code, t.result FROM rs_call c, pg_temp.sec_try(c.call, NULL, 'rs_other', 'rs') t
	 WHERE t.code <> '42501' OR t.result <> 'permission denied for tenant "rs"'$$,
	'a login bound to another tenant gets 42501 from every verb');
-- and the tables show it nothing, granted or not
GRANT SELECT ON worklist.run_pending_write, worklist.run_channel_value TO rs_other;
SELECT is((pg_temp.sec_try($$SELECT (SELECT pg_catalog.count(*) FROM worklist.run_pending_write)
                             OPERATOR(pg_catalog.+) (SELECT pg_catalog.count(*) FROM worklist.run_channel_value)$$,
                           NULL, 'rs_other', 'rs')).result, '0',
	'granted SELECT, a login bound to another tenant reads no row of the tenant');
REVOKE SELECT ON worklist.run_pending_write, worklist.run_channel_value FROM rs_other;

-- Members: the reads and the unfenced writes work for a member as for a
-- service; delete_run needs a fence the member's own role holds.
SELECT is_empty($$
	SELECT c.verb, t.code, t.result FROM rs_call c, pg_temp.sec_try(c.call, NULL, 'rs_member', 'rs') t
	 WHERE c.verb <> 'delete_run' AND t.code <> 'ok'$$,
	'a member reads, and writes pending writes and values');
SELECT is((SELECT t.code || ': ' || t.result
             FROM pg_temp.sec_try($$SELECT worklist.delete_run('sec_p', 'sec_s', 'never-leased')::pg_catalog.text$$,
                                  NULL, 'rs_member', 'rs') t),
	'42501: argument "fence" must not be null for a member',
	'delete_run with a NULL fence is refused to a member, even of a run nobody holds');
SELECT is((SELECT t.code || ': ' || t.result
             FROM pg_temp.sec_try((SELECT call FROM rs_call WHERE verb = 'delete_run'), NULL, 'rs_member', 'rs') t),
	format('42501: fence %s of run "sec_r" is not held by the caller', (SELECT fence FROM sec_fence WHERE tenant = 'rs')),
	'delete_run with the fence of a lease another role holds is refused to a member');
SELECT is((pg_temp.sec_try($$SELECT worklist.delete_run('sec_p', 'sec_s', 'mine',
                                 (SELECT l.fence FROM worklist.claim_run('sec_p', 'sec_s', 'mine', 'rs_member', '1 hour') l))::pg_catalog.text$$,
                           NULL, 'rs_member', 'rs')).code,
	'ok', 'a member deletes a run it holds, with its fence');
SELECT is((pg_temp.sec_try($$SELECT worklist.delete_run('sec_p', 'sec_s', 'mine',
                                 (SELECT l.fence FROM worklist.claim_run('sec_p', 'sec_s', 'mine', 'rs_member', '1 hour') l),
                                 pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::pg_catalog.interval)::pg_catalog.text$$,
                           NULL, 'rs_member', 'rs')).code,
	'42501', 'now of delete_run is a write clock for a member');
-- A group never writes under a member binding; it still reads.
SELECT is_empty($$
	SELECT c.verb, t.code, t.result FROM rs_call c, pg_temp.sec_try(c.call, NULL, 'rs_group', 'rs') t
	 WHERE c.writes AND t.code <> '42501'$$,
	'SET ROLE to a group: every write verb is refused with 42501');
SELECT is_empty($$
	SELECT c.verb, t.code, t.result FROM rs_call c, pg_temp.sec_try(c.call, NULL, 'rs_group', 'rs') t
	 WHERE NOT c.writes AND t.code <> 'ok'$$,
	'and every read verb works');
-- Nobody but the owner writes the tables directly, members included.
GRANT INSERT ON worklist.run_pending_write TO rs_member;
SELECT is((pg_temp.sec_try($$INSERT INTO worklist.run_pending_write
                               (tenant, project, session, run, checkpoint_id, task_id, idx, channel, value)
                             VALUES ('rs', 'sec_p', 'sec_s', 'sec_r', 'sec_c1', 'forged', 0, 'ch', '1')$$,
                           NULL, 'rs_member', 'rs')).code,
	'42501', 'granted INSERT, a member still cannot add a pending write: no policy admits it');
REVOKE INSERT ON worklist.run_pending_write FROM rs_member;
-- A test that can fail: the service that set up the fixture deletes the run.
SELECT is((pg_temp.sec_try((SELECT call FROM rs_call WHERE verb = 'delete_run'), NULL, NULL, 'rs')).result,
	'1', 'the fixture''s own fence deletes its run (one checkpoint)');

SELECT * FROM finish();
ROLLBACK;
