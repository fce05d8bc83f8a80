# Stalled holders: the scenario fencing exists for, end to end.
#
# A worker is a real psql process.  It claims a run, writes a checkpoint,
# and is then paused with SIGSTOP for longer than its lease.  Meanwhile
# another worker reclaims the run and writes.  After SIGCONT the paused
# worker's writes -- sent as if nothing had happened -- are refused with
# WL007, its release does nothing, and the new holder's checkpoints stand.
#
# Second scenario: the worker is paused in the middle of a transaction in
# which its fenced write already went through.  The write holds the lease
# row, so the reclaim waits rather than overtake it; the worker's session
# is ended by idle_in_transaction_session_timeout, its write rolls back,
# and the reclaim goes ahead with a new fence.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

my $node = WorklistNode->create('stalled_holder', extension => 'postgres');

# A worker: psql reading commands from a pipe, as a separate process.
sub worker
{
	my ($name) = @_;
	my %w = (name => $name, in => '', out => '', err => '');
	$w{timer} = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	$w{h} = IPC::Run::start(
		[
			'psql', '-XAtq', '-v', 'VERBOSITY=sqlstate',
			'-d', $node->connstr('postgres')
		],
		'<', \$w{in}, '>', \$w{out}, '2>', \$w{err}, $w{timer});
	# psql's own pid, from the shell it starts
	send_wait(\%w, "SET worklist.tenant = 'stalled';\n\\! echo pid \$PPID\n",
		qr/pid (\d+)/);
	($w{pid}) = $w{out} =~ /pid (\d+)/;
	return \%w;
}

# Send commands and wait until the output (stdout and stderr) matches.
sub send_wait
{
	my ($w, $cmd, $re) = @_;
	$w->{in} .= $cmd;
	$w->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	$w->{h}->pump until ($w->{out} . $w->{err}) =~ $re;
	return;
}

sub process_state
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return '?';
	my $stat = <$fh>;
	close $fh;
	return ($stat =~ /\) (\S)/)[0];
}

# Wait until the kernel reports the process in the given state.
sub wait_state
{
	my ($pid, $state) = @_;
	for (1 .. 100)
	{
		return $state if process_state($pid) eq $state;
		usleep(50_000);
	}
	return process_state($pid);
}

sub tq
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', "SET worklist.tenant = 'stalled';\n$sql");
}

# --------------------------------------------------------------------
# 1. Paused between two writes.
# --------------------------------------------------------------------
my $a = worker('a');
send_wait($a, q{
SELECT fence FROM worklist.claim_run('p', 's', 'r', 'worker-a', '2 seconds') \gset
SELECT worklist.write_checkpoint('p', 's', 'r', 'a1', '{"by": "a"}', :fence);
\echo fence :fence
}, qr/fence (\d+)/);
my ($fence_a) = $a->{out} =~ /fence (\d+)/;
ok($fence_a, "worker a holds the run with fence $fence_a and wrote a1");

kill 'STOP', $a->{pid};
is(wait_state($a->{pid}, 'T'), 'T', 'worker a is stopped (SIGSTOP)');

# Its next steps are already on their way: they reach psql's input, but a
# stopped psql reads nothing.
$a->{in} .= q{
SELECT worklist.write_checkpoint('p', 's', 'r', 'a2', '{"by": "a"}', :fence);
\echo after a2
SELECT worklist.write_checkpoint('p', 's', 'r', 'b1', '{"by": "a, overwriting"}', :fence);
\echo after b1
SELECT worklist.release_run('p', 's', 'r', :fence);
\echo released
};
$a->{h}->pump_nb;

# The lease runs out while a is stopped; b reclaims and writes.
$node->poll_query_until('postgres',
	q{SELECT expires_at <= now() FROM worklist.run_claim WHERE run = 'r'})
  or die 'lease did not expire';
my $lease_b = tq(q{
	SELECT fence || ' ' || expires_at FROM worklist.claim_run('p', 's', 'r', 'worker-b', '1 minute');
});
my ($fence_b, $expires_b) = split / /, $lease_b, 2;
cmp_ok($fence_b, '>', $fence_a, "worker b reclaimed the run with a higher fence ($fence_b)");
tq(qq{SELECT worklist.write_checkpoint('p', 's', 'r', 'b1', '{"by": "b"}', $fence_b)});
is(process_state($a->{pid}), 'T', 'worker a is still stopped');
$a->{h}->pump_nb;
unlike($a->{out} . $a->{err}, qr/after a2|WL007/, 'and has not sent its next write yet');

