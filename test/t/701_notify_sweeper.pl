# Notifications sent by the sweeper (library preloaded):
#  - a committed change is heard within 100 ms, measured from the commit's
#    return to the listener under a load of concurrent claim_next +
#    complete cycles (the median and 99th percentile are printed);
#  - coalescing under 8 concurrent writers loses no count, and a stream of
#    commits costs a bounded number of notifying commits per second;
#  - the verbs' commits never take PostgreSQL's notification lock: while
#    another transaction holds it, they commit, and a plain NOTIFY cannot;
#  - notifications resume after the sweeper is killed and comes back, with
#    what was committed meanwhile.
use strict;
use warnings;
use JSON::PP;
use WorklistNode qw(notify_client);
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

# (with WAL senders, or no commit ever waits for a synchronous standby)
my $node = WorklistNode->create('notify_sweeper',
	init => { allows_streaming => 1 }, conf => qq{
worklist.sweep_interval = 1000
max_connections = 40
# for the test of the notification lock: a commit that asks for
# synchronous replication waits forever
synchronous_standby_names = 'nobody'
synchronous_commit = local
});
$node->safe_psql('postgres', q{
	CREATE EXTENSION worklist;
	SET worklist.tenant = 'load';
	SELECT count(worklist.open_task('l' || g, 'c', '{r}')) FROM generate_series(1, 60000) g;
});
$node->safe_psql('postgres', 'VACUUM ANALYZE');

sub run_client
{
	my @args = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ '/usr/bin/python3', notify_client(), @args ], '>', \$out, '2>', \$err)
	  or die "notify_client.py @args failed: $err";
	my ($json) = grep { /^\{/ } split /\n/, $out;
	return decode_json($json);
}

# Delay from commit to listener, under load.
my $writers = 4;
my $load = run_client('load', $node->connstr('postgres'), 10, $writers);
is_deeply($load->{errors}, [], 'the load ran without errors');
cmp_ok($load->{cycles}, '>', 100, "the writers ran $load->{cycles} claim_next + complete cycles");
is($load->{probes_notified}, $load->{probes}, "every probe commit was notified ($load->{probes})");
cmp_ok($load->{load_payloads}, '>', 0, 'and the loaded tenant was notified too');
diag(sprintf('notification delay under %d writers: median %.1f ms, p99 %.1f ms, max %.1f ms (%d commits)',
		$writers, $load->{median_ms}, $load->{p99_ms}, $load->{max_ms}, $load->{probes}));
cmp_ok($load->{median_ms}, '<', 100, 'median delay within 100 ms');
cmp_ok($load->{p99_ms}, '<', 100, '99th percentile within 100 ms');

# 8 writers at once, 50 tasks each opened, claimed and completed one call
# at a time: 1,200 commits.  Every count arrives, in far fewer payloads.
my $start = time;
my $burst = run_client('burst', $node->connstr('postgres'), 8, 50);
my $elapsed = time - $start;
is_deeply($burst->{errors}, [], 'the writers ran without errors');
is_deeply($burst->{sums}, { 'task.opened' => 400, 'task.claimed' => 400, 'task.completed' => 400 },
	'coalesced payloads lose no count and add none');
cmp_ok($burst->{payloads}, '<', 1200 / 4, "1,200 commits, $burst->{payloads} payloads");
cmp_ok($burst->{payloads}, '<=', $elapsed * 40 + 5,
	sprintf('at most 40 notifying commits a second (%.1f s)', $elapsed));

# The notification lock.  A transaction that has sent NOTIFY holds the
# lock from its commit until its commit record is flushed and replicated,
# here forever: it writes (so it has a commit record) and waits for a
# synchronous standby that does not exist.
$node->safe_psql('postgres', 'CREATE TABLE blocker_writes (x int)');
my $blocker = $node->background_psql('postgres', on_error_stop => 0);
$blocker->query_until(qr/blocking/, q{
	\echo blocking
	SET synchronous_commit = on;
	BEGIN;
	INSERT INTO blocker_writes VALUES (1);
	NOTIFY somebody_else;
	COMMIT;
});
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND query LIKE '%COMMIT%'})
  or die 'the blocker does not hold the lock';
