# A managed failover with pg_auto_failover (Debian's
# postgresql-15-auto-failover and pg-auto-failover-cli): a monitor and two
# nodes on this machine, the nodes with the library preloaded, as
# doc/operations.md ("Managed failover") says to run them.  The figures of
# 502_soak_streaming's synchronous case, with the manager deciding when to
# fail over:
#
#  - a load of claims, completions and fenced checkpoint writes
#    (test/tools/failover_load.py) runs through a connection string that
#    names both nodes while the primary is stopped with kill -9 (its
#    keeper, its postgres, everything), and the monitor promotes the
#    standby;
#  - afterwards every completion, claim and checkpoint the old primary or
#    the new one acknowledged is on the new primary; no fence was issued
#    twice; every claim got a fence above every fence acknowledged before
#    it started; the new primary mints above all of them; a holder whose
#    lease was reclaimed after the failover is refused (WL007);
#  - the sweeper runs on the primary only: on the old one before, on the
#    new one after, and not on the old one once it has rejoined as a
#    standby.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use JSON::PP;
use List::Util qw(max min);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use WlDeploy;

require_packages('postgresql-15-auto-failover', 'pg-auto-failover-cli');

my $base = PostgreSQL::Test::Utils::tempdir('failover');
my $sock = "$base/sock";
mkdir $sock or die $!;
my ($bindir) = run_command([ 'pg_config', '--bindir' ]);
chomp $bindir;
my $pgctl = "$bindir/pg_ctl";
-e "$bindir/../lib/pgautofailover.so"
  or BAIL_OUT("pgautofailover.so is not in $bindir/../lib: ./run copies it into a WL_PGROOT tree");
# pg_autoctl keeps its configuration and state under the XDG directories,
# and reaches its local server through PGHOST.
my %xdg = (XDG_CONFIG_HOME => "$base/config", XDG_DATA_HOME => "$base/data",
	XDG_RUNTIME_DIR => "$base/run");
mkdir $_ for values %xdg;
$xdg{PGHOST} = $sock;
my @autoctl = ('env', map({ "$_=$xdg{$_}" } sort keys %xdg), 'pg_autoctl');

# pg_autoctl, its output kept in autoctl.log; dies when it fails.
sub autoctl
{
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run([ @autoctl, @_ ], '<', \undef, '>', \$out, '2>', \$err);
	append_to_file("$base/autoctl.log", "pg_autoctl @_\n$out$err");
	die "pg_autoctl @_ failed: $err" unless $ok;
	return $out;
}

