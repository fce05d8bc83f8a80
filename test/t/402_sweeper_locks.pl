# A reviewer holding a row lock for seconds does not stall the sweep of the
# other rows; the locked row is swept once the lock goes.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('sweeper_locks', conf => qq{
worklist.sweep_interval = 100
worklist.sweep_batch = 2
});
$node->safe_psql('postgres', q{
	CREATE EXTENSION worklist;
	SELECT worklist.open_task('t' || g, 'c', '{r}', due_at => now() + interval '2 seconds')
	  FROM generate_series(1, 10) g;
});

# The reviewer locks the task that falls due first, and holds it.
my $reviewer = $node->background_psql('postgres');
$reviewer->query_safe('BEGIN');
$reviewer->query_safe(q{SELECT id FROM worklist.task WHERE id = 't1' FOR UPDATE});

$node->poll_query_until('postgres',
	q{SELECT count(*) = 9 FROM worklist.task WHERE state = 'expired'})
  or die 'rows behind the locked one were not swept';
is($node->safe_psql('postgres', q{SELECT state FROM worklist.task WHERE id = 't1'}),
	'open', 'the locked row is skipped, the nine others are swept (batches of 2)');
sleep 1;
is($node->sweepers(q{wait_event_type = 'Lock'}),
	'0', 'the sweeper is not waiting on the lock');

$reviewer->query_safe('COMMIT');
$reviewer->quit;
$node->poll_query_until('postgres', q{SELECT state = 'expired' FROM worklist.task WHERE id = 't1'})
  or die 'released row not swept';
pass('the row is swept once the reviewer lets go');

$node->stop;
done_testing();
