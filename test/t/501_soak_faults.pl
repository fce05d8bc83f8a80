# Faults under load: the soak's load (test/soak) runs while
#   1. a backend is killed (SIGKILL) in the middle of a claim,
#   2. a backend is killed in the middle of a fenced write, while a
#      reclaim of the same run waits for it,
#   3. the server is crashed (immediate stop),
# each followed by a crash restart (restart_after_crash = on); then a last
# stretch of load runs without faults.  Afterwards every task is decided
# and the soak's audit must hold over everything that committed, before and
# after the crashes: nothing lost, nothing settled twice, no fence issued
# twice or written under after it was superseded, and the counters of the
# last stretch equal its audit.  Finally the audit is shown to notice
# tampering, so its passing means something.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = WorklistNode->create('soak_faults', conf => qq{
worklist.database = 'soak'
worklist.sweep_interval = 200
restart_after_crash = on
track_commit_timestamp = on
max_connections = 40
});
$node->safe_psql('postgres', 'CREATE DATABASE soak');
$node->restart;				# the sweeper connects to soak from the start
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('soak'),
	  '-f', 'test/soak/setup.sql' ],
	'soak harness installed');

sub sql { return $node->safe_psql('soak', $_[0]); }

# The soak's load in the background: task workers and run workers.
sub start_load
{
	my ($seconds) = @_;
	my @load;
	for my $part ([ 'tasks', 4 ], [ 'runs', 2 ])
	{
		my %p = (name => $part->[0], out => '', err => '');
		$p{h} = IPC::Run::start(
			[
				'pgbench', '-n', '-c', $part->[1], '-j', '1', '-T', $seconds,
				'-h', $node->host, '-p', $node->port,
				'-f', "test/soak/$part->[0].pgbench", 'soak'
			],
			'>', \$p{out}, '2>', \$p{err});
		push @load, \%p;
	}
	return \@load;
}

# Wait for the load to end; true when no client failed.
sub finish_load
{
	my ($load) = @_;
	my $clean = 1;
	for my $p (@$load)
	{
		$p->{h}->finish;
		$clean = 0 if $p->{h}->result != 0 || $p->{err} =~ /aborted/;
	}
	return $clean;
}

sub wait_for_load
{
	my $n = sql('SELECT count(*) FROM soak.outcome');
	$node->poll_query_until('soak', qq{SELECT count(*) > $n + 200 FROM soak.outcome})
	  or die 'the load is not running';
	$node->poll_query_until('soak',
		q{SELECT count(*) > 0 FROM soak.outcome WHERE verb = 'write_checkpoint' AND result = 'written' AND epoch = soak.epoch()})
	  or die 'the run workers are not writing';
	return;
}

# A session that will stop inside a verb; the test holds lock 4242.
sub pausing_session
{
	my ($table, $before) = @_;
	my $s = $node->background_psql('soak', on_error_stop => 0);
	$s->query_safe($before) if $before;
	$s->query_safe("SET soak.pause_in = '$table'");
	return $s;
}

sub paused_pid
{
	my ($pattern) = @_;
	$node->poll_query_until('soak', qq{
		SELECT count(*) = 1 FROM pg_stat_activity
		 WHERE wait_event = 'advisory' AND query LIKE '$pattern'})
	  or die "no session paused in $pattern";
	return sql(qq{SELECT pid FROM pg_stat_activity
				  WHERE wait_event = 'advisory' AND query LIKE '$pattern'});
}

# End a psql session whose server connection may be gone (psql exits
# when it loses the connection; writing \q to it then would fail).
sub gone
{
	my ($s) = @_;
	$s->{run}->kill_kill;
	return;
}

sub wait_restarted
{
	my ($what) = @_;
	$node->poll_query_until('soak', 'SELECT 1', '1')
	  or die "server did not come back after $what";
	is(sql('SELECT soak.new_epoch()') > 1, 1, "server is back after $what; new epoch");
	return;
}

my $holder = $node->background_psql('soak');
$holder->query_safe('SELECT pg_advisory_lock(4242)');

# --------------------------------------------------------------------
# 1. SIGKILL in the middle of a claim
# --------------------------------------------------------------------
my $load = start_load(60);
wait_for_load();
# (a few tasks of its own first, so that there is something to claim)
my $victim = pausing_session('task', q{SELECT soak.open('soak_a') FROM generate_series(1, 3)});
$victim->{stdin} .= "SELECT soak.claim_next('soak_a', 'victim');\n";
$victim->{run}->pump_nb;
my $pid = paused_pid('%victim%');
ok($pid, "a claim_next is paused after its update, before it returns (pid $pid)");
kill 'KILL', $pid;
ok(!finish_load($load), 'the crash restart broke the load\'s connections');
gone($_) for ($holder, $victim);
wait_restarted('SIGKILL during a claim');
is(sql(q{SELECT count(*) FROM soak.task_change WHERE new_holder = 'victim'}), '0',
	'the killed claim left no trace');
is(sql(q{SELECT count(*) FROM worklist.task WHERE holder = 'victim'}), '0',
	'and holds no task');

