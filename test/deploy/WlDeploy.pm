# Helpers of the deployment tests (test/deploy/*.pl): the packages they
# need, processes started in process groups of their own and stopped when
# the test ends (also when it fails), free ports on 127.0.0.1, psql
# sessions through any address, PgBouncer in front of a cluster, and HTTP.
#
# Every process a test starts through start_process() is stopped at the
# end of the test: its whole process group gets SIGTERM, then SIGKILL
# after ten seconds.  Clusters made with PostgreSQL::Test::Cluster stop
# themselves as usual.
package WlDeploy;

use strict;
use warnings;

use Exporter 'import';
use FindBin;
use HTTP::Tiny;
use IO::Socket::INET;
use IPC::Run;
use POSIX qw(setsid WNOHANG);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

our @EXPORT = qw(require_packages free_port start_process stop_process
  wait_for_port psql_session pgbouncer http_get);

# ----------------------------------------------------------------------
# Packages
# ----------------------------------------------------------------------

# The pinned versions, from test/deploy/packages.
sub pinned
{
	my %v;
	open my $fh, '<', "$FindBin::Bin/packages" or die "packages: $!";
	while (<$fh>)
	{
		next if /^\s*(#|$)/;
		my ($pkg, $version) = split;
		$v{$pkg} = $version;
	}
	return \%v;
}

# Skip the whole test (with the reason) when a package is not installed,
# fail it when one is installed at another version than the pinned one.
sub require_packages
{
	my @pkgs = @_;
	my $pinned = pinned();
	my %why = map { /^([^:]+): (.*)$/ ? ($1 => $2) : () }
	  split /\n/, $ENV{WL_DEPLOY_UNAVAILABLE} // '';
	for my $pkg (@pkgs)
	{
		die "$pkg is not in test/deploy/packages" unless $pinned->{$pkg};
		my $status = `dpkg-query -W -f='\${Status}|\${Version}' $pkg 2>/dev/null`;
		my ($state, $version) = split /\|/, $status;
		if (!defined $version || $state !~ /install ok installed/)
		{
			plan skip_all => "Debian package $pkg is not installed and could not be installed"
			  . ($why{$pkg} ? " (apt-get: $why{$pkg})" : ' (./run installs it as root)');
		}
		if ($version ne $pinned->{$pkg})
		{
			fail("$pkg is at version $version; this test is written for $pinned->{$pkg}"
				  . ' (test/deploy/packages)');
			done_testing();
			exit 1;
		}
	}
	return;
}

# ----------------------------------------------------------------------
# Processes and ports
# ----------------------------------------------------------------------

my %children;    # pid => name

# A free TCP port on 127.0.0.1, reserved against the other tests.
sub free_port
{
	return PostgreSQL::Test::Cluster::get_free_port();
}

# Start a command in a process group of its own, its output appended to
# $log, the environment being %ENV plus %$env; returns its pid.
sub start_process
{
	my ($name, $log, $env, @cmd) = @_;
	my $pid = fork // die "fork: $!";
	if ($pid == 0)
	{
		setsid();
		$ENV{$_} = $env->{$_} for keys %$env;
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log;
		open STDERR, '>&', \*STDOUT;
		exec @cmd or POSIX::_exit(127);
	}
	note "started $name (pid $pid): @cmd";
	$children{$pid} = $name;
	return $pid;
}

# Stop what start_process started: the whole process group, with $signal
# (TERM by default) and KILL after $grace seconds if anything is left.
sub stop_process
{
	my ($pid, $signal, $grace) = @_;
	$signal //= 'TERM';
	$grace //= 10;
	return unless delete $children{$pid};
	kill $signal, -$pid;
	my $until = time + $grace;
	while (time < $until && kill(0, -$pid))
	{
		waitpid($pid, WNOHANG);
		sleep 0.05;
	}
	kill 'KILL', -$pid if kill(0, -$pid);
	waitpid($pid, 0);
	return;
}

END
{
	my $rc = $?;
	stop_process($_) for keys %children;
	$? = $rc;
}

# Wait until something accepts connections on 127.0.0.1:$port.
sub wait_for_port
{
	my ($port, $timeout) = @_;
	my $until = time + ($timeout // 30);
	while (time < $until)
	{
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port,
			Proto => 'tcp', Timeout => 1);
		if ($s)
		{
			close $s;
			return 1;
		}
		sleep 0.1;
	}
	return 0;
}

# GET a URL; returns (status, content).
sub http_get
{
	my ($url) = @_;
	my $r = HTTP::Tiny->new(timeout => 60)->get($url);
	return ($r->{status}, $r->{content});
}

# ----------------------------------------------------------------------
# psql sessions
# ----------------------------------------------------------------------

# A psql process kept open on a connection string, for statements sent
# one by one in the same session: $s->query($sql) returns what it printed
# (unaligned, tuples only) and, in list context, also its errors (with
# their SQLSTATE: "ERROR:  42501: ...").
sub psql_session
{
	my ($connstr) = @_;
	my $self = bless { in => '', out => '', err => '', n => 0 }, 'WlDeploy::Session';
	$self->{timer} = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	$self->{h} = IPC::Run::start(
		[ 'psql', '-XAtq', '-v', 'VERBOSITY=verbose', '-d', $connstr, '-f', '-' ],
		'<', \$self->{in}, '>', \$self->{out}, '2>', \$self->{err}, $self->{timer});
	return $self;
}

package WlDeploy::Session;

use Time::HiRes qw(sleep);

sub query
{
	my ($self, $sql) = @_;
	my $banner = 'wl_session_' . ++$self->{n};
	$self->{in} .= "$sql\n\\echo $banner\n\\warn $banner\n";
	$self->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	$self->{h}->pump until $self->{out} =~ /^$banner\n/m && $self->{err} =~ /^$banner\n/m;
	(my $out = $self->{out}) =~ s/^$banner\n//m;
	(my $err = $self->{err}) =~ s/^$banner\n//m;
	$self->{out} = $self->{err} = '';
	chomp $out;
	return wantarray ? ($out, $err) : $out;
}

sub quit
{
	my ($self) = @_;
	$self->{in} .= "\\q\n";
	$self->{h}->finish;
	return;
}

# ----------------------------------------------------------------------
# PgBouncer
# ----------------------------------------------------------------------

package WlDeploy;

# Start PgBouncer in front of a PostgreSQL::Test::Cluster node, listening
# on 127.0.0.1 only, and return it.  Options:
#   users       logins it accepts (auth_type trust, no password)
#   databases   name => extra connection settings (e.g. 'user=app'), all
#               to the node's database postgres; default { postgres => '' }
#   pool_mode   default 'transaction'
#   pool_size   default_pool_size, default 1
#   settings    more [pgbouncer] lines
# $pooler->connstr($user, $db) is a libpq connection string through it,
# $pooler->env($user, $db) the PGHOST, PGPORT, PGUSER and PGDATABASE a
# client program takes, and $pooler->admin($command) runs a command of
# the admin console (SHOW POOLS, ...) and returns its rows.
sub pgbouncer
{
	my (%o) = @_;
	my $node = $o{node};
	my $dir = PostgreSQL::Test::Utils::tempdir('pgbouncer');
	my $port = free_port();
	my $databases = $o{databases} // { postgres => '' };
	my @users = (@{ $o{users} // [] }, 'pgbouncer_admin');

	open my $ul, '>', "$dir/userlist.txt" or die $!;
	print $ul qq{"$_" ""\n} for @users;
	close $ul;
	open my $ini, '>', "$dir/pgbouncer.ini" or die $!;
	print $ini "[databases]\n";
	print $ini "$_ = host=" . $node->host . ' port=' . $node->port
	  . " dbname=postgres $databases->{$_}\n"
	  for sort keys %$databases;
	print $ini "\n[pgbouncer]\n", join("\n",
		"listen_addr = 127.0.0.1",
		"listen_port = $port",
		"unix_socket_dir =",
		"auth_type = trust",
		"auth_file = $dir/userlist.txt",
		"admin_users = pgbouncer_admin",
		"pool_mode = " . ($o{pool_mode} // 'transaction'),
		"default_pool_size = " . ($o{pool_size} // 1),
		"max_client_conn = 100",
		"ignore_startup_parameters = extra_float_digits",
		"logfile = $dir/pgbouncer.log",
		"pidfile = $dir/pgbouncer.pid",
		@{ $o{settings} // [] }), "\n";
	close $ini;

	my $pid = start_process('pgbouncer', "$dir/pgbouncer.out", {},
		'/usr/sbin/pgbouncer', "$dir/pgbouncer.ini");
	wait_for_port($port) or die "pgbouncer did not listen on 127.0.0.1:$port";
	return bless { port => $port, dir => $dir, pid => $pid }, 'WlDeploy::PgBouncer';
}

package WlDeploy::PgBouncer;

sub port { return $_[0]->{port} }

sub connstr
{
	my ($self, $user, $db) = @_;
	return "host=127.0.0.1 port=$self->{port} user=$user dbname=" . ($db // 'postgres');
}

sub env
{
	my ($self, $user, $db) = @_;
	return (PGHOST => '127.0.0.1', PGPORT => $self->{port}, PGUSER => $user,
		PGDATABASE => $db // 'postgres');
}

sub admin
{
	my ($self, $command) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'psql', '-XAtq', '-F', ' ', '-d',
		$self->connstr('pgbouncer_admin', 'pgbouncer'), '-c', $command ],
		'>', \$out, '2>', \$err)
	  or die "pgbouncer admin console: $err";
	return [ split /\n/, $out ];
}

sub stop
{
	my ($self) = @_;
	WlDeploy::stop_process($self->{pid});
	return;
}

1;
