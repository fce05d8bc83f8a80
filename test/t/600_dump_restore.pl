# pg_dump of a database using worklist, restored into a new cluster, keeps
# everything: tasks in every state, tickets and their logs, checkpoints
# and parks, leases with their fences, tenant bindings (with the roles
# from pg_dumpall --globals-only) -- every table of the extension, listed
# from the catalog, compared row by row -- and the fence sequence's
# position, so the next fence is above every fence ever issued.  The
# privileges, row-level security and guards come back with the extension,
# and the verbs work on the restored data.  Both the custom format
# (pg_restore) and the plain format (psql) are restored.  A plain dump
# whose sequence position was lost still mints above every stored fence.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = qq{
worklist.sweep_interval = '1h'
};

my $src = WorklistNode->create('dump_src', conf => $conf);

$src->safe_psql('postgres', q{
	CREATE ROLE dump_team;
	CREATE ROLE dump_alice LOGIN IN ROLE dump_team;
	CREATE ROLE dump_outsider LOGIN;
	CREATE DATABASE app;
});
$src->safe_psql('app', 'CREATE EXTENSION worklist');

# Every state each module knows, in two tenants, one of them bound.
my @fences;
$src->safe_psql('app', q{
	SET timezone = 'UTC';
	SELECT worklist.grant_tenant('dump_a', 'dump_team');
	SET worklist.tenant = 'dump_a';

	-- tasks: open, claimed, escalated (held and not), completed, expired
	-- by deny and by proceed, withdrawn, set_state'd
	SELECT worklist.open_task('open', 'case1', '{r}', payload => '{"n": 1}', priority => 5,
		due_at => '2031-01-01', excluded => '{mallory}', escalation_roles => '{boss}');
	SELECT worklist.open_task('claimed', 'case1', '{r}', run_id => 'run1');
	SELECT worklist.claim('claimed', 'ann', '{r}');
	SELECT worklist.open_task('esc_free', 'case2', '{r}', escalation_roles => '{boss}');
	SELECT worklist.escalate('esc_free');
	SELECT worklist.open_task('esc_held', 'case2', '{r}', escalation_roles => '{boss}');
	SELECT worklist.escalate('esc_held');
	SELECT worklist.claim('esc_held', 'bea', '{boss}');
	SELECT worklist.open_task('done', 'case3', '{r}');
	SELECT worklist.claim('done', 'ann', '{r}');
	SELECT worklist.complete('done', 'ann', '{"approved": true}');
	SELECT worklist.open_task('denied', 'case3', '{r}', due_at => '2030-01-01', expiry_policy => 'deny');
	SELECT worklist.open_task('proceeded', 'case3', '{r}', due_at => '2030-01-01', expiry_policy => 'proceed');
	SELECT worklist.open_task('auto_esc', 'case3', '{r}', due_at => '2030-01-01', expiry_policy => 'escalate');
	SELECT worklist.sweep('2030-06-01');
	SELECT worklist.open_task('withdrawn', 'case4', '{r}', run_id => 'run1');
	SELECT worklist.withdraw_run('run1', '{withdrawn}');
	SELECT worklist.open_task('set', 'case4', '{r}');
	SELECT worklist.set_state('set', 'expired');

	-- tickets: a live log with ties and a demoted close, a closed one, an
	-- implicitly confirmed one, an escalated one
	SELECT worklist.open_ticket('live', 'req', 'live', '{"b": 1}', '{lead}',
		open_deadline => '2030-01-01 10:00', ladder => '{1 hour, 1 day}');
	SELECT worklist.report('live', 'ann', 'working', not_before => '2030-01-01 12:00',
		at => '2030-01-01 09:00');
	SELECT worklist.report('live', 'bob', 'blocked', reason => 'waiting', at => '2030-01-01 09:00');
	SELECT worklist.close_ticket('live', 'agent', 'done', at => '2030-01-01 09:30');
	SELECT worklist.open_ticket('closed', 'req', 'closed', authorities => '{lead}');
	SELECT worklist.report('closed', 'ann', 'working', at => '2030-01-01 08:00');
	SELECT worklist.close_ticket('closed', 'lead', 'archived', reason => 'dup', at => '2030-01-01 10:00');
	SELECT worklist.open_ticket('confirmed', 'req', 'confirmed', confirm_window => '1 hour',
		open_deadline => '2040-01-01');
	SELECT worklist.report('confirmed', 'cy', 'delivered', at => '2030-01-01 09:00');
	SELECT worklist.open_ticket('stalled', 'req', 'stalled', ladder => '{1 hour}');
	SELECT worklist.sweep('2030-01-01 11:00');

	-- runs: checkpoints with a park, a parent, a creation time; a pruned
	-- run; leases claimed, renewed, reclaimed after expiry, released
	SELECT worklist.write_checkpoint('proj', 'sess', 'r1', 'c1', '{"step": 1}',
		parent_run => 'root', created_at => '2030-01-01 01:00', run_created_at => '2030-01-01');
	SELECT worklist.write_checkpoint('proj', 'sess', 'r1', 'c2', '{"step": 2}',
		created_at => '2030-01-01 02:00', park_request => 'approve',
		parked_at => '2030-01-01 02:00', park_deadline => '2030-01-02');
	SELECT worklist.write_checkpoint('proj', 'sess', 'r2', 'c1', '[1, 2, 3]', created_at => '2030-01-01 03:00');
	SELECT worklist.write_checkpoint('proj', 'sess', 'r2', 'c2', 'null', created_at => '2030-01-01 04:00');
	SELECT worklist.prune_checkpoints('proj', 'sess', 'r2', 1);
	SELECT worklist.write_checkpoint('proj', 'sess2', 'r3', 'c1', '{}', created_at => '2030-01-01 05:00',
		park_request => 'check', park_resolved_at => '2030-01-01 06:00');
});
# leases, remembering every fence issued
for my $claim (
	[ 'r1', 'w1', '2030-01-01 00:00' ],    # first claim
	[ 'r1', 'w1', '2030-01-01 00:10' ],    # renewal
	[ 'r1', 'w2', '2030-01-01 02:00' ],    # reclaim after expiry
	[ 'r2', 'w1', '2030-01-01 00:00' ],
	[ 'r3', 'w3', '2030-01-01 00:00' ],
	[ 'r4', 'w4', '2030-01-01 00:00' ])    # a run with a lease and no checkpoint
{
	my ($run, $holder, $at) = @$claim;
	my $sess = $run eq 'r3' ? 'sess2' : 'sess';
	push @fences, $src->safe_psql('app', qq{
		SET worklist.tenant = 'dump_a';
		SELECT fence FROM worklist.claim_run('proj', '$sess', '$run', '$holder', '1 hour', '$at');
	});
}
$src->safe_psql('app', qq{
	SET worklist.tenant = 'dump_a';
	SELECT worklist.release_run('proj', 'sess', 'r2', $fences[3], '2030-01-01 00:30');
	SELECT worklist.write_checkpoint('proj', 'sess', 'r1', 'c3', '{"step": 3}', fence => $fences[2],
		created_at => '2030-01-01 02:30');
});
# a second, unbound tenant with a little of everything
$src->safe_psql('app', q{
	SET worklist.tenant = 'dump_b';
	SELECT worklist.open_task('open', 'case1', '{r}');
	SELECT worklist.open_ticket('live', 'req', 'other tenant');
	SELECT worklist.report('live', 'dee', 'abandoned', at => '2030-01-01 09:00');
	SELECT worklist.write_checkpoint('proj', 'sess', 'r1', 'c1', '{}', created_at => '2030-01-01');
});
push @fences, $src->safe_psql('app', q{
	SET worklist.tenant = 'dump_b';
	SELECT fence FROM worklist.claim_run('proj', 'sess', 'r1', 'w9', '1 hour', '2030-01-01');
});
my ($max_issued) = sort { $b <=> $a } @fences;
cmp_ok(scalar(@fences), '==', 7, 'seven fences issued');

