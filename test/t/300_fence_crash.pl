# Fences never rewind: after an immediate stop (a crash) and restart, the
# next fence is above every fence issued before the crash; and a database
# whose run data was copied in without the fence sequence's position (as a
# logical replica or a partial restore would) still mints fences above
# every stored one.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('fences', extension => 'postgres');

# Several claims, each committed on its own: first claims, renewals and
# reclaims, more of them than the sequence logs ahead in one WAL record.
my @fences;
for my $i (1 .. 40)
{
	my $run = 'r' . ($i % 7);
	my $holder = 'w' . ($i % 3);
	my $at = sprintf("2024-01-01 00:%02d", $i);
	my $f = $node->safe_psql('postgres', qq{
		SET worklist.tenant = 'crash';
		SELECT fence FROM worklist.claim_run('p', 's', '$run', '$holder', '30 seconds', '$at');
	});
	push @fences, $f if $f ne '';
}
cmp_ok(scalar(@fences), '>=', 20, 'claims before the crash minted fences');
my ($max) = sort { $b <=> $a } @fences;
my %seen;
$seen{$_}++ for @fences;
is(scalar(keys %seen), scalar(@fences), 'no fence was issued twice');

# An open transaction that claimed but never commits.
my $open = $node->background_psql('postgres');
$open->query_safe(q{SET worklist.tenant = 'crash'; BEGIN});
$open->query_safe(q{SELECT fence FROM worklist.claim_run('p', 's', 'open', 'w', '1 hour', '2024-01-02')});

$node->stop('immediate');
$open->quit;
$node->start;

my $after = $node->safe_psql('postgres', q{
	SET worklist.tenant = 'crash';
	SELECT fence FROM worklist.claim_run('p', 's', 'r1', 'after-crash', '1 hour', '2024-01-03');
});
cmp_ok($after, '>', $max, "first fence after the crash ($after) is above every fence before it ($max)");
is($node->safe_psql('postgres', q{
	SET worklist.tenant = 'crash';
	SELECT count(*) FROM worklist.run_claim WHERE run = 'open'}),
	'0', 'the uncommitted claim did not survive');

# Erasure does not rewind either.
$node->safe_psql('postgres', q{SET worklist.tenant = 'crash'; SELECT worklist.erase_tenant()});
my $after_erase = $node->safe_psql('postgres', q{
	SET worklist.tenant = 'crash';
	SELECT fence FROM worklist.claim_run('p', 's', 'r1', 'w', '1 hour', '2024-01-03');
});
cmp_ok($after_erase, '>', $after, 'a claim after erasure is above every earlier fence');

# Copy the runs and leases into a fresh database: its sequence starts at 1.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'crash';
	SELECT (worklist.claim_run('p', 's', 'x' || i, 'w', '1 hour', '2024-01-03')).fence
	  FROM generate_series(1, 5) i;
});
my $copy_max = $node->safe_psql('postgres', 'SELECT max(fence) FROM worklist.run_claim');
my $runs = $node->safe_psql('postgres', q{COPY (SELECT * FROM worklist.run) TO STDOUT});
my $claims = $node->safe_psql('postgres', q{COPY (SELECT * FROM worklist.run_claim) TO STDOUT});
$node->safe_psql('postgres', 'CREATE DATABASE copy');
$node->safe_psql('copy', 'CREATE EXTENSION worklist');
$node->safe_psql('copy', "COPY worklist.run FROM STDIN;\n$runs\n\\.\n");
$node->safe_psql('copy', "COPY worklist.run_claim FROM STDIN;\n$claims\n\\.\n");
is($node->safe_psql('copy', 'SELECT max(fence) FROM worklist.run_claim'), $copy_max,
	'the copy holds the stored fences');
is($node->safe_psql('copy', 'SELECT last_value FROM worklist.fence_seq'), '1',
	'but not the sequence position');
my $minted = $node->safe_psql('copy', q{
	SET worklist.tenant = 'crash';
	SELECT fence FROM worklist.claim_run('p', 's', 'fresh', 'w', '1 hour', '2024-01-04');
});
cmp_ok($minted, '>', $copy_max, "a claim in the copy ($minted) is above every stored fence ($copy_max)");
my $reclaim = $node->safe_psql('copy', q{
	SET worklist.tenant = 'crash';
	SELECT fence FROM worklist.claim_run('p', 's', 'x1', 'other', '1 hour', '2024-01-05');
});
cmp_ok($reclaim, '>', $minted, 'and the next one is above that');

$node->stop;
done_testing();
