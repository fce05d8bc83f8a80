# The metrics scraped through Debian's prometheus-postgres-exporter with
# the queries file the repository ships (contrib/prometheus/queries.yaml),
# as doc/operations.md ("Metrics for Prometheus") says to run it: one
# exporter, pointed at one database with the extension and discovering the
# others, logged in as a member of pg_monitor that is bound to no tenant.
#
# After a scripted workload in two databases -- claims, a conflict, a
# take-over, a claim timeout, a lease reclaim and a stale fenced write,
# expiries and escalations by the sweeper, and a tenant whose every batch
# fails -- /metrics has every counter of stats() and every figure of the
# sweeper's status, per database and tenant, with the values stats() and
# sweeper_status give; every series is labelled with names and states
# only, never an id; and the Grafana dashboard beside the queries file is
# valid JSON that names only metrics the exporter produces.
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

require_packages('prometheus-postgres-exporter');

my $contrib = "$FindBin::Bin/../../contrib/prometheus";
my $node = PostgreSQL::Test::Cluster->new('metrics');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'worklist'
worklist.sweep_interval = 100
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE DATABASE app1;
	CREATE DATABASE app2;
	CREATE ROLE metrics LOGIN IN ROLE pg_monitor;
});
$node->safe_psql($_, 'CREATE EXTENSION worklist') for qw(app1 app2);

# The workload.  app1, tenant acme: a claim, a conflicting claim, a
# take-over and a completion; a claim_next; a task the sweeper expires; a
# claim the sweeper releases past its timeout; a task left pending; a lease
# reclaimed after it expired, a stale fenced write refused, a checkpoint;
# a ticket being worked on and one the watchdog escalates.  app1, tenant
# beta: one claim.  app2, tenant acme (the same name in another database):
# one pending task; tenant poison: a ticket whose stored state is corrupt,
# due at once, so that every batch of the tenant fails and its overdue task
# stays overdue.
$node->safe_psql('app1', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('a' || g, 'c', '{r}') FROM generate_series(1, 3) g;
	SELECT worklist.claim('a1', 'ann', '{r}');
	SELECT worklist.take_over('a1', 'ann', 'cy', '{r}');
	SELECT worklist.complete('a1', 'cy', '{}');
	SELECT worklist.claim_next('dee', '{r}');
	SELECT worklist.open_task('a4', 'c', '{r}', due_at => now() - interval '1 second');
	SELECT worklist.open_task('a5', 'c', '{r}', claim_timeout => '1 second');
	SELECT worklist.claim('a5', 'eve', '{r}');
	SELECT worklist.claim_run('p', 's', 'r1', 'w1', '1 minute');
	SELECT worklist.write_checkpoint('p', 's', 'r2', 'c1', '{}');
	SELECT worklist.open_ticket('k1', 'req', 'worked on', open_deadline => now() + interval '1 day');
	SELECT worklist.report('k1', 'agent', 'working');
	SELECT worklist.open_ticket('k2', 'req', 'escalated', open_deadline => now(), ladder => '{1 hour}');
	SET worklist.tenant = 'beta';
	SELECT worklist.open_task('b1', 'c', '{r}');
	SELECT worklist.claim('b1', 'ann', '{r}');
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('a6', 'c', '{r}');
	SELECT worklist.claim('a6', 'ann', '{r}');
});
my ($rc, $stdout, $stderr) = $node->psql('app1', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.claim('a6', 'bob', '{r}');});
like($stderr, qr/already claimed/, 'app1/acme: a claim conflict');
my $f1 = $node->safe_psql('app1', q{SET worklist.tenant = 'acme';
	SELECT fence FROM worklist.claim_run('p', 's', 'r1', 'w1', '1 minute')});
my $f2 = $node->safe_psql('app1', q{SET worklist.tenant = 'acme';
	SELECT fence FROM worklist.claim_run('p', 's', 'r1', 'w2', '1 minute', now() + interval '2 minutes')});
($rc, $stdout, $stderr) = $node->psql('app1', qq{SET worklist.tenant = 'acme';
	SELECT worklist.write_checkpoint('p', 's', 'r1', 'c1', '{}', fence => $f1)});
