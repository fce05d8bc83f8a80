# worklist behind PgBouncer in transaction mode (Debian's pgbouncer, see
# test/deploy/packages), as doc/operations.md ("Behind a connection
# pooler") says to run it:
#
#  - two clients of one login, in two tenants, share one server connection
#    and each verb sees only its own tenant, the tenant being set per
#    transaction (SET LOCAL, or set_config(..., true) as the client
#    packages do); a transaction that sets nothing is in no tenant;
#  - a session-level SET worklist.tenant stays on the server connection
#    and the next client's transaction runs in that tenant: the hazard the
#    documentation warns of, shown to happen;
#  - member bindings hold through the pooler, which keeps one pool per
#    login; a [databases] entry that forces a user would run every login
#    as that user;
#  - listeners connect directly and hear what workers do through the
#    pooler; a listener through the pooler hears nothing;
#  - the client packages (clients/node, clients/python) of two tenants,
#    through the pooler on one server connection, each see only their own
#    tenant.
#
# The pooler is started by WlDeploy::pgbouncer(), which gives the address
# and the PG* environment a client program needs: the last section runs a
# program through it with nothing else, where client packages can be run
# the same way.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use WlDeploy;

require_packages('pgbouncer');

my $node = PostgreSQL::Test::Cluster->new('pooled');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'worklist'
worklist.sweep_interval = 100
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION worklist;
	CREATE ROLE app LOGIN;
	CREATE ROLE reviewer;
	CREATE ROLE ann LOGIN IN ROLE reviewer;
	CREATE ROLE bob LOGIN IN ROLE reviewer;
	SELECT worklist.grant_tenant('acme', 'app', 'service');
	SELECT worklist.grant_tenant('beta', 'app', 'service');
	SELECT worklist.grant_tenant('acme', 'ann', 'member');
	SELECT worklist.grant_tenant('acme', 'bob', 'member');
});

# One server connection per pool, so that clients of one login must share
# it; "shared" forces every client to log in to the server as app.
my $pooler = pgbouncer(
	node => $node,
	users => [qw(app ann bob)],
	databases => { postgres => '', shared => 'user=app' },
	pool_mode => 'transaction',
	pool_size => 1);
note 'pgbouncer on 127.0.0.1:' . $pooler->port;

# A transaction through a session: BEGIN, the statements, COMMIT; returns
# the lines they printed and the errors.
sub txn
{
	my ($s, @sql) = @_;
	my ($out, $err) = $s->query(join "\n", 'BEGIN;', @sql, 'COMMIT;');
	note "errors: $err" if $err ne '';
	return ([ split /\n/, $out ], $err);
}

my $json = JSON::PP->new->canonical;

# --------------------------------------------------------------------
# Two tenants, one server connection, the tenant set per transaction
# --------------------------------------------------------------------
my $a = psql_session($pooler->connstr('app'));
my $b = psql_session($pooler->connstr('app'));
my $acme = q{SET LOCAL worklist.tenant = 'acme';};
my $beta = q{SELECT FROM set_config('worklist.tenant', 'beta', true);};
my (@pids, $out, $err);

($out, $err) = txn($a, $acme, 'SELECT pg_backend_pid();',
	q{SELECT id FROM worklist.open_task('t1', 'c', '{reviewer}', payload => '{"of": "acme"}');},
	q{SELECT ticket FROM worklist.open_ticket('k1', 'req', 'of acme');},
	q{SELECT 'written' FROM worklist.write_checkpoint('p', 's', 'r1', 'c1', '{"of": "acme"}',
	    fence => (SELECT fence FROM worklist.claim_run('p', 's', 'r1', 'w-acme', '1 hour')));});
push @pids, shift @$out;
is_deeply($out, [ 't1', 'k1', 'written' ], 'client A opens a task, a ticket and a run in acme');
is($err, '', 'without an error');

($out, $err) = txn($b, $beta, 'SELECT pg_backend_pid();',
	q{SELECT id FROM worklist.open_task('t1', 'c', '{reviewer}', payload => '{"of": "beta"}');},
	q{SELECT id FROM worklist.open_task('t2', 'c', '{reviewer}', payload => '{"of": "beta"}');},
	q{SELECT ticket FROM worklist.open_ticket('k1', 'req', 'of beta');});
push @pids, shift @$out;
is_deeply($out, [ 't1', 't2', 'k1' ], 'client B opens the same ids in beta');

