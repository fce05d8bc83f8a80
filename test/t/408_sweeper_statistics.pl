# The sweeper's changes reach the cumulative statistics while it runs, not
# only when it exits: pg_stat_user_tables counts its updates and dead rows
# of worklist.task, and autovacuum, which reads them, vacuums the table,
# all while the same sweeper keeps running.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('statistics', conf => qq{
worklist.sweep_interval = 200
worklist.sweep_batch = 100
autovacuum_naptime = 1
});
$node->safe_psql('postgres', q{
	CREATE EXTENSION worklist;
	-- no autovacuum yet: the dead rows must stay to be seen
	ALTER TABLE worklist.task SET (autovacuum_enabled = off);
	SET worklist.tenant = 'stats';
	SELECT count(worklist.open_task('t' || g, 'c', '{r}', due_at => now() + interval '1 second'))
	  FROM generate_series(1, 3000) g;
});
my $pid = $node->sweeper_pid;
ok($pid, "sweeper $pid");
ok($node->poll_query_until('postgres',
		q{SELECT count(*) = 3000 FROM worklist.task WHERE state = 'expired'}),
	'the sweeper expires 3000 tasks');
ok($node->poll_query_until('postgres',
		q{SELECT n_tup_upd >= 3000 AND n_dead_tup >= 3000 FROM pg_stat_user_tables
		   WHERE relid = 'worklist.task'::regclass}),
	'pg_stat_user_tables counts its updates and dead rows');
is($node->sweeper_pid,
	$pid, 'while the same sweeper runs');

$node->safe_psql('postgres', q{ALTER TABLE worklist.task RESET (autovacuum_enabled)});
ok($node->poll_query_until('postgres',
		q{SELECT autovacuum_count > 0 FROM pg_stat_user_tables WHERE relid = 'worklist.task'::regclass}),
	'autovacuum vacuums the table');
is($node->sweeper_pid,
	$pid, 'and the sweeper still has not exited');

$node->stop;
done_testing();
