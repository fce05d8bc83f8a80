# The counters of stats() live in a shared table of fixed size
# (worklist.max_tenant_counters), keyed by database and tenant.  Only
# tenants a caller may reach are counted, so a caller cannot fill the table
# by naming tenants it makes up; when real tenants fill it, counters of
# further tenants read NULL -- never a wrong number -- and the log says so
# once.  The same tenant name in two databases has two sets of counters.
use strict;
use warnings;
use WorklistNode qw(wait_for);
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use JSON::PP qw(decode_json);
use Time::HiRes qw(time sleep);



my $node = WorklistNode->create('counters_full', conf => qq{
worklist.max_tenant_counters = 16
worklist.sweep_interval = '1h'
}, extension => 'postgres');

# A role bound to nothing tries claims, conflicts and stale fences in 200
# tenants it makes up: each is refused before anything is counted.
$node->safe_psql('postgres', q{
	CREATE ROLE stranger LOGIN;
	SET worklist.tenant = 'real';
	SELECT worklist.open_task('t', 'c', '{r}');
	SELECT worklist.claim('t', 'a', '{r}');
});
my ($rc, $out, $err) = $node->psql('postgres', q{
	DO $$
	DECLARE
		refused int := 0;
	BEGIN
		FOR i IN 1..200 LOOP
			PERFORM set_config('worklist.tenant', 'made_up_' || i, false);
			BEGIN
				PERFORM worklist.claim('t', 'b', '{r}');
			EXCEPTION WHEN insufficient_privilege THEN
				refused := refused + 1;
			END;
			BEGIN
				PERFORM worklist.write_checkpoint('p', 's', 'r', 'c', '{}', fence => 1);
			EXCEPTION WHEN insufficient_privilege THEN
				refused := refused + 1;
			END;
		END LOOP;
		RAISE NOTICE 'refused %', refused;
	END $$;
}, extra_params => [ '-U', 'stranger' ]);
like($err, qr/refused 400/, 'every call in a made-up tenant is refused (42501)');
($rc, $out, $err) = $node->psql('postgres', q{
	SET worklist.tenant = 'real';
	SELECT worklist.claim('t', 'b', '{r}');
});
like($err, qr/already claimed|claimed by/, 'a real conflict in a real tenant');
is($node->safe_psql('postgres',
		q{SET worklist.tenant = 'real'; SELECT worklist.stats()->'counters'->>'claims' || '/' || (worklist.stats()->'counters'->>'claim_conflicts')}),
	'1/1', 'the real tenant is counted: the made-up ones took no room');
unlike(slurp_file($node->logfile), qr/tenant table is full/, 'and the table is not full');

# The same tenant name in another database counts apart.
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', q{
	CREATE EXTENSION worklist;
	SET worklist.tenant = 'real';
	SELECT worklist.open_task('t', 'c', '{r}');
	SELECT worklist.open_task('u', 'c', '{r}');
	SELECT worklist.claim('t', 'x', '{r}');
	SELECT worklist.claim('u', 'x', '{r}');
});
is($node->safe_psql('other',
		q{SET worklist.tenant = 'real'; SELECT worklist.stats()->'counters'->>'claims' || '/' || (worklist.stats()->'counters'->>'claim_conflicts')}),
	'2/0', 'tenant "real" of database "other" sees its own counts only');
is($node->safe_psql('postgres',
		q{SET worklist.tenant = 'real'; SELECT worklist.stats()->'counters'->>'claims' || '/' || (worklist.stats()->'counters'->>'claim_conflicts')}),
	'1/1', 'and tenant "real" of database "postgres" its own');

# A database where anybody may make tenants up (worklist.open_tenants, a
# setting for development) does not fill the table that every database
# shares: tenants reached only through it take no room.  Their counters
# read NULL; the notifications of those that have a channel are sent at
# their own commit.
$node->safe_psql('postgres', q{
	CREATE DATABASE dev;
	ALTER DATABASE dev SET worklist.open_tenants = on;
});
$node->safe_psql('dev', 'CREATE EXTENSION worklist');
($rc, $out, $err) = $node->psql('dev', q{
	DO $$
	BEGIN
		FOR i IN 1..100 LOOP
			PERFORM set_config('worklist.tenant', 'junk_' || i, false);
			PERFORM worklist.open_task('t', 'c', '{r}');
			PERFORM worklist.claim('t', 'a', '{r}');
		END LOOP;
	END $$;
}, extra_params => [ '-U', 'stranger' ]);
is($rc, 0, 'a stranger makes 100 tenants up where tenancy is open');
is($node->safe_psql('dev',
		q{SET worklist.tenant = 'junk_1'; SELECT coalesce(worklist.stats()->'counters'->>'claims', 'null')}),
	'null', 'their counters are not kept');
