# Notifications with the library preloaded, heard by real LISTEN sessions
# (test/tools/notify_client.py): each tenant has a channel of its own that
# nobody can compute from its name; a bound listener receives a payload
# counting each kind and event of what committed; rolled-back work, also
# in a rolled-back subtransaction, is never counted; worklist.notify = off
# sends nothing; a LOGIN-only role listening on "worklist", on every name
# it could compute from the tenant's name and on a rotated-away channel
# receives nothing; rotate_channel() is for admins and says {"rotated":
# true} on the old channel.
use strict;
use warnings;
use JSON::PP;
use WorklistNode qw(notify_client received sums wait_for);
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = WorklistNode->create('notify_channels', conf => qq{
worklist.sweep_interval = 100
});
$node->safe_psql('postgres', q{
	CREATE EXTENSION worklist;
	CREATE ROLE acme_admin LOGIN;
	CREATE ROLE acme_member LOGIN;
	CREATE ROLE outsider LOGIN;
	SELECT worklist.grant_tenant('acme', 'acme_admin', 'admin');
	SELECT worklist.grant_tenant('acme', 'acme_member', 'member');
	SELECT worklist.grant_tenant('other', 'acme_admin', 'admin');
});

sub as
{
	my ($user, $sql) = @_;
	return $node->psql_as('postgres', $user, 'acme', $sql);
}

# The channel: the same for every role that reaches the tenant, refused
# to the others, and not readable from the table.
my ($rc, $channel, $err) = as('acme_member', 'SELECT worklist.channel()');
like($channel, qr/^worklist_[0-9a-f]{32}$/, "a member gets the channel ($channel)");
is((as('acme_admin', 'SELECT worklist.channel()'))[1], $channel, 'the admin gets the same');
($rc, undef, $err) = as('outsider', 'SELECT worklist.channel()');
like($err, qr/permission denied for tenant "acme"/, 'a role that cannot reach the tenant is refused');
($rc, undef, $err) = as('outsider', 'SELECT secret FROM worklist.tenant_channel');
like($err, qr/permission denied/, 'and cannot read the secrets');

# Everything the outsider could compute from the tenant's name.
my @guesses = ('worklist', 'acme', 'worklist_acme', 'ACME',
	split /\|/, $node->safe_psql('postgres', q{
	SELECT md5('acme') || '|' || 'worklist_' || md5('acme') || '|'
	    || left(encode(sha256('acme'), 'hex'), 63) || '|'
	    || 'worklist_' || left(encode(sha256('acme'), 'hex'), 32) || '|'
	    || 'worklist_' || left(encode(sha256('worklist_acme'), 'hex'), 32) || '|'
	    || 'worklist_' || left(md5('worklist_acme'), 32)}));
my $outsider = $node->listener(user => 'outsider', channels => [ @guesses ]);
my $bound = $node->listener(user => 'acme_member', channels => [ $channel ]);

