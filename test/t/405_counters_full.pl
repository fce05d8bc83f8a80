# The per-tenant counters live in a shared table of fixed size
# (worklist.max_tenant_counters).  When it is full, counters of further
# tenants read NULL -- never a wrong number -- and the log says so once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('counters_full');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'worklist'
worklist.max_tenant_counters = 16
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION worklist');

# One claim in each of 200 tenants: more than the table holds.
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
my $lines = () = $log =~ /worklist counters are full/g;
is($lines, 1, 'the log says so once');

$node->stop;
done_testing();