# Every row of every table of the extension (listed from the catalog), the
# sequence, and what guards the tables.
my $tables = $src->safe_psql('app', q{
	SELECT string_agg(c.oid::regclass::text, ' ' ORDER BY c.relname) FROM pg_class c
	 WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind = 'r'});
my @tables = split / /, $tables;
cmp_ok(scalar(@tables), '>=', 7, "the extension has tables: $tables");
my $snapshot = join '', map {
	"SELECT '$_', count(*) FROM $_;\n"
	  . "SELECT t::text FROM $_ t ORDER BY 1;\n"
} @tables;
$snapshot = "SET timezone = 'UTC';\n" . $snapshot
  . "SELECT last_value, is_called FROM worklist.fence_seq;\n";
my $guards = q{
	SELECT c.relname, c.relrowsecurity, c.relacl,
	       (SELECT string_agg(p.polname || ':' || pg_get_expr(p.polqual, p.polrelid), ',')
	          FROM pg_policy p WHERE p.polrelid = c.oid),
	       (SELECT string_agg(t.tgname, ',' ORDER BY t.tgname)
	          FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal),
	       c.oid = ANY (e.extconfig)
	  FROM pg_class c, pg_extension e
	 WHERE c.relnamespace = 'worklist'::regnamespace AND c.relkind IN ('r', 'S', 'v')
	   AND e.extname = 'worklist'
	 ORDER BY 1;
	SELECT p.oid::regprocedure, p.proacl FROM pg_proc p
	 WHERE p.pronamespace = 'worklist'::regnamespace ORDER BY 1::text;
	SELECT evtname, evtenabled FROM pg_event_trigger ORDER BY 1;
};
my $before = $src->safe_psql('app', $snapshot);
my $guards_before = $src->safe_psql('app', $guards);
like($before, qr/\(open,case1,,open,/, 'the source has an open task');
like($before, qr/,"implicit"|implicit/, 'an implicitly confirmed ticket');
like($before, qr/escalation/, 'an escalation in a ticket log');
like($before, qr/dump_a,dump_team/, 'a binding');

my $roles_before = $src->safe_psql('postgres', q{
	SELECT r.rolname, r.rolcanlogin,
	       ARRAY(SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
	              WHERE m.member = r.oid ORDER BY 1)
	  FROM pg_roles r WHERE r.rolname LIKE 'dump\_%' ORDER BY 1});
like($roles_before, qr/dump_alice\|t\|\{dump_team\}/, 'dump_alice is a member of dump_team');

# Dump the roles and the database; restore both into a new cluster.
my $dir = $src->basedir;
$src->command_ok(
	[ 'pg_dumpall', '--globals-only', '--no-role-passwords', '-d', $src->connstr('postgres'),
		'-f', "$dir/globals.sql" ],
	'pg_dumpall --globals-only');
$src->command_ok([ 'pg_dump', '-Fc', '-d', $src->connstr('app'), '-f', "$dir/app.dump" ],
	'pg_dump, custom format');
$src->command_ok([ 'pg_dump', '-Fp', '-d', $src->connstr('app'), '-f', "$dir/app.sql" ],
	'pg_dump, plain format');
my $src_seq = $src->safe_psql('app', 'SELECT last_value FROM worklist.fence_seq');
$src->stop;

my $dst = WorklistNode->create('dump_dst', conf => $conf);

# The bootstrap superuser exists already (its CREATE ROLE fails); every
# other role, and every membership, must come back.
my $roles = q{
	SELECT r.rolname, r.rolcanlogin,
	       ARRAY(SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
	              WHERE m.member = r.oid ORDER BY 1)
	  FROM pg_roles r WHERE r.rolname LIKE 'dump\_%' ORDER BY 1};
my ($rc, $out, $err) = $dst->psql('postgres', slurp_file("$dir/globals.sql"), on_error_stop => 0);
my @other_errors = grep { /ERROR/ && !/role "[^"]+" already exists/ } split /\n/, $err;
is(scalar(@other_errors), 0, 'the globals restore without other errors') or diag $err;
is($dst->safe_psql('postgres', $roles), $roles_before, 'the roles and their memberships are restored');
$dst->safe_psql('postgres', 'CREATE DATABASE app; CREATE DATABASE app_plain; CREATE DATABASE app_lost');
$dst->command_ok([ 'pg_restore', '--exit-on-error', '-d', $dst->connstr('app'), "$dir/app.dump" ],
	'pg_restore into the new cluster');
$dst->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $dst->connstr('app_plain'), '-f', "$dir/app.sql" ],
	'the plain dump restores into the new cluster');

