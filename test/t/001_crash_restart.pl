# Data written through the extension survives an immediate (crash) stop of
# a server that preloads the library.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('crash');

$node->safe_psql('postgres', 'CREATE EXTENSION worklist');
$node->safe_psql('postgres', q{
	CREATE ROLE crash_team;
	SELECT worklist.grant_tenant('crash', 'crash_team');
});
is($node->safe_psql('postgres', 'SHOW worklist.tenant'), 'default',
	'tenant setting registered by the preloaded library');

$node->stop('immediate');
$node->start;

is($node->safe_psql('postgres',
		q{SELECT string_agg(tenant || ':' || role, ',') FROM worklist.tenant_binding}),
	'crash:crash_team', 'binding survived the crash');

$node->stop;
done_testing();
