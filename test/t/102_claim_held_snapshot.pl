# claim_next does not slow down while an old snapshot is held.  Every claim
# leaves a dead entry at the head of the queue index that nobody can mark
# dead while a snapshot older than the claim lives; without a place to
# start (the hint of src/hint.c, kept in shared memory when the library is
# preloaded) every claim walks all of them.  A REPEATABLE READ transaction
# is held open while 3,000 tasks are claimed and completed; then the
# buffers one claim_next touches are counted: with the library preloaded a
# handful, without it (the control, which shows the count can fail) as
# many as the pages of index and table that the dead entries fill.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

sub claim_buffers_after_held_snapshot
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
		CREATE EXTENSION IF NOT EXISTS worklist;
		SET worklist.tenant = 'held';
		SELECT count(*) FROM generate_series(1, 10000) g,
		       worklist.open_task('t' || lpad(g::text, 6, '0'), 'c', '{r}');
		VACUUM ANALYZE worklist.task;
	});
	my $reader = $node->background_psql('postgres');
	$reader->query_safe(q{BEGIN ISOLATION LEVEL REPEATABLE READ});
	$reader->query_safe(q{SELECT count(*) FROM worklist.task});

	$node->safe_psql('postgres', q{
		SET worklist.tenant = 'held';
		DO $$
		DECLARE
			t worklist.task;
		BEGIN
			FOR i IN 1 .. 3000 LOOP
				t := worklist.claim_next('w', '{r}');
				PERFORM worklist.complete(t.id, 'w', '{}');
				COMMIT;
			END LOOP;
		END
		$$;
	});
	my $buffers = $node->safe_psql('postgres', q{
		SET worklist.tenant = 'held';
		CREATE FUNCTION pg_temp.buffers(call text) RETURNS bigint LANGUAGE plpgsql AS $f$
		DECLARE plan json;
		BEGIN
			EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || call INTO plan;
			RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint
			     + (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
		END $f$;
		SELECT pg_temp.buffers($$SELECT worklist.claim_next('w', '{r}')$$);
		SELECT pg_temp.buffers($$SELECT worklist.claim_next('w', '{r}')$$);
	});
	my $order_ok = $node->safe_psql('postgres', q{
		SET worklist.tenant = 'held';
		SELECT (SELECT min(id) FROM worklist.task WHERE state = 'open')
		     > (SELECT max(id) FROM worklist.task WHERE state <> 'open')});
	$reader->query_safe('COMMIT');
	$reader->quit;
	my @b = split /\n/, $buffers;
	return ($b[-1], $order_ok);
}

my $node = WorklistNode->create('held_preloaded', conf => qq{
worklist.sweep_interval = '1h'
autovacuum = off
});
my ($with_hint, $order) = claim_buffers_after_held_snapshot($node);
cmp_ok($with_hint, '<', 50,
	"preloaded: one claim_next touches $with_hint buffers after 3,000 claims under a held snapshot");
is($order, 't', 'and the claims went in queue order');

# The hints belong to the task table they were raised on: the extension
# dropped and created again (as a restore with --clean does) starts from
# the head of the new queue.
$node->safe_psql('postgres', q{
	DROP EXTENSION worklist;
	CREATE EXTENSION worklist;
	SET worklist.tenant = 'held';
	SELECT count(*) FROM generate_series(1, 3) g,
	       worklist.open_task('t' || lpad(g::text, 6, '0'), 'c', '{r}');
});
is($node->safe_psql('postgres', q{
	SET worklist.tenant = 'held';
	SELECT (worklist.claim_next('w', '{r}')).id}),
	't000001', 'after DROP and CREATE EXTENSION the first task is claimed first');
$node->stop;

my $control = WorklistNode->create('held_control', preload => 0, conf => q{autovacuum = off});
my ($without, $order2) = claim_buffers_after_held_snapshot($control);
cmp_ok($without, '>', 50,
	"control, not preloaded: one claim_next touches $without buffers, walking the dead entries");
# (each count includes the claim's event in the task's history, the same
# dozen buffers or so either way)
cmp_ok($without, '>', 3 * $with_hint, 'several times what the preloaded claim touches');
is($order2, 't', 'and the claims went in queue order');
$control->stop;

done_testing();
