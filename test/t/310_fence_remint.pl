# A fence is durable before claim_run returns it: a server that crashes
# after handing out fence F never hands out F (or anything below it) again,
# whether or not the claim that drew F committed, with synchronous_commit
# on or off.  The WAL writer is slowed down so that nothing but the claim
# itself can have flushed the sequence's advance before the crash, and a
# checkpoint before each claim makes its nextval() write a fresh WAL record
# for the sequence.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('remint', conf => qq{
wal_writer_delay = '10s'
wal_writer_flush_after = 0
worklist.sweep_interval = '1h'
}, extension => 'postgres');

sub claim
{
	my ($session, $run, $holder) = @_;
	return $session->query_safe(qq{
		SELECT fence FROM worklist.claim_run('p', 's', '$run', '$holder', '1 hour')});
}

for my $sync ('on', 'off')
{
	for my $trial (1 .. 3)
	{
		my $run = "r-$sync-$trial";

		# Uncommitted: the claim returned F, then the server crashed.
		$node->safe_psql('postgres', 'CHECKPOINT');
		my $s = $node->background_psql('postgres');
		$s->query_safe(qq{SET synchronous_commit = $sync; SET worklist.tenant = 'remint'; BEGIN});
		my $f = claim($s, $run, 'first');
		like($f, qr/^\d+$/, "sync $sync, trial $trial: the claim returned fence $f");
		$node->stop('immediate');
		$s->quit;
		$node->start;

		my $g = $node->safe_psql('postgres', qq{
			SET worklist.tenant = 'remint';
			SELECT fence FROM worklist.claim_run('p', 's', '$run', 'second', '1 hour')});
		cmp_ok($g, '>', $f,
			"sync $sync, trial $trial: after the crash the next fence ($g) is above the one handed out ($f)");
		my ($code) = $node->psql('postgres', qq{
			SET worklist.tenant = 'remint';
			SELECT worklist.write_checkpoint('p', 's', '$run', 'c', '{}', fence => $f)});
		isnt($code, 0, "sync $sync, trial $trial: a write under the first holder's fence is refused");

		# Committed, acknowledged: the same, and the claim itself survives.
		$node->safe_psql('postgres', 'CHECKPOINT');
		$s = $node->background_psql('postgres');
		$s->query_safe(qq{SET synchronous_commit = $sync; SET worklist.tenant = 'remint'});
		my $h = claim($s, "$run-acked", 'first');
		$node->stop('immediate');
		$s->quit;
		$node->start;
		is($node->safe_psql('postgres', qq{
			SET worklist.tenant = 'remint';
			SELECT holder || ':' || fence FROM worklist.run_claim WHERE run = '$run-acked'}),
			"first:$h", "sync $sync, trial $trial: an acknowledged claim survives the crash");
		my $k = $node->safe_psql('postgres', qq{
			SET worklist.tenant = 'remint';
			SELECT fence FROM worklist.claim_run('p', 's', '$run-other', 'third', '1 hour')});
		cmp_ok($k, '>', $h, "sync $sync, trial $trial: and no fence at or below it is minted again");
	}
}

$node->stop;
done_testing();
