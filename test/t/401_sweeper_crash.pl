# Killing the sweeper (SIGKILL) or the whole server (immediate stop) in the
# middle of a large sweep loses nothing and settles nothing twice: after the
# restart the sweep finishes, and every task went from pending to settled
# exactly once.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('sweeper_crash', conf => qq{
restart_after_crash = on
worklist.sweep_interval = 20
worklist.sweep_batch = 20
});
$node->safe_psql('postgres', q{
	CREATE EXTENSION worklist;
	-- every change of state, recorded in the same transaction
	CREATE TABLE audit (tenant text, id text, old_state text, new_state text);
	-- (verbs run with search_path pinned to pg_catalog: qualify names);
	-- a millisecond per change keeps the sweep of 3000 tasks running for
	-- seconds, long enough to be killed in the middle on a fast machine
	CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF OLD.state IS DISTINCT FROM NEW.state THEN
			INSERT INTO public.audit VALUES (NEW.tenant, NEW.id, OLD.state, NEW.state);
			PERFORM pg_catalog.pg_sleep(0.001);
		END IF;
		RETURN NEW;
	END $$;
	CREATE TRIGGER audit AFTER UPDATE ON worklist.task FOR EACH ROW EXECUTE FUNCTION audit();
});

sub load
{
	my ($tenant, $n) = @_;
	$node->safe_psql('postgres', qq{
		SET worklist.tenant = '$tenant';
		SELECT count(worklist.open_task('t' || g, 'c', '{r}', due_at => now() + interval '1 second',
		             expiry_policy => (ARRAY['deny','proceed','escalate'])[1 + g % 3]::worklist.expiry_policy))
		  FROM generate_series(1, $n) g;
	});
}

sub settled
{
	my ($tenant) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM worklist.task
		 WHERE tenant = '$tenant' AND state IN ('expired', 'escalated')});
}

sub check_audit
{
	my ($tenant, $n, $what) = @_;
	is($node->safe_psql('postgres', qq{SELECT count(*) FROM worklist.task WHERE tenant = '$tenant'}),
		$n, "$what: no task lost");
	is(settled($tenant), $n, "$what: every task settled");
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM (SELECT id FROM audit WHERE tenant = '$tenant'
		                      GROUP BY id HAVING count(*) <> 1) x}),
		'0', "$what: each task changed state exactly once");
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM worklist.task t JOIN audit a USING (tenant, id)
		 WHERE t.tenant = '$tenant' AND (a.new_state <> t.state::text OR a.old_state <> 'open')}),
		'0', "$what: the recorded change is the one that stands");
}

# SIGKILL of the worker in the middle of the sweep.
load('kill', 3000);
$node->poll_query_until('postgres', q{SELECT count(*) > 200 FROM audit WHERE tenant = 'kill'})
  or die 'sweep did not start';
my $pid = $node->sweeper_pid;
ok($pid, "sweeper pid $pid");
cmp_ok(settled('kill'), '<', 3000, 'killed before the sweep finished');
kill 'KILL', $pid;
$node->wait_for_sweepers(1, qq{pid <> $pid})
  or die 'sweeper not restarted';
pass('sweeper restarted after SIGKILL');
$node->poll_query_until('postgres', q{SELECT count(*) = 3000 FROM audit WHERE tenant = 'kill'}, 't')
  or die 'sweep did not finish after the restart';
check_audit('kill', 3000, 'after SIGKILL');

# Immediate stop of the server in the middle of the sweep.
load('crash', 3000);
$node->poll_query_until('postgres', q{SELECT count(*) > 200 FROM audit WHERE tenant = 'crash'})
  or die 'sweep did not start';
$node->stop('immediate');
$node->start;
$node->poll_query_until('postgres', q{SELECT count(*) = 3000 FROM audit WHERE tenant = 'crash'}, 't')
  or die 'sweep did not finish after the crash';
check_audit('crash', 3000, 'after an immediate stop');

$node->stop;
done_testing();
