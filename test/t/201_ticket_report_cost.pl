# The cost of an append does not grow with the log: report on a ticket
# with 1,000 events costs at most twice report on a ticket with 10.
# (sql/ticket_cost.sql proves the same by counting the rows read; this
# measures time.)  Each measured report is rolled back, so the logs keep
# their length while being measured; the best of several rounds is taken
# so a busy machine does not decide the result.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

# the sweeper must not add escalations to the logs being measured
my $node = WorklistNode->create('ticket_cost', conf => qq{
worklist.sweep_interval = '1h'
}, extension => 'postgres');

$node->safe_psql('postgres', q{
	SET worklist.tenant = 'cost';
	SELECT worklist.open_ticket('t10', 'req', 'short log');
	SELECT worklist.open_ticket('t1000', 'req', 'long log');
	DO $$
	BEGIN
		FOR i IN 1..1000 LOOP
			PERFORM worklist.report('t1000', 'actor' || (i % 5), 'working',
				at => '2030-01-01'::timestamptz + i * interval '1 second');
			IF i <= 10 THEN
				PERFORM worklist.report('t10', 'actor' || (i % 5), 'working',
					at => '2030-01-01'::timestamptz + i * interval '1 second');
			END IF;
		END LOOP;
	END
	$$;
	VACUUM ANALYZE worklist.ticket;
});
is($node->safe_psql('postgres',
		q{SELECT string_agg(id || '=' || last_seq, ',' ORDER BY id) FROM worklist.ticket}),
	't10=10,t1000=1000', 'one log of 10 events, one of 1000');

# One round: n reports on a ticket, each in a transaction rolled back.
my $n = 300;
sub round
{
	my ($ticket) = @_;
	my $script = "SET worklist.tenant = 'cost';\n";
	for my $i (1 .. $n)
	{
		$script .= "BEGIN; SELECT (worklist.report('$ticket', 'bench', 'working', "
		  . "at => '2030-02-01'::timestamptz + interval '$i seconds')).state; ROLLBACK;\n";
	}
	my $start = time();
	$node->safe_psql('postgres', $script);
	return time() - $start;
}

# warm up, then alternate
round('t10');
round('t1000');
my ($best10, $best1000);
for (1 .. 5)
{
	my $a = round('t10');
	my $b = round('t1000');
	$best10 = $a if !defined $best10 || $a < $best10;
	$best1000 = $b if !defined $best1000 || $b < $best1000;
}
note(sprintf('report, best of 5 rounds of %d: 10 events %.1f ms, 1000 events %.1f ms (%.2fx)',
		$n, $best10 * 1000, $best1000 * 1000, $best1000 / $best10));
cmp_ok($best1000, '<=', 2 * $best10,
	'report at 1,000 events costs at most twice report at 10 events');

# the logs did not grow while being measured
is($node->safe_psql('postgres', q{SELECT sum(last_seq) FROM worklist.ticket}), '1010',
	'every measured report was rolled back');

$node->stop;
done_testing();