# Every kind and event, one transaction each (the sweeper fires the
# expiry, the escalations and the confirmation: its changes are notified
# the same way).
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('t1', 'c', '{r}');
	SELECT worklist.open_task('t2', 'c', '{r}');
	SELECT worklist.claim('t1', 'ann', '{r}');
	SELECT worklist.release('t1', 'ann');
	SELECT worklist.claim_next('bob', '{r}');
	SELECT worklist.take_over('t1', 'bob', 'cy', '{r}');
	SELECT worklist.complete('t1', 'cy', '{}');
	SELECT worklist.note('t1', 'cy', 'done, and said so');
	SELECT worklist.set_state('t2', 'withdrawn');
	SELECT worklist.open_task('t3', 'c', '{r}', run_id => 'r1');
	SELECT worklist.withdraw_run('r1', '{t3}');
	SELECT worklist.open_task('t4', 'c', '{r}');
	SELECT worklist.escalate('t4');
	SELECT worklist.open_task('t5', 'c', '{r}', due_at => now());
	SELECT worklist.open_task('t6', 'c', '{r}', due_at => now(), expiry_policy => 'escalate');
	SELECT worklist.open_ticket('k1', 'req', 'one', authorities => '{lead}', open_deadline => now() + interval '1 day');
	SELECT worklist.report('k1', 'ann', 'working');
	SELECT worklist.close_ticket('k1', 'ann', 'done');
	SELECT worklist.close_ticket('k1', 'lead', 'done');
	SELECT worklist.open_ticket('k2', 'req', 'due now');
	SELECT worklist.open_ticket('k3', 'req', 'delivered', open_deadline => now() + interval '1 day',
	                            confirm_window => '1 minute');
	SELECT worklist.report('k3', 'ann', 'delivered', at => now() - interval '2 minutes');
	SELECT worklist.write_checkpoint('p', 's', 'r', 'c1', '{}');
	SELECT worklist.write_checkpoint('p', 's', 'r', 'c2', '{}');
	SELECT worklist.delete_checkpoint('p', 's', 'r', 'c1');
	SELECT worklist.prune_checkpoints('p', 's', 'r', 0);
	SELECT worklist.claim_run('p', 's', 'r', 'w', '1 hour');
	SELECT worklist.release_run('p', 's', 'r', (SELECT fence FROM worklist.run_claim WHERE tenant = 'acme'));
});
my %expected = (
	'task.opened' => 6, 'task.claimed' => 2, 'task.released' => 1,
	'task.taken_over' => 1, 'task.completed' => 1, 'task.withdrawn' => 2,
	'task.escalated' => 2, 'task.expired' => 1, 'task.noted' => 1,
	'ticket.opened' => 3, 'ticket.reported' => 3, 'ticket.closed' => 1,
	'ticket.escalated' => 1, 'ticket.confirmed' => 1,
	'run.checkpointed' => 2, 'run.checkpoint_deleted' => 1, 'run.pruned' => 1,
	'run.claimed' => 1, 'run.released' => 1);
my $t = time + 20;
sleep 0.1 while time < $t && !eq_hash(sums($bound), \%expected);
is_deeply(sums($bound), \%expected, 'the bound listener counts each kind and event that committed');
my $all = received($bound);
my @bad = grep { $_->{channel} ne $channel
	  || $_->{payload} !~ /^\{("(task|ticket|run)": \{("[a-z_]+": [1-9][0-9]*(, )?)+\}(, )?)+\}$/ } @$all;
is_deeply(\@bad, [], 'every payload is counts only, on the tenant\'s channel');
my @leaks = grep { $_->{payload} =~ /acme|t[1-6]|k[1-3]|"p"|"r"|c[12]/ } @$all;
is_deeply(\@leaks, [], 'no payload names the tenant or an id');

# One transaction of several kinds: one payload, kinds and events in order.
my $before = scalar @{ received($bound) };
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	BEGIN;
	SELECT worklist.write_checkpoint('p', 's', 'r2', 'c1', '{}');
	SELECT worklist.open_task('u1', 'c', '{r}');
	SELECT worklist.open_task('u2', 'c', '{r}');
	SELECT worklist.open_task('u3', 'c', '{r}');
	SELECT worklist.claim('u3', 'ann', '{r}');
	SELECT worklist.write_checkpoint('p', 's', 'r2', 'c2', '{}');
	COMMIT;
});
my $got = wait_for($bound, $before + 1);
is_deeply([ map { $_->{payload} } @$got[ $before .. $#$got ] ],
	[ '{"task": {"opened": 3, "claimed": 1}, "run": {"checkpointed": 2}}' ],
	'a transaction of several kinds: one payload, in the documented order');

# Rolled back, whole or a subtransaction of it: never counted.
$before = scalar @{ received($bound) };
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	BEGIN;
	SELECT worklist.open_task('v1', 'c', '{r}');
	ROLLBACK;
	BEGIN;
	SELECT worklist.open_task('v2', 'c', '{r}');
	SAVEPOINT s;
	SELECT worklist.open_task('v3', 'c', '{r}');
	SELECT worklist.claim('v3', 'ann', '{r}');
	ROLLBACK TO SAVEPOINT s;
	SAVEPOINT s2;
	SELECT worklist.open_task('v4', 'c', '{r}');
	RELEASE SAVEPOINT s2;
	COMMIT;
});
$got = wait_for($bound, $before + 1);
is_deeply([ map { $_->{payload} } @$got[ $before .. $#$got ] ],
	[ '{"task": {"opened": 2}}' ],
	'a rollback and a rolled-back subtransaction are not counted');

# worklist.notify = off: nothing.
$before = scalar @{ received($bound) };
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SET worklist.notify = off;
	SELECT worklist.open_task('w1', 'c', '{r}');
});
$got = wait_for($bound, $before + 1);
is(scalar(@$got), $before, 'worklist.notify = off sends nothing');

