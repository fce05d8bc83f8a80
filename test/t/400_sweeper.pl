# The sweeper: the launcher starts one when the extension is created, it
# expires overdue tasks by itself, reloads its interval on SIGHUP, is fair
# across tenants, and DROP EXTENSION ends it (CREATE EXTENSION brings it
# back) without flooding the log.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('sweeper', conf => qq{
worklist.sweep_interval = 100
worklist.sweep_batch = 500
});

# The launcher is up before the extension exists; no sweeper stays in a
# database without it, and nothing is logged about that.
$node->wait_for_launcher
  or die 'launcher did not start';
sleep 1;
is($node->sweepers,
	'0', 'no sweeper where the extension is missing');
# (the test's own statements are logged too: leave those out)
sub sweeper_lines
{
	my ($text) = @_;
	return grep { /worklist sweeper/ && !/statement:/ } split /\n/, $text;
}
is(scalar(sweeper_lines(slurp_file($node->logfile))), 0, 'and no log line about it');

$node->safe_psql('postgres', 'CREATE EXTENSION worklist');
$node->wait_for_log(qr/worklist sweeper started in database "postgres"/);
pass('CREATE EXTENSION starts a sweeper');

# A task whose deadline passes is expired without anybody calling sweep().
$node->safe_psql('postgres', q{
	SELECT worklist.open_task('t-deny', 'c', '{r}', due_at => now() + interval '1 second');
	SELECT worklist.open_task('t-proceed', 'c', '{r}', due_at => now() + interval '1 second',
	                          expiry_policy => 'proceed');
	SELECT worklist.open_task('t-escalate', 'c', '{r}', due_at => now() + interval '1 second',
	                          expiry_policy => 'escalate', escalation_roles => '{lead}');
	SELECT worklist.open_task('t-later', 'c', '{r}', due_at => now() + interval '1 hour');
});
$node->poll_query_until('postgres',
	q{SELECT count(*) = 3 FROM worklist.task WHERE state IN ('expired', 'escalated')})
  or die 'overdue tasks were not swept';
is($node->safe_psql('postgres',
		q{SELECT string_agg(id || '=' || state || coalesce(':' || (decision->>'policy'), ''), ',' ORDER BY id)
		    FROM worklist.task}),
	't-deny=expired:deny,t-escalate=escalated,t-later=open,t-proceed=expired:proceed',
	'each policy applied by the worker; the task not yet due is left alone');
# The worker's changes are in the tasks' histories, naming no login; the
# openings name the login that opened them.
my $history = q{SELECT string_agg(task_id || ':' || seq || ':' || event || ':'
                                  || coalesce((login = current_user)::text, 'none') || ':'
                                  || coalesce(detail, '{}')::text, ',' ORDER BY task_id, seq)
                  FROM worklist.task_log WHERE task_id = ANY ('%s')};
is($node->safe_psql('postgres', sprintf($history, '{t-deny,t-proceed,t-escalate}')),
	join(',', map { "$_->[0]:1:opened:true:{},$_->[0]:2:$_->[1]:none:{\"policy\": \"$_->[2]\"}" }
		['t-deny', 'expired', 'deny'], ['t-escalate', 'escalated', 'escalate'], ['t-proceed', 'expired', 'proceed']),
	'the worker appends each event with no login, the policy in its detail');
# A claim held past its timeout: released by the worker, with no login.
$node->safe_psql('postgres', q{
	SELECT worklist.open_task('t-timeout', 'c', '{r}', claim_timeout => '1 second');
	SELECT worklist.claim('t-timeout', 'walker', '{r}');
});
$node->poll_query_until('postgres',
	q{SELECT state = 'open' FROM worklist.task WHERE id = 't-timeout'})
  or die 'the claim past its timeout was not released';
is($node->safe_psql('postgres', sprintf($history, '{t-timeout}')),
	't-timeout:1:opened:true:{},t-timeout:2:claimed:true:{},t-timeout:3:claim_timed_out:none:{"holder": "walker"}',
	'the worker releases a claim past its timeout as claim_timed_out, naming the holder and no login');
