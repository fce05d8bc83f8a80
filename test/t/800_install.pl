# Install hardening: objects somebody created in advance under the
# extension's names make CREATE EXTENSION fail instead of being adopted;
# DROP EXTENSION leaves nothing behind, and a second CREATE works.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('install');

# Everything a database holds, as one sorted text: compared before and after.
my $inventory = q{
	SELECT string_agg(x, E'\n' ORDER BY x) FROM (
		SELECT 'class ' || c.oid::regclass::text AS x FROM pg_class c
		 WHERE c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
		   AND c.relnamespace::regnamespace::text NOT LIKE 'pg_toast%'
		UNION ALL SELECT 'proc ' || p.oid::regprocedure::text FROM pg_proc p
		 WHERE p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
		UNION ALL SELECT 'type ' || t.oid::regtype::text FROM pg_type t
		 WHERE t.typnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
		   AND t.typnamespace::regnamespace::text NOT LIKE 'pg_toast%'
		UNION ALL SELECT 'schema ' || nspname FROM pg_namespace
		UNION ALL SELECT 'policy ' || polname FROM pg_policy
		UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger WHERE NOT tgisinternal
		UNION ALL SELECT 'extension ' || extname FROM pg_extension
	) s};

my $before = $node->safe_psql('postgres', $inventory);
$node->safe_psql('postgres', 'CREATE EXTENSION worklist');
isnt($node->safe_psql('postgres', $inventory), $before, 'the extension adds objects');
$node->safe_psql('postgres', 'DROP EXTENSION worklist');
is($node->safe_psql('postgres', $inventory), $before, 'DROP EXTENSION leaves nothing behind');
$node->safe_psql('postgres', 'CREATE EXTENSION worklist');
$node->safe_psql('postgres', 'DROP EXTENSION worklist');
is($node->safe_psql('postgres', $inventory), $before, 'nor does a second create and drop');

# A schema of the extension's name created in advance, by anybody, holding
# a lookalike of a verb: CREATE EXTENSION fails and adopts nothing.
$node->safe_psql('postgres', q{
	CREATE ROLE mallory;
	CREATE SCHEMA worklist AUTHORIZATION mallory;
	CREATE FUNCTION worklist.claim(text, text, text[]) RETURNS text
		LANGUAGE sql AS $$SELECT 'stolen'$$;
	ALTER FUNCTION worklist.claim(text, text, text[]) OWNER TO mallory;
});
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'CREATE EXTENSION worklist');
isnt($ret, 0, 'CREATE EXTENSION fails over a schema made in advance');
like($stderr, qr/schema "worklist" already exists/, 'and says why');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_extension WHERE extname = 'worklist'}),
	'0', 'the extension was not created');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_depend WHERE deptype = 'e' AND refobjid = 'worklist.claim(text,text,text[])'::regprocedure}),
	'0', 'the lookalike was not adopted');

# Even an empty schema of that name owned by the installer is refused.
$node->safe_psql('postgres', 'DROP SCHEMA worklist CASCADE; CREATE SCHEMA worklist');
($ret, $stdout, $stderr) = $node->psql('postgres', 'CREATE EXTENSION worklist');
isnt($ret, 0, 'an empty schema made in advance is refused too');
$node->safe_psql('postgres', 'DROP SCHEMA worklist');
$node->safe_psql('postgres', 'CREATE EXTENSION worklist');
pass('with the schema gone, CREATE EXTENSION works');

$node->stop;
done_testing();