unlike(slurp_file($node->logfile), qr/tenant table is full/, 'and the table is not full');
is($node->safe_psql('postgres', q{
		SET worklist.tenant = 'fresh';
		SELECT count(*) FROM worklist.open_task('t', 'c', '{r}');
		SELECT count(*) FROM worklist.claim('t', 'a', '{r}');
		SELECT worklist.stats()->'counters'->>'claims';
	}), "1\n1\n1", 'a new tenant of another database is counted');
my $junk_channel = $node->safe_psql('dev', q{SET worklist.tenant = 'junk_2'; SELECT worklist.channel()});
my $junk = $node->listener(db => 'dev', seconds => 60, channels => [ $junk_channel ]);
$node->safe_psql('dev', q{
	SET worklist.tenant = 'junk_2';
	SELECT count(*) FROM worklist.open_task('t2', 'c', '{r}');
}, extra_params => [ '-U', 'stranger' ]);
like(join(' ', map { $_->{payload} } @{ wait_for($junk, 1) }), qr/"opened": 1/,
	'an open tenant with a channel is notified at its commit');
$junk->{h}->kill_kill;

# Claim timeouts count when the sweep that released them commits.
SKIP:
{
	skip 'open_task takes no claim_timeout in this build', 2
	  unless $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_proc WHERE proname = 'open_task' AND 'claim_timeout' = ANY (proargnames)})
	  eq '1';
	$node->safe_psql('postgres', q{
		SET worklist.tenant = 'timeouts';
		SELECT worklist.open_task('t1', 'c', '{r}', claim_timeout => '1 minute');
		SELECT worklist.open_task('t2', 'c', '{r}', claim_timeout => '1 minute');
		SELECT worklist.claim('t1', 'a', '{r}');
		SELECT worklist.claim('t2', 'a', '{r}');
		BEGIN;
		SELECT claims_released FROM worklist.sweep(now() + interval '2 minutes');
		ROLLBACK;
	});
	is($node->safe_psql('postgres',
			q{SET worklist.tenant = 'timeouts'; SELECT worklist.stats()->'counters'->>'claim_timeouts'}),
		'0', 'a rolled-back sweep counts no claim timeout');
	my $released = $node->safe_psql('postgres', q{
		SET worklist.tenant = 'timeouts';
		SELECT claims_released FROM worklist.sweep(now() + interval '2 minutes');
	});
	is($node->safe_psql('postgres',
			q{SET worklist.tenant = 'timeouts'; SELECT worklist.stats()->'counters'->>'claim_timeouts'}),
		$released, "a committed one counts what it released ($released)");
}

# One claim in each of 200 real tenants (the superuser reaches them all):
# more than the table holds.
$node->safe_psql('postgres', q{
	DO $$
	BEGIN
		FOR i IN 1..200 LOOP
			PERFORM set_config('worklist.tenant', 'c' || i, true);
			PERFORM worklist.open_task('t', 'c', '{r}');
			PERFORM worklist.claim('t', 'a', '{r}');
		END LOOP;
	END $$;
});
is($node->safe_psql('postgres',
		q{SET worklist.tenant = 'c1'; SELECT worklist.stats()->'counters'->>'claims'}),
	'1', 'the first tenants are counted');
is($node->safe_psql('postgres',
		q{SET worklist.tenant = 'c200'; SELECT worklist.stats()->'counters'->>'claims'}),
	'', 'a tenant the table had no room for reads NULL, not 0');
my $log = slurp_file($node->logfile);
my $lines = () = $log =~ /worklist tenant table is full/g;
is($lines, 1, 'the log says so once');

# A tenant the table has no room for is still notified: its transactions
# send their own notifications at commit.
my $channel = $node->safe_psql('postgres', q{SET worklist.tenant = 'c199'; SELECT worklist.channel()});
my $full = $node->listener(db => 'postgres', seconds => 60, channels => [ $channel ]);
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'c199';
	SELECT count(*) FROM worklist.open_task('t2', 'c', '{r}');
	SELECT count(*) FROM worklist.claim('t2', 'a', '{r}');
});
my $got = join(' ', map { $_->{payload} } @{ wait_for($full, 2) });
like($got, qr/"opened": 1/, 'a tenant with no room in the table is notified of what it opened');
like($got, qr/"claimed": 1/, 'and of what it claimed');
$full->{h}->kill_kill;

$node->stop;
done_testing();
