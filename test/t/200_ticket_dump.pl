# Tickets survive pg_dump and pg_restore whole: the log, its arrival
# order, the summaries (the fold state is stored in a portable form), and
# the guards.  After the restore the summaries still equal a fresh fold,
# appends continue the log where it stopped, and the watchdog finds what
# was due.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

# the sweeper must not add escalations to the logs being measured
my $node = WorklistNode->create('ticket_dump', conf => qq{
worklist.sweep_interval = '1h'
});

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
$node->safe_psql('src', 'CREATE EXTENSION worklist');

# Two tenants; tickets in every state the fold knows; a log with ties,
# demotions, closes, escalations and an implicit confirmation.
$node->safe_psql('src', q{
	SET timezone = 'UTC';
	SET worklist.tenant = 'dump_a';
	SELECT worklist.open_ticket('live', 'req', 'live', authorities => '{lead}',
		open_deadline => '2030-01-01 10:00', ladder => '{1 hour}');
	SELECT worklist.report('live', 'ann', 'working', not_before => '2030-01-01 12:00', at => '2030-01-01 09:00');
	SELECT worklist.report('live', 'bob', 'blocked', reason => 'waiting', at => '2030-01-01 09:00');
	SELECT worklist.close_ticket('live', 'agent', 'done', at => '2030-01-01 09:30');
	SELECT worklist.open_ticket('closed', 'req', 'closed', authorities => '{lead}');
	SELECT worklist.report('closed', 'ann', 'working', at => '2030-01-01 11:00');
	SELECT worklist.close_ticket('closed', 'lead', 'archived', reason => 'dup', at => '2030-01-01 10:00');
	SELECT worklist.open_ticket('confirmed', 'req', 'confirmed', confirm_window => '1 hour',
		open_deadline => '2040-01-01');
	SELECT worklist.report('confirmed', 'cy', 'delivered', at => '2030-01-01 09:00');
	SELECT worklist.sweep('2030-01-01 10:30');
	SET worklist.tenant = 'dump_b';
	SELECT worklist.open_ticket('live', 'req', 'other tenant');
	SELECT worklist.report('live', 'dee', 'abandoned', at => '2030-01-01 09:00');
});

my $snapshot = q{
	SET timezone = 'UTC';
	SELECT tenant, id, state, deadline, overdue_from, next_check, last_seq,
	       md5(fold_state) FROM worklist.ticket ORDER BY 1, 2;
	SELECT tenant, ticket, seq, actor, at, kind, value, reason, not_before, watchdog, confirmation
	  FROM worklist.ticket_event ORDER BY 1, 2, 3;
};
my $folds = q{
	SET timezone = 'UTC';
	SET worklist.tenant = 'dump_a';
	SELECT f.* FROM worklist.ticket t, worklist.ticket_state(t.id, '2030-01-01 12:00') f
	 WHERE t.tenant = 'dump_a' ORDER BY 1;
};
my $before = $node->safe_psql('src', $snapshot);
my $folds_before = $node->safe_psql('src', $folds);
like($before, qr/worklist\.watchdog\|.*\|escalation\|1/, 'the source log has an escalation');
like($before, qr/"implicit"/, 'and an implicit confirmation');

my $dump = $node->basedir . '/worklist.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-d', $node->connstr('src'), '-f', $dump ], 'pg_dump');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('dst'), $dump ], 'pg_restore');

is($node->safe_psql('dst', $snapshot), $before,
	'tickets, summaries and the log are restored unchanged, in arrival order');
is($node->safe_psql('dst', $folds), $folds_before, 'the folds are the same after the restore');

# the summary still equals a fresh fold of the restored log
is($node->safe_psql('dst', q{
	SET worklist.tenant = 'dump_a';
	SELECT count(*) FROM worklist.ticket t
	 WHERE t.tenant = 'dump_a'
	   AND (SELECT s::text FROM worklist.open_ticket(t.id, 'x', 'x') s)
	       <> worklist.ticket_state(t.id, now())::text;
}), '0', 'restored summaries equal a fresh fold');

# appends continue the log where it stopped; the watchdog finds what is due
is($node->safe_psql('dst', q{
	SET worklist.tenant = 'dump_a';
	SELECT (worklist.report('live', 'ann', 'delivered', at => '2030-01-01 11:00')).state;
	SELECT max(seq) FROM worklist.ticket_history('live');
}), "delivered\n5", 'an append after the restore continues the arrival order (4 events, then 5)');
is($node->safe_psql('dst', q{
	SET worklist.tenant = 'dump_a';
	SELECT tickets_escalated FROM worklist.sweep('2030-01-01 13:00');
}), '1', 'the watchdog acts on the restored tickets');

# the guards came back with the extension
my ($rc, $out, $err) = $node->psql('dst', 'DELETE FROM worklist.ticket_event');
isnt($rc, 0, 'the restored log is still append-only');
like($err, qr/DELETE on table "worklist.ticket_event" is not allowed/, 'with the same refusal');

$node->stop;
done_testing();
