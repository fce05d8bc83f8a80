# The notifications of runs as a queue of work (0.4), heard by a real
# LISTEN session (test/tools/notify_client.py), with the library preloaded
# (the sweeper sends) and without (each transaction at its commit): a
# park_run counts run "checkpointed", "parked" and, when it ends a lease,
# "released"; the settlement of a park's last pending task "resumed" (and
# a park_run whose tasks are all settled, at once); conclude_run
# "concluded", and the park it resolves by withdrawing its tasks
# "resumed"; and the task events hand_over and update_task count,
# "handed_over" and "updated".  Each payload exactly, on the tenant's channel, only once the
# transaction committed: nothing while it is open, nothing for a rollback
# or a rolled-back subtransaction.
use strict;
use warnings;
use WorklistNode qw(received wait_for);
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

for my $preload (1, 0)
{
	my $mode = $preload ? 'preloaded' : 'not preloaded';
	my $node = WorklistNode->create("notify_runs_$preload", preload => $preload,
		conf => q{worklist.sweep_interval = 100}, extension => 'postgres');
	my $channel = $node->safe_psql('postgres',
		q{SET worklist.tenant = 'acme'; SELECT worklist.channel()});
	my $l = $node->listener(channels => [ $channel ]);

	# The payloads the listener receives for what sql commits (in one
	# transaction, unless it says BEGIN itself), as a list.
	my $step = sub {
		my ($sql, $n) = @_;
		$sql = "BEGIN;\n$sql;\nCOMMIT;" unless $sql =~ /\bBEGIN;/;
		my $before = scalar @{ received($l) };
		$node->safe_psql('postgres', "SET worklist.tenant = 'acme';\n$sql");
		my $got = wait_for($l, $before + ($n // 1));
		my @bad = grep { $_->{channel} ne $channel } @$got[ $before .. $#$got ];
		die "a payload on another channel: $bad[0]{channel}" if @bad;
		return [ map { $_->{payload} } @$got[ $before .. $#$got ] ];
	};

	is_deeply($step->(q{
		SELECT worklist.open_task(id, 'c', '{r}') FROM unnest('{t1,t2,t3,t4}'::text[]) id;
		SELECT worklist.claim_run('p', 's', 'r1', 'w', '1 hour');
	}), [ '{"task": {"opened": 4}, "run": {"claimed": 1}}' ], "$mode: the set-up is heard");

	# park_run by the holder: checkpointed, released (its lease), parked.
	is_deeply($step->(q{
		SELECT worklist.park_run('p', 's', 'r1', 'c1', '{t1,t2}',
		                         fence => (SELECT fence FROM worklist.run_claim WHERE tenant = 'acme' AND run = 'r1'));
	}), [ '{"run": {"checkpointed": 1, "released": 1, "parked": 1}}' ],
		"$mode: a park that ends a lease: checkpointed, released, parked");

	# Settling one of its two tasks resumes nothing; the last one resumes it.
	is_deeply($step->(q{
		SELECT worklist.set_state('t1', 'withdrawn');
	}), [ '{"task": {"withdrawn": 1}}' ], "$mode: a task of two settled: no resumed");
	is_deeply($step->(q{
		SELECT worklist.claim('t2', 'ann', '{r}');
		SELECT worklist.complete('t2', 'ann', '{}');
	}), [ '{"task": {"claimed": 1, "completed": 1}, "run": {"resumed": 1}}' ],
		"$mode: the last one settled: resumed, in the settling transaction's payload");

	# A park with no lease to end, on tasks already settled: resolved at once.
	is_deeply($step->(q{
		SELECT worklist.park_run('p', 's', 'r2', 'c1', '{t1,t2}');
	}), [ '{"run": {"checkpointed": 1, "parked": 1, "resumed": 1}}' ],
		"$mode: a park resolved at once: checkpointed, parked, resumed");

	# conclude_run of a parked run withdraws the task its park awaits,
	# which resolves the park; of a run without a park, concluded alone.
	$step->(q{SELECT worklist.park_run('p', 's', 'r3', 'c1', '{t3}')});
	is_deeply($step->(q{
		SELECT worklist.conclude_run('p', 's', 'r3');
	}), [ '{"task": {"withdrawn": 1}, "run": {"resumed": 1, "concluded": 1}}' ],
		"$mode: conclude_run of a parked run: withdrawn, resumed, concluded");
	is_deeply($step->(q{
		SELECT worklist.write_checkpoint('p', 's', 'r4', 'c1', '{}');
		SELECT worklist.conclude_run('p', 's', 'r4');
	}), [ '{"run": {"checkpointed": 1, "concluded": 1}}' ],
		"$mode: conclude_run of a run without a park: concluded");
	is_deeply($step->(q{
		SELECT worklist.conclude_run('p', 's', 'r4');
	}, 0), [], "$mode: concluding a concluded run changes nothing and sends nothing");

	# Rolled back, whole or a subtransaction: none of it is counted.  The
	# commit that follows is heard alone (with the library preloaded,
	# counts left over would be sent with it).
	$step->(q{SELECT worklist.park_run('p', 's', 'r5', 'c1', '{t4}')});
	is_deeply($step->(q{
		BEGIN;
		SELECT worklist.park_run('p', 's', 'r6', 'c1', '{t4}');
		SELECT worklist.claim('t4', 'ann', '{r}');
		SELECT worklist.complete('t4', 'ann', '{}');
		SELECT worklist.conclude_run('p', 's', 'r5');
		ROLLBACK;
		BEGIN;
		SELECT worklist.open_task('u1', 'c', '{r}');
		SAVEPOINT s;
		SELECT worklist.park_run('p', 's', 'r7', 'c1', '{u1}');
		SELECT worklist.set_state('u1', 'withdrawn');
		SELECT worklist.conclude_run('p', 's', 'r7');
		ROLLBACK TO SAVEPOINT s;
		COMMIT;
	}), [ '{"task": {"opened": 1}}' ],
		"$mode: a rollback and a rolled-back subtransaction count no parked, resumed or concluded");
	is($node->safe_psql('postgres', q{
		SET worklist.tenant = 'acme';
		SELECT string_agg(park_state::text, ',' ORDER BY run)
		  FROM worklist.list_durable_runs('p', 's') pg, unnest(pg.entries) e
		 WHERE e.run IN ('r5', 'r6', 'r7')}), 'outstanding',
		"$mode: and nothing of it stayed (r5 outstanding, r6 and r7 never made)");

	# The task events of 0.4 that hand work on: handed_over, updated.
	is_deeply($step->(q{
		SELECT worklist.open_task('h1', 'c', '{r}');
		SELECT worklist.claim('h1', 'ann', '{r}');
		SELECT worklist.hand_over('h1', 'ann', 'bob', '{r}');
		SELECT worklist.update_task('h1', priority => 5);
	}), [ '{"task": {"opened": 1, "claimed": 1, "handed_over": 1, "updated": 1}}' ],
		"$mode: hand_over and update_task: handed_over, updated");

	# Nothing while the transaction is open; its counts once it commits.
	my $open = $node->background_psql('postgres');
	my $before = scalar @{ received($l) };
	$open->query_safe(q{
		SET worklist.tenant = 'acme';
		BEGIN;
		SELECT worklist.park_run('p', 's', 'r8', 'c1', '{t4}');
		SELECT worklist.claim('t4', 'ann', '{r}');
		SELECT worklist.complete('t4', 'ann', '{}');
		SELECT worklist.conclude_run('p', 's', 'r5');
		SELECT worklist.conclude_run('p', 's', 'r8');
	});
	sleep 1;
	is(scalar @{ received($l) }, $before, "$mode: nothing is heard while the transaction is open");
	$open->query_safe('COMMIT');
	my $got = wait_for($l, $before + 1);
	is_deeply([ map { $_->{payload} } @$got[ $before .. $#$got ] ],
		[ '{"task": {"claimed": 1, "completed": 1}, "run": {"checkpointed": 1, "parked": 1, "resumed": 2, "concluded": 2}}' ],
		"$mode: at commit, one payload: the park, both parks resumed by t4, both runs concluded");
	$open->quit;

	$l->{h}->finish;
	$node->stop;
}
done_testing();
