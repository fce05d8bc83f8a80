# The sweeper never writes on a hot standby; it starts sweeping once the
# standby is promoted.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = WorklistNode->create('primary',
	init => { allows_streaming => 1 }, conf => qq{
worklist.sweep_interval = '1h'
}, extension => 'postgres');
$primary->backup('b');

my $standby = WorklistNode->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', 'worklist.sweep_interval = 100');
$standby->start;

# Overdue work reaches the standby; the primary's sweeper is asleep.
$primary->safe_psql('postgres', q{
	SELECT worklist.open_task('t1', 'c', '{r}', due_at => now() - interval '1 minute');
	SELECT worklist.open_ticket('k1', 'req', 'a ticket');
});
$primary->wait_for_catchup($standby);
sleep 2;
is($standby->sweepers,
	'0', 'no sweeper runs on the standby');
is($standby->safe_psql('postgres', q{SELECT state FROM worklist.task WHERE id = 't1'}),
	'open', 'the overdue task is untouched on the standby');

$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres',
	q{SELECT state = 'expired' FROM worklist.task WHERE id = 't1'})
  or die 'not swept after promotion';
pass('after promotion the sweeper starts and expires the task');
is($standby->safe_psql('postgres',
		q{SELECT count(*) FROM worklist.ticket_history('k1') WHERE kind = 'escalation'}),
	'1', 'and the watchdog escalates the silent ticket');

$standby->stop;
done_testing();
