-- worklist demo, run by ./run demo in database postgres of a throwaway
-- cluster that preloads the library: CREATE EXTENSION gets the database
-- its sweeper.
\pset footer off
\set VERBOSITY default

\echo
\echo '=== CREATE EXTENSION worklist'
CREATE EXTENSION worklist;
SELECT extname, extversion FROM pg_extension WHERE extname = 'worklist';
SET worklist.tenant = 'acme';

\echo
\echo '=== Tasks: a refund needs a second pair of eyes'
SELECT id, state, roles, excluded
  FROM worklist.open_task('refund-42', 'case-7', '{finance}',
                          payload => '{"amount": 1200}',
                          excluded => '{alice}',
                          due_at => now() + interval '1 hour');
\echo '-- alice raised the refund, so she may not decide it (WL002):'
\set ON_ERROR_STOP 0
SELECT worklist.claim('refund-42', 'alice', '{finance}');
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\echo '-- bob claims it; carol, also in finance, is told who holds it (WL005):'
SELECT id, state, holder FROM worklist.claim('refund-42', 'bob', '{finance}');
SELECT worklist.claim('refund-42', 'carol', '{finance}');
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1
\echo '-- bob goes home; a lead moves the claim to carol, who decides:'
SELECT id, state, holder FROM worklist.take_over('refund-42', 'bob', 'carol', '{finance}');
SELECT worklist.complete('refund-42', 'carol', '{"approved": true}') AS settled_now;
SELECT id, state, decided_by, decision FROM worklist.task('refund-42');
\echo '-- every change is kept: who claimed it, who took it over, who decided'
SELECT seq, event, actor, detail FROM worklist.task_history('refund-42');

\echo
\echo '=== Tasks: nobody answers; the declared policies fire'
SELECT count(*) AS opened FROM (
  SELECT worklist.open_task('t-' || p, 'case-8', '{ops}', due_at => now() - interval '1 minute',
                            expiry_policy => p::worklist.expiry_policy,
                            escalation_roles => '{ops-lead}')
    FROM unnest('{deny,proceed,escalate}'::text[]) p) s;
SELECT * FROM worklist.sweep();
SELECT id, state, decision, roles || escalation_roles AS audience FROM worklist.for_case('case-8');
SELECT id, state, decision FROM worklist.task('t-deny');

\echo
\echo '=== Tickets: state folded from what each actor says about itself'
SELECT ticket, state FROM worklist.open_ticket('bug-1', 'dana', 'Login fails',
       authorities => '{lead}', open_deadline => now() + interval '1 day',
       ladder => '{1 hour, 4 hours}');
SELECT ticket, state, live_actors FROM worklist.report('bug-1', 'agent-a', 'working',
       not_before => now() + interval '2 hours');
SELECT ticket, state, live_actors, abandoned FROM worklist.report('bug-1', 'agent-b', 'abandoned',
       reason => 'no access to the repository');
\echo '-- agent-a may not close the ticket: its "done" is read as its own delivery'
SELECT ticket, state, unauthorized_close FROM worklist.close_ticket('bug-1', 'agent-a', 'done');
\echo '-- the requester confirms:'
SELECT ticket, state, confirmation, closed_by FROM worklist.close_ticket('bug-1', 'dana', 'done');
SELECT actor, kind, value, reason FROM worklist.ticket_history('bug-1');

\echo
\echo '=== Runs: checkpoints under a lease, fenced'
SELECT holder, fence AS fence_w1 FROM worklist.claim_run('proj', 'sess', 'run-1', 'worker-1', '1 minute') \gset
SELECT worklist.write_checkpoint('proj', 'sess', 'run-1', 'step-1', '{"i": 1}', fence => :fence_w1);
\echo '-- worker-1 stalls; its lease expires; worker-2 takes the run over:'
SELECT holder, fence AS fence_w2
  FROM worklist.claim_run('proj', 'sess', 'run-1', 'worker-2', '1 minute', now => now() + interval '2 minutes') \gset