# A script through psql on a node (or the monitor), through its socket:
# stdout, and stderr in list context (errors with their SQLSTATE).
sub sql
{
	my ($port, $sql, $db) = @_;
	my ($out, $err) = ('', '');
	eval {
		IPC::Run::run([ 'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-h', $sock, '-p', $port,
			'-d', $db // 'postgres', '-f', '-' ], '<', \$sql, '>', \$out, '2>', \$err);
	};
	$err .= $@ if $@;
	chomp $out;
	return ($out, $err) if wantarray;
	note "psql on port $port: $err" if $err ne '';
	return $out;
}

sub poll
{
	my ($what, $timeout, $check) = @_;
	my $until = time + $timeout;
	while (time < $until)
	{
		return 1 if $check->();
		sleep 0.2;
	}
	diag "timed out waiting for $what";
	return 0;
}

# Every server's data directory is made here, so that its sockets and
# settings are ours before pg_autoctl first starts it (pg_autoctl's own
# settings come first: it includes its file at the head of
# postgresql.conf).  pg_autoctl sizes memory after the machine's; these
# servers are small.
sub initdb
{
	my ($dir, $conf) = @_;
	run_command([ 'initdb', '-D', $dir, '-A', 'trust', '-U', 'postgres', '--no-sync',
		'-E', 'UTF8', '--locale=C' ]);
	append_to_file("$dir/postgresql.conf", qq{
unix_socket_directories = '$sock'
shared_buffers = 32MB
maintenance_work_mem = 64MB
effective_cache_size = 1GB
$conf});
	return;
}

# The monitor, with health checks every second and a standby promoted 3
# seconds after its primary stops answering.
my $mport = free_port();
my $monitor = "$base/monitor";
initdb($monitor, q{
pgautofailover.health_check_period = 1000
pgautofailover.health_check_timeout = 1000
pgautofailover.health_check_max_retries = 1
pgautofailover.health_check_retry_delay = 500
pgautofailover.node_considered_unhealthy_timeout = 3000
pgautofailover.primary_demote_timeout = 5000
pgautofailover.startup_grace_period = 2000
});
autoctl('create', 'monitor', '--pgdata', $monitor, '--pgport', $mport, '--hostname', '127.0.0.1',
	'--auth', 'trust', '--no-ssl', '--pgctl', $pgctl);
autoctl('config', 'set', '--pgdata', $monitor, 'postgresql.listen_addresses', '127.0.0.1');
my %pid;
$pid{monitor} = start_process('monitor', "$base/monitor.log", \%xdg,
	'pg_autoctl', 'run', '--pgdata', $monitor);
my $monitor_uri = "postgres://autoctl_node\@127.0.0.1:$mport/pg_auto_failover?sslmode=disable";
ok(poll('the monitor', 60, sub { (sql($mport, 'SELECT 1', 'pg_auto_failover'))[0] eq '1' }),
	'the monitor runs');

# The nodes: the first with the library preloaded after what pg_autoctl
# preloads itself; the second is a base backup of the first, settings
# included.
my %port = (node1 => free_port(), node2 => free_port());
sub state_of
{
	my %s = map { split /\|/ } split /\n/, sql($mport,
		q{SELECT nodename || '|' || reportedstate || '/' || goalstate FROM pgautofailover.node},
		'pg_auto_failover');
	return \%s;
}
sub create_node
{
	my ($name) = @_;
	autoctl('create', 'postgres', '--pgdata', "$base/$name", '--pgport', $port{$name},
		'--pghost', $sock, '--listen', '127.0.0.1', '--hostname', '127.0.0.1', '--name', $name,
		'--monitor', $monitor_uri, '--auth', 'trust', '--no-ssl', '--pgctl', $pgctl);
	$pid{$name} = start_process($name, "$base/$name.log", \%xdg,
		'pg_autoctl', 'run', '--pgdata', "$base/$name");
	return;
}
initdb("$base/node1", q{
shared_preload_libraries = 'pg_stat_statements,worklist'
worklist.sweep_interval = 200
});
create_node('node1');
ok(poll('node1 single', 60, sub {
	(state_of()->{node1} // '') eq 'single/single' && (sql($port{node1}, 'SELECT 1'))[0] eq '1' }),
	'node1 runs as a single node');
sql($port{node1}, q{
	CREATE EXTENSION worklist;
	CREATE ROLE app LOGIN;
	SELECT worklist.grant_tenant('fo', 'app', 'service');
	CHECKPOINT;
});
create_node('node2');
ok(poll('node2 secondary', 120, sub {
	my $s = state_of();
	($s->{node1} // '') eq 'primary/primary' && ($s->{node2} // '') eq 'secondary/secondary'
	  && (sql($port{node2}, 'SELECT 1'))[0] eq '1' }),
	'node2 joins as its secondary');
like(sql($port{node1}, 'SHOW synchronous_standby_names'), qr/^ANY 1 \(pgautofailover_standby_\d+\)$/,
	'the manager makes the standby synchronous');
is(sql($port{node1}, 'SHOW shared_preload_libraries'), 'pg_stat_statements,worklist',
	'the library is preloaded after what pg_autoctl preloads');

# Where the sweepers run.
sub sweepers
{
	my ($name) = @_;
	return sql($port{$name}, q{SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'worklist%'});
}
ok(poll('a sweeper on node1', 30, sub { sweepers('node1') eq '2' }), 'the launcher and a sweeper run on the primary');
is(sweepers('node2'), '0', 'none on the standby');

# A holder that will be stale after the failover, acknowledged before it.
my $f_old = sql($port{node1}, q{SET worklist.tenant = 'fo';
	SELECT fence FROM worklist.claim_run('p', 's', 'stale', 'old', '1 minute')});
sql($port{node1}, qq{SET worklist.tenant = 'fo';
	SELECT worklist.write_checkpoint('p', 's', 'stale', 'c1', '{"by": "old"}', fence => $f_old)});

# The load, through a connection string naming both nodes.
my $dsn = "host=127.0.0.1,127.0.0.1 port=$port{node1},$port{node2} dbname=postgres user=app"
  . ' target_session_attrs=read-write connect_timeout=2';
my ($in, $out, $err) = ('', '', '');
my $load = IPC::Run::start(
	[ '/usr/bin/python3', "$FindBin::Bin/../tools/failover_load.py", $dsn, 4, 'fo' ],
	'<', \$in, '>', \$out, '2>', \$err);
sub acked
{
	my ($kind, $after) = @_;
	$load->pump_nb;
	my $complete = substr($out, 0, rindex($out, "\n") + 1);
	return grep { $_->{kind} eq $kind && (!defined $after || $_->{start} > $after) }
	  map { decode_json($_) } grep { /^\{/ } split /\n/, $complete;
}
my $load_from = time;
ok(poll('the load', 60, sub { acked('completion') >= 20 && time > $load_from + 3 }),
	'the load runs on node1');

# Failover: node1 is stopped with kill -9, keeper and postgres together.
my $killed_at = time;
stop_process($pid{node1}, 'KILL');
ok(poll('node2 primary', 60, sub { (state_of()->{node2} // '') =~ m{^(wait_primary|primary)/} }),
	'the monitor promotes node2');
note sprintf('node2 is %s %.1f s after the kill', state_of()->{node2}, time - $killed_at);
my $promoted_at = time;
ok(poll('the load on node2', 60, sub { acked('completion', $killed_at) >= 20 && time > $promoted_at + 3 }),
	'the load goes on, on node2');
$in = '';
$load->finish;
my @records = map { decode_json($_) } grep { /^\{/ } split /\n/, $out;
my @errors = grep { $_->{kind} eq 'error' } @records;
note scalar(@errors) . ' calls failed during the failover, e.g. ' . ($errors[0]{message} // 'none');
is_deeply([ grep { ($_->{code} // '') =~ /^WL/ } @errors ], [],
	'no call was refused by worklist: every failure was the lost connection');

# Every acknowledged completion, claim and checkpoint is there.
my @completions = grep { $_->{kind} eq 'completion' } @records;
my @claims = grep { $_->{kind} eq 'claim' } @records;
my @checkpoints = grep { $_->{kind} eq 'checkpoint' } @records;
note sprintf('%d completions, %d claims, %d checkpoints acknowledged: %d in the last second'
	  . ' before the kill, %d after it',
	scalar(@completions), scalar(@claims), scalar(@checkpoints),
	scalar(grep { $_->{end} > $killed_at - 1 && $_->{end} <= $killed_at } @completions, @claims, @checkpoints),
	scalar(grep { $_->{end} > $killed_at } @completions, @claims, @checkpoints));
sub missing
{
	my ($values, $query) = @_;
	my $list = join ',', map { "($_)" } @$values;
	return sql($port{node2}, "SELECT count(*) FROM (VALUES $list) v(a, b, c) WHERE NOT EXISTS ($query)");
}
is(missing([ map { "'$_->{task}', '$_->{actor}', 0" } @completions ], q{
	SELECT FROM worklist.task t WHERE t.tenant = 'fo' AND t.id = v.a
	   AND t.state = 'completed' AND t.decided_by = v.b}),
	'0', 'every acknowledged completion is on the new primary (' . scalar(@completions) . ')');
is(missing([ map { "'$_->{run}', '$_->{holder}', $_->{fence}" } @claims ], q{
	SELECT FROM worklist.run_claim l WHERE l.tenant = 'fo' AND l.run = v.a
	   AND l.holder = v.b AND l.fence = v.c}),
	'0', 'every acknowledged claim, with its fence (' . scalar(@claims) . ')');
is(missing([ map { "'$_->{run}', '$_->{checkpoint}', 0" } @checkpoints ], q{
	SELECT FROM worklist.run_checkpoint c WHERE c.tenant = 'fo' AND c.run = v.a
	   AND c.checkpoint_id = v.b}),
	'0', 'every acknowledged checkpoint (' . scalar(@checkpoints) . ')');

# Fences.
my %seen;
my @twice = grep { $seen{ $_->{fence} }++ } @claims;
is(scalar(@twice), 0, 'no fence was acknowledged twice');
my @by_end = sort { $a->{end} <=> $b->{end} } @claims;
my ($i, $before, @below) = (0, 0);
for my $c (sort { $a->{start} <=> $b->{start} } @claims)
{
	$before = max($before, $by_end[ $i++ ]{fence}) while $i < @by_end && $by_end[$i]{end} < $c->{start};
	push @below, "$c->{run} got $c->{fence} after $before" if $c->{fence} <= $before;
}
is_deeply(\@below, [], 'every claim got a fence above every fence acknowledged before it started');
my $acked_max = max(map { $_->{fence} } @claims);
my @new = split /\n/, sql($port{node2}, q{SET worklist.tenant = 'fo';
	SELECT (worklist.claim_run('p', 's', 'after' || g, 'other', '1 hour')).fence FROM generate_series(1, 40) g});
is(scalar(@new), 40, 'forty more claims on the new primary');
cmp_ok(min(@new), '>', $acked_max, 'each minted above every fence acknowledged before');

# The stale holder.
my $f_new = sql($port{node2}, q{SET worklist.tenant = 'fo';
	SELECT fence FROM worklist.claim_run('p', 's', 'stale', 'new', '1 minute', now() + interval '2 hours')});
cmp_ok($f_new, '>', $f_old, "the run held before the failover is reclaimed on the new primary ($f_old, then $f_new)");
is(sql($port{node2}, q{SET worklist.tenant = 'fo';
	SELECT body->>'by' FROM worklist.list_checkpoints('p', 's', 'stale')}),
	'old', "the old holder's checkpoint is there");
my ($res, $stale) = sql($port{node2}, qq{SET worklist.tenant = 'fo';
	SELECT worklist.write_checkpoint('p', 's', 'stale', 'c2', '{"by": "old"}', fence => $f_old)});
like($stale, qr/WL007/, 'and its write is refused with WL007');
sql($port{node2}, qq{SET worklist.tenant = 'fo';
	SELECT worklist.write_checkpoint('p', 's', 'stale', 'c2', '{"by": "new"}', fence => $f_new)});
is(sql($port{node2}, q{SET worklist.tenant = 'fo';
	SELECT string_agg(checkpoint_id || ':' || (body->>'by'), ',' ORDER BY checkpoint_id)
	  FROM worklist.list_checkpoints('p', 's', 'stale')}),
	'c1:old,c2:new', 'while the new holder writes');

# The sweeper runs on the new primary, and expires what falls due there.
ok(poll('a sweeper on node2', 30, sub { sweepers('node2') eq '2' }), 'the launcher and a sweeper run on the new primary');
sql($port{node2}, q{SET worklist.tenant = 'fo';
	SELECT worklist.open_task('due', 'c', '{r}', due_at => now())});
ok(poll('the expiry', 30, sub {
	sql($port{node2}, q{SELECT state FROM worklist.task WHERE tenant = 'fo' AND id = 'due'}) eq 'expired' }),
	'and expires a task that falls due');

# node1 rejoins, as a standby of node2: no sweeper runs there.
$pid{node1} = start_process('node1', "$base/node1.log", \%xdg,
	'pg_autoctl', 'run', '--pgdata', "$base/node1");
ok(poll('node1 secondary', 120, sub {
	my $s = state_of();
	($s->{node1} // '') eq 'secondary/secondary' && ($s->{node2} // '') eq 'primary/primary'
	  && (sql($port{node1}, 'SELECT 1'))[0] eq '1' }),
	'node1 rejoins as the secondary of node2');
is(sql($port{node1}, 'SELECT pg_is_in_recovery()'), 't', 'node1 is a standby');
is(sweepers('node1'), '0', 'no sweeper runs on it');
is(sweepers('node2'), '2', 'the sweeper of the new primary goes on');
ok(poll('node1 replays', 30, sub {
	sql($port{node1}, q{SELECT count(*) FROM worklist.task WHERE tenant = 'fo' AND id = 'due' AND state = 'expired'}) eq '1' }),
	'and node1 receives what the new primary did');
is(sql($port{node2}, q{SELECT denied FROM worklist.sweeper_status}), '1',
	'the expiry was made by the sweeper of the new primary, once');

stop_process($pid{$_}) for qw(node1 node2 monitor);
done_testing();