for my $db ('app', 'app_plain')
{
	is($dst->safe_psql($db, $snapshot), $before, "$db: every row of every table is restored, and the sequence");
	is($dst->safe_psql($db, $guards), $guards_before,
		"$db: privileges, row-level security, policies, triggers and dump registration are as before");
}

# The fence sequence continues above every fence ever issued.
is($dst->safe_psql('app', 'SELECT last_value FROM worklist.fence_seq'), $src_seq,
	'the sequence position is restored');
my $next = $dst->safe_psql('app', q{
	SET worklist.tenant = 'dump_a';
	SELECT fence FROM worklist.claim_run('proj', 'sess', 'fresh', 'w5', '1 hour', '2030-02-01');
});
cmp_ok($next, '>', $max_issued, "a new claim's fence ($next) is above every issued fence ($max_issued)");
my $reclaim = $dst->safe_psql('app', q{
	SET worklist.tenant = 'dump_a';
	SELECT fence FROM worklist.claim_run('proj', 'sess', 'r1', 'w6', '1 hour', '2030-02-01');
});
cmp_ok($reclaim, '>', $next, 'a reclaim of a restored lease gets a higher one still');

# Fencing works on the restored leases.
($rc, $out, $err) = $dst->psql('app', qq{
	SET worklist.tenant = 'dump_a';
	SELECT worklist.write_checkpoint('proj', 'sess', 'r1', 'c4', '{}', fence => $fences[2]);
});
like($err, qr/stale fence for run "r1"/, "the old holder's fence is stale after the restore");
is($dst->safe_psql('app', qq{
	SET worklist.tenant = 'dump_a';
	SELECT worklist.write_checkpoint('proj', 'sess', 'r1', 'c4', '{}', fence => $reclaim);
	SELECT count(*) FROM worklist.list_checkpoints('proj', 'sess', 'r1');
}), "\n4", 'the new holder writes');
is($dst->safe_psql('app', q{
	SET worklist.tenant = 'dump_a';
	SELECT worklist.release_run('proj', 'sess2', 'r3', fence, '2030-01-01 00:10')
	  FROM worklist.run_claim WHERE tenant = 'dump_a' AND run = 'r3';
	SELECT (worklist.claim_run('proj', 'sess2', 'r3', 'w7', '1 hour', '2030-01-01 00:20')).holder;
}), "\nw7", 'a restored lease is released and claimed again');

