-- The task verbs of 0.4 (hand_over, update_task, claims, claim_many,
-- complete_many) against hostile logins and under the rules of a member
-- binding: a login bound to nothing and one bound to another tenant are
-- refused everything (42501); a member acts only as itself, with roles it
-- has, hands work only to a role the database knows to be eligible, and
-- does not see every claim; update_task is not PUBLIC's.  A service
-- binding may do all of it.
BEGIN;
SELECT plan(32);

CREATE ROLE tv_group;						-- the role the tenant is bound to
CREATE ROLE tv_reviewers;					-- the audience of the tasks
CREATE ROLE tv_managers;
CREATE ROLE tv_alice IN ROLE tv_group, tv_reviewers;
CREATE ROLE tv_bob IN ROLE tv_group, tv_reviewers;
CREATE ROLE tv_carol IN ROLE tv_group;		-- no reviewer
CREATE ROLE tv_svc;
CREATE ROLE tv_nobody;						-- bound to nothing
CREATE ROLE tv_outsider;					-- bound to another tenant
SELECT worklist.grant_tenant('tv', 'tv_group', 'member');
SELECT worklist.grant_tenant('tv', 'tv_svc', 'service');
SELECT worklist.grant_tenant('tv_elsewhere', 'tv_outsider', 'service');
GRANT EXECUTE ON FUNCTION worklist.update_task(text, int, timestamptz) TO tv_svc;
-- a long transaction: keep a member's writes "now" throughout
SET LOCAL worklist.max_clock_skew = '1 hour';

SET LOCAL worklist.tenant = 'tv';
SELECT count(*) FROM generate_series(1, 6) g,
       worklist.open_task('t' || g, 'c', '{tv_reviewers}');
SELECT worklist.claim('t1', 'tv_alice', '{tv_reviewers}');

-- 1. Logins that may not reach the tenant: refused every verb, before
-- anything is looked at.
CREATE FUNCTION pg_temp.calls() RETURNS SETOF text LANGUAGE sql AS $$
	VALUES ($c$SELECT worklist.hand_over('t1', 'tv_alice', 'tv_bob', '{tv_reviewers}')$c$),
	       ($c$SELECT worklist.update_task('t1', 5)$c$),
	       ($c$SELECT * FROM worklist.claims()$c$),
	       ($c$SELECT * FROM worklist.claim_many('tv_alice', '{tv_reviewers}', 3)$c$),
	       ($c$SELECT * FROM worklist.complete_many('tv_alice', '{t1}', ARRAY['{}'::jsonb])$c$)
