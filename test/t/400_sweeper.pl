# The sweeper: starts with the server, waits quietly while the extension is
# missing, expires overdue tasks by itself, reloads its interval on SIGHUP,
# is fair across tenants, survives DROP EXTENSION, and NOTIFY reaches a
# listener.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('sweeper');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'worklist'
worklist.sweep_interval = 100
worklist.sweep_batch = 500
});
$node->start;

# The worker is up before the extension exists, and says so once.
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'worklist sweeper'})
  or die 'sweeper did not start';
$node->wait_for_log(qr/worklist sweeper is waiting for the extension/);
sleep 1;    # ten more ticks
my $log = slurp_file($node->logfile);
my $waiting = () = $log =~ /worklist sweeper is waiting for the extension/g;
is($waiting, 1, 'one log line while the extension is missing, not one per tick');

$node->safe_psql('postgres', 'CREATE EXTENSION worklist');
$node->wait_for_log(qr/worklist sweeper found the extension/);

# A task whose deadline passes is expired without anybody calling sweep().
$node->safe_psql('postgres', q{
	SELECT worklist.open_task('t-deny', 'c', '{r}', due_at => now() + interval '1 second');
	SELECT worklist.open_task('t-proceed', 'c', '{r}', due_at => now() + interval '1 second',
	                          expiry_policy => 'proceed');
	SELECT worklist.open_task('t-escalate', 'c', '{r}', due_at => now() + interval '1 second',
	                          expiry_policy => 'escalate', escalation_roles => '{lead}');
	SELECT worklist.open_task('t-later', 'c', '{r}', due_at => now() + interval '1 hour');
});
$node->poll_query_until('postgres',
	q{SELECT count(*) = 3 FROM worklist.task WHERE state IN ('expired', 'escalated')})
  or die 'overdue tasks were not swept';
is($node->safe_psql('postgres',
		q{SELECT string_agg(id || '=' || state || coalesce(':' || (decision->>'policy'), ''), ',' ORDER BY id)
		    FROM worklist.task}),
	't-deny=expired:deny,t-escalate=escalated,t-later=open,t-proceed=expired:proceed',
	'each policy applied by the worker; the task not yet due is left alone');
is($node->safe_psql('postgres',
		q{SELECT denied || '/' || proceeded || '/' || escalated FROM worklist.sweeper_status WHERE pid IS NOT NULL}),
	'1/1/1', 'sweeper_status totals per action');

# SIGHUP: a new interval takes effect without a restart.
$node->safe_psql('postgres', q{ALTER SYSTEM SET worklist.sweep_interval = '10min'});
$node->reload;
sleep 1;    # the worker picks it up after its current wait
$node->safe_psql('postgres',
	q{SELECT worklist.open_task('t-slow', 'c', '{r}', due_at => now())});
sleep 2;
is($node->safe_psql('postgres', q{SELECT state FROM worklist.task WHERE id = 't-slow'}),
	'open', 'a 10 minute interval leaves an overdue task for the next tick');
$node->safe_psql('postgres', q{ALTER SYSTEM SET worklist.sweep_interval = 100});
$node->reload;
$node->poll_query_until('postgres',
	q{SELECT state = 'expired' FROM worklist.task WHERE id = 't-slow'})
  or die 'reloaded interval not applied';
pass('back to 100 ms on SIGHUP: the task is swept');

# Fairness: one tenant with 10,000 overdue tasks, another with one.  The
# second tenant's task is settled after at most one batch of the first's.
$node->safe_psql('postgres', q{
	BEGIN;
	SET LOCAL worklist.tenant = 'big';
	SELECT count(worklist.open_task('b' || g, 'c', '{r}', due_at => now() - interval '1 minute'))
	  FROM generate_series(1, 10000) g;
	SET LOCAL worklist.tenant = 'small';
	SELECT worklist.open_task('s1', 'c', '{r}', due_at => now() - interval '1 minute');
	COMMIT;
});
$node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM worklist.task WHERE tenant IN ('big', 'small') AND state = 'open'})
  or die 'backlog not swept';
my $before = $node->safe_psql('postgres', q{
	SELECT count(*) FROM worklist.task b
	 WHERE b.tenant = 'big'
	   AND b.settled_at < (SELECT settled_at FROM worklist.task WHERE tenant = 'small' AND id = 's1')});
cmp_ok($before, '<=', 500,
	"the small tenant waited for at most one batch of the big one ($before rows before it)");

# NOTIFY worklist reaches a listener, with the contract's payload.
my $listener = $node->background_psql('postgres');
$listener->query_safe('LISTEN worklist');
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'n';
	SELECT worklist.open_task('n1', 'c', '{r}');
	SELECT worklist.claim('n1', 'alice', '{r}');
});
my $out = $listener->query_safe('SELECT 1');
like($out, qr/\{"tenant": "n", "kind": "task", "id": "n1", "event": "opened"\}/, 'opened notified');
like($out, qr/\{"tenant": "n", "kind": "task", "id": "n1", "event": "claimed"\}/, 'claimed notified');
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'n';
	SET worklist.notify = off;
	SELECT worklist.release('n1', 'alice');
});
$out = $listener->query_safe('SELECT 1');
unlike($out, qr/"event": "released"/, 'worklist.notify = off sends nothing');
$listener->quit;

# DROP EXTENSION under the running worker: no crash, no flood of lines.
my $offset = -s $node->logfile;
for my $i (1 .. 10)
{
	$node->safe_psql('postgres', 'DROP EXTENSION worklist');
	select(undef, undef, undef, 0.25);
	$node->safe_psql('postgres', 'CREATE EXTENSION worklist');
	select(undef, undef, undef, 0.25);
}
$node->safe_psql('postgres',
	q{SELECT worklist.open_task('t-after', 'c', '{r}', due_at => now())});
$node->poll_query_until('postgres',
	q{SELECT state = 'expired' FROM worklist.task WHERE id = 't-after'})
  or die 'not sweeping after DROP/CREATE cycles';
$log = substr(slurp_file($node->logfile), $offset);
unlike($log, qr/terminated by signal|server process .* was terminated/, 'no crash');
my $lines = () = $log =~ /worklist sweeper/g;
cmp_ok($lines, '<=', 2 * 10 + 2, "log lines about the sweeper stay bounded ($lines)");
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'worklist sweeper'}),
	'1', 'still exactly one sweeper');

$node->stop;
done_testing();