\echo '-- worker-1 wakes up and writes with its old fence (WL007):'
\set ON_ERROR_STOP 0
SELECT worklist.write_checkpoint('proj', 'sess', 'run-1', 'step-2', '{"i": 2}', fence => :fence_w1);
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1
SELECT worklist.write_checkpoint('proj', 'sess', 'run-1', 'step-2', '{"i": 2, "by": "worker-2"}', fence => :fence_w2);
SELECT checkpoint_id, body FROM worklist.list_checkpoints('proj', 'sess', 'run-1');
SELECT e.run, e.checkpoint_count, e.latest_checkpoint_id, e.claim_holder, e.claim_fence
  FROM worklist.list_durable_runs('proj') p, unnest(p.entries) e;

\echo
\echo '=== Agents and people in one workflow: a run parks on a task a person owes'
\echo '-- an agent run is queued by its first checkpoint; a worker takes the next one:'
SELECT worklist.write_checkpoint('agents', 'refunds', 'refund-77', 'start', '{"amount": 5000}');
SELECT run, holder, fence AS agent_fence
  FROM worklist.claim_next_run('agents', 'agent-1', '5 minutes') \gset
\echo 'claimed run' :run 'with fence' :agent_fence
\echo '-- the refund is large: the agent asks finance, parks the run and steps away'
SELECT id, state, run_id FROM worklist.open_task('approve-77', 'case-77', '{finance}',
       run_id => 'refund-77', payload => '{"amount": 5000}');
SELECT checkpoint_id, park_request, park_tasks, park_resolved_at
  FROM worklist.park_run('agents', 'refunds', 'refund-77', 'asked', '{approve-77}',
                         fence => :agent_fence, body => '{"waiting_for": "approve-77"}');
\echo '-- nothing to do for any worker while the person has not answered:'
SELECT (worklist.claim_next_run('agents', 'agent-2', '5 minutes')).run IS NULL AS nothing_offered;
\echo '-- bob decides; the same transaction resolves the park:'
SELECT id, holder FROM worklist.claim('approve-77', 'bob', '{finance}');
SELECT worklist.complete('approve-77', 'bob', '{"approved": true}') AS settled;
SELECT e.run, e.park_state FROM worklist.list_durable_runs('agents') p, unnest(p.entries) e;
\echo '-- the next free worker gets the run back, reads the answer and finishes:'
SELECT run, holder, fence AS agent_fence
  FROM worklist.claim_next_run('agents', 'agent-2', '5 minutes') \gset
\echo 'agent-2 claimed run' :run 'with fence' :agent_fence
SELECT state, decided_by, decision FROM worklist.task('approve-77');
SELECT worklist.conclude_run('agents', 'refunds', 'refund-77', fence => :agent_fence) AS withdrawn;
\echo '-- a concluded run stays concluded: a late write is refused (WL008)'
\set ON_ERROR_STOP 0
SELECT worklist.write_checkpoint('agents', 'refunds', 'refund-77', 'late', '{}');
\echo 'SQLSTATE' :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1
\echo '-- and the task keeps its history:'
SELECT seq, event, actor, login, detail FROM worklist.task_history('approve-77');

\echo
\echo '=== The sweeper: a deadline passes, nobody calls sweep()'
SELECT id, state FROM worklist.open_task('t-auto', 'case-9', '{ops}', due_at => now() + interval '1 second');
DO $$
BEGIN
	-- wait (at most 15 s) for the sweeper's next tick after the deadline
	FOR i IN 1..150 LOOP
		EXIT WHEN (SELECT state <> 'open' FROM worklist.task('t-auto'));
		PERFORM pg_sleep(0.1);
	END LOOP;
END $$;
SELECT id, state, decision FROM worklist.task('t-auto');
SELECT pid IS NOT NULL AS running, ticks > 0 AS ticking, denied, proceeded, escalated
  FROM worklist.sweeper_status;

\echo
\echo '=== Notifications: a channel per tenant, counts of what committed'
SELECT worklist.channel() AS channel \gset
\echo '-- the name cannot be computed from the tenant name; listen on it:'
LISTEN :channel;
SELECT id, state FROM worklist.open_task('t-listen-1', 'case-10', '{ops}');
SELECT id, state FROM worklist.open_task('t-listen-2', 'case-10', '{ops}');
SELECT id, holder FROM worklist.claim('t-listen-1', 'dana', '{ops}');
\echo '-- the sweeper sends one payload per tenant, counts only (no names, no ids):'
SELECT pg_sleep(0.3);
UNLISTEN *;

\echo
\echo '=== stats() for tenant acme'
SELECT jsonb_pretty(worklist.stats());