$$;
CREATE FUNCTION pg_temp.codes(who text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
	c text;
	codes text[] := '{}';
	code text;
BEGIN
	FOR c IN SELECT * FROM pg_temp.calls() LOOP
		BEGIN
			EXECUTE format('SET LOCAL ROLE %I', who);
			EXECUTE c;
			code := 'ok';
			RAISE EXCEPTION 'undo' USING ERRCODE = 'SE000';
		EXCEPTION WHEN OTHERS THEN
			IF SQLSTATE <> 'SE000' THEN
				code := SQLSTATE;
			END IF;
		END;
		codes := codes || code;
	END LOOP;
	RETURN codes;
END
$$;
GRANT EXECUTE ON FUNCTION worklist.update_task(text, int, timestamptz) TO tv_nobody, tv_outsider;
SELECT is(pg_temp.codes('tv_nobody'), ARRAY['42501', '42501', '42501', '42501', '42501'],
	'a login bound to nothing is refused every one of them');
SELECT is(pg_temp.codes('tv_outsider'), ARRAY['42501', '42501', '42501', '42501', '42501'],
	'so is a login bound to another tenant');
SELECT is(pg_temp.codes('tv_svc'), ARRAY['ok', 'ok', 'ok', 'ok', 'ok'],
	'a service binding may call every one of them');
REVOKE EXECUTE ON FUNCTION worklist.update_task(text, int, timestamptz) FROM tv_nobody, tv_outsider;
SELECT is((SELECT (worklist.task('t1')).holder), 'tv_alice', 'and none of that changed anything');

-- 2. update_task is not executable by PUBLIC.
SELECT function_privs_are('worklist', 'update_task', ARRAY['text', 'integer', 'timestamp with time zone'],
	'public', ARRAY[]::text[], 'PUBLIC may not execute update_task');
SET LOCAL ROLE tv_alice;
SELECT throws_ok($$SELECT worklist.update_task('t2', 5)$$, '42501',
	'permission denied for function update_task', 'a member without the grant cannot edit a task');
RESET ROLE;
SET LOCAL ROLE tv_svc;
SELECT is((worklist.update_task('t2', 5)).priority, 5, 'a role granted it edits');
RESET ROLE;

-- 3. claims() is an operator's view: not a member's.
SET LOCAL ROLE tv_alice;
SELECT throws_ok($$SELECT * FROM worklist.claims()$$, '42501',
	'permission denied for claims in tenant "tv"', 'claims is refused to a member');
SELECT is((SELECT count(*)::int FROM worklist.held('tv_alice')), 1, 'which reads its own claims with held');
RESET ROLE;

-- 4. claim_many under a member: actor must be the caller, roles roles it has.
SET LOCAL ROLE tv_alice;
SELECT throws_ok($$SELECT * FROM worklist.claim_many('tv_bob', '{tv_reviewers}', 2)$$, '42501',
	'argument "actor" is not allowed for role "tv_alice"', 'a member cannot claim many as another actor');
SELECT throws_ok($$SELECT * FROM worklist.claim_many('tv_alice', '{tv_reviewers,tv_managers}', 2)$$, '42501',
	'argument "roles" is not allowed for role "tv_alice"', 'nor with a role it is not a member of');
SELECT throws_ok($$SELECT * FROM worklist.claim_many('tv_alice', '{tv_nope}', 2)$$, '42501',
	'argument "roles" is not allowed for role "tv_alice"', 'nor with a role that does not exist');
SELECT is(ARRAY(SELECT id FROM worklist.claim_many('tv_alice', '{tv_reviewers}', 2)), ARRAY['t2', 't3'],
	'it claims many as itself');
RESET ROLE;
-- a group never writes under a member binding
SET LOCAL ROLE tv_group;
SELECT throws_ok($$SELECT * FROM worklist.claim_many('tv_group', '{tv_group}', 2)$$, '42501',
	'permission denied for claim_many in tenant "tv"', 'the group the tenant is bound to claims nothing');
SELECT throws_ok($$SELECT * FROM worklist.complete_many('tv_group', '{t1}', ARRAY['{}'::jsonb])$$, '42501',
	'permission denied for complete_many in tenant "tv"', 'and completes nothing');
SELECT throws_ok($$SELECT worklist.hand_over('t1', 'tv_group', 'tv_bob', '{tv_reviewers}')$$, '42501',
	'permission denied for hand_over in tenant "tv"', 'and hands nothing over');
RESET ROLE;

-- 5. complete_many under a member: actor must be the caller.
SET LOCAL ROLE tv_bob;
SELECT throws_ok($$SELECT * FROM worklist.complete_many('tv_alice', '{t2}', ARRAY['{}'::jsonb])$$, '42501',
	'argument "actor" is not allowed for role "tv_bob"', 'a member cannot complete as another actor');
SELECT throws_ok($$SELECT * FROM worklist.complete_many('tv_bob', '{t2}', ARRAY['{}'::jsonb])$$, 'WL006',
	NULL, 'as itself, it is told it does not hold the task');
RESET ROLE;
SET LOCAL ROLE tv_alice;
SELECT results_eq($$SELECT id, settled FROM worklist.complete_many('tv_alice', '{t3,t2}',
                                                                 ARRAY['{"ok": 3}', '{"ok": 2}']::jsonb[])$$,
	$$VALUES ('t3', true), ('t2', true)$$, 'it completes its own, rows in the arrays'' order');
RESET ROLE;

-- 6. hand_over under a member: actor the caller; the receiver an existing
-- role that is not a group, a member of every role of to_roles.
SET LOCAL ROLE tv_bob;
SELECT throws_ok($$SELECT worklist.hand_over('t1', 'tv_alice', 'tv_bob', '{tv_reviewers}')$$, '42501',
	'argument "actor" is not allowed for role "tv_bob"', 'a member cannot hand over as the holder');
RESET ROLE;
SET LOCAL ROLE tv_alice;
SELECT throws_ok($$SELECT worklist.hand_over('t1', 'tv_alice', 'tv_ghost', '{tv_reviewers}')$$, '42501',
	'argument "to_actor" is not allowed for role "tv_alice"', 'nor hand work to somebody who is not a role');
SELECT throws_ok($$SELECT worklist.hand_over('t1', 'tv_alice', 'tv_reviewers', '{tv_reviewers}')$$, '42501',
	'argument "to_actor" is not allowed for role "tv_alice"', 'nor to a group');
SELECT throws_ok($$SELECT worklist.hand_over('t1', 'tv_alice', 'tv_carol', '{tv_reviewers}')$$, '42501',
	'argument "to_roles" is not allowed for role "tv_alice"', 'nor to a role that is not in to_roles');
SELECT throws_ok($$SELECT worklist.hand_over('t1', 'tv_alice', 'tv_carol', '{tv_nope}')$$, '42501',
	'argument "to_roles" is not allowed for role "tv_alice"', 'nor with roles that do not exist');
-- roles the receiver has, but that meet no audience: the task's own refusal
SELECT throws_ok($$SELECT worklist.hand_over('t1', 'tv_alice', 'tv_carol', '{tv_group}')$$, 'WL003',
	NULL, 'a receiver eligible by the database but not by the task is WL003');
SELECT is((worklist.hand_over('t1', 'tv_alice', 'tv_bob', '{tv_reviewers}')).holder, 'tv_bob',
	'it hands its claim to an eligible member');
SELECT throws_ok($$SELECT worklist.hand_over('t1', 'tv_alice', 'tv_bob', '{tv_reviewers}')$$, 'WL006',
	NULL, 'and holds it no more');
RESET ROLE;
-- the event names the giver as actor and the login that called
SELECT results_eq($$SELECT actor, login, detail FROM worklist.task_log
                    WHERE tenant = 'tv' AND task_id = 't1' AND event = 'handed_over'$$,
	$$VALUES ('tv_alice'::text, 'tv_alice'::text, '{"to": "tv_bob"}'::jsonb)$$,
	'the history has the hand-over, by the holder, as its login');

-- 7. A service binding names anybody, as the application decides.
SET LOCAL ROLE tv_svc;
SELECT is((worklist.hand_over('t1', 'tv_bob', 'somebody', '{tv_reviewers}')).holder, 'somebody',
	'a service hands work to an actor that is no role');
SELECT is(ARRAY(SELECT id FROM worklist.claim_many('agent-7', '{tv_reviewers}', 10)), ARRAY['t4', 't5', 't6'],
	'and claims many for any actor');
SELECT results_eq($$SELECT id, holder FROM worklist.claims()$$,
	$$VALUES ('t1', 'somebody'), ('t4', 'agent-7'), ('t5', 'agent-7'), ('t6', 'agent-7')$$,
	'and sees every claim');
SELECT results_eq($$SELECT id, settled FROM worklist.complete_many('agent-7', '{t6,t4}', ARRAY['{}', '{}']::jsonb[])$$,
	$$VALUES ('t6', true), ('t4', true)$$, 'and completes for any actor');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
