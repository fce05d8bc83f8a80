# One sweeper per database that has the extension, with no setting naming
# databases: two databases are both swept; CREATE EXTENSION in a third gets
# it a sweeper within seconds and DROP EXTENSION ends it; DROP DATABASE,
# ALTER DATABASE ... RENAME / SET TABLESPACE and CREATE DATABASE ...
# TEMPLATE succeed while the database's sweeper runs, and the sweeper comes
# back where the database remains; nobody else can stop a sweeper by trying
# those commands; a dropped database is never retried; a database whose
# extension is older than the library waits, saying so once; and
# worklist.database is ignored with one log line.
use strict;
use warnings;
use WorklistNode qw(sweepers_sql);
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = WorklistNode->create('databases', conf => qq{
worklist.sweep_interval = 100
worklist.database = 'somewhere_else'
});

sub sweeper_pid
{
	my ($db) = @_;
	return $node->safe_psql('postgres',
		sweepers_sql(q{coalesce(string_agg(pid::text, ','), '')}, qq{datname = '$db'}));
}

sub wait_sweeper
{
	my ($db, $what) = @_;
	my $start = time;
	$node->wait_for_sweepers(1, qq{datname = '$db'})
	  or die "no sweeper in $db: $what";
	return time - $start;
}

sub overdue_task
{
	my ($db, $id) = @_;
	$node->safe_psql($db, qq{
		SET worklist.tenant = 'shared_name';
		SELECT worklist.open_task('$id', 'c', '{r}', due_at => now());
	});
}

sub wait_expired
{
	my ($db, $id, $what) = @_;
	ok($node->poll_query_until($db,
			qq{SELECT state = 'expired' FROM worklist.task WHERE tenant = 'shared_name' AND id = '$id'}),
		$what);
}

# worklist.database is accepted, and said to be ignored once.
$node->wait_for_launcher
  or die 'launcher did not start';
my $log = slurp_file($node->logfile);
my $n = () = $log =~ /worklist\.database = "somewhere_else" is ignored/g;
is($n, 1, 'worklist.database set: one log line says it is ignored');

# Two databases with the extension: both swept.
for my $db ('alpha', 'beta')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION worklist');
	overdue_task($db, 't1');
}
wait_expired('alpha', 't1', 'database alpha is swept');
wait_expired('beta', 't1', 'database beta is swept');
is($node->safe_psql('postgres', sweepers_sql(q{string_agg(datname, ',' ORDER BY datname)})),
	'alpha,beta', 'one sweeper each, none where the extension is missing');
is($node->safe_psql('alpha', q{SELECT database || ':' || (pid IS NOT NULL) FROM worklist.sweeper_status}),
	'alpha:true', "sweeper_status shows the current database's sweeper only");

# CREATE EXTENSION in a third database: a sweeper within seconds.
$node->safe_psql('postgres', 'CREATE DATABASE gamma');
sleep 1;
is(sweeper_pid('gamma'), '', 'no sweeper in gamma before the extension');
$node->safe_psql('gamma', 'CREATE EXTENSION worklist');
my $took = wait_sweeper('gamma', 'after CREATE EXTENSION');
cmp_ok($took, '<', 5, sprintf('CREATE EXTENSION gets gamma a sweeper in %.2f s', $took));
overdue_task('gamma', 't1');
wait_expired('gamma', 't1', 'and it sweeps');

# DROP EXTENSION ends it, for good.
$node->safe_psql('gamma', 'DROP EXTENSION worklist');
$node->wait_for_sweepers(0, q{datname = 'gamma'})
  or die 'the sweeper of gamma did not leave';
pass('DROP EXTENSION ends the sweeper of gamma');
sleep 2;
is(sweeper_pid('gamma'), '', 'and no sweeper comes back');

# DROP DATABASE while the database's sweeper runs: it succeeds at once,
# and nothing tries the database again.
my $offset = -s $node->logfile;
my $pid = sweeper_pid('alpha');
ok($pid, "alpha has its sweeper ($pid)");
my $start = time;
my ($rc, $out, $err) = $node->psql('postgres', 'DROP DATABASE alpha');
my $drop = time - $start;
is($rc, 0, sprintf('DROP DATABASE alpha succeeds while its sweeper runs (%.2f s)', $drop));
is($err, '', 'without complaint');
cmp_ok($drop, '<', 4, 'without waiting for the sweeper to time out');
sleep 3;
is($node->sweepers(q{datname IS DISTINCT FROM 'beta' AND datname IS DISTINCT FROM 'gamma'}),
	'0', 'no sweeper for the dropped database');
unlike(substr(slurp_file($node->logfile), $offset), qr/does not exist/,
	'nothing tries to connect to the dropped database');

