# A tenant setting that is not valid in the database encoding.  SQL cannot
# produce one (string literals are checked), but a setting passed in the
# connection's startup packet (PGOPTIONS, "options" in a connection string)
# or written in postgresql.conf reaches the server unchecked.  Every verb
# must refuse it like any other malformed tenant (22023) instead of storing
# it: a row whose tenant is not valid text cannot be read back, is dumped
# as invalid text, and breaks the restore.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('tenant_encoding',
	init => { extra => [ '--encoding=UTF8', '--locale=C' ] }, conf => qq{
worklist.sweep_interval = '1h'
});
$node->safe_psql('postgres', 'CREATE EXTENSION worklist; CREATE ROLE enc_reader');
$node->safe_psql('postgres', 'GRANT SELECT ON ALL TABLES IN SCHEMA worklist TO enc_reader');
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'enc';
	SELECT worklist.open_task('t1', 'c', '{r}');
});

# "bad", two bytes that are not UTF-8, then "x"
my $bad = "-c worklist.tenant=bad\xff\xfex";

my ($rc, $out, $err);
{
	local $ENV{PGOPTIONS} = $bad;
	($rc, $out, $err) = $node->psql('postgres', q{
		SELECT octet_length(current_setting('worklist.tenant'));
		SELECT worklist.open_task('t2', 'c', '{r}');
		\echo :LAST_ERROR_SQLSTATE
		SELECT worklist.write_checkpoint('p', 's', 'r', 'c1', '{}');
		\echo :LAST_ERROR_SQLSTATE
		SELECT worklist.open_ticket('k1', 'req', 'title');
		\echo :LAST_ERROR_SQLSTATE
		SELECT worklist.claim_run('p', 's', 'r', 'h', '1 hour');
		\echo :LAST_ERROR_SQLSTATE
		SELECT worklist.open_count();
		\echo :LAST_ERROR_SQLSTATE
	}, on_error_stop => 0);
}
is($out, "6\n22023\n22023\n22023\n22023\n22023",
	'the setting arrives as given, and every verb refuses it with 22023');
like($err, qr/setting "worklist.tenant" must be valid in the database encoding/,
	'naming the setting');

{
	local $ENV{PGOPTIONS} = $bad;
	is($node->safe_psql('postgres', 'SELECT worklist.visible_tenant() IS NULL'), 't',
		'row-level security sees no tenant');
	is($node->safe_psql('postgres', 'SET ROLE enc_reader; SELECT count(*) FROM worklist.task'), '0',
		'so a reader granted SELECT reads no row');
}

is($node->safe_psql('postgres', q{
	SELECT count(*) FROM worklist.task WHERE tenant <> 'enc';
	SELECT count(*) FROM worklist.run;
	SELECT count(*) FROM worklist.ticket;
}), "0\n0\n0", 'no row was stored under it');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM worklist.task WHERE convert_to(tenant, 'UTF8') IS NOT NULL;
}), '1', 'every stored tenant is valid text');
$node->command_ok([ 'pg_dump', '-d', $node->connstr('postgres'), '-f', $node->basedir . '/dump.sql' ],
	'the database dumps');

$node->stop;
done_testing();
