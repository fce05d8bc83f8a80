# Notifications without preloading: each transaction notifies at its own
# commit, one payload per tenant on the tenant's channel, with the same
# counts; nothing for a rollback or a rolled-back subtransaction; the
# sweeper of start_sweeper() notifies its own changes the same way; and
# nothing is ever sent on "worklist".
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('notify_dynamic', preload => 0,
	conf => q{worklist.sweep_interval = 100}, extension => 'postgres');
my $acme = $node->safe_psql('postgres', q{SET worklist.tenant = 'acme'; SELECT worklist.channel()});
my $other = $node->safe_psql('postgres', q{SET worklist.tenant = 'other'; SELECT worklist.channel()});
like($acme, qr/^worklist_[0-9a-f]{32}$/, 'a channel without preloading');

my $listener = $node->background_psql('postgres');
$listener->query_safe("LISTEN worklist; LISTEN $acme; LISTEN $other");
sub heard
{
	my $out = $listener->query_safe('SELECT 1');
	return [ $out =~ /Asynchronous notification "(\w+)" with payload "(.*?)" received/g ];
}

$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	BEGIN;
	SELECT worklist.open_task('t1', 'c', '{r}');
	SELECT worklist.open_task('t2', 'c', '{r}');
	SELECT worklist.claim('t1', 'ann', '{r}');
	SELECT worklist.write_checkpoint('p', 's', 'r', 'c1', '{}');
	SAVEPOINT s;
	SELECT worklist.complete('t1', 'ann', '{}');
	ROLLBACK TO SAVEPOINT s;
	SET LOCAL worklist.tenant = 'other';
	SELECT worklist.open_ticket('k1', 'req', 'title', open_deadline => now() + interval '1 day');
	COMMIT;
});
is_deeply(heard(), [ $acme, '{"task": {"opened": 2, "claimed": 1}, "run": {"checkpointed": 1}}',
		$other, '{"ticket": {"opened": 1}}' ],
	'at commit, one payload per tenant, without the rolled-back subtransaction');

$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	BEGIN;
	SELECT worklist.open_task('t3', 'c', '{r}');
	ROLLBACK;
});
is_deeply(heard(), [], 'a rollback sends nothing');

$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SET worklist.notify = off;
	SELECT worklist.open_task('t4', 'c', '{r}');
});
is_deeply(heard(), [], 'nor does worklist.notify = off');

# The dynamic sweeper's own changes.
$node->safe_psql('postgres', 'SELECT worklist.start_sweeper()');
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('t5', 'c', '{r}', due_at => now());
});
$node->poll_query_until('postgres', q{SELECT state = 'expired' FROM worklist.task WHERE id = 't5'})
  or die 't5 not swept';
my @heard = @{ heard() };
is_deeply(\@heard, [ $acme, '{"task": {"opened": 1}}', $acme, '{"task": {"expired": 1}}' ],
	'the sweeper notifies its expiry at its commit');

# Rotation without preloading.
my $new = $node->safe_psql('postgres', q{SET worklist.tenant = 'acme'; SELECT worklist.rotate_channel()});
isnt($new, $acme, 'rotated');
is_deeply(heard(), [ $acme, '{"rotated": true}' ], 'the old channel hears {"rotated": true}');

$listener->quit;
$node->stop;
done_testing();