# The other verbs work on the restored rows.
is($dst->safe_psql('app', q{
	SET worklist.tenant = 'dump_a';
	SELECT (worklist.claim('open', 'ann', '{r}')).state;
	SELECT worklist.complete('claimed', 'ann', '{"ok": true}');
	SELECT (worklist.task('esc_held')).holder;
	SELECT string_agg(id, ',' ORDER BY id) FROM worklist.queue('{boss}');
	SELECT (worklist.sweep('2031-06-01')).denied;
	SELECT (worklist.report('stalled', 'ann', 'working', at => '2030-01-01 12:00')).state;
	SELECT (worklist.ticket_state('confirmed', '2030-01-02')).confirmation->>'kind';
	SELECT max(seq) FROM worklist.ticket_history('live');
	SELECT ((worklist.list_durable_runs('proj', lim => 10, now => '2030-01-01 12:00')).entries[1]).park_state;
	SELECT worklist.open_count();
}), "claimed\nt\nbea\nesc_free\n1\nworking\nimplicit\n5\noutstanding\n3",
	'claims, completions, queues, the sweep, reports, folds, history and listings work');

# The binding and row-level security hold in the new cluster.
($rc, $out, $err) = $dst->psql('app',
	q{SET worklist.tenant = 'dump_a'; SELECT worklist.open_count();},
	extra_params => [ '-U', 'dump_outsider' ]);
like($err, qr/permission denied for tenant "dump_a"/, 'a role outside the binding is refused');
is($dst->safe_psql('app', q{SET worklist.tenant = 'dump_a'; SELECT worklist.open_count();},
		extra_params => [ '-U', 'dump_alice' ]),
	'3', 'a member of the bound role acts in it');
($rc, $out, $err) = $dst->psql('app', 'SELECT count(*) FROM worklist.task', extra_params => [ '-U', 'dump_alice' ]);
like($err, qr/permission denied for table task/, 'the tables are still private');

# A dump whose sequence position is lost (the setval taken out): the first
# claim still mints above every stored fence.
my $plain = slurp_file("$dir/app.sql");
my $lost = $plain =~ s/^SELECT pg_catalog\.setval\('worklist\.fence_seq'.*$//mgr;
isnt($lost, $plain, 'the plain dump sets the sequence');
open my $fh, '>', "$dir/app_lost.sql" or die $!;
print $fh $lost;
close $fh;
$dst->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $dst->connstr('app_lost'), '-f', "$dir/app_lost.sql" ],
	'the dump without the sequence position restores');
my $max_stored = $dst->safe_psql('app_lost', 'SELECT max(fence) FROM worklist.run_claim');
my $minted = $dst->safe_psql('app_lost', q{
	SET worklist.tenant = 'dump_b';
	SELECT fence FROM worklist.claim_run('proj', 'sess', 'new', 'w8', '1 hour', '2030-02-01');
});
cmp_ok($minted, '>', $max_stored, "without it, a claim ($minted) is still above every stored fence ($max_stored)");

$dst->stop;
done_testing();
