# Bindings follow roles, not numbers.  A database is dumped from one
# cluster and restored into another whose roles were created in another
# order (so every OID differs), where one bound role does not exist at all
# and another role carries the name of a role that was dropped before the
# dump.  Bindings are restored by role name; the one whose role is missing
# is lost without opening its tenant to anybody, and so is the one whose
# role was dropped -- worklist.open_tenants is on in the new cluster, and
# still nobody reaches those tenants.  In the old cluster, a login created
# after a bound role was dropped reaches nothing either.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = qq{
worklist.sweep_interval = '1h'
};

my $src = WorklistNode->create('bind_src', conf => $conf);
$src->safe_psql('postgres', q{
	CREATE ROLE alice LOGIN;
	CREATE ROLE bob LOGIN;
	CREATE ROLE carol LOGIN;
	CREATE ROLE dave LOGIN;
	CREATE DATABASE app;
});
$src->safe_psql('app', q{
	CREATE EXTENSION worklist;
	SELECT worklist.grant_tenant('t1', 'alice', 'admin');
	SELECT worklist.grant_tenant('t2', 'bob', 'member');
	SELECT worklist.grant_tenant('t3', 'carol', 'service');
	SELECT worklist.grant_tenant('t4', 'dave', 'member');
	SELECT worklist.grant_tenant('t4', 'alice', 'member');
	SELECT worklist.grant_tenant('t4', 'alice', 'service');
	SELECT worklist.grant_tenant('t6', 'dave', 'admin');
	SET worklist.tenant = 't1'; SELECT worklist.open_task('a', 'c', '{r}');
	SET worklist.tenant = 't2'; SELECT worklist.open_task('a', 'c', '{bob}');
	SET worklist.tenant = 't3'; SELECT worklist.open_task('a', 'c', '{r}');
	SET worklist.tenant = 't4'; SELECT worklist.open_task('a', 'c', '{r}');
	SET worklist.tenant = 't5'; SELECT worklist.open_task('a', 'c', '{r}');
	SET worklist.tenant = 't6'; SELECT worklist.open_task('a', 'c', '{r}');
});
is($src->as('app', 'dave', 't4', 'SELECT id FROM worklist.task(\'a\')'), 'ok:a', 'dave reaches t4');

# dave leaves; another login arrives.  The binding stays, grants nothing,
# and keeps t4 closed to everybody but its other binding.
$src->safe_psql('postgres', 'DROP ROLE dave; CREATE ROLE eve LOGIN; CREATE ROLE dave LOGIN');
is($src->safe_psql('app', q{SELECT string_agg(tenant || ':' || role::text || ':' || kind, ',' ORDER BY tenant, kind)
                              FROM worklist.tenant_binding WHERE tenant = 't4'}),
	't4:(dropped):member,t4:alice:service', 'the dropped role\'s binding reads as (dropped)');
is($src->as('app', 'eve', 't4', 'SELECT id FROM worklist.task(\'a\')'), '42501', 'a login created after the drop does not reach t4');
is($src->as('app', 'dave', 't4', 'SELECT id FROM worklist.task(\'a\')'), '42501', 'nor does a new role of the same name');
$src->append_conf('postgresql.conf', 'worklist.open_tenants = on');
$src->reload;
is($src->as('app', 'eve', 't6', 'SELECT id FROM worklist.task(\'a\')'), '42501',
	'a tenant whose only binding is a dropped role\'s stays closed with open_tenants on');
is($src->as('app', 'eve', 't5', 'SELECT id FROM worklist.task(\'a\')'), 'ok:a',
	'while a tenant never bound is open to everybody then');

# The dump, restored where the roles were made in another order, carol is
# missing, and a different dave exists.
my $dump = $src->basedir . '/app.dump';
$src->command_ok(['pg_dump', '-Fc', '-f', $dump, '-d', $src->connstr('app')], 'pg_dump');
my $src_oids = $src->safe_psql('postgres',
	q{SELECT string_agg(rolname || '=' || oid, ',' ORDER BY rolname) FROM pg_roles WHERE rolname IN ('alice', 'bob')});

my $dst = WorklistNode->create('bind_dst', conf => $conf . "worklist.open_tenants = on\n");
$dst->safe_psql('postgres', q{
	CREATE ROLE padding1; CREATE ROLE padding2; CREATE ROLE padding3;
	CREATE ROLE dave LOGIN;
	CREATE ROLE bob LOGIN;
	CREATE ROLE padding4;
	CREATE ROLE alice LOGIN;
	CREATE ROLE mallory LOGIN;
	CREATE DATABASE app;
});
my $dst_oids = $dst->safe_psql('postgres',
	q{SELECT string_agg(rolname || '=' || oid, ',' ORDER BY rolname) FROM pg_roles WHERE rolname IN ('alice', 'bob')});
isnt($dst_oids, $src_oids, "the roles have other OIDs ($src_oids there, $dst_oids here)");
$dst->command_ok(['pg_restore', '--exit-on-error', '-d', $dst->connstr('app'), $dump],
	'pg_restore succeeds although role carol does not exist');

is($dst->safe_psql('app', q{SELECT string_agg(tenant || ':' || role::text || ':' || kind, ',' ORDER BY tenant, role::text)
                              FROM worklist.tenant_binding}),
	't1:alice:admin,t2:bob:member,t3:(dropped):service,t4:(dropped):member,t4:alice:service,t6:(dropped):admin',
	'bindings restored by role name; the missing role and the dropped one arrive as (dropped)');
is($dst->as('app', 'alice', 't1', q{SELECT worklist.grant_tenant('t1', 'bob'); SELECT worklist.revoke_tenant('t1', 'bob'); SELECT id FROM worklist.task('a')}),
	"ok:\n\na", 'alice is admin of t1 in the new cluster');
is($dst->as('app', 'bob', 't2', q{SELECT holder FROM worklist.claim('a', 'bob', '{bob}')}), 'ok:bob',
	'bob is a member of t2, acting as itself');
is($dst->as('app', 'bob', 't2', q{SELECT worklist.release('a', 'alice')}), '42501',
	'and only as itself: his binding is still a member binding');
for my $role ('alice', 'bob', 'dave', 'mallory')
{
	is($dst->as('app', $role, 't3', 'SELECT id FROM worklist.task(\'a\')'), '42501',
		"t3, whose role is missing, is closed to $role despite open_tenants");
}
is($dst->as('app', 'dave', 't4', 'SELECT id FROM worklist.task(\'a\')'), '42501',
	'the new cluster\'s dave does not reach the tenant of the old dave');
is($dst->as('app', 'mallory', 't4', 'SELECT id FROM worklist.task(\'a\')'), '42501',
	'nor does anybody else');
is($dst->as('app', 'alice', 't4', 'SELECT id FROM worklist.task(\'a\')'), 'ok:a',
	'alice, bound to t4 herself, still does');
is($dst->as('app', 'dave', 't6', 'SELECT id FROM worklist.task(\'a\')'), '42501',
	'the old dave\'s tenant stays closed, open_tenants or not');
is($dst->as('app', 'mallory', 't5', 'SELECT id FROM worklist.task(\'a\')'), 'ok:a',
	'an unbound tenant is open, as open_tenants says');

$src->stop;
$dst->stop;
done_testing();
