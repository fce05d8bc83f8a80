# Fences on a promoted logical replica.
#
# Logical replication carries the worklist tables but not the position of
# the fence sequence: on the subscriber it stays where CREATE EXTENSION
# left it.  When the subscriber becomes the primary (the subscription
# stopped, the applications pointed at it), claim_run finds the sequence
# behind the fences stored in the replicated leases and moves it past them
# before minting, so it never issues a fence the publisher issued -- not
# for a run it holds a lease of, nor for a new run, nor under concurrent
# first claims.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util qw(max);

my $pub = WorklistNode->create('publisher', init => { allows_streaming => 'logical' });
my $sub = WorklistNode->create('subscriber');

$pub->safe_psql('postgres', q{
	CREATE EXTENSION worklist;
	CREATE PUBLICATION worklist FOR TABLES IN SCHEMA worklist;
});
$sub->safe_psql('postgres', 'CREATE EXTENSION worklist');
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION worklist CONNECTION '" . $pub->connstr . ' dbname=postgres'
	  . "' PUBLICATION worklist");
$sub->wait_for_subscription_sync($pub, 'worklist');

sub fences
{
	my ($node, $sql) = @_;
	return grep { $_ ne '' } split /\n/,
	  $node->safe_psql('postgres', "SET worklist.tenant = 'logical';\n$sql");
}

# On the publisher: first claims, renewals, reclaims after expiry, claims
# that lose (a fence drawn and thrown away), releases, fenced checkpoints.
my @issued;
for my $round (1 .. 4)
{
	my $at = "'2024-01-01'::timestamptz + interval '$round hours'";
	push @issued, fences($pub, join '', map {
		"SELECT fence FROM worklist.claim_run('p', 's', 'r$_', 'w$round', '30 minutes', $at);\n"
	} 1 .. 10);
	fences($pub, join '', map {
		"SELECT fence FROM worklist.claim_run('p', 's', 'r$_', 'loser', '30 minutes', $at);\n"
	} 1 .. 10);
}
push @issued, fences($pub, q{
	SELECT fence FROM worklist.claim_run('p', 's', 'r1', 'w4', '30 minutes', '2024-01-01 04:10');
});
fences($pub, qq{
	SELECT worklist.write_checkpoint('p', 's', 'r1', 'c1', '{"by": "w4"}', $issued[-1]);
	SELECT worklist.release_run('p', 's', 'r2', $issued[-9], '2024-01-01 04:10');
});
is(scalar(@issued), 41, '41 fences issued on the publisher');
my $top = max(@issued);
is($pub->safe_psql('postgres', 'SELECT last_value FROM worklist.fence_seq'), '81',
	'the publisher drew 81 (a losing claim draws a fence too)');

$pub->wait_for_catchup('worklist');
is($sub->safe_psql('postgres', 'SELECT max(fence) FROM worklist.run_claim'), $top,
	'the leases and their fences reached the subscriber');
is($sub->safe_psql('postgres', 'SELECT last_value || \' \' || is_called FROM worklist.fence_seq'),
	'1 false', 'but not the sequence position');

# The subscriber becomes the primary.  From now on every fence it mints
# is recorded.
$sub->safe_psql('postgres', 'ALTER SUBSCRIPTION worklist DISABLE');
$pub->stop;
$sub->safe_psql('postgres', q{
	CREATE TABLE minted (fence bigint);
	CREATE FUNCTION minted() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF TG_OP = 'INSERT' OR NEW.fence <> OLD.fence THEN
			INSERT INTO public.minted VALUES (NEW.fence);
		END IF;
		RETURN NULL;
	END $$;
	CREATE TRIGGER minted AFTER INSERT OR UPDATE ON worklist.run_claim
		FOR EACH ROW EXECUTE FUNCTION minted();
});

# First claims after the promotion come from several sessions at once,
# of runs the publisher leased (r2 .. r10) and of new ones.
$sub->pgbench(
	'--no-vacuum --client=4 --transactions=25',
	0, [qr{processed: 100/100}], [qr{^$}],
	'concurrent claims on the promoted subscriber',
	{
		'claims' => q{
			\set run random(2, 30)
			SET worklist.tenant = 'logical';
			SELECT worklist.claim_run('p', 's', 'r' || :run, 'bench' || :client_id, '1 second', now() + interval '1 day');
		}
	});

my @minted = fences($sub, q{
	SELECT fence FROM worklist.claim_run('p', 's', 'r1', 'w5', '30 minutes', '2024-01-01 06:00');
});
cmp_ok($minted[0], '>', $top,
	"a later reclaim of a publisher's run gets fence $minted[0], above the publisher's ($top)");
my ($rc, $out, $err) = $sub->psql('postgres', qq{
	\\set VERBOSITY sqlstate
	SET worklist.tenant = 'logical';
	SELECT worklist.write_checkpoint('p', 's', 'r1', 'c2', '{"by": "w4"}', $issued[-1]);
});
like($err, qr/WL007/, 'the publisher\'s last holder is refused there');
fences($sub, qq{SELECT worklist.write_checkpoint('p', 's', 'r1', 'c2', '{"by": "w5"}', $minted[0])});
is($sub->safe_psql('postgres', q{
	SET worklist.tenant = 'logical';
	SELECT string_agg(checkpoint_id || '=' || (body->>'by'), ',' ORDER BY checkpoint_id)
	  FROM worklist.list_checkpoints('p', 's', 'r1')}),
	'c1=w4,c2=w5', 'the new holder writes; the replicated checkpoint stands');

my @all = fences($sub, 'SELECT fence FROM minted');
cmp_ok(scalar(@all), '>', 30, scalar(@all) . ' fences minted on the promoted subscriber');
my %seen;
is(scalar(grep { $seen{$_}++ } @all), 0, 'none of them twice');
my %issued = map { $_ => 1 } @issued;
is(scalar(grep { $issued{$_} } @all), 0, 'none of them issued by the publisher');
cmp_ok((sort { $a <=> $b } @all)[0], '>', $top, 'all of them above every fence the publisher issued');
is($sub->safe_psql('postgres', 'SELECT count(*) FROM worklist.run_claim WHERE fence > (SELECT last_value FROM worklist.fence_seq)'),
	'0', 'and the sequence is past every stored fence');

$sub->stop;

done_testing();
