# One tenant cannot stop or slow the sweep of the others.  Tenant "poison"
# has a ticket as large as the bounds allow (a 4,096-character title and
# reason) whose stored fold state the owner has corrupted, and it is due
# at once: every batch of that tenant fails.  The other tenants' expiries
# go on; sweeper_status names the failing tenant; it is retried with a
# growing pause; the log gets one line for it in a minute, not one per
# attempt; and once repaired it is swept and no longer listed.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('poison', conf => qq{
worklist.sweep_interval = 100
}, extension => 'postgres');

$node->safe_psql('postgres', q{
	SET worklist.tenant = 'poison';
	SELECT worklist.open_ticket('big', 'req', repeat('t', 4096), open_deadline => now() + interval '1 hour');
	SELECT worklist.report('big', 'ann', 'working', reason => repeat('r', 4096));
	SELECT worklist.open_task('p1', 'c', '{r}', due_at => now());
	-- the owner (a superuser here) corrupts the stored state, due at once
	ALTER TABLE worklist.ticket DISABLE TRIGGER verbs_only;
	UPDATE worklist.ticket
	   SET fold_state = '\x00ffffffffffffffff00ff00ff00ff00ff'::bytea, next_check = '-infinity'
	 WHERE tenant = 'poison';
	ALTER TABLE worklist.ticket ENABLE TRIGGER verbs_only;
});
my $offset = -s $node->logfile;

# The others' deadlines pass while the poison is in place.
for my $t ('a_before', 'z_after')
{
	$node->safe_psql('postgres', qq{
		SET worklist.tenant = '$t';
		SELECT worklist.open_task('t' || g, 'c', '{r}', due_at => now() + interval '1 second')
		  FROM generate_series(1, 3) g;
	});
}
ok($node->poll_query_until('postgres',
		q{SELECT count(*) = 6 FROM worklist.task WHERE tenant IN ('a_before', 'z_after') AND state = 'expired'}),
	'the other tenants (before and after it in order) are swept');
ok($node->poll_query_until('postgres',
		q{SELECT tenants_in_error = '{poison}' AND last_error_tenant = 'poison' FROM worklist.sweeper_status}),
	'sweeper_status names the failing tenant');
like($node->safe_psql('postgres', q{SELECT last_error FROM worklist.sweeper_status}),
	qr/fold state|insufficient data/, 'and keeps its error');
is($node->safe_psql('postgres', q{SELECT state FROM worklist.task WHERE tenant = 'poison' AND id = 'p1'}),
	'open', "the failing tenant's batch was rolled back whole");

# It is retried, with a growing pause, and logged once in the minute.
my $first = $node->safe_psql('postgres', q{SELECT last_error_at FROM worklist.sweeper_status});
ok($node->poll_query_until('postgres',
		qq{SELECT last_error_at > '$first' FROM worklist.sweeper_status}),
	'the failing tenant is retried');
my $second = $node->safe_psql('postgres', q{SELECT last_error_at FROM worklist.sweeper_status});
ok($node->poll_query_until('postgres',
		qq{SELECT last_error_at > '$second' FROM worklist.sweeper_status}),
	'and retried again');
my $third = $node->safe_psql('postgres', q{SELECT last_error_at FROM worklist.sweeper_status});
my ($gap1, $gap2) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT extract(epoch FROM '$second'::timestamptz - '$first'),
	       extract(epoch FROM '$third'::timestamptz - '$second')});
cmp_ok($gap2, '>', $gap1 * 1.5, "after a growing pause ($gap1 s, then $gap2 s)");
cmp_ok($gap1, '>=', 0.9, 'never at every tick');
my $log = substr(slurp_file($node->logfile), $offset);
my $lines = () = $log =~ /tenant "poison"/g;
is($lines, 1, 'one log line for the failing tenant, whatever the number of attempts');
# (the test's own statements are logged too: leave those out)
my @all = grep { /(LOG|ERROR|WARNING|DETAIL|CONTEXT):/ && !/statement:/ && /poison|fold state/ }
  split /\n/, $log;
is(scalar(@all), 1, 'and nothing else about it');

# The others keep being swept.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'a_before';
	SELECT worklist.open_task('late', 'c', '{r}', due_at => now());
});
ok($node->poll_query_until('postgres',
		q{SELECT state = 'expired' FROM worklist.task WHERE tenant = 'a_before' AND id = 'late'}),
	'a later deadline of another tenant is met too');

# Repaired (erased by an admin), the tenant has nothing due: it is no
# longer listed in error, though no batch of it has succeeded since.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'poison';
	SELECT worklist.erase_tenant();
});
ok($node->poll_query_until('postgres',
		q{SELECT tenants_in_error = '{}' FROM worklist.sweeper_status}),
	'an erased tenant is no longer listed in error');
# New work of the tenant is swept.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'poison';
	SELECT worklist.open_task('p2', 'c', '{r}', due_at => now());
});
ok($node->poll_query_until('postgres',
		q{SELECT state = 'expired' FROM worklist.task WHERE tenant = 'poison' AND id = 'p2'}),
	'the repaired tenant is swept');
ok($node->poll_query_until('postgres',
		q{SELECT tenants_in_error = '{}' FROM worklist.sweeper_status}),
	'and not listed in error');
is($node->safe_psql('postgres', q{SELECT last_error_tenant FROM worklist.sweeper_status}),
	'poison', 'the last error stays on record');

$node->stop;
done_testing();