# Somebody who may not drop beta tries, over and over: the sweeper stays.
$pid = sweeper_pid('beta');
$node->safe_psql('postgres', 'CREATE ROLE intruder LOGIN CREATEDB');
($rc, $out, $err) = $node->psql('postgres',
	join('', map { "DROP DATABASE beta;\nALTER DATABASE beta RENAME TO beta_x;\nCREATE DATABASE copy_$_ TEMPLATE beta;\n" } 1 .. 50),
	extra_params => [ '-U', 'intruder' ], on_error_stop => 0);
like($err, qr/must be owner|permission denied/, 'the intruder is refused');
is(sweeper_pid('beta'), $pid, 'and the sweeper of beta was never stopped');

# A login with no right on beta at all keeps trying to rename it, in a
# loop of subtransactions within one transaction (so that the same
# transaction holds, over and over, the lock such a command takes before
# its ownership check), from two sessions, for four seconds.  The sweeper
# of beta stays, and a task of beta falls due and expires meanwhile.
$node->safe_psql('postgres', 'CREATE ROLE nobody_much LOGIN');
my @loops = map {
	my ($o, $e) = ('', '');
	[ IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'), '-U', 'nobody_much', '-c', q{
			DO $$
			DECLARE t0 timestamptz := clock_timestamp();
			BEGIN
				WHILE clock_timestamp() < t0 + interval '4 seconds' LOOP
					BEGIN
						EXECUTE 'ALTER DATABASE beta RENAME TO beta_x';
					EXCEPTION WHEN insufficient_privilege THEN NULL;
					END;
				END LOOP;
			END $$;
		} ], '>', \$o, '2>', \$e), \$o, \$e ]
} 1 .. 2;
sleep 0.5;
my $ticks = $node->safe_psql('beta', 'SELECT ticks FROM worklist.sweeper_status');
$node->safe_psql('beta', q{
	SET worklist.tenant = 'shared_name';
	SELECT worklist.open_task('renamer', 'c', '{r}', due_at => now() + interval '1 second');
});
sleep 2.5;
is($node->safe_psql('beta',
		q{SELECT state FROM worklist.task WHERE tenant = 'shared_name' AND id = 'renamer'}),
	'expired', 'a task falls due and expires while the renames are tried');
cmp_ok($node->safe_psql('beta', 'SELECT ticks FROM worklist.sweeper_status'), '>', $ticks + 10,
	'the sweeper of beta keeps ticking');
for my $l (@loops)
{
	$l->[0]->finish;
	is(${ $l->[2] }, '', 'a loop of refused renames ran its four seconds');
}
is(sweeper_pid('beta'), $pid, 'and the sweeper of beta was never stopped by them');

# Anybody may run CREATE EXTENSION IF NOT EXISTS of an extension that is
# there (it only says so); in a database without worklist, a hundred of
# them start no sweeper.
$node->safe_psql('postgres', 'CREATE DATABASE plain');
sleep 1;
$node->safe_psql('postgres', q{ALTER SYSTEM SET log_min_messages = debug1; SELECT pg_reload_conf()});
sleep 0.5;
$offset = -s $node->logfile;
($rc, $out, $err) = $node->psql('plain',
	join('', map { "CREATE EXTENSION IF NOT EXISTS plpgsql;\nSELECT pg_sleep(0.02);\n" } 1 .. 100),
	extra_params => [ '-U', 'nobody_much' ]);
is($rc, 0, 'a login with no privilege runs CREATE EXTENSION IF NOT EXISTS plpgsql 100 times');
sleep 1;
$node->safe_psql('postgres', q{ALTER SYSTEM RESET log_min_messages; SELECT pg_reload_conf()});
my $starts = () = substr(slurp_file($node->logfile), $offset) =~ /starting background worker process "worklist sweeper"/g;
cmp_ok($starts, '<=', 1, "and starts no sweeper there ($starts)");

# A role that may create databases makes twenty (more than there are
# sweeper slots) and holds a rename of every one of them in one open
# transaction.  That stops no sweeper of anybody else's, and takes no
# slot: a database that gets the extension meanwhile gets its sweeper.
$node->safe_psql('postgres', 'CREATE ROLE pinner LOGIN CREATEDB');
$node->safe_psql('postgres', join('', map { "CREATE DATABASE pin$_ OWNER pinner;\n" } 1 .. 20));
sleep 1;
my $pinning = $node->background_psql('postgres', on_error_stop => 1,
	extra_params => [ '-U', 'pinner' ]);
$pinning->query_safe('BEGIN');
$pinning->query_safe("ALTER DATABASE pin$_ RENAME TO pinned$_") for 1 .. 20;
$node->safe_psql('postgres', 'CREATE DATABASE late');
$node->safe_psql('late', 'CREATE EXTENSION worklist');
cmp_ok(wait_sweeper('late', 'while twenty renames are held'), '<', 5,
	'a database that gets the extension while twenty renames are held gets its sweeper');