# Two tenants in one transaction: a payload each, each on its channel.
my $other_channel = $node->safe_psql('postgres',
	q{SET worklist.tenant = 'other'; SELECT worklist.channel()});
isnt($other_channel, $channel, 'another tenant has another channel');
my $other = $node->listener(user => 'acme_admin', channels => [ $other_channel ]);
$before = scalar @{ received($bound) };
$node->safe_psql('postgres', q{
	BEGIN;
	SET LOCAL worklist.tenant = 'acme';
	SELECT worklist.open_task('x1', 'c', '{r}');
	SET LOCAL worklist.tenant = 'other';
	SELECT worklist.open_task('x1', 'c', '{r}');
	SELECT worklist.open_task('x2', 'c', '{r}');
	COMMIT;
});
$got = wait_for($bound, $before + 1);
is_deeply([ map { $_->{payload} } @$got[ $before .. $#$got ] ],
	[ '{"task": {"opened": 1}}' ], 'each tenant hears its own count');
is_deeply([ map { "$_->{channel} $_->{payload}" } @{ wait_for($other, 1) } ],
	[ qq{$other_channel {"task": {"opened": 2}}} ], 'and only its own');

# Rotation: admins only; the old channel hears {"rotated": true}, then
# nothing more; the new one hears what follows.
($rc, undef, $err) = as('acme_member', 'SELECT worklist.rotate_channel()');
like($err, qr/permission denied for rotate_channel/, 'a member may not rotate');
my $new;
($rc, $new, $err) = as('acme_admin', 'SELECT worklist.rotate_channel()');
like($new, qr/^worklist_[0-9a-f]{32}$/, "the admin rotates ($new)");
isnt($new, $channel, 'to a new name');
is((as('acme_member', 'SELECT worklist.channel()'))[1], $new, 'which channel() now gives');
$got = wait_for($bound, $before + 2);
is_deeply([ map { "$_->{channel} $_->{payload}" } @$got[ $before + 1 .. $#$got ] ],
	[ qq{$channel {"rotated": true}} ], 'the old channel hears {"rotated": true}');
my $outsider_rotated = $node->listener(user => 'outsider', channels => [ $channel ]);
my $fresh = $node->listener(user => 'acme_member', channels => [ $new ]);
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('y1', 'c', '{r}');
});
is_deeply([ map { "$_->{channel} $_->{payload}" } @{ wait_for($fresh, 1) } ],
	[ qq{$new {"task": {"opened": 1}}} ], 'the new channel hears what follows');
is(scalar(@{ received($bound) }), $before + 2, 'the old one nothing more');
is_deeply(received($outsider_rotated), [], 'nor does the outsider listening on the rotated-away channel');

is_deeply(received($outsider), [],
	'the outsider, on "worklist" and every name it could compute, heard nothing at all');

$_->{h}->finish for ($outsider, $bound, $other, $outsider_rotated, $fresh);

# Rotations while the sweeper sends: three writers open tasks without
# pause while a channel is listened on and rotated, 300 times.  (A send
# that read the old secret just before a rotation committed, and sent
# after it, used to leak a payload in about one round of 150.)  Nothing
# arrives on a channel after its {"rotated": true}: a send that would use
# the old secret either happens before the rotation (which waits for it)
# or keeps its counts for the next send, under the new name.
my $rot = decode_json((run_command(
	[ '/usr/bin/python3', notify_client(), 'rotations', $node->connstr('postgres'), 300 ]))[0]);
is_deeply($rot->{errors}, [], 'the writers ran without errors');
is($rot->{rotations}, 300, 'every rotation was heard on its old channel');
is($rot->{leaks}, 0, "no payload arrived on a channel after its rotation ($rot->{payloads} payloads)");
$node->stop;
done_testing();