like($stderr, qr/fence/, 'app1/acme: a lease reclaimed, and a stale fenced write refused');
$node->safe_psql('app1', qq{SET worklist.tenant = 'acme';
	SELECT worklist.write_checkpoint('p', 's', 'r1', 'c2', '{}', fence => $f2)});
$node->safe_psql('app2', q{
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('x1', 'c', '{r}');
	SET worklist.tenant = 'poison';
	SELECT worklist.open_ticket('big', 'req', 'corrupt', open_deadline => now() + interval '1 hour');
	SELECT worklist.report('big', 'ann', 'working');
	SELECT worklist.open_task('p1', 'c', '{r}', due_at => now());
	ALTER TABLE worklist.ticket DISABLE TRIGGER verbs_only;
	UPDATE worklist.ticket
	   SET fold_state = '\x00ffffffffffffffff00ff00ff00ff00ff'::bytea, next_check = '-infinity'
	 WHERE tenant = 'poison';
	ALTER TABLE worklist.ticket ENABLE TRIGGER verbs_only;
});
ok($node->poll_query_until('app1', q{
	SELECT (SELECT state FROM worklist.task WHERE tenant = 'acme' AND id = 'a4') = 'expired'
	   AND (SELECT holder IS NULL FROM worklist.task WHERE tenant = 'acme' AND id = 'a5')
	   AND (SELECT tickets_escalated = 1 FROM worklist.sweeper_status)}),
	'app1: the sweeper expires, releases and escalates')
  or diag $node->safe_psql('app1', q{
	SELECT string_agg(id || ' ' || state || ' ' || coalesce(holder, '-'), ', ') FROM worklist.task;
	SELECT row_to_json(s) FROM worklist.sweeper_status s;
	SELECT row_to_json(k) FROM worklist.ticket k});
ok($node->poll_query_until('app2', q{SELECT tenants_in_error = '{poison}' FROM worklist.sweeper_status}),
	'app2: the sweeper fails on tenant poison');

# The role the exporter logs in as reaches no tenant.
($rc, $stdout, $stderr) = $node->psql('app1', q{SET worklist.tenant = 'acme'; SELECT worklist.stats()},
	extra_params => [ '-U', 'metrics' ]);
like($stderr, qr/permission denied for tenant "acme"/, 'the exporter\'s role may not reach any tenant');

# The exporter.
my $port = free_port();
my $dir = PostgreSQL::Test::Utils::tempdir('exporter');
my $dsn = 'host=' . $node->host . ' port=' . $node->port . ' user=metrics dbname=app1 sslmode=disable';
my $exporter = start_process('prometheus-postgres-exporter', "$dir/exporter.log",
	{ DATA_SOURCE_NAME => $dsn },
	'/usr/bin/prometheus-postgres-exporter',
	"--web.listen-address=127.0.0.1:$port",
	"--extend.query-path=$contrib/queries.yaml",
	'--auto-discover-databases', '--include-databases=app2',
	'--log.level=info');
ok(wait_for_port($port), "the exporter listens on 127.0.0.1:$port");

# Scrape, with what SQL says just before and just after.
sub figures
{
	my %f;
	for my $db (qw(app1 app2))
	{
		for my $row (split /\n/, $node->safe_psql($db, q{
			CREATE FUNCTION pg_temp.stats_of(t text) RETURNS jsonb LANGUAGE plpgsql AS $$
			BEGIN
				PERFORM set_config('worklist.tenant', t, true);
				RETURN worklist.stats();
			END $$;
			SELECT t.tenant || '|' || pg_temp.stats_of(t.tenant)::text
			  FROM (SELECT DISTINCT tenant FROM worklist.task
			        UNION SELECT tenant FROM worklist.ticket UNION SELECT tenant FROM worklist.run) t;
			SELECT '|' || row_to_json(s)::text FROM worklist.sweeper_status s;}))
		{
			my ($tenant, $json) = split /\|/, $row, 2;
			$f{$db}{ $tenant eq '' ? '' : $tenant } = decode_json($json);
		}
	}
	return \%f;
}

