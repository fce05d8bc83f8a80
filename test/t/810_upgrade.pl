# The upgrade path: install the first released version (0.1), fill it with
# data through its verbs, ALTER EXTENSION worklist UPDATE, and check that
# the data and the verbs are intact and that the upgraded schema is exactly
# what a fresh install of the current version creates.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'worklist'
worklist.sweep_interval = '1h'
});
$node->start;

# Every object of the schema, described by name and definition (no OIDs),
# one line each, sorted.
my $inventory = q{
WITH nsp AS (SELECT 'worklist'::regnamespace AS oid)
SELECT string_agg(x, E'\n' ORDER BY x) FROM (
	SELECT 'function ' || p.oid::regprocedure::text || ' ' || pg_get_functiondef(p.oid)
	       || ' acl=' || coalesce(p.proacl::text, '') || ' comment=' || coalesce(obj_description(p.oid, 'pg_proc'), '') AS x
	  FROM pg_proc p, nsp WHERE p.pronamespace = nsp.oid AND p.prokind <> 'a'
	UNION ALL
	SELECT 'aggregate ' || a.aggfnoid::regprocedure::text || ' ' || a.aggtransfn::regproc::text || ' '
	       || a.aggfinalfn::regproc::text || ' ' || a.aggtranstype::regtype::text || ' ' || coalesce(a.agginitval, '')
	       || ' acl=' || coalesce(p.proacl::text, '')
	  FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid, nsp WHERE p.pronamespace = nsp.oid
	UNION ALL
	SELECT 'relation ' || c.relname || ' kind=' || c.relkind::text || ' rls=' || c.relrowsecurity
	       || ' options=' || coalesce(c.reloptions::text, '') || ' acl=' || coalesce(c.relacl::text, '')
	       || ' comment=' || coalesce(obj_description(c.oid, 'pg_class'), '')
	  FROM pg_class c, nsp WHERE c.relnamespace = nsp.oid AND c.relkind <> 'i'
	UNION ALL
	SELECT 'column ' || c.relname || ' #' || row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum) || ' '
	       || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' notnull=' || a.attnotnull
	       || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
	       || ' collation=' || coalesce(nullif(a.attcollation, 0)::regcollation::text, '')
	       || ' generated=' || a.attgenerated::text
	  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
	  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum, nsp
	 WHERE c.relnamespace = nsp.oid AND c.relkind IN ('r', 'p', 'v', 'c')
	UNION ALL
	SELECT 'index ' || regexp_replace(pg_get_indexdef(i.indexrelid), ' ON worklist\.', ' ON ')
	  FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid, nsp WHERE c.relnamespace = nsp.oid
	UNION ALL
	SELECT 'constraint ' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
	  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid, nsp WHERE c.relnamespace = nsp.oid
	UNION ALL
	SELECT 'trigger ' || pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
	  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid, nsp
	 WHERE c.relnamespace = nsp.oid AND NOT t.tgisinternal
	UNION ALL
	SELECT 'policy ' || c.relname || ' ' || p.polname || ' ' || p.polcmd::text || ' ' || p.polpermissive
	       || ' ' || coalesce(pg_get_expr(p.polqual, p.polrelid), '') || ' ' || coalesce(pg_get_expr(p.polwithcheck, p.polrelid), '')
	  FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid, nsp WHERE c.relnamespace = nsp.oid
	UNION ALL
	SELECT 'enum ' || t.typname || ' ' || (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
	                                         FROM pg_enum e WHERE e.enumtypid = t.oid)
	  FROM pg_type t, nsp WHERE t.typnamespace = nsp.oid AND t.typtype = 'e'
	UNION ALL
	SELECT 'type ' || t.typname || ' ' || t.typtype::text || ' comment=' || coalesce(obj_description(t.oid, 'pg_type'), '')
	  FROM pg_type t, nsp WHERE t.typnamespace = nsp.oid AND t.typtype <> 'b'
	UNION ALL
	SELECT 'view ' || c.relname || ' ' || pg_get_viewdef(c.oid)
	  FROM pg_class c, nsp WHERE c.relnamespace = nsp.oid AND c.relkind = 'v'
	UNION ALL
	SELECT 'sequence ' || c.relname || ' ' || s.seqtypid::regtype::text || ' ' || s.seqincrement || ' ' || s.seqmin
	       || ' ' || s.seqmax || ' ' || s.seqcache || ' ' || s.seqcycle
	  FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid, nsp WHERE c.relnamespace = nsp.oid
	UNION ALL
	SELECT 'event trigger ' || e.evtname || ' ' || e.evtevent || ' ' || coalesce(e.evttags::text, '')
	       || ' ' || e.evtfoid::regprocedure::text || ' ' || e.evtenabled::text
	  FROM pg_event_trigger e
	UNION ALL
	SELECT 'dumped ' || x::regclass::text
	  FROM pg_extension e, unnest(e.extconfig) x WHERE e.extname = 'worklist'
	UNION ALL
	SELECT 'member ' || pg_describe_object(d.classid, d.objid, d.objsubid)
	  FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
	 WHERE e.extname = 'worklist' AND d.deptype = 'e'
	UNION ALL
	SELECT 'schema acl=' || coalesce(n.nspacl::text, '') FROM pg_namespace n, nsp WHERE n.oid = nsp.oid
) s};

