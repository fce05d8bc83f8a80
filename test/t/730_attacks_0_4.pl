# The attacks 0.4 closes, each run as the attacker would run it -- a real
# login, its own connection -- and each shown refused with its SQLSTATE
# (or bounded) and leaving the other tenants as they were:
#   1. a member stores a huge ladder, and every tenant's sweeper ticks
#      slowly;
#   2. a member barred from a task SET ROLEs to the group the tenant is
#      bound to and decides it as the group;
#   3. a member takes another member's claim away with escalate, and
#      settles it with withdraw_run;
#   4. a login bound to nothing learns which tenants exist, and how many
#      bindings each has, from EXPLAIN ANALYZE of the bindings view;
#   5. a login bound to nothing blocks ALTER EXTENSION UPDATE with temporary
#      tables of the extension's types (and the new library fails on the
#      old schema meanwhile);
#   6. a member backdates a write by keeping a transaction open;
#   7. one tenant's prepared transaction slows another tenant's claims
#      without limit;
# and beyond them, a tenant whose batches of the sweep take long delays
# another tenant's expiry by at most one budget.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = PostgreSQL::Test::Cluster->new('attacks04');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'worklist'
worklist.sweep_interval = '1s'
max_prepared_transactions = 5
});
$node->start;

# as(role, tenant, sql[, db]): 'ok:<output>' or the error's SQLSTATE
sub as
{
	my ($role, $tenant, $sql, $db) = @_;
	my ($rc, $out, $err) = $node->psql($db // 'postgres',
		"\\set VERBOSITY verbose\nSET worklist.tenant = '$tenant';\n$sql",
		extra_params => ['-U', $role]);
	return "ok:$out" if $rc == 0;
	return $err =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1 : "error:$err";
}

# Seconds from a task's due_at to its expiry by the sweeper (undef: not
# within the wait).
sub expiry_delay
{
	my ($tenant, $id, $wait) = @_;
	my $deadline = time + $wait;
	while (time < $deadline)
	{
		my $d = $node->safe_psql('postgres', qq{
			SET worklist.tenant = '$tenant';
			SELECT extract(epoch FROM settled_at - due_at) FROM worklist.task('$id')
			 WHERE state = 'expired'});
		return $d if $d ne '';
		sleep 0.1;
	}
	return undef;
}

$node->safe_psql('postgres', q{
	CREATE EXTENSION worklist;
	CREATE ROLE finance;
	CREATE ROLE alice LOGIN IN ROLE finance;
	CREATE ROLE bob LOGIN IN ROLE finance;
	CREATE ROLE mallory LOGIN;
	CREATE ROLE evil_member LOGIN;
	CREATE ROLE carol LOGIN;
	SELECT worklist.grant_tenant('acme', 'finance', 'member');
	SELECT worklist.grant_tenant('evil', 'evil_member', 'member');
	SELECT worklist.grant_tenant('acme-bank', 'finance', 'admin');
	SELECT worklist.grant_tenant('acme-bank', 'carol', 'service');
	SELECT worklist.grant_tenant('globex.hr', 'carol', 'service');
});

# 1. A ladder of a million rungs is refused before it is stored; the
# sweeper keeps the other tenants on time.
is(as('evil_member', 'evil', q{
	SELECT worklist.open_ticket('stall', 'evil_member', 't',
	                            ladder => array_fill('0'::interval, ARRAY[1000000]))}),
	'22023', 'a ladder of a million rungs is refused (22023)');
is(as('evil_member', 'evil', q{SELECT ticket FROM worklist.open_ticket('stall', 'evil_member', 't',
	                            ladder => array_fill('0'::interval, ARRAY[32]))}),
	'ok:stall', 'one of 32 rungs is taken');
is(as('evil_member', 'evil', q{SELECT worklist.open_task('huge', 'c', array_fill('x'::text, ARRAY[1001]))}),
	'22023', 'so is an audience of 1,001 roles refused');
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('due-1', 'c', '{finance}', due_at => now() + interval '1 second');
});
my $delay = expiry_delay('acme', 'due-1', 10);
ok(defined $delay && $delay < 2, sprintf('another tenant\'s task expires %.2f s after it is due', $delay // -1));

# 2. A group never writes under a member binding.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('refund-1', 'c', '{finance}', excluded => '{alice}');
});
my $task_before = $node->safe_psql('postgres',
	q{SELECT t::text FROM worklist.task t WHERE tenant = 'acme' AND id = 'refund-1'});