# Parse the text exposition format: name => [ [ {labels}, value ], ... ].
sub parse
{
	my ($text) = @_;
	my %m;
	for (split /\n/, $text)
	{
		next if /^#/ || !/^(\w+)(?:\{(.*)\})? (\S+)$/;
		my ($name, $labels, $value) = ($1, $2 // '', $3);
		my %l = $labels =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
		push @{ $m{$name} }, [ \%l, $value ];
	}
	return \%m;
}

# The value of one series (by its labels), or undef.
sub value
{
	my ($m, $name, %want) = @_;
	for my $s (@{ $m->{$name} // [] })
	{
		return $s->[1] unless grep { ($s->[0]{$_} // '') ne $want{$_} } keys %want;
	}
	return undef;
}

my $before = figures();
my ($status, $text);
my $until = time + 60;
do
{
	($status, $text) = http_get("http://127.0.0.1:$port/metrics");
	sleep 0.2 unless ($text // '') =~ /^worklist_tenant_runs\{.*datname="app2"/m;
} until (($text // '') =~ /^worklist_tenant_runs\{.*datname="app2"/m || time > $until);
my $after = figures();
is($status, 200, 'GET /metrics answers 200');
my $m = parse($text);
is(value($m, 'pg_up'), 1, 'the exporter is connected (pg_up 1)');
is(value($m, 'pg_exporter_user_queries_load_error', filename => "$contrib/queries.yaml"), 0,
	'and loaded the queries file');
is(value($m, 'pg_exporter_last_scrape_error'), 0, 'no query failed, in either database');

# Every counter of stats(), and the gauges that are not per state, per
# database and tenant.
my %counter = (claims => 'claims_total', claim_conflicts => 'claim_conflicts_total',
	take_overs => 'take_overs_total', claim_timeouts => 'claim_timeouts_total',
	lease_reclaims => 'lease_reclaims_total', stale_fence_refusals => 'stale_fence_refusals_total');
my %gauge = (overdue_tasks => 'tasks_overdue', runs => 'runs', live_leases => 'live_leases');
my @tenants = ([qw(app1 acme)], [qw(app1 beta)], [qw(app2 acme)], [qw(app2 poison)]);
for my $t (@tenants)
{
	my ($db, $tenant) = @$t;
	my $s = $after->{$db}{$tenant};
	my (@got, @want);
	for my $k (sort keys %counter)
	{
		push @got, "$k=" . (value($m, "worklist_tenant_$counter{$k}", datname => $db, tenant => $tenant) // 'missing');
		push @want, "$k=$s->{counters}{$k}";
	}
	for my $k (sort keys %gauge)
	{
		push @got, "$k=" . (value($m, "worklist_tenant_$gauge{$k}", datname => $db, tenant => $tenant) // 'missing');
		push @want, "$k=$s->{$k}";
	}
	is(join(' ', @got), join(' ', @want), "$db/$tenant: every counter of stats(), overdue tasks, runs, live leases");
	my @states;
	for my $kind (qw(task ticket))
	{
		my $per = $s->{"${kind}s"};
		for my $state (sort keys %$per)
		{
			my $v = value($m, 'worklist_items', datname => $db, tenant => $tenant, kind => $kind, state => $state);
			push @states, "$kind.$state" unless defined $v && $v == $per->{$state};
		}
	}
	is_deeply(\@states, [], "$db/$tenant: tasks and tickets in every state, as stats() counts them");
	my $age = value($m, 'worklist_tenant_oldest_pending_age_seconds', datname => $db, tenant => $tenant);
	my ($lo, $hi) = map {
		my $i = $_->{$db}{$tenant}{oldest_pending_age};
		defined $i ? $node->safe_psql('postgres', "SELECT extract(epoch FROM interval '$i')") : 0
	} ($before, $after);
	ok(defined $age && $age >= $lo - 0.001 && $age <= $hi + 0.001,
		"$db/$tenant: the oldest pending task's age ($age s, between $lo and $hi)");
	is(value($m, 'worklist_tenant_sweep_in_error', datname => $db, tenant => $tenant),
		$tenant eq 'poison' ? 1 : 0, "$db/$tenant: " . ($tenant eq 'poison' ? '' : 'not ') . 'in error');
}
my %hand = (claims => 4, claim_conflicts => 1, take_overs => 1, claim_timeouts => 1,
	lease_reclaims => 1, stale_fence_refusals => 1);
is(join(' ', map { "$_=" . value($m, "worklist_tenant_$counter{$_}", datname => 'app1', tenant => 'acme') } sort keys %hand),
	join(' ', map { "$_=$hand{$_}" } sort keys %hand),
	'app1/acme: the counters count what the workload did');
is(value($m, 'worklist_tenant_tasks_overdue', datname => 'app2', tenant => 'poison'), 1,
	'app2/poison: the task its failing batches cannot expire is overdue');
is(scalar(@{ $m->{worklist_tenant_runs} }), 4, 'no other tenant, in no other database');

# The sweeper of each database.
for my $db (qw(app1 app2))
{
	my ($b, $a) = ($before->{$db}{''}, $after->{$db}{''});
	my @fixed = qw(denied proceeded escalated tickets_escalated tickets_confirmed claims_released purged);
	is(join(' ', map { "$_=" . (value($m, "worklist_sweeper_${_}_total", datname => $db) // 'missing') } @fixed),
		join(' ', map { "$_=$a->{$_}" } @fixed), "$db: the sweeper's totals per action");
	my $ticks = value($m, 'worklist_sweeper_ticks_total', datname => $db);
	ok($ticks >= $b->{ticks} && $ticks <= $a->{ticks}, "$db: its ticks ($ticks)");
	is(value($m, 'worklist_sweeper_running', datname => $db), 1, "$db: it runs");
	my $age = value($m, 'worklist_sweeper_last_tick_age_seconds', datname => $db);
	ok($age >= 0 && $age < 10, "$db: its last tick $age s ago");
	my $duration = value($m, 'worklist_sweeper_last_duration_seconds', datname => $db);
	ok($duration >= 0 && $duration < 10, "$db: took $duration s");
	is(value($m, 'worklist_sweeper_tenants_in_error', datname => $db), scalar(@{ $a->{tenants_in_error} }),
		"$db: tenants in error: " . scalar(@{ $a->{tenants_in_error} }));
}
is(value($m, 'worklist_sweeper_denied_total', datname => 'app1'), 1, 'app1: the expiry under deny');
is(value($m, 'worklist_sweeper_claims_released_total', datname => 'app1'), 1, 'app1: the claim released');
is(value($m, 'worklist_sweeper_tickets_escalated_total', datname => 'app1'), 1, 'app1: the ticket escalated');

# Names and states only.
my %allowed = map { $_ => 1 } qw(server datname tenant kind state);
my @worklist = grep { /^worklist_/ } keys %$m;
my @bad = grep { my $n = $_; grep { grep { !$allowed{$_} } keys %{ $_->[0] } } @{ $m->{$n} } } @worklist;
is_deeply(\@bad, [], 'every worklist series is labelled with database, tenant, kind and state only');
my $series = join "\n", grep { /^worklist_/ } split /\n/, $text;
my @ids = grep { $series =~ /\b$_\b/ } qw(a1 a2 a3 a4 a5 a6 b1 x1 p1 k1 k2 big p s r1 r2 c1 c2 w1 w2 ann bob cy dee eve agent req);
is_deeply(\@ids, [], 'no id, actor or holder appears in any worklist series');

# The dashboard: valid JSON, naming only metrics the exporter produces.
my $dashboard = decode_json(slurp_file("$contrib/grafana-dashboard.json"));
my @exprs;
my $walk;
$walk = sub {
	my ($x) = @_;
	if (ref $x eq 'HASH')
	{
		for (keys %$x)
		{
			push @exprs, $x->{$_} if $_ eq 'expr' || $_ eq 'query' && !ref $x->{$_};
			$walk->($x->{$_});
		}
	}
	elsif (ref $x eq 'ARRAY') { $walk->($_) for @$x }
};
$walk->($dashboard);
my %named = map { $_ => 1 } map { /\b(worklist_\w+)/g } @exprs;
my @unknown = grep { !$m->{$_} } sort keys %named;
cmp_ok(scalar(keys %named), '>=', 20, 'the Grafana dashboard names ' . scalar(keys %named) . ' worklist metrics');
is_deeply(\@unknown, [], 'every one of them is produced by the exporter');

stop_process($exporter);
$node->stop;
done_testing();