# The current version, fresh.
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION worklist');
my $current = $node->safe_psql('fresh', q{SELECT extversion FROM pg_extension WHERE extname = 'worklist'});
my $fresh = $node->safe_psql('fresh', $inventory);

# The first release, filled through its own verbs.
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{CREATE EXTENSION worklist VERSION '0.1'});
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'worklist'}),
	'0.1', 'version 0.1 installs');
$node->safe_psql('old', q{
	CREATE ROLE upgrade_team;
	SET worklist.tenant = 'up';
	SELECT worklist.grant_tenant('up', 'upgrade_team');
	SELECT worklist.open_task('t1', 'c1', '{r}', payload => '{"n": 1}');
	SELECT worklist.open_task('t2', 'c1', '{r}', due_at => now() - interval '1 minute');
	SELECT worklist.open_task('t3', 'c2', '{r}', expiry_policy => 'escalate', escalation_roles => '{lead}');
	SELECT worklist.claim('t1', 'ann', '{r}');
	SELECT worklist.complete('t1', 'ann', '{"ok": true}');
	SELECT worklist.sweep();
	SELECT worklist.escalate('t3');
	SELECT worklist.open_ticket('k1', 'req', 'a ticket', authorities => '{lead}');
	SELECT worklist.report('k1', 'agent', 'working', at => '2030-01-01 10:00');
	SELECT worklist.report('k1', 'other', 'abandoned', reason => 'busy', at => '2030-01-01 10:05');
	SELECT worklist.claim_run('p', 's', 'r', 'w1', '1 hour');
	SELECT worklist.write_checkpoint('p', 's', 'r', 'c1', '{"step": 1}',
		fence => (SELECT fence FROM worklist.run_claim WHERE run = 'r'),
		run_created_at => '2030-01-01');
});
my $snapshot = q{
	SELECT (SELECT string_agg(id || ':' || state || ':' || coalesce(decided_by, '-') || ':' || coalesce(decision::text, '-'), ','
	                          ORDER BY id) FROM worklist.task)
	    || ' | ' || (SELECT string_agg(ticket || ':' || seq || ':' || actor || ':' || value, ',' ORDER BY ticket, seq)
	                  FROM worklist.ticket_event)
	    || ' | ' || (SELECT string_agg(checkpoint_id || ':' || body::text, ',') FROM worklist.run_checkpoint)
	    || ' | ' || (SELECT string_agg(holder || ':' || fence, ',') FROM worklist.run_claim)
	    || ' | ' || (SELECT string_agg(tenant || ':' || role::text, ',') FROM worklist.tenant_binding)};
my $before = $node->safe_psql('old', $snapshot);
my $fence_before = $node->safe_psql('old', q{SELECT max(fence) FROM worklist.run_claim});

$node->safe_psql('old', 'ALTER EXTENSION worklist UPDATE');
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'worklist'}),
	$current, "ALTER EXTENSION UPDATE reaches the current version ($current)");
is($node->safe_psql('old', $snapshot), $before, 'every row survived the upgrade');
is($node->safe_psql('old', $inventory), $fresh,
	'the upgraded schema is exactly a fresh install of the current version');

# The verbs work on the upgraded data.
is($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT state || ':' || live_actors::text FROM worklist.ticket_state('k1', '2030-01-01 11:00')}),
	'working:{agent}', 'the fold of an old log');
is($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT holder FROM worklist.claim('t3', 'boss', '{lead}')}),
	'boss', 'an escalated task claimed by its widened audience');
cmp_ok($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT fence FROM worklist.claim_run('p', 's', 'r', 'w2', '1 hour', now() + interval '2 hours')}),
	'>', $fence_before, 'a reclaim after the upgrade mints a higher fence');
is($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT count(*) FROM worklist.list_durable_runs('p') p, unnest(p.entries)}),
	'1', 'the run is listed');

$node->stop;
done_testing();