($out) = txn($a, $acme, 'SELECT pg_backend_pid();',
	q{SELECT string_agg(id || ':' || (payload->>'of'), ',' ORDER BY id) FROM worklist.queue('{reviewer}');},
	q{SELECT id || ':' || holder FROM worklist.claim_next('x', '{reviewer}');},
	q{SELECT worklist.complete('t1', 'x', '{"ok": true}');},
	q{SELECT state FROM worklist.ticket_state('k1');},
	q{SELECT (s->>'tenant') || ' ' || (s->'tasks'->>'completed') || ' ' || (s->>'runs') FROM worklist.stats() s;});
push @pids, shift @$out;
is_deeply($out, [ 't1:acme', 't1:x', 't', 'open', 'acme 1 1' ],
	'A, in acme: queue, claim_next, complete, ticket_state and stats() see acme only');

($out) = txn($b, $beta, 'SELECT pg_backend_pid();',
	q{SELECT string_agg(id || ':' || state || ':' || (payload->>'of'), ',' ORDER BY id) FROM worklist.for_case('c');},
	q{SELECT state FROM worklist.report('k1', 'agent', 'working');},
	q{SELECT count(*) FROM worklist.list_checkpoints('p', 's', 'r1');},
	q{SELECT fence > 0 FROM worklist.claim_run('p', 's', 'r1', 'w-beta', '1 hour');},
	q{SELECT (s->>'tenant') || ' ' || (s->'tasks'->>'open') || ' ' || (s->'tasks'->>'completed') FROM worklist.stats() s;});
push @pids, shift @$out;
is_deeply($out, [ 't1:open:beta,t2:open:beta', 'working', '0', 't', 'beta 2 0' ],
	'B, in beta: its t1 is still open, its run r1 free to claim, its stats() its own');

($out) = txn($a, $acme, 'SELECT pg_backend_pid();',
	q{SELECT state FROM worklist.ticket_state('k1');},
	q{SELECT e.claim_holder FROM worklist.list_durable_runs('p') l, unnest(l.entries) e;});
push @pids, shift @$out;
is_deeply($out, [ 'open', 'w-acme' ], "A sees neither B's report nor B's lease");

is(scalar(keys %{ { map { $_ => 1 } @pids } }), 1,
	'all five transactions of A and B ran on one server connection (pid ' . $pids[0] . ')');
my @servers = grep { /^S\s+app\s+postgres\s/ } @{ $pooler->admin('SHOW SERVERS') };
is(scalar(@servers), 1, 'and the pooler has one server connection for app');

($out, $err) = txn($a, q{SELECT current_setting('worklist.tenant');},
	q{SELECT count(*) FROM worklist.queue('{reviewer}');});
is_deeply($out, ['default'], 'a transaction that sets no tenant is in the default tenant');
like($err, qr/42501: permission denied for tenant "default"/, 'which app may not reach: 42501');

# --------------------------------------------------------------------
# The hazard: a session-level SET stays on the server connection
# --------------------------------------------------------------------
$a->query(q{SET worklist.tenant = 'acme';});
($out, $err) = $b->query(q{SELECT current_setting('worklist.tenant');
SELECT id || ':' || (payload->>'of') || ':' || state FROM worklist.task('t1');});
is($out, "acme\nt1:acme:completed", "after A's session-level SET, B's next statements run in A's tenant");
is($err, '', 'and nothing says so');
$a->query('RESET worklist.tenant;');
is($b->query(q{SELECT current_setting('worklist.tenant');}), 'default',
	'until somebody resets it on that server connection');

# --------------------------------------------------------------------
# Member bindings: one pool per login
# --------------------------------------------------------------------
$node->safe_psql('postgres', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('m1', 'members', '{reviewer}');
	SELECT worklist.open_task('m2', 'members', '{reviewer}');
});
my $ann = psql_session($pooler->connstr('ann'));
my $bob = psql_session($pooler->connstr('bob'));
my ($ann_out) = txn($ann, $acme, q{SELECT current_user || ' ' || pg_backend_pid();},
	q{SELECT id || ':' || holder FROM worklist.claim('m1', 'ann', '{reviewer}');});
my ($bob_out) = txn($bob, $acme, q{SELECT current_user || ' ' || pg_backend_pid();},
	q{SELECT id || ':' || holder FROM worklist.claim('m2', 'bob', '{reviewer}');});
my ($ann_user, $ann_pid) = split / /, $ann_out->[0];
my ($bob_user, $bob_pid) = split / /, $bob_out->[0];
is("$ann_user $ann_out->[1], $bob_user $bob_out->[1]", 'ann m1:ann, bob m2:bob',
	'through the pooler, ann and bob each run as themselves and claim as themselves');