kill 'CONT', $a->{pid};
send_wait($a, '', qr/released/);
my @refusals = $a->{err} =~ /ERROR:  (\w+)/g;
is_deeply(\@refusals, [ 'WL007', 'WL007' ],
	'after SIGCONT both of worker a\'s writes are refused with WL007');

is(tq(q{SELECT string_agg(checkpoint_id || '=' || (body->>'by'), ',' ORDER BY checkpoint_id)
	   FROM worklist.list_checkpoints('p', 's', 'r')}),
	'a1=a,b1=b', 'a1 (written before the reclaim) and b\'s b1 stand; no a2, b1 not overwritten');
is(tq(q{SELECT holder || ' ' || fence || ' ' || expires_at FROM worklist.run_claim WHERE run = 'r'}),
	"worker-b $fence_b $expires_b", 'worker a\'s release with its stale fence changed nothing');
is(tq(q{SELECT (c->>'lease_reclaims') || ' ' || (c->>'stale_fence_refusals')
	   FROM (SELECT worklist.stats()->'counters' c) s}),
	'1 2', 'stats() counted the reclaim and both refusals');

$a->{in} .= "\\q\n";
$a->{h}->finish;

# --------------------------------------------------------------------
# 2. Paused inside a transaction whose fenced write went through.
# --------------------------------------------------------------------
my $c = worker('c');
send_wait($c, q{
SET idle_in_transaction_session_timeout = '5s';
SELECT fence FROM worklist.claim_run('p', 's', 'r2', 'worker-c', '1 second') \gset
BEGIN;
SELECT worklist.write_checkpoint('p', 's', 'r2', 'c1', '{"by": "c"}', :fence);
\echo fence :fence
}, qr/fence (\d+)/);
my ($fence_c) = $c->{out} =~ /fence (\d+)/;
my $c_backend = tq(q{SELECT pid FROM pg_stat_activity WHERE state = 'idle in transaction'});
kill 'STOP', $c->{pid};
wait_state($c->{pid}, 'T') eq 'T' or die 'worker c did not stop';
$c->{in} .= "COMMIT;\n\\echo committed\n";
$c->{h}->pump_nb;

# d tries to reclaim once the lease has expired: it waits for c's transaction.
$node->poll_query_until('postgres',
	q{SELECT expires_at <= now() FROM worklist.run_claim WHERE run = 'r2'})
  or die 'lease did not expire';
my ($d_out, $d_err) = ('', '');
my $d = IPC::Run::start(
	[
		'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c',
		"SET worklist.tenant = 'stalled'; SELECT fence FROM worklist.claim_run('p', 's', 'r2', 'worker-d', '1 minute')"
	],
	'>', \$d_out, '2>', \$d_err);
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE '%worker-d%' AND wait_event_type = 'Lock'})
  or die 'reclaim is not waiting';
pass('the reclaim waits for the stalled transaction that holds the lease row');
$d->finish;
my $fence_d = $d_out;
chomp $fence_d;
cmp_ok($fence_d, '>', $fence_c,
	"once the stalled session is ended by idle_in_transaction_session_timeout, d reclaims with a higher fence ($fence_d)");
is(tq(qq{SELECT count(*) FROM pg_stat_activity WHERE pid = $c_backend}), '0',
	'the stalled worker\'s backend is gone');

kill 'CONT', $c->{pid};
$c->{h}->finish;
unlike($c->{out}, qr/committed/, 'worker c never saw its commit succeed');
like($c->{err}, qr/25P03|idle-in-transaction timeout|server closed the connection/,
	'worker c learns that its session was ended');
is(tq(q{SELECT count(*) FROM worklist.list_checkpoints('p', 's', 'r2')}), '0',
	'the stalled worker\'s write was rolled back');
tq(qq{SELECT worklist.write_checkpoint('p', 's', 'r2', 'd1', '{"by": "d"}', $fence_d)});
is(tq(q{SELECT string_agg(checkpoint_id, ',') FROM worklist.list_checkpoints('p', 's', 'r2')}),
	'd1', 'the new holder writes');

$node->stop;
done_testing();
