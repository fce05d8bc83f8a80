-- Tasks: the layout in which a claim leaves the row where it is
-- (sql/parts/10_task.sql).  Every change of who holds a task is a HOT
-- update of its row -- no index of worklist.task reads what a claim
-- changes -- and worklist.task_claim mirrors every held pending task,
-- whatever path took, moved or ended the claim.
BEGIN;
SELECT plan(14);
SET LOCAL worklist.tenant = 'tap_layout';

CREATE FUNCTION pg_temp.hot() RETURNS bigint LANGUAGE sql AS $$
	SELECT n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relid = 'worklist.task'::regclass
$$;
CREATE FUNCTION pg_temp.upd() RETURNS bigint LANGUAGE sql AS $$
	SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relid = 'worklist.task'::regclass
$$;
-- (updates, HOT updates) a call made
CREATE FUNCTION pg_temp.updates(call text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	u bigint := pg_temp.upd();
	h bigint := pg_temp.hot();
BEGIN
	EXECUTE call;
	RETURN (pg_temp.upd() - u) || ' updated, ' || (pg_temp.hot() - h) || ' HOT';
END
$$;
-- Pending tasks with a holder and rows of task_claim that do not match.
CREATE FUNCTION pg_temp.mismatches() RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM (
	SELECT FROM (
	    SELECT t.tenant, t.id, t.holder, t.claimed_at, t.claim_expires_at
	      FROM worklist.task t
	     WHERE t.holder IS NOT NULL AND t.state IN ('open', 'claimed', 'escalated')
	    UNION ALL
	    SELECT c.tenant, c.task_id, c.holder, c.claimed_at, c.claim_expires_at
	      FROM worklist.task_claim c) x
	 GROUP BY x.tenant, x.id, x.holder, x.claimed_at, x.claim_expires_at
	HAVING count(*) <> 2) m
$$;

SELECT count(*) FROM generate_series(1, 20) g,
       worklist.open_task('l' || lpad(g::text, 2, '0'), 'case', '{r}', claim_timeout => '1 minute',
                          due_at => '2100-01-01', expiry_policy => 'escalate');

SELECT is(pg_temp.updates($$SELECT worklist.claim('l01', 'ann', '{r}')$$), '1 updated, 1 HOT',
	'a claim is a HOT update');
SELECT is(pg_temp.updates($$SELECT worklist.release('l01', 'ann')$$), '1 updated, 1 HOT',
	'a release is a HOT update');
SELECT is(pg_temp.updates($$SELECT worklist.claim_next('ann', '{r}')$$), '1 updated, 1 HOT',
	'claim_next is a HOT update');
SELECT is(pg_temp.updates($$SELECT worklist.take_over('l01', 'ann', 'bob', '{r}')$$), '1 updated, 1 HOT',
	'a take-over is a HOT update');
SELECT is(pg_temp.updates($$SELECT worklist.hand_over('l01', 'bob', 'cy', '{r}')$$), '1 updated, 1 HOT',
	'a hand-over is a HOT update');
SELECT is(pg_temp.updates($$SELECT count(*) FROM worklist.claim_many('dee', '{r}', 5)$$), '5 updated, 5 HOT',
	'each claim of claim_many is a HOT update');

-- The mirror, through every path that takes, moves or ends a claim.
SELECT is((SELECT holder FROM worklist.task_claim WHERE task_id = 'l01'), 'cy',
	'the hand-over moved the claim''s row to the new holder');
SELECT worklist.complete('l01', 'cy', '{}');
SELECT worklist.escalate('l02');
SELECT worklist.complete_many('dee', ARRAY['l03', 'l04'], ARRAY['{}', '{}']::jsonb[]);
SELECT worklist.set_state('l05', 'withdrawn');
SELECT worklist.claim('l02', 'eve', '{r}');
SELECT is(pg_temp.mismatches(), 0::bigint, 'claims match their tasks after completions, an escalation, a set_state');
SELECT is((SELECT count(*) FROM worklist.task_claim), 2::bigint,
	'two claims are held: l02 by eve, l06 by dee');
-- the sweep: every claim times out, then every task falls due
SELECT (worklist.sweep(now() + interval '2 minutes')).claims_released;
SELECT is((SELECT count(*) FROM worklist.task_claim), 0::bigint, 'timed-out claims leave task_claim');
SELECT worklist.claim('l08', 'fay', '{r}');
SELECT (worklist.sweep('2100-01-02')).escalated;
SELECT is(pg_temp.mismatches(), 0::bigint, 'an escalating expiry ends the claim in both places');
SELECT is((SELECT count(*) FROM worklist.task WHERE escalated_at IS NOT NULL), 16::bigint,
	'every pending task is now escalated, with its escalated_at');
SELECT is((SELECT count(*) FROM worklist.claims()), (SELECT count(*) FROM worklist.task_claim),
	'claims() lists what task_claim holds');
SELECT worklist.claim('l09', 'gus', '{r}');
SELECT worklist.erase_tenant();
SELECT is((SELECT count(*) FROM worklist.task_claim), 0::bigint, 'erase_tenant takes the claims with the tasks');

SELECT * FROM finish();
ROLLBACK;
