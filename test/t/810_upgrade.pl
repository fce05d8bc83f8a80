# The upgrade path.  The first released version (0.1), installed and
# walked up the chain to the current version, is exactly what a fresh
# install creates.  A real 0.2 database -- the data its own verbs wrote
# (test/t/data/worklist-0.2-data.sql) -- updated in place keeps every row
# and every fence, its bindings become service bindings (what they meant
# in 0.2), its unbound tenants stay reachable only through
# worklist.open_tenants, and the verbs work on it.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('upgrade', conf => qq{
worklist.sweep_interval = '1h'
});

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
	SELECT 'type ' || t.typname || ' ' || t.typtype::text || ' acl=' || coalesce(t.typacl::text, '') || ' comment=' || coalesce(obj_description(t.oid, 'pg_type'), '')
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

# The chain from the first release.
$node->safe_psql('postgres', 'CREATE DATABASE chain');
$node->safe_psql('chain', q{CREATE EXTENSION worklist VERSION '0.1'});
is($node->safe_psql('chain', q{SELECT extversion FROM pg_extension WHERE extname = 'worklist'}),
	'0.1', 'version 0.1 installs');
$node->safe_psql('chain', 'ALTER EXTENSION worklist UPDATE');
is($node->safe_psql('chain', q{SELECT extversion FROM pg_extension WHERE extname = 'worklist'}),
	$current, "0.1 walks up to the current version ($current)");
is($node->safe_psql('chain', $inventory), $fresh,
	'0.1 updated is exactly a fresh install of the current version');

# A 0.2 database with the data 0.2's verbs wrote.
$node->safe_psql('postgres', q{
	CREATE ROLE upgrade_team;
	CREATE ROLE upgrade_lead;
	CREATE ROLE upgrade_member LOGIN IN ROLE upgrade_team;
	CREATE ROLE upgrade_stranger LOGIN;
	CREATE DATABASE old;
});
$node->safe_psql('old', q{CREATE EXTENSION worklist VERSION '0.2'});
$node->command_ok(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('old'),
	'-f', 'test/t/data/worklist-0.2-data.sql'], 'the 0.2 data restores into a 0.2 install');
my $snapshot = q{
	SELECT (SELECT string_agg(tenant || '/' || id || ':' || state || ':' || coalesce(holder, '-') || ':'
	                          || coalesce(decided_by, '-') || ':' || coalesce(decision::text, '-'), ','
	                          ORDER BY tenant, id) FROM worklist.task)
	    || ' | ' || (SELECT string_agg(ticket || ':' || seq || ':' || actor || ':' || value, ',' ORDER BY ticket, seq)
	                  FROM worklist.ticket_event)
	    || ' | ' || (SELECT string_agg(id || ':' || state || ':' || encode(fold_state, 'hex'), ',' ORDER BY id)
	                  FROM worklist.ticket)
	    || ' | ' || (SELECT string_agg(run || '/' || checkpoint_id || ':' || body::text, ',' ORDER BY run, checkpoint_id)
	                  FROM worklist.run_checkpoint)
	    || ' | ' || (SELECT string_agg(holder || ':' || fence, ',') FROM worklist.run_claim)
	    || ' | ' || (SELECT string_agg(tenant || ':' || role::text, ',' ORDER BY role::text) FROM worklist.tenant_binding)};
my ($rc0, $out0, $err0) = $node->psql('old', q{SET worklist.tenant = 'up'; SELECT worklist.open_count()});
like($err0, qr/extension "worklist" is at version 0\.2, but its library is version $current/,
	'before the update, the verbs ask for it instead of failing on the old schema');
my $before = $node->safe_psql('old', $snapshot);
my $fence_before = $node->safe_psql('old', q{SELECT last_value FROM worklist.fence_seq});

$node->safe_psql('old', 'ALTER EXTENSION worklist UPDATE');
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'worklist'}),
	$current, "ALTER EXTENSION UPDATE reaches the current version ($current)");
is($node->safe_psql('old', $snapshot), $before, 'every row survived the upgrade');
is($node->safe_psql('old', $inventory), $fresh,
	'the upgraded schema is exactly a fresh install of the current version');
is($node->safe_psql('old', q{SELECT string_agg(tenant || ':' || role::text || ':' || kind, ',' ORDER BY role::text)
                                FROM worklist.tenant_binding}),
	'up:upgrade_lead:service,up:upgrade_team:service', 'every 0.2 binding is a service binding');
is($node->safe_psql('old', q{SELECT string_agg(id || ':' || coalesce(last_event_at::text, '-'), ',' ORDER BY id)
                                FROM worklist.ticket}),
	'k1:2030-01-01 13:00:00+00,k2:2030-01-01 11:00:00+00', 'tickets know the instant of their latest event');