# The totals are recorded at the end of the tick, after the batches commit.
ok($node->poll_query_until('postgres',
		q{SELECT denied || '/' || proceeded || '/' || escalated FROM worklist.sweeper_status WHERE pid IS NOT NULL},
		'1/1/1'),
	'sweeper_status totals per action');

# SIGHUP: a new interval takes effect without a restart.
$node->safe_psql('postgres', q{ALTER SYSTEM SET worklist.sweep_interval = '10min'});
$node->reload;
sleep 1;    # the worker picks it up after its current wait
$node->safe_psql('postgres',
	q{SELECT worklist.open_task('t-slow', 'c', '{r}', due_at => now())});
sleep 2;
is($node->safe_psql('postgres', q{SELECT state FROM worklist.task WHERE id = 't-slow'}),
	'open', 'a 10 minute interval leaves an overdue task for the next tick');
$node->safe_psql('postgres', q{ALTER SYSTEM SET worklist.sweep_interval = 100});
$node->reload;
$node->poll_query_until('postgres',
	q{SELECT state = 'expired' FROM worklist.task WHERE id = 't-slow'})
  or die 'reloaded interval not applied';
pass('back to 100 ms on SIGHUP: the task is swept');

# Fairness: one tenant with 10,000 overdue tasks, another with one.  The
# second tenant's task is settled after at most one batch of the first's.
$node->safe_psql('postgres', q{
	BEGIN;
	SET LOCAL worklist.tenant = 'big';
	SELECT count(worklist.open_task('b' || g, 'c', '{r}', due_at => now() - interval '1 minute'))
	  FROM generate_series(1, 10000) g;
	SET LOCAL worklist.tenant = 'small';
	SELECT worklist.open_task('s1', 'c', '{r}', due_at => now() - interval '1 minute');
	COMMIT;
});
$node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM worklist.task WHERE tenant IN ('big', 'small') AND state = 'open'})
  or die 'backlog not swept';
my $before = $node->safe_psql('postgres', q{
	SELECT count(*) FROM worklist.task b
	 WHERE b.tenant = 'big'
	   AND b.settled_at < (SELECT settled_at FROM worklist.task WHERE tenant = 'small' AND id = 's1')});
cmp_ok($before, '<=', 500,
	"the small tenant waited for at most one batch of the big one ($before rows before it)");

# DROP EXTENSION ends the sweeper; CREATE EXTENSION brings one back.
my $pid = $node->sweeper_pid;
$node->safe_psql('postgres', 'DROP EXTENSION worklist');
$node->wait_for_sweepers(0)
  or die 'sweeper still running after DROP EXTENSION';
pass("DROP EXTENSION ends the sweeper ($pid)");
sleep 2;
is($node->sweepers,
	'0', 'and none comes back while the extension is missing');

# Cycles of DROP and CREATE under the running worker: no crash, no flood
# of lines.
my $offset = -s $node->logfile;
for my $i (1 .. 10)
{
	$node->safe_psql('postgres', 'CREATE EXTENSION worklist');
	select(undef, undef, undef, 0.25);
	$node->safe_psql('postgres', 'DROP EXTENSION worklist');
	select(undef, undef, undef, 0.25);
}
$node->safe_psql('postgres', 'CREATE EXTENSION worklist');
$node->safe_psql('postgres',
	q{SELECT worklist.open_task('t-after', 'c', '{r}', due_at => now())});
$node->poll_query_until('postgres',
	q{SELECT state = 'expired' FROM worklist.task WHERE id = 't-after'})
  or die 'not sweeping after DROP/CREATE cycles';
my $log = substr(slurp_file($node->logfile), $offset);
unlike($log, qr/terminated by signal|server process .* was terminated/, 'no crash');
my $lines = scalar(sweeper_lines($log));
cmp_ok($lines, '<=', 2 * 11 + 2, "log lines about the sweeper stay bounded ($lines)");
is($node->sweepers,
	'1', 'exactly one sweeper');

$node->stop;
done_testing();