# --------------------------------------------------------------------
# 2. SIGKILL in the middle of a fenced write
# --------------------------------------------------------------------
$holder = $node->background_psql('soak');
$holder->query_safe('SELECT pg_advisory_lock(4242)');
$load = start_load(60);
wait_for_load();
# run 9 is outside the load's runs: worker 99 holds it alone
my $fence = sql('SELECT soak.run_claim(0, 99, 9)');
ok($fence > 0, "worker 99 holds run9 with fence $fence");
$victim = pausing_session('run_checkpoint');
$victim->{stdin} .= "SELECT soak.run_write(0, 99, 9, $fence);\n";
$victim->{run}->pump_nb;
$pid = paused_pid('%run_write(0, 99, 9%');
ok($pid, "a fenced write is paused after its insert, before it returns (pid $pid)");
# The lease (250 ms) runs out; a reclaim must wait for the write.
my $reclaim = $node->background_psql('soak', on_error_stop => 0);
$reclaim->{stdin} .= "SELECT soak.run_claim(0, 98, 9);\n";
$reclaim->{run}->pump_nb;
$node->poll_query_until('soak', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE query LIKE '%run_claim(0, 98, 9%' AND wait_event_type = 'Lock'})
  or die 'the reclaim does not wait for the write';
pass('a reclaim of the run waits for the paused write');
kill 'KILL', $pid;
ok(!finish_load($load), 'the crash restart broke the load\'s connections');
gone($_) for ($holder, $victim, $reclaim);
wait_restarted('SIGKILL during a fenced write');
is(sql(q{SELECT count(*) FROM soak.checkpoint_write WHERE run = 'p/s/run9'}), '0',
	'the killed write left no checkpoint');
is(sql(q{SELECT string_agg(new_holder || ':' || new_fence, ',') FROM soak.claim_change WHERE run = 'p/s/run9'}),
	"w99:$fence", 'and the reclaim did not commit');
my $max_before = sql('SELECT max(new_fence) FROM soak.claim_change');
my $fence2 = sql('SELECT soak.run_claim(0, 98, 9)');
cmp_ok($fence2, '>', $max_before,
	"after the restart a reclaim gets fence $fence2, above every fence issued before ($max_before)");
is(sql("SELECT soak.run_write(0, 99, 9, $fence)"), 'WL007',
	'the killed writer\'s fence is refused');
is(sql("SELECT soak.run_write(0, 98, 9, $fence2)"), 'written', 'the new holder writes');

# --------------------------------------------------------------------
# 3. Immediate stop of the server during the load
# --------------------------------------------------------------------
$load = start_load(60);
wait_for_load();
$node->stop('immediate');
ok(!finish_load($load), 'the immediate stop broke the load\'s connections');
$node->start;
wait_restarted('an immediate stop');

# --------------------------------------------------------------------
# 4. Load without faults, then the audit
# --------------------------------------------------------------------
my $epoch = sql('SELECT soak.epoch()');
$load = start_load(4);
ok(finish_load($load), 'the last stretch of load ran without an unexpected error');

# Every task falls due and meets its policy (the sweeper is back); the
# escalated ones are decided.
$node->poll_query_until('soak', q{
	SELECT count(*) = 0 FROM worklist.task WHERE state IN ('open', 'claimed')})
  or die 'tasks are left open or claimed after the restarts';
pass('the sweeper applied every policy');
ok(sql('SELECT soak.drain()') >= 0, 'escalated tasks decided');

my @audit = split /\n/, sql(qq{
	SELECT ok || '|' || check_name || '|' || detail FROM soak.audit($epoch, false)});
cmp_ok(scalar(@audit), '>=', 14, 'the audit ran its checks');
for my $line (@audit)
{
	my ($ok, $name, $detail) = split /\|/, $line, 3;
	is($ok, 'true', "audit: $name ($detail)");
}
cmp_ok(sql(q{SELECT count(DISTINCT epoch) FROM soak.task_change}), '>=', 4,
	'the audit covered the load of every epoch');

# The audit notices what it is meant to notice.
my $tampered = sql(qq{
	BEGIN;
	-- a settled task reopened behind the verbs' back
	UPDATE worklist.task SET state = 'open'
	 WHERE (tenant, id) = (SELECT tenant, id FROM worklist.task WHERE state = 'completed' LIMIT 1);
	-- a fenced write recorded under a superseded fence
	INSERT INTO soak.checkpoint_write
	SELECT epoch, xid, tenant, run, checkpoint_id, fence - 1, current_fence, current_holder
	  FROM soak.checkpoint_write WHERE fence IS NOT NULL LIMIT 1;
	-- a claim conflict stats() never counted
	INSERT INTO soak.outcome (epoch, tenant, verb, result) VALUES ($epoch, 'soak_b', 'claim', 'WL005');
	SELECT string_agg(check_name, ',' ORDER BY check_name COLLATE "C")
	  FROM soak.audit($epoch, false) WHERE NOT ok;
	ROLLBACK;
});
is($tampered,
	'counters of soak_b,every change allowed,every task settled,fenced writes carried the current fence,'
	  . 'no write under a superseded fence,nothing stuck at the end,settled exactly once',
	'tampering makes the audit fail');

$node->stop;
done_testing();