is(sweeper_pid('beta') ne '', 1, 'and the sweeper of beta still runs');
$pinning->query_safe('ROLLBACK');
$pinning->quit;

# ALTER DATABASE ... RENAME: succeeds; the sweeper comes back under the new name.
($rc, $out, $err) = $node->psql('postgres', 'ALTER DATABASE beta RENAME TO beta2');
is($rc, 0, 'ALTER DATABASE RENAME succeeds while the sweeper runs');
wait_sweeper('beta2', 'after RENAME');
overdue_task('beta2', 't2');
wait_expired('beta2', 't2', 'the sweeper is back and sweeps the renamed database');

# ALTER DATABASE ... SET TABLESPACE: the same.
my $dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "CREATE TABLESPACE elsewhere LOCATION '$dir'");
wait_sweeper('beta2', 'before SET TABLESPACE');
($rc, $out, $err) = $node->psql('postgres', 'ALTER DATABASE beta2 SET TABLESPACE elsewhere');
is($rc, 0, 'ALTER DATABASE SET TABLESPACE succeeds while the sweeper runs');
is($err, '', 'without complaint');
wait_sweeper('beta2', 'after SET TABLESPACE');
overdue_task('beta2', 't3');
wait_expired('beta2', 't3', 'and the sweeper is back');

# CREATE DATABASE ... TEMPLATE of a database whose sweeper runs: succeeds;
# the copy has the extension, and gets a sweeper of its own.
$node->safe_psql('beta2', q{
	SET worklist.tenant = 'shared_name';
	SELECT worklist.open_task('t4', 'c', '{r}', due_at => now() + interval '3 seconds');
});
wait_sweeper('beta2', 'before CREATE DATABASE TEMPLATE');
($rc, $out, $err) = $node->psql('postgres', 'CREATE DATABASE delta TEMPLATE beta2');
is($rc, 0, 'CREATE DATABASE ... TEMPLATE succeeds while the sweeper of the template runs');
is($err, '', 'without complaint');
$took = wait_sweeper('delta', 'in the copy');
cmp_ok($took, '<', 5, sprintf('the copy gets a sweeper (%.2f s)', $took));
wait_expired('delta', 't4', 'which sweeps it');
wait_sweeper('beta2', 'after CREATE DATABASE TEMPLATE');
wait_expired('beta2', 't4', 'and the template has its sweeper back');

# A database whose extension is older than the library serves (0.2, two
# releases back): its sweeper waits, says so once, and sweeps after the
# update.
$node->safe_psql('postgres', 'CREATE DATABASE old');
$offset = -s $node->logfile;
$node->safe_psql('old', q{CREATE EXTENSION worklist VERSION '0.2'});
$node->safe_psql('old', q{
	INSERT INTO worklist.task (tenant, id, case_id, roles, due_at)
	VALUES ('shared_name', 't1', 'c', '{r}', now());
});
$node->wait_for_log(qr/worklist sweeper is waiting in database "old": the extension is at version 0\.2, the library at 0\.4/, $offset);
sleep 2;
is($node->safe_psql('old', q{SELECT state FROM worklist.task WHERE id = 't1'}),
	'open', 'nothing is swept while the extension is at 0.2');
$n = () = substr(slurp_file($node->logfile), $offset) =~ /worklist sweeper is waiting in database "old"/g;
is($n, 1, 'one log line says why');
$node->safe_psql('old', 'ALTER EXTENSION worklist UPDATE');
wait_expired('old', 't1', 'after ALTER EXTENSION UPDATE it sweeps');

# With preloading, start_sweeper() returns the launcher's sweeper, asking
# the launcher to start it at once if it is not running.
my $running = sweeper_pid('beta2');
is($node->safe_psql('beta2', 'SELECT worklist.start_sweeper()'), $running,
	"start_sweeper() returns the launcher's sweeper");
$node->safe_psql('postgres', "SELECT pg_terminate_backend($running)");
$node->poll_query_until('postgres', qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $running})
  or die 'sweeper not terminated';
my $started = $node->safe_psql('beta2', 'SELECT worklist.start_sweeper()');
isnt($started, $running, "after it was terminated, start_sweeper() waits for the next one ($started)");
is(sweeper_pid('beta2'), $started, 'which is the one sweeper of the database');

# The launcher dies and comes back: it adopts the sweepers it finds.
my $launcher = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'worklist launcher'});
my $before = sweeper_pid('beta2');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($launcher)");
$node->poll_query_until('postgres',
	qq{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'worklist launcher' AND pid <> $launcher})
  or die 'launcher not restarted';
sleep 2;
is(sweeper_pid('beta2'), $before, 'a new launcher leaves the running sweeper alone (no second one)');

$node->stop;
done_testing();