# Members of a bound role act as service: another actor, another clock.
my ($rc, $out, $err) = $node->psql('old', q{
	SET worklist.tenant = 'up';
	SELECT holder FROM worklist.claim('t4', 'somebody', '{r}');
	SELECT holder FROM worklist.claim_run('p', 's', 'member', 'agent-9', '1 hour', now() + interval '1 day');
}, extra_params => ['-U', 'upgrade_member']);
is("$rc|$out", "0|somebody\nagent-9", 'a member of a 0.2 binding acts as service') or diag($err);
# An unbound tenant is closed, unless the operator opens unbound tenants.
($rc, $out, $err) = $node->psql('old', q{SET worklist.tenant = 'open'; SELECT id FROM worklist.task('o1')},
	extra_params => ['-U', 'upgrade_stranger']);
like($err, qr/permission denied for tenant "open"/, 'an unbound 0.2 tenant is closed after the upgrade');
$node->append_conf('postgresql.conf', 'worklist.open_tenants = on');
$node->reload;
($rc, $out, $err) = $node->psql('old', q{SET worklist.tenant = 'open'; SELECT id FROM worklist.task('o1')},
	extra_params => ['-U', 'upgrade_stranger']);
is($out, 'o1', 'and open again with worklist.open_tenants = on') or diag($err);

# The verbs work on the upgraded data: old fold states, old leases.
is($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT state || ':' || live_actors::text || ':' || escalation_rung FROM worklist.ticket_state('k1', '2030-01-01 13:30')}),
	'working:{agent}:1', 'the fold of an old log');
is($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT state || ':' || live_actors::text FROM worklist.report('k1', 'agent', 'blocked', at => '2030-01-01 14:00')}),
	'blocked:{agent}', 'an old stored fold state takes a new event');
is($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT holder FROM worklist.claim('t3', 'boss', '{lead}')}),
	'boss', 'an escalated task claimed by its widened audience');
is($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT worklist.complete('t5', 'bob', '{"ok": true}')}),
	't', 'an old claim completed');
cmp_ok($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT fence FROM worklist.claim_run('p', 's', 'r', 'w2', '1 hour', '2031-01-01')}),
	'>', $fence_before, 'a reclaim after the upgrade mints a higher fence');
is($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT count(*) FROM worklist.list_durable_runs('p') p, unnest(p.entries)}),
	'2', 'the runs are listed');
$node->safe_psql('old', q{SET worklist.tenant = 'up'; SELECT worklist.set_retention(tasks => '1 day')});
is($node->safe_psql('old', q{
	SET worklist.tenant = 'up';
	SELECT purged FROM worklist.sweep(now() + interval '10 years')}),
	'3', 'retention purges the settled tasks, old ones included');

# A 0.3 database with the data 0.3's verbs wrote.  This library serves the
# 0.3 schema until the update: the verbs work on it meanwhile.
$node->safe_psql('postgres', q{
	CREATE ROLE upgrade_admin;
	CREATE DATABASE old03;
});
$node->safe_psql('old03', q{CREATE EXTENSION worklist VERSION '0.3'});
$node->command_ok(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('old03'),
	'-f', 'test/t/data/worklist-0.3-data.sql'], 'the 0.3 data restores into a 0.3 install');
my $snapshot03 = $snapshot . q{
	    || ' | ' || (SELECT string_agg(tenant || ':' || coalesce(tasks::text, '-') || ':' || coalesce(runs::text, '-'), ',')
	                  FROM worklist.retention_policy)
	    || ' | ' || (SELECT string_agg(tenant || ':' || role::text || ':' || kind, ',' ORDER BY role::text)
	                  FROM worklist.tenant_binding)
	    || ' | ' || (SELECT string_agg(tenant || ':' || encode(secret, 'hex'), ',') FROM worklist.tenant_channel)};
my $before03 = $node->safe_psql('old03', $snapshot03);
my $fence03 = $node->safe_psql('old03', q{SELECT last_value FROM worklist.fence_seq});
is($node->safe_psql('old03', q{
	SET worklist.tenant = 'up';
	SELECT worklist.open_count() || ':' || (worklist.task('t5')).holder}),
	'4:bob', 'before the update, the verbs read the 0.3 schema');
$node->safe_psql('old03', 'ALTER EXTENSION worklist UPDATE');
is($node->safe_psql('old03', q{SELECT extversion FROM pg_extension WHERE extname = 'worklist'}),
	$current, "0.3 updates to the current version ($current)");
is($node->safe_psql('old03', $snapshot03), $before03, 'every 0.3 row survived the upgrade');
is($node->safe_psql('old03', $inventory), $fresh,
	'the upgraded 0.3 schema is exactly a fresh install of the current version');
# Each 0.3 task has its history from the update: event 1 opened at its
# created_at and, if settled, event 2 under its state at its settled_at,
# with no login and detail {"migrated": true}.
is($node->safe_psql('old03', q{
	SELECT count(*) FILTER (WHERE t.state IN ('completed', 'expired', 'withdrawn')) || ' settled of ' || count(*)
	  FROM worklist.task t}),
	$node->safe_psql('old03', q{
	SELECT count(*) FILTER (WHERE seq = 2) || ' settled of ' || count(*) FILTER (WHERE seq = 1)
	  FROM worklist.task_log}),
	'one opened event per task, one settling event per settled task');
