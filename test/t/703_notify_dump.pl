# Channel names survive pg_dump and restore (the secrets are dumped with
# the extension's data), into another database and into another cluster;
# erase_tenant() keeps them too.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('notify_dump', conf => qq{
worklist.sweep_interval = '1h'
}, extension => 'postgres');
my $names = q{
	SELECT string_agg(t || '=' || (SELECT worklist.channel() FROM (SELECT set_config('worklist.tenant', t, true)) s),
	                  ',' ORDER BY t)
	  FROM unnest('{acme,beta,gamma}'::text[]) t};
my $before = $node->safe_psql('postgres', "BEGIN; $names; COMMIT;");
$node->safe_psql('postgres', q{SET worklist.tenant = 'beta'; SELECT worklist.rotate_channel()});
$before = $node->safe_psql('postgres', "BEGIN; $names; COMMIT;");
like($before, qr/^acme=worklist_[0-9a-f]{32},beta=worklist_[0-9a-f]{32},gamma=worklist_[0-9a-f]{32}$/,
	'three tenants with channels (one rotated)');

$node->safe_psql('postgres', q{SET worklist.tenant = 'acme'; SELECT worklist.erase_tenant()});
is($node->safe_psql('postgres', "BEGIN; $names; COMMIT;"), $before, 'erase_tenant() keeps the channel');

my $dump = $node->basedir . '/notify.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), $dump ], 'pg_restore');
is($node->safe_psql('restored', "BEGIN; $names; COMMIT;"), $before,
	'a restore into another database keeps every channel name');

my $other = WorklistNode->create('notify_dump_other', preload => 0);
$other->safe_psql('postgres', 'CREATE DATABASE restored');
$other->command_ok([ 'pg_restore', '-d', $other->connstr('restored'), $dump ],
	'pg_restore into another cluster');
is($other->safe_psql('restored', "BEGIN; $names; COMMIT;"), $before,
	'and into another cluster');

$other->stop;
$node->stop;
done_testing();