isnt($ann_pid, $bob_pid, 'on server connections of their own');
($out, $err) = txn($ann, $acme, q{SELECT worklist.complete('m2', 'bob', '{}');});
like($err, qr/42501: .*actor/, 'ann cannot complete as bob: 42501');
($out, $err) = txn($bob, $acme, q{SELECT worklist.release('m1', 'ann');});
like($err, qr/42501: .*actor/, 'nor bob release as ann');
my %pools = map { my @f = split; ("$f[0] $f[1]" => 1) } @{ $pooler->admin('SHOW POOLS') };
ok($pools{'postgres ann'} && $pools{'postgres bob'} && $pools{'postgres app'},
	'the pooler keeps a pool per login: ' . join(', ', sort keys %pools));

my $forced = psql_session($pooler->connstr('ann', 'shared'));
is($forced->query('SELECT current_user;'), 'app',
	'a [databases] entry with user= runs ann as app, and so under app\'s binding: never force a user for member logins');
$forced->quit;

# --------------------------------------------------------------------
# Notifications: listeners connect directly, workers through the pooler
# --------------------------------------------------------------------
my $channel = $node->safe_psql('postgres', q{SET worklist.tenant = 'acme'; SELECT worklist.channel()});
my $client = "$FindBin::Bin/../tools/notify_client.py";

sub listener
{
	my ($dsn) = @_;
	my %l = (in => '', out => '', err => '');
	$l{h} = IPC::Run::start([ '/usr/bin/python3', $client, 'listen', $dsn, 120, $channel ],
		'<', \$l{in}, '>', \$l{out}, '2>', \$l{err});
	my $t = time + 60;
	while ($l{out} !~ /READY/ && time < $t)
	{
		$l{h}->pump_nb;
		sleep 0.01;
	}
	die "listener did not start: $l{err}" unless $l{out} =~ /READY/;
	return \%l;
}