is($node->safe_psql('old03', q{
	SELECT count(*) FROM worklist.task t
	 WHERE (SELECT array_agg(l.seq || ':' || l.event || '@' || l.at::text || ':' || coalesce(l.actor, '-')
	                         || ':' || coalesce(l.login, '-') || ':' || l.detail::text ORDER BY l.seq)
	          FROM worklist.task_log l WHERE l.tenant = t.tenant AND l.task_id = t.id)
	       IS DISTINCT FROM
	       ARRAY['1:opened@' || t.created_at::text || ':-:-:{"migrated": true}']
	       || CASE WHEN t.state IN ('completed', 'expired', 'withdrawn') THEN
	            ARRAY['2:' || t.state || '@' || t.settled_at::text || ':'
	                  || CASE WHEN t.state = 'completed' THEN coalesce(t.decided_by, '-') ELSE '-' END
	                  || ':-:{"migrated": true}'] ELSE '{}'::text[] END}),
	'0', 'every 0.3 task has exactly its migrated history');
# The claims of 0.3 moved beside their tasks (worklist.task_claim): held(),
# claims() and the claim timeouts find them; 0.3's escalated task has an
# escalated_at.
is($node->safe_psql('old03', q{
	SET worklist.tenant = 'up';
	SELECT string_agg(id, ',' ORDER BY claimed_at) FROM worklist.held('bob')}),
	't5,t6', "bob's 0.3 claims are in his inbox after the update");
is($node->safe_psql('old03', q{
	SET worklist.tenant = 'up';
	SELECT string_agg(id || ':' || holder, ',' ORDER BY claimed_at, id) FROM worklist.claims()}),
	't5:bob,t3:boss,t6:bob', 'claims() lists every 0.3 claim, the escalated one included');
is($node->safe_psql('old03', q{
	SELECT count(*) FROM worklist.task t JOIN worklist.task_claim c ON c.tenant = t.tenant AND c.task_id = t.id
	 WHERE (c.holder, c.claimed_at, c.claim_expires_at) IS NOT DISTINCT FROM (t.holder, t.claimed_at, t.claim_expires_at)
	   AND t.claim_expires_at IS NOT NULL}),
	'1', "t6's claim timeout moved with its claim");
is($node->safe_psql('old03', q{
	SELECT string_agg(id || ':' || (escalated_at = created_at)::text, ',') FROM worklist.task
	 WHERE escalated_at IS NOT NULL}),
	't3:true', "0.3's escalated task is escalated since its created_at");
is($node->safe_psql('old03', q{
	SET worklist.tenant = 'up';
	SELECT string_agg(id, ',') FROM worklist.queue('{r,lead}')}),
	't4', 'the queue after the update: the open task, not the held ones');
my $settled03 = $node->safe_psql('old03', q{
	SELECT string_agg(l.task_id || ':' || l.event, ',' ORDER BY l.tenant, l.task_id)
	  FROM worklist.task_log l WHERE l.seq = 2});
isnt($settled03, '', "the 0.3 fixture's settled tasks have a settling event ($settled03)");
is($node->safe_psql('old03', q{
	SET worklist.tenant = 'up';
	SELECT count(*) || ':' || string_agg(event, ',' ORDER BY seq) FROM worklist.task_history('t6')}),
	'1:opened', 'a pending 0.3 task has its opened event only');
is($node->safe_psql('old03', q{
	SET worklist.tenant = 'up';
	SELECT worklist.complete('t6', 'bob', '{"ok": 1}')}),
	't', 'a 0.3 claim with a timeout completed after the upgrade');
is($node->safe_psql('old03', q{
	SET worklist.tenant = 'up';
	SELECT string_agg(seq || ':' || event || ':' || coalesce(actor, '-') || ':' || coalesce((login = current_user)::text, '-'), ','
	                  ORDER BY seq) FROM worklist.task_history('t6')}),
	'1:opened:-:-,2:completed:bob:true', 'its history goes on after the update, numbered after the migrated event');
# Runs of 0.3 are not queued: claim_next_run hands none of them out,
# until one is written or claimed again.
is($node->safe_psql('old03', q{SELECT count(*) || ':' || count(*) FILTER (WHERE queued) FROM worklist.run}),
	$node->safe_psql('old03', q{SELECT count(*) FROM worklist.run}) . ':0', 'no 0.3 run is queued');
is($node->safe_psql('old03', q{
	SET worklist.tenant = 'up';
	SELECT count(c.run) FROM (SELECT DISTINCT project FROM worklist.run WHERE tenant = 'up') p,
	       worklist.claim_next_run(p.project, 'w9', '1 hour', now => '2031-01-01') c}),
	'0', 'claim_next_run hands out no run of 0.3');
cmp_ok($node->safe_psql('old03', q{
	SET worklist.tenant = 'up';
	SELECT fence FROM worklist.claim_run('p', 's', 'r', 'w2', '1 hour', '2031-01-01')}),
	'>', $fence03, 'a reclaim after the upgrade mints a higher fence');
is($node->safe_psql('old03', q{
	SELECT queued FROM worklist.run WHERE tenant = 'up' AND project = 'p' AND session = 's' AND run = 'r'}),
	't', 'a run claimed after the upgrade is queued');

$node->stop;
done_testing();