is(as('alice', 'acme', q{SELECT worklist.claim('refund-1', 'alice', '{finance}')}),
	'WL002', 'alice is barred from the refund');
is(as('alice', 'acme', q{SET ROLE finance; SELECT worklist.claim('refund-1', 'finance', '{finance}')}),
	'42501', 'and cannot claim it as the group she is in');
is(as('alice', 'acme', q{SET ROLE finance; SELECT worklist.open_task('planted', 'c', '{finance}')}),
	'42501', 'nor write anything else as the group');
is(as('alice', 'acme', q{SET ROLE finance; SELECT state FROM worklist.task('refund-1')}),
	'ok:open', 'the group still reads');
is($node->safe_psql('postgres', q{SELECT t::text FROM worklist.task t WHERE tenant = 'acme' AND id = 'refund-1'}),
	$task_before, 'the refund is unchanged');

# 3. escalate and withdraw_run are not a member's.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('bob-1', 'c', '{finance}');
	SELECT worklist.open_task('bob-2', 'c', '{finance}', run_id => 'run-7');
});
is(as('bob', 'acme', q{SELECT holder FROM worklist.claim('bob-1', 'bob', '{finance}');
	                    SELECT holder FROM worklist.claim('bob-2', 'bob', '{finance}')}),
	"ok:bob\nbob", 'bob claims two tasks');
is(as('alice', 'acme', q{SELECT worklist.escalate('bob-1')}), '42501',
	'alice cannot strip bob\'s claim with escalate');
is(as('alice', 'acme', q{SELECT worklist.withdraw_run('run-7', '{bob-2}')}), '42501',
	'nor settle his task with withdraw_run');
is($node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SELECT string_agg(id || ':' || state || ':' || holder, ',' ORDER BY id) FROM worklist.held('bob')}),
	'bob-1:claimed:bob,bob-2:claimed:bob', 'bob still holds both');

# 4. EXPLAIN ANALYZE of the bindings view says the same for a tenant that
# exists and one that does not: no row of another tenant is ever met.
sub explained
{
	my ($tenant) = @_;
	my $plan = as('mallory', 'none', qq{
		SET enable_seqscan = off;
		EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
		SELECT * FROM worklist.bindings WHERE tenant = '$tenant'});
	return $plan;
}
my $exists = explained('acme-bank');
my $absent = explained('no-such-tenant');
like($exists, qr/^ok:/, 'mallory can explain a query on the view');
unlike($exists, qr/Rows Removed|Index Cond/, 'its plan filters no binding out and searches none');
is($exists =~ s/no-such-tenant/acme-bank/gr, $absent =~ s/no-such-tenant/acme-bank/gr,
	'and reads the same for a tenant that exists as for one that does not');
is(as('mallory', 'none', q{SELECT count(*) FROM worklist.bindings}), 'ok:0', 'mallory sees no binding');
is(as('carol', 'none', q{SELECT count(*) FROM worklist.bindings}), 'ok:0',
	'a service binding administers nothing');
is(as('alice', 'none', q{SELECT string_agg(tenant || ':' || role || ':' || kind, ',' ORDER BY role::text) FROM worklist.bindings}),
	'ok:acme-bank:carol:service,acme-bank:finance:admin', 'an admin (through her group) sees her tenant\'s bindings');

# 5. Nobody can block the update from 0.3 through the extension's types,
# and the new library serves the 0.3 schema until it runs.
$node->safe_psql('postgres', q{CREATE DATABASE old03});
$node->safe_psql('old03', q{
	CREATE EXTENSION worklist VERSION '0.3';
	SELECT worklist.grant_tenant('acme', 'finance', 'member');
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('t1', 'c', '{finance}');
	SELECT worklist.claim_run('p', 's', 'r', 'w', '1 hour');
});
is(as('alice', 'acme', q{SELECT holder FROM worklist.claim('t1', 'alice', '{finance}');
	                      SELECT worklist.complete('t1', 'alice', '{"ok": true}')}, 'old03'),
	"ok:alice\nt", 'the new library runs the 0.3 verbs on the 0.3 schema');
