# Fences across a streaming-replication failover.
#
# Asynchronous standby: after claims, the standby is promoted; fences keep
# increasing on the new primary above every fence it received, and old
# holders' writes are refused there.  But claims the old primary
# acknowledged after the standby stopped receiving are lost at failover,
# and the new primary issues their fences again to other holders: what
# asynchronous replication cannot promise (see doc/operations.md,
# "Replication and fences").
#
# Synchronous standby (synchronous_standby_names, synchronous_commit =
# on): a claim is not acknowledged until the standby has it -- it waits
# while the standby is away -- so after failover every acknowledged fence
# is there and the new primary mints above all of them.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use List::Util qw(max min);

# A primary and a streaming standby; $conf is added to the primary's
# settings once the standby runs.
sub pair
{
	my ($name, $conf) = @_;
	my $primary = WorklistNode->create("${name}_primary",
		init => { allows_streaming => 1 }, extension => 'postgres');
	$primary->backup('b');
	my $standby = WorklistNode->new("${name}_standby");
	$standby->init_from_backup($primary, 'b', has_streaming => 1);
	$standby->start;
	if ($conf)
	{
		$primary->append_conf('postgresql.conf', $conf);
		$primary->reload;
	}
	$primary->wait_for_catchup($standby);
	return ($primary, $standby);
}

# Claims, each committed (acknowledged) on its own; returns the fences.
sub claims
{
	my ($node, $prefix, $n, $holder, $now) = @_;
	$now //= 'now()';
	my $sql = join '', map {
		"SELECT fence FROM worklist.claim_run('p', 's', '$prefix$_', '$holder', '1 hour', $now);\n"
	} 1 .. $n;
	return grep { $_ ne '' } split /\n/, $node->safe_psql('postgres', $sql);
}

# --------------------------------------------------------------------
# Asynchronous
# --------------------------------------------------------------------
my ($primary, $standby) = pair('async');

my @replicated = claims($primary, 'r', 10, 'old');
is(scalar(@replicated), 10, 'ten claims on the primary');
$primary->safe_psql('postgres', join '', map {
	"SELECT worklist.write_checkpoint('p', 's', 'r$_', 'c', '{\"by\": \"old\"}', $replicated[$_ - 1]);\n"
} 1 .. 10);
$primary->wait_for_catchup($standby);

# The standby stops receiving; the primary goes on acknowledging claims.
$standby->stop;
my @lost = claims($primary, 'x', 40, 'lost');
is(scalar(@lost), 40, 'forty more claims acknowledged by the primary');
cmp_ok(min(@lost), '>', max(@replicated), 'their fences are above the replicated ones');

# Failover.
$primary->stop('immediate');
$standby->start;
$standby->promote;

my @after = claims($standby, 'r', 10, 'new', q{now() + interval '2 hours'});
is(scalar(@after), 10, 'on the promoted standby the expired leases are reclaimed');
cmp_ok(min(@after), '>', max(@replicated),
	'with fences above every fence the standby received');
is($standby->safe_psql('postgres', q{
	SELECT count(*) FROM worklist.list_checkpoints('p', 's', 'r1') WHERE body->>'by' = 'old'}),
	'1', 'the old holder\'s checkpoints are there');
my ($ret, $out, $err) = $standby->psql('postgres',
	"\\set VERBOSITY sqlstate\nSELECT worklist.write_checkpoint('p', 's', 'r1', 'c2', '{}', $replicated[0])");
like($err, qr/WL007/, 'and its writes are refused with WL007');

is($standby->safe_psql('postgres', q{SELECT count(*) FROM worklist.run_claim WHERE run LIKE 'x%'}),
	'0', 'the claims acknowledged after the standby stopped receiving are lost');
my @more = claims($standby, 'y', 40, 'other');
my %lost = map { $_ => 1 } @lost;
my @reissued = grep { $lost{$_} } (@after, @more);
ok(@reissued > 0,
	'and some of their fences are issued again by the new primary ('
	  . scalar(@reissued) . ' of 40, e.g. ' . ($reissued[0] // 'none') . ')');
$standby->stop;

# --------------------------------------------------------------------
# Synchronous
# --------------------------------------------------------------------
($primary, $standby) = pair('sync', qq{
synchronous_standby_names = '*'
synchronous_commit = on
});

my @acked = claims($primary, 'r', 10, 'old');
is(scalar(@acked), 10, 'ten claims acknowledged with a synchronous standby');

# With the standby away, a claim waits: it is not acknowledged.
$standby->stop;
my ($w_out, $w_err) = ('', '');
my $waiting = IPC::Run::start(
	[
		'psql', '-XAtq', '-d', $primary->connstr('postgres'), '-c',
		q{SELECT fence FROM worklist.claim_run('p', 's', 'w', 'waiting', '1 hour')}
	],
	'>', \$w_out, '2>', \$w_err);
$primary->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event = 'SyncRep'})
  or die 'the claim is not waiting for the standby';
pass('with the standby away, a claim waits for it and is not acknowledged');
$standby->start;
$waiting->finish;
chomp $w_out;
ok($w_out =~ /^\d+$/, "once the standby is back the claim is acknowledged (fence $w_out)");
push @acked, $w_out;
push @acked, claims($primary, 'x', 40, 'acked');
is(scalar(@acked), 51, 'forty more claims acknowledged');

$primary->stop('immediate');
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT count(*) FROM worklist.run_claim'), '51',
	'after failover every acknowledged claim is on the new primary');
my @new = claims($standby, 'y', 40, 'other');
cmp_ok(min(@new), '>', max(@acked), 'and every new fence is above every acknowledged one');
my %acked = map { $_ => 1 } @acked;
is(scalar(grep { $acked{$_} } @new), 0, 'no acknowledged fence is issued again');
$standby->stop;

done_testing();
