# A park resolves in the transaction that settles its last task, so a
# crash cannot separate them: a server killed between a task's settlement
# and its commit comes back with the task pending and the park
# outstanding; a settlement committed without waiting for its WAL
# (synchronous_commit off) comes back whole or not at all; and a
# settlement after the restart resolves the park.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('park_crash', extension => 'postgres');

$node->safe_psql('postgres', q{
	SET worklist.tenant = 'crash';
	SELECT worklist.open_task('t' || i, 'case', '{r}') FROM generate_series(1, 2) i;
	SELECT worklist.claim('t' || i, 'rev', '{r}') FROM generate_series(1, 2) i;
	SELECT worklist.park_run('p', 's', 'r' || i, 'c1', ARRAY['t' || i]) FROM generate_series(1, 2) i;
});

# What the task and the park say, for run ri parked on ti.
sub agree
{
	my ($i) = @_;
	return $node->safe_psql('postgres', qq{
		SET worklist.tenant = 'crash';
		SELECT t.state || '/' || e.park_state
		  FROM worklist.task t,
		       worklist.list_durable_runs('p', 's') pg, unnest(pg.entries) e
		 WHERE t.id = 't$i' AND e.run = 'r$i'});
}

# The settlement of t1 is made, its park resolved, not committed.
my $open = $node->background_psql('postgres');
$open->query_safe(q{SET worklist.tenant = 'crash'; BEGIN});
$open->query_safe(q{SELECT worklist.complete('t1', 'rev', '{"approve": true}')});
is($open->query_safe(q{
	SELECT park_resolved_at IS NOT NULL FROM worklist.read_checkpoint('p', 's', 'r1', 'c1')}),
	't', 'inside the settling transaction the park is resolved');
is(agree(1), 'claimed/outstanding', 'outside it, neither is yet');

# t2 settled and committed without waiting for the WAL to reach disk.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'crash';
	SET synchronous_commit = off;
	SELECT worklist.complete('t2', 'rev', '{"approve": false}');
});

$node->stop('immediate');
$open->quit;
$node->start;

is(agree(1), 'claimed/outstanding', 'after the crash: the uncommitted settlement left no trace in either');
like(agree(2), qr{^(claimed/outstanding|completed/resolved)$},
	'an asynchronous commit survives whole or not at all: ' . agree(2));
is($node->safe_psql('postgres', q{
	SET worklist.tenant = 'crash';
	SELECT count(*) FROM worklist.run_park_task WHERE task_id = 't1' AND NOT resolved}),
	'1', 'the park still awaits t1');

# After the restart a settlement resolves the park as before.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'crash';
	SELECT worklist.complete('t1', 'rev', '{"approve": true}');
});
is(agree(1), 'completed/resolved', 'settled after the restart: the park is resolved');
is($node->safe_psql('postgres', q{
	SET worklist.tenant = 'crash';
	SELECT run FROM worklist.claim_next_run('p', 'w', '1 hour')}),
	'r1', 'and the run is handed out');

$node->stop;
done_testing();
