# Without shared_preload_libraries: start_sweeper() starts the sweeper for
# the current database, and stats() reports its counters as NULL (they are
# only kept when the library is preloaded).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dynamic');
$node->init;
$node->append_conf('postgresql.conf', 'worklist.sweep_interval = 100');
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', 'CREATE EXTENSION worklist');

is($node->safe_psql('app', q{SELECT worklist.stats()->'counters'}),
	'{"claims": null, "take_overs": null, "claim_timeouts": null, "lease_reclaims": null, "claim_conflicts": null, "stale_fence_refusals": null}',
	'counters are NULL when the library is not preloaded');
is($node->safe_psql('app',
		q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'worklist sweeper'}),
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
is($node->safe_psql('app', q{SELECT denied FROM worklist.sweeper_status WHERE pid IS NOT NULL}),
	'1', 'and reports it in sweeper_status');

# Terminated, it comes back after its restart delay; a start_sweeper() in
# between must not leave two sweepers in the database once it does.
$node->safe_psql('app', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('app', qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid})
  or die 'sweeper not terminated';
my $second = $node->safe_psql('app', 'SELECT worklist.start_sweeper()');
isnt($second, $pid, "start_sweeper started another one ($second)");
sleep 7;    # the terminated one's restart delay is 5 s
is($node->safe_psql('app',
		q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'worklist sweeper' AND datname = 'app'}),
	'1', 'one sweeper per database once the first came back');
$node->safe_psql('app', q{
	SET worklist.tenant = 'd';
	SELECT worklist.open_task('t2', 'c', '{r}', due_at => now());
});
$node->poll_query_until('app',
	q{SELECT state = 'expired' FROM worklist.task WHERE tenant = 'd' AND id = 't2'})
  or die 'not swept after the restart';
pass('and it sweeps');

$node->stop;
done_testing();
