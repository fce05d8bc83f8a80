# Tasks under load, with pgbench driving many sessions at once.
#
#  1. Workers running claim_next + complete in a loop never get the same
#     task twice, every task is settled exactly once by the worker that
#     got it, and a worker never gets a task that excludes it.
#  2. Reviewers completing overdue tasks race sweeps expiring them: every
#     task is settled exactly once -- each complete that answered true was
#     that reviewer's completion (or its retry), each task a sweep counted
#     is one expired task -- and nobody errors or deadlocks.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('task_races', conf => qq{
max_connections = 40
# the database's background sweeper must not take part in the races: its
# first tick is an hour after it starts
worklist.sweep_interval = '1h'
});

$node->safe_psql('postgres', 'CREATE DATABASE tasks');
$node->safe_psql('tasks', 'CREATE EXTENSION worklist');

my $clients = 8;

# ---------------------------------------------------------------------
# 1. claim_next + complete
# ---------------------------------------------------------------------
my $ntasks = 500;
$node->safe_psql('tasks', qq{
	CREATE TABLE handed (id text, actor text, completed boolean);
	SELECT count(*) FROM generate_series(1, $ntasks) g,
		worklist.open_task('t' || g, 'case' || (g % 10), '{r}',
			priority => g % 5,
			excluded => CASE WHEN g % 7 = 0 THEN '{w1}'::text[] ELSE '{}' END);
});

$node->pgbench(
	"--no-vacuum --client=$clients --jobs=4 --transactions=100",
	0,
	[qr{processed: 800/800}],
	[qr{^$}],
	"claim_next and complete in $clients sessions",
	{
		'101_claim_next' => q{
			WITH c AS (
				SELECT t.id, t.holder
				  FROM worklist.claim_next('w' || :client_id, '{r}') t
				 WHERE t.id IS NOT NULL)
			INSERT INTO handed
			SELECT c.id, c.holder, worklist.complete(c.id, c.holder, '{"ok": true}')
			  FROM c;
		}
	},
	'tasks');

is( $node->safe_psql('tasks',
		'SELECT count(*), count(DISTINCT id), bool_and(completed) FROM handed'),
	"$ntasks|$ntasks|t",
	'every task was handed out once, and completed by whoever got it');
is( $node->safe_psql('tasks', q{
		SELECT count(*) FROM worklist.task t JOIN handed h USING (id)
		 WHERE t.state = 'completed' AND t.decided_by = h.actor
		   AND t.holder = h.actor}),
	$ntasks,
	'each task records the worker that got it as holder and decider');
is($node->safe_psql('tasks', 'SELECT worklist.open_count()'),
	'0', 'nothing is left pending');
is( $node->safe_psql('tasks', q{
		SELECT count(*) FROM handed h JOIN worklist.task t USING (id)
		 WHERE h.actor = ANY (t.excluded)}),
	'0', 'no worker was handed a task that excludes it');
cmp_ok(
	$node->safe_psql('tasks',
		q{SELECT count(DISTINCT actor) FROM handed}),
	'>', 1, 'the work was shared among the workers');

# ---------------------------------------------------------------------
# 2. complete against the sweep
# ---------------------------------------------------------------------
my $overdue = 1000;
$node->safe_psql('tasks', qq{
	SET worklist.tenant = 'sweep_race';
	CREATE TABLE outcomes (id text, completed boolean);
	CREATE TABLE sweeps (denied int, proceeded int, escalated int);
	SELECT count(*) FROM generate_series(1, $overdue) g,
		worklist.open_task('t' || g, 'case', '{r}',
			due_at => '2000-01-01'::timestamptz + g * interval '1 second',
			expiry_policy => CASE WHEN g % 2 = 0 THEN 'deny' ELSE 'proceed' END::worklist.expiry_policy);
	SELECT count(*) FROM generate_series(1, $overdue) g,
		worklist.claim('t' || g, 'r' || (g % $clients), '{r}');
});

$node->pgbench(
	"--no-vacuum --client=$clients --jobs=4 --transactions=200",
	0,
	[qr{processed: 1600/1600}],
	[qr{^$}],
	'reviewers complete while sweeps expire',
	{
		'101_reviewer@6' => qq{
			SET worklist.tenant = 'sweep_race';
			\\set g random(1, $overdue)
			INSERT INTO outcomes
			SELECT 't' || :g,
			       worklist.complete('t' || :g, 'r' || (:g % $clients), '{"ok": true}');
		},
		'101_sweeper@1' => q{
			SET worklist.tenant = 'sweep_race';
			INSERT INTO sweeps
			SELECT denied, proceeded, escalated FROM worklist.sweep(now(), 7);
		}
	},
	'tasks');

# settle whatever is left
$node->safe_psql('tasks', q{
	SET worklist.tenant = 'sweep_race';
	INSERT INTO sweeps
	SELECT denied, proceeded, escalated FROM worklist.sweep(now(), 100000);
});

my $tenant = "SET worklist.tenant = 'sweep_race';";
# A complete may answer true more than once for one task: a retry by the
# reviewer that completed it, with the same decision, converges.  Never
# for a task anybody else settled.
is( $node->safe_psql('tasks', q{
		SET worklist.tenant = 'sweep_race';
		SELECT count(*) FROM outcomes o JOIN worklist.task t ON t.tenant = 'sweep_race' AND t.id = o.id
		 WHERE o.completed
		   AND (t.state <> 'completed' OR t.decided_by <> 'r' || (substr(o.id, 2)::int % 8)
		        OR t.decision <> '{"ok": true}')}),
	'0', 'a complete answered true only for a task that reviewer completed, retries included');
is( $node->safe_psql('tasks', q{
		SELECT (SELECT count(DISTINCT id) FROM outcomes WHERE completed)
		     + (SELECT sum(denied + proceeded) FROM sweeps)}),
	$overdue, 'completions and expiries add up to the tasks, each once');
is( $node->safe_psql('tasks', q{
		SELECT count(*) FROM worklist.task t
		 WHERE t.tenant = 'sweep_race'
		   AND (t.state = 'completed') <>
		       EXISTS (SELECT FROM outcomes o WHERE o.id = t.id AND o.completed)}),
	'0', 'a task is completed exactly when a complete answered true');
is( $node->safe_psql('tasks', q{
		SELECT count(*) FROM worklist.task t
		 WHERE t.tenant = 'sweep_race' AND t.state = 'expired'
		   AND t.decision = jsonb_build_object('policy', t.expiry_policy::text)
		   AND t.decided_by IS NULL}),
	$node->safe_psql('tasks', 'SELECT sum(denied + proceeded) FROM sweeps'),
	'every task a sweep counted is expired with its policy as decision');
is($node->safe_psql('tasks', "$tenant SELECT worklist.open_count()"),
	'0', 'nothing is left pending');
cmp_ok(
	$node->safe_psql('tasks',
		q{SELECT count(*) FROM outcomes WHERE completed}),
	'>', 0, 'reviewers won some races');
cmp_ok($node->safe_psql('tasks', 'SELECT sum(denied + proceeded) FROM sweeps'),
	'>', 0, 'sweeps won some races');

$node->stop;
done_testing();
