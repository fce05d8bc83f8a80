# Without shared_preload_libraries: start_sweeper() starts the sweeper for
# the current database, concurrent calls never start two, and stats()
# reports its counters as NULL (they are only kept when the library is
# preloaded).  Nothing runs the utility hook here, so the sweeper itself
# must notice DROP DATABASE waiting for it, and leave.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('dynamic', preload => 0, conf => q{worklist.sweep_interval = 100});
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION worklist');

is($node->safe_psql('app', q{SELECT worklist.stats()->'counters'}),
	'{"claims": null, "take_overs": null, "claim_timeouts": null, "lease_reclaims": null, "claim_conflicts": null, "stale_fence_refusals": null}',
	'counters are NULL when the library is not preloaded');
is($node->sweepers,
	'0', 'no sweeper runs by itself');

# Not for PUBLIC.
$node->safe_psql('app', 'CREATE ROLE plain LOGIN');
my ($ret, $out, $err) = $node->psql('app', 'SELECT worklist.start_sweeper()',
	extra_params => [ '-U', 'plain' ]);
like($err, qr/permission denied for function start_sweeper/, 'start_sweeper is not for PUBLIC');

my $pid = $node->safe_psql('app', 'SELECT worklist.start_sweeper()');
like($pid, qr/^\d+$/, "start_sweeper returns a pid ($pid)");
is($node->safe_psql('app', 'SELECT worklist.start_sweeper()'), $pid,
	'a second call returns the running one');
is($node->safe_psql('app', q{SELECT database FROM worklist.sweeper_status WHERE pid IS NOT NULL}),
	'app', 'it works in the database it was started from');

$node->safe_psql('app', q{
	SET worklist.tenant = 'd';
	SELECT worklist.open_task('t1', 'c', '{r}', due_at => now());
});
$node->poll_query_until('app',
	q{SELECT state = 'expired' FROM worklist.task WHERE tenant = 'd' AND id = 't1'})
  or die 'not swept by the dynamic sweeper';
pass('the dynamic sweeper expires an overdue task');
ok($node->poll_query_until('app', q{SELECT denied FROM worklist.sweeper_status WHERE pid IS NOT NULL}, '1'),
	'and reports it in sweeper_status');

# Terminated, it comes back after its restart delay; a start_sweeper() in
# between must not leave two sweepers in the database once it does.
$node->safe_psql('app', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('app', qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid})
  or die 'sweeper not terminated';
my $second = $node->safe_psql('app', 'SELECT worklist.start_sweeper()');
isnt($second, $pid, "start_sweeper started another one ($second)");
sleep 7;    # the terminated one's restart delay is 5 s
is($node->sweepers(q{datname = 'app'}),
	'1', 'one sweeper per database once the first came back');
$node->safe_psql('app', q{
	SET worklist.tenant = 'd';
	SELECT worklist.open_task('t2', 'c', '{r}', due_at => now());
});
$node->poll_query_until('app',
	q{SELECT state = 'expired' FROM worklist.task WHERE tenant = 'd' AND id = 't2'})
  or die 'not swept after the restart';
pass('and it sweeps');

# Concurrent start_sweeper() calls start one sweeper and all return its
# pid.  DROP EXTENSION ends the sweeper for good (without the launcher
# nobody starts another), so each round starts from none.
for my $round (1 .. 5)
{
	$node->safe_psql('app', 'DROP EXTENSION worklist');
	$node->wait_for_sweepers(0)
	  or die 'the sweeper did not leave after DROP EXTENSION';
	$node->safe_psql('app', 'CREATE EXTENSION worklist');
	my @runs;
	for my $i (1 .. 4)
	{
		my ($out, $err) = ('', '');
		my $h = IPC::Run::start(
			[ 'psql', '-X', '-A', '-t', '-d', $node->connstr('app'), '-c',
			  'SELECT worklist.start_sweeper()' ],
			'>', \$out, '2>', \$err);
		push @runs, [ $h, \$out, \$err ];
	}
	my %pids;
	for my $r (@runs)
	{
		$r->[0]->finish;
		chomp(my $pid = ${ $r->[1] });
		is(${ $r->[2] }, '', "round $round: start_sweeper succeeded");
		$pids{$pid}++;
	}
	is(scalar(keys %pids), 1, "round $round: four concurrent calls return one pid (@{[ keys %pids ]})");
	is($node->sweepers(q{datname = 'app'}), '1', "round $round: one sweeper runs");
}

# DROP DATABASE while its sweeper runs succeeds: the sweeper sees the
# command's lock and leaves.  It is not started again.
my $sweeper = $node->safe_psql('app', 'SELECT worklist.start_sweeper()');
my $offset = -s $node->logfile;
my ($rc, $stdout, $stderr) = $node->psql('postgres', 'DROP DATABASE app');
is($rc, 0, 'DROP DATABASE succeeds while the sweeper runs');
is($stderr, '', 'without complaint');
sleep 7;    # longer than a sweeper's restart delay
is($node->sweepers,
	'0', 'no sweeper comes back for the dropped database');
my $log = substr(slurp_file($node->logfile), $offset);
unlike($log, qr/does not exist/, 'nothing tries to connect to it');

$node->stop;
done_testing();