# What a listener counted, as "kind.event" => n.
sub sums
{
	my ($l) = @_;
	my %s;
	$l->{h}->pump_nb;
	for my $line (grep { /^\{/ } split /\n/, $l->{out})
	{
		my $p = decode_json(decode_json($line)->{payload});
		for my $kind (keys %$p)
		{
			$s{"$kind.$_"} += $p->{$kind}{$_} for keys %{ $p->{$kind} };
		}
	}
	return \%s;
}

my $direct = listener($node->connstr('postgres') . ' user=ann');
my $pooled = listener($pooler->connstr('bob'));

for my $i (1 .. 3)
{
	txn($a, $acme, qq{SELECT FROM worklist.open_task('n$i', 'notified', '{reviewer}');});
}
txn($a, $acme, q{SELECT FROM worklist.claim('n1', 'x', '{reviewer}');},
	q{SELECT FROM worklist.complete('n1', 'x', '{}');});
my %want = ('task.opened' => 3, 'task.claimed' => 1, 'task.completed' => 1);
my $until = time + 20;
sleep 0.1 while time < $until && !eq_hash(sums($direct), \%want);
is_deeply(sums($direct), \%want,
	'a listener connected directly hears what workers committed through the pooler');
sleep 1;
is_deeply(sums($pooled), {}, 'a listener connected through the pooler hears nothing');
$_->{h}->kill_kill for ($direct, $pooled);

# --------------------------------------------------------------------
# Programs through the pooler: given only the pooler's PG* environment
# (client packages are run the same way, setting the tenant per
# transaction with set_config('worklist.tenant', ..., true))
# --------------------------------------------------------------------
{
	local %ENV = (%ENV, $pooler->env('app'));
	delete $ENV{PGOPTIONS};
	my ($stdout, $stderr) = run_command([ 'psql', '-XAtq', '-c',
		q{BEGIN; SELECT FROM set_config('worklist.tenant', 'beta', true);
		  SELECT string_agg(id, ',' ORDER BY id) FROM worklist.queue('{reviewer}'); COMMIT;} ]);
	is($stdout, 't1,t2', 'a program given only the pooler\'s PGHOST, PGPORT, PGUSER and PGDATABASE works in its tenant');
}

# --------------------------------------------------------------------
# The client packages of two tenants through the pooler, on one server
# connection: each Worklist / Client sets its tenant per transaction
# --------------------------------------------------------------------
SKIP:
{
	my $clients = "$FindBin::Bin/../../clients";
	my ($which) = run_command([ 'sh', '-c', 'command -v node; command -v npm' ]);
	skip 'no node or npm for clients/node', 4 unless $which =~ /node.*\n.*npm/s;
	# a copy of the Node package with its one dependency (pg), installed
	# from its lock file
	my $pkg = PostgreSQL::Test::Utils::tempdir('node-client');
	system('cp', '-r', "$clients/node/index.js", "$clients/node/lib",
		"$clients/node/package.json", "$clients/node/package-lock.json", $pkg) == 0
	  or die 'cp of clients/node failed';
	my ($npm_out, $npm_err) = run_command([ 'sh', '-c',
		"cd '$pkg' && npm ci --no-audit --no-fund --loglevel=error" ]);
	note "npm ci: $npm_err" if $npm_err ne '';

	local %ENV = (%ENV, $pooler->env('app'));
	delete $ENV{PGOPTIONS};
	# Node: both tenants' calls interleaved (each pool has two client
	# connections to the pooler), the same task ids in both tenants
	my $node_prog = q{
		import { Worklist } from './index.js';
		const wls = ['acme', 'beta'].map((tenant) => new Worklist({ tenant, max: 2 }));
		await Promise.all([...Array(20).keys()].map((i) => wls[i % 2].openTask(
			`node-${i >> 1}`, 'pooled', ['reviewer'], { payload: { tenant: wls[i % 2].tenant } })));
		const out = {};
		for (const wl of wls) {
			const seen = await Promise.all([wl.forCase('pooled'), wl.task('node-0'), wl.channel()]);
			out[wl.tenant] = seen[0].map((t) => `${t.id}:${t.payload.tenant}`).sort();
			out[wl.tenant + ' channel'] = seen[2];
			out[wl.tenant + ' backend'] = (await wl.pool.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
		}
		console.log(JSON.stringify(out));
		for (const wl of wls) await wl.end();
	};
	my ($nout, $nerr) = run_command([ 'sh', '-c',
		"cd '$pkg' && node --input-type=module -e \"\$0\"", $node_prog ]);
	note "node: $nerr" if $nerr ne '';
	# Python: two Clients, one connection each, alternating
	local $ENV{PYTHONPATH} = "$clients/python";
	my $py_prog = q{
import json
import worklist
wls = [worklist.Client(t) for t in ('acme', 'beta')]
for i in range(10):
    for wl in wls:
        wl.open_task('py-%d' % i, 'pooled', ['reviewer'], payload={'tenant': wl.tenant})
out = {}
for wl in wls:
    out[wl.tenant] = sorted('%s:%s' % (t.id, t.payload['tenant']) for t in wl.for_case('pooled'))
    out[wl.tenant + ' channel'] = wl.channel()
    conn = wl.connect()
    with conn.cursor() as cur:
        cur.execute('SELECT pg_backend_pid()')
        out[wl.tenant + ' backend'] = cur.fetchone()[0]
    wl.disconnect(conn)
    wl.close()
print(json.dumps(out))
};
	# -P: not the current directory first on sys.path (the build's worklist.so)
	my ($pout, $perr) = run_command([ '/usr/bin/python3', '-P', '-c', $py_prog ]);
	note "python: $perr" if $perr ne '';

	my %ids = map { my $t = $_; $t => [ sort map({ "node-$_:$t" } 0 .. 9) ] } qw(acme beta);
	my $n = eval { decode_json($nout) } // {};
	is_deeply([ @$n{qw(acme beta)} ], [ @ids{qw(acme beta)} ],
		'Node: the Worklists of acme and beta through the pooler each see only their own tenant');
	my %both = map {
		my $t = $_;
		$t => [ sort(@{ $ids{$t} }, map({ "py-$_:$t" } 0 .. 9)) ]
	} qw(acme beta);
	my $p = eval { decode_json($pout) } // {};
	is_deeply([ @$p{qw(acme beta)} ], [ @both{qw(acme beta)} ],
		'Python: the Clients of acme and beta each see their own tenant, the Node tasks of it included');
	ok(defined $n->{'acme channel'} && $n->{'acme channel'} ne $n->{'beta channel'}
		  && $n->{'acme channel'} eq ($p->{'acme channel'} // ''),
		'channel() answers per tenant in both packages');
	my @backends = map { $_ // 'none' } (@$n{ 'acme backend', 'beta backend' }, @$p{ 'acme backend', 'beta backend' });
	note "server backends: @backends";
	ok($backends[0] =~ /^\d+$/ && !grep({ $_ ne $backends[0] } @backends),
		'and all of them went through one server connection');
}

$_->quit for ($a, $b, $ann, $bob);
$pooler->stop;
$node->stop;
done_testing();