my $types = $node->safe_psql('old03', q{
	SELECT string_agg(format('CREATE TEMP TABLE m%s (x %s);', n, typ), ' ')
	  FROM (SELECT t.oid::regtype AS typ, row_number() OVER (ORDER BY t.oid) AS n
	          FROM pg_type t
	         WHERE t.typnamespace = 'worklist'::regnamespace
	           AND NOT (t.typelem <> 0 AND t.typsubscript = 'array_subscript_handler'::regproc)) s});
my $holder = $node->background_psql('old03', on_error_stop => 1,
	extra_params => ['-U', 'mallory']);
$holder->query_safe($types);
cmp_ok($holder->query_safe(q{SELECT count(*) FROM pg_class WHERE relpersistence = 't' AND relname ~ '^m[0-9]+$'}),
	'>=', 15, 'mallory holds a temporary table of every type of the 0.3 extension');
my ($rc, $out, $err) = $node->psql('old03', 'ALTER EXTENSION worklist UPDATE');
is($rc, 0, 'ALTER EXTENSION UPDATE succeeds while she holds them') or diag($err);
is($node->safe_psql('old03', q{SELECT extversion FROM pg_extension WHERE extname = 'worklist'}),
	'0.4', 'the database is at 0.4');
is(as('alice', 'acme', q{SELECT state FROM worklist.task('t1')}, 'old03'), 'ok:completed',
	'and the verbs work after it');
$holder->quit;
is(as('mallory', 'acme', q{CREATE TEMP TABLE m (x worklist.checkpoint)}, 'old03'), '42501',
	'from 0.4 on, nobody else may use the extension\'s types in objects of their own');

# 6. A member's write in an old transaction is refused, whatever its
# clock: the event would be stamped in the past.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_ticket('k1', 'bob', 'a ticket', confirm_window => '30 seconds');
});
my $said = q{SET worklist.tenant = 'acme';
	SELECT count(*) FROM worklist.ticket_history('k1') WHERE actor = 'alice'};
is(as('alice', 'acme', q{BEGIN; SELECT pg_sleep(6);
	SELECT state FROM worklist.report('k1', 'alice', 'delivered'); COMMIT}),
	'42501', 'a report 6 s into a transaction (skew 5 s) is refused');
is(as('alice', 'acme', q{BEGIN; SELECT pg_sleep(6);
	SELECT worklist.open_task('late', 'c', '{finance}'); COMMIT}),
	'42501', 'and so is a verb without a clock argument');
is($node->safe_psql('postgres', $said), '0', 'the ticket has nothing of alice\'s');
is(as('alice', 'acme', q{SELECT state FROM worklist.report('k1', 'alice', 'delivered')}),
	'ok:delivered', 'a report in a transaction of its own is taken');

# 7. One tenant's prepared transaction does not slow another tenant's
# claims.  The victim uses two-phase commit itself once (which pins its
# claim hint at the head of its queue until that transaction is no longer
# prepared); the attacker leaves one prepared, which holds back the
# removal of every dead row.  The victim's claims then start where its
# queue starts, not at the head of all it ever claimed.
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'quick';
	SELECT count(*) FROM generate_series(1, 5000) g,
	       worklist.open_task('t' || lpad(g::text, 6, '0'), 'c', '{r}');
	VACUUM ANALYZE worklist.task;
	BEGIN;
	SET LOCAL worklist.notify = off;
	SELECT worklist.open_task('twophase', 'c', '{r}');
	PREPARE TRANSACTION 'victim';
	COMMIT PREPARED 'victim';
});
$node->safe_psql('postgres', q{SELECT worklist.grant_tenant('quick', 'bob', 'service')});
is(as('evil_member', 'evil', q{BEGIN; SET LOCAL worklist.notify = off;
	SELECT id FROM worklist.open_task('held', 'c', '{evil_member}');
	PREPARE TRANSACTION 'attacker'}), "ok:held", 'the attacker leaves a transaction prepared');