my ($rc, $out, $err) = $node->psql('postgres', q{
	SET synchronous_commit = local;
	SET lock_timeout = '2s';
	BEGIN;
	NOTIFY anybody;
	COMMIT;
});
like($err, qr/lock timeout/, 'a plain NOTIFY now waits for the lock at commit');
my @verbs = map {
	my ($o, $e) = ('', '');
	[ IPC::Run::start(
		[ 'psql', '-X', '-A', '-t', '-d', $node->connstr('postgres'), '-c', qq{
			SET synchronous_commit = local;
			SET lock_timeout = '5s';
			SET worklist.tenant = 'lock$_';
			SELECT worklist.open_task('t', 'c', '{r}') IS NOT NULL;
			SELECT worklist.claim('t', 'a', '{r}') IS NOT NULL;
			SELECT worklist.complete('t', 'a', '{}');
			SELECT worklist.write_checkpoint('p', 's', 'r', 'c', '{}') IS NULL;
		} ], '>', \$o, '2>', \$e), \$o, \$e ]
} 1 .. 8;
$start = time;
for my $v (@verbs)
{
	$v->[0]->finish;
	is(${ $v->[2] }, '', 'a verb commits while the lock is held');
}
cmp_ok(time - $start, '<', 4, 'and none of them waited for it');

# Nor does the sweeper: while the lock is held, a task falls due and the
# sweeper expires it; the notification it owes waits, and is heard once
# the lock is free.
my $due_channel = $node->safe_psql('postgres', q{SET worklist.tenant = 'lockdue'; SELECT worklist.channel()});
my $dl = $node->listener(channels => [$due_channel]);
my $dt;
$node->safe_psql('postgres', q{
	SET synchronous_commit = local;
	SET worklist.tenant = 'lockdue';
	SELECT count(*) FROM worklist.open_task('due', 'c', '{r}', due_at => now() + interval '1 second');
});
ok($node->poll_query_until('postgres',
		q{SELECT state = 'expired' FROM worklist.task WHERE tenant = 'lockdue' AND id = 'due'}),
	'the sweeper expires a task while the notification lock is held');
my $ticks = $node->safe_psql('postgres', 'SELECT ticks FROM worklist.sweeper_status');
sleep 2.5;
cmp_ok($node->safe_psql('postgres', 'SELECT ticks FROM worklist.sweeper_status'), '>', $ticks,
	'and keeps ticking');
$dl->{h}->pump_nb;
unlike($dl->{out}, qr/expired/, 'what it owes is not sent while the lock is held');
$node->safe_psql('postgres',
	q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'});
$blocker->quit;
$dt = time + 10;
while ($dl->{out} !~ /expired/ && time < $dt)
{
	$dl->{h}->pump_nb;
	sleep 0.05;
}
like($dl->{out}, qr/expired\\?": 1/, 'and is heard once the lock is free');
$dl->{h}->kill_kill;

# Kill the sweeper: notifications stop, what commits meanwhile is kept,
# and they resume when the launcher has started another sweeper.
my $channel = $node->safe_psql('postgres', q{SET worklist.tenant = 'back'; SELECT worklist.channel()});
my $l = $node->listener(channels => [$channel]);
my $t;
my $pid = $node->sweeper_pid;
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('postgres', qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid})
  or die 'sweeper not terminated';
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'back';
	SELECT worklist.open_task('meanwhile', 'c', '{r}');
});
$node->wait_for_sweepers(1, qq{pid <> $pid})
  or die 'sweeper not restarted';
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'back';
	SELECT worklist.open_task('after', 'c', '{r}');
});
my %sum;
$t = time + 10;
while (time < $t && ($sum{opened} // 0) < 2)
{
	$l->{h}->pump_nb;
	%sum = ();
	for my $line (grep { /^\{/ } split /\n/, $l->{out})
	{
		my $p = decode_json(decode_json($line)->{payload});
		$sum{$_} += $p->{task}{$_} for keys %{ $p->{task} };
	}
	sleep 0.05;
}
is($sum{opened}, 2, 'after the sweeper came back: what committed meanwhile and after is heard');
$l->{h}->finish;

$node->stop;
done_testing();
