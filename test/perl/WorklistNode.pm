=pod

=head1 NAME

WorklistNode - a PostgreSQL::Test::Cluster with worklist, and the helpers
the TAP tests share

=head1 SYNOPSIS

  use WorklistNode qw(received wait_for sums);

  # initdb, the library preloaded, these settings, started
  my $node = WorklistNode->create('sweeper', conf => q{
  worklist.sweep_interval = 100
  }, extension => 'postgres');

  $node->wait_for_sweepers(1) or die 'no sweeper';
  my $verdict = $node->as('postgres', 'alice', 'acme', 'SELECT worklist.stats()');
  my $l = $node->listener(user => 'alice', channels => [ $channel ]);
  my $got = wait_for($l, 2);

=head1 DESCRIPTION

A subclass of PostgreSQL::Test::Cluster (every method of a cluster works
on it), so that a test says only what it tests.  The Makefile puts this
directory on prove's include path.

=cut

package WorklistNode;

use strict;
use warnings;

use parent qw(PostgreSQL::Test::Cluster);

use Exporter qw(import);
use File::Basename qw(dirname);
use File::Spec;
use IPC::Run;
use JSON::PP qw(decode_json);
use Time::HiRes qw(time sleep);

our @EXPORT_OK = qw(notify_client received sums sweepers_sql wait_for);

# this directory, whatever the current one becomes
my $here = File::Spec->rel2abs(dirname(__FILE__));

=pod

=head1 METHODS

=over

=item WorklistNode->create(name, %options)

A new cluster: initdb (with C<< init => { ... } >> passed on, such as
C<allows_streaming> or C<extra>), the library in
C<shared_preload_libraries> (unless C<< preload => 0 >>), the lines of
C<conf> appended to postgresql.conf, started (unless C<< start => 0 >>),
and C<CREATE EXTENSION worklist> run in the database C<extension> names,
if any.

=cut

sub create
{
	my ($class, $name, %opt) = @_;
	my $node = $class->new($name);

	$node->init(%{ $opt{init} // {} });
	my $conf = '';
	$conf .= "shared_preload_libraries = 'worklist'\n"
	  unless defined $opt{preload} && !$opt{preload};
	$conf .= $opt{conf} if defined $opt{conf};
	$node->append_conf('postgresql.conf', $conf) if $conf ne '';
	return $node if defined $opt{start} && !$opt{start};
	$node->start;
	$node->safe_psql($opt{extension}, 'CREATE EXTENSION worklist')
	  if defined $opt{extension};
	return $node;
}

=pod

=item $node->sweepers([where])

How many sweepers run (that meet where, a condition on pg_stat_activity).

=item $node->sweeper_pid([where])

The pid of the sweeper (that meets where).

=item $node->wait_for_sweepers(n, [where])

Wait until n sweepers run (that meet where); false when they never do.

=item $node->wait_for_launcher

Wait until the launcher runs; false when it never does.

=cut

sub sweepers
{
	my ($self, $where) = @_;
	return $self->safe_psql('postgres', sweepers_sql('count(*)', $where));
}

sub sweeper_pid
{
	my ($self, $where) = @_;
	return $self->safe_psql('postgres', sweepers_sql('pid', $where));
}

sub wait_for_sweepers
{
	my ($self, $n, $where) = @_;
	return $self->poll_query_until('postgres', sweepers_sql("count(*) = $n", $where));
}

sub wait_for_launcher
{
	my ($self) = @_;
	return $self->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'worklist launcher'});
}

=pod

=item $node->psql_as(db, role, tenant, sql)

Run sql in db as the login role, with C<worklist.tenant> set to tenant:
(exit status, output, error), as C<psql> returns them.

=item $node->as(db, role, tenant, sql)

The same, with verbose errors, summed up: C<ok:> and the output when it
succeeds, the SQLSTATE of the error when it fails.

=cut

sub psql_as
{
	my ($self, $db, $role, $tenant, $sql) = @_;
	return $self->psql($db, "SET worklist.tenant = '$tenant';\n$sql",
		extra_params => [ '-U', $role ]);
}

sub as
{
	my ($self, $db, $role, $tenant, $sql) = @_;
	my ($rc, $out, $err) = $self->psql($db,
		"\\set VERBOSITY verbose\nSET worklist.tenant = '$tenant';\n$sql",
		extra_params => [ '-U', $role ]);
	return "ok:$out" if $rc == 0;
	return $err =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1 : "error:$err";
}

=pod

=item $node->listener(%options)

A real LISTEN session (C<test/tools/notify_client.py listen>) on the
channels of C<< channels => [...] >>, in C<db> (default postgres), as
C<user> (default: the test's superuser), for at most C<seconds> (default
300); returned once it is READY.  Read it with C<received>, C<wait_for>
and C<sums>.

=back

=cut

sub listener
{
	my ($self, %opt) = @_;
	my $connstr = $self->connstr($opt{db} // 'postgres');
	$connstr .= " user=$opt{user}" if defined $opt{user};
	my %l = (in => '', out => '', err => '');
	$l{h} = IPC::Run::start(
		[ '/usr/bin/python3', notify_client(), 'listen', $connstr,
		  $opt{seconds} // 300, @{ $opt{channels} // [] } ],
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

=pod

=head1 FUNCTIONS

=over

=item sweepers_sql(what, [where])

The query of the sweepers that pg_stat_activity shows: C<SELECT what
FROM pg_stat_activity WHERE backend_type = 'worklist sweeper'>, and C<AND
where> when where is given.

=item notify_client()

The path of test/tools/notify_client.py.

=item received(listener)

What a listener received so far: a list of {at, channel, payload}.

=item wait_for(listener, n)

Wait until the listener has received at least n notifications (or 10
seconds), then a little longer for any that would come too many; returns
what it received.

=item sums(listener)

The sum of the counts of the payloads received, as "kind.event" => n.

=back

=cut

sub sweepers_sql
{
	my ($what, $where) = @_;
	my $sql = "SELECT $what FROM pg_stat_activity WHERE backend_type = 'worklist sweeper'";
	$sql .= " AND $where" if defined $where;
	return $sql;
}

sub notify_client
{
	return File::Spec->catfile($here, '..', 'tools', 'notify_client.py');
}

sub received
{
	my ($l) = @_;
	$l->{h}->pump_nb;
	return [ map { decode_json($_) } grep { /^\{/ } split /\n/, $l->{out} ];
}

sub wait_for
{
	my ($l, $n) = @_;
	my $t = time + 10;
	sleep 0.05 while @{ received($l) } < $n && time < $t;
	sleep 0.3;    # and anything that would come too many
	return received($l);
}

sub sums
{
	my ($l) = @_;
	my %s;
	for my $n (@{ received($l) })
	{
		next unless $n->{payload} =~ /^\{"(task|ticket|run)"/;
		my $p = decode_json($n->{payload});
		for my $kind (keys %$p)
		{
			$s{"$kind.$_"} += $p->{$kind}{$_} for keys %{ $p->{$kind} };
		}
	}
	return \%s;
}

1;