sleep 2.5;    # the sweeper's ticks unpin what no prepared transaction holds
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'quick';
	DO $$
	DECLARE
		t worklist.task;
	BEGIN
		FOR i IN 1 .. 3000 LOOP
			t := worklist.claim_next('w', '{r}');
			PERFORM worklist.complete(t.id, 'w', '{}');
			COMMIT;
		END LOOP;
	END
	$$;
});
my $buffers = $node->safe_psql('postgres', q{
	SET worklist.tenant = 'quick';
	CREATE FUNCTION pg_temp.buffers(call text) RETURNS bigint LANGUAGE plpgsql AS $f$
	DECLARE plan json;
	BEGIN
		EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || call INTO plan;
		RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint
		     + (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
	END $f$;
	SELECT pg_temp.buffers($$SELECT worklist.claim_next('w', '{r}')$$);
	SELECT pg_temp.buffers($$SELECT worklist.claim_next('w', '{r}')$$);
});
my $last = (split /\n/, $buffers)[-1];
cmp_ok($last, '<', 50,
	"after 3,000 claims beside the prepared transaction, one claim_next touches $last buffers");
$node->safe_psql('postgres', q{ROLLBACK PREPARED 'attacker'});

# Beyond the seven: the sweep of one tenant is bounded in time.  Tenant
# slow is at the size bounds (ladders of 32 rungs, audiences of 1,000
# roles, 1 MB payloads), and every one of its expiries takes 0.2 s (a
# trigger of the owner's stands for whatever makes a batch slow): a batch
# of 500 of them would take 100 s.  Another tenant's task still expires
# within 2 s of due with the default budget, and late without one.
$node->safe_psql('postgres', q{
	CREATE FUNCTION public.slow_row() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		IF NEW.tenant = 'slow' THEN PERFORM pg_sleep(0.2); END IF;
		RETURN NEW;
	END $$;
	CREATE TRIGGER slow_row BEFORE UPDATE ON worklist.task
		FOR EACH ROW EXECUTE FUNCTION public.slow_row();
	SET worklist.tenant = 'slow';
	SELECT count(*) FROM generate_series(1, 600) g,
	       worklist.open_task('s' || g, 'c', array_fill(repeat('r', 256), ARRAY[1000]),
	                          payload => jsonb_build_object('blob', (SELECT string_agg(md5(i::text || g), '')
	                                                                   FROM generate_series(1, 1000) i)),
	                          due_at => now() - interval '1 hour');
	SELECT count(*) FROM generate_series(1, 50) g,
	       worklist.open_ticket('k' || g, 'req', repeat('t', 4096),
	                            ladder => array_fill('0'::interval, ARRAY[32]),
	                            open_deadline => now() - interval '1 hour');
});
sub victim_delay
{
	my ($id, $wait) = @_;
	$node->safe_psql('postgres', qq{
		SET worklist.tenant = 'acme';
		SELECT worklist.open_task('$id', 'c', '{finance}', due_at => now() + interval '1 second');
	});
	return expiry_delay('acme', $id, $wait);
}
sub sweeper_restart
{
	$node->safe_psql('postgres', q{
		SELECT pg_cancel_backend(pid) FROM pg_stat_activity
		 WHERE backend_type = 'worklist sweeper' AND datname = 'postgres'});
}
# The control first: with no budget to speak of, the slow tenant's batch
# keeps the other tenant waiting.
$node->append_conf('postgresql.conf', "worklist.sweep_budget = '1h'");
$node->reload;
sleep 2;    # a slow batch is under way
$delay = victim_delay('budget-0', 6);
ok(!defined $delay,
	sprintf('without a budget, another tenant\'s task waits for the slow batch (%s)',
			defined $delay ? sprintf('expired %.2f s after due', $delay) : 'not expired 6 s after due'));
# Now with the default budget (the slow batch is cancelled to apply it).
$node->adjust_conf('postgresql.conf', 'worklist.sweep_budget', "'500ms'");
$node->reload;
sweeper_restart();
sleep 2;
$delay = victim_delay('budget-1', 10);
ok(defined $delay && $delay < 2,
	sprintf('with the default budget, it expires %.2f s after due', $delay // -1));
$delay = victim_delay('budget-2', 10);
ok(defined $delay && $delay < 2, sprintf('and again (%.2f s)', $delay // -1));
cmp_ok($node->safe_psql('postgres', q{SET worklist.tenant = 'slow';
	SELECT count(*) FROM worklist.overdue(lim => 1000)}), '<', 600, 'while the slow tenant makes progress');
is($node->safe_psql('postgres', q{SELECT cardinality(tenants_in_error) FROM worklist.sweeper_status}),
	'0', 'and is not in error: its batches only got smaller');

$node->stop('immediate');
done_testing();
