# The attacks the 0.3 trust model closes, each run as the attacker would
# run it -- a real login, its own connection -- and each shown refused
# with its SQLSTATE and leaving the victim's rows exactly as they were:
#   - a member of tenant acme completes a task as somebody else, claims
#     with an audience role it does not have, expires everybody's tasks
#     early by moving the sweep's clock, and steals a live lease by moving
#     claim_run's clock;
#   - a login bound to nothing creates a tenant by naming it (plants a
#     task, a ticket whose only authority is itself and a 1000-year lease
#     under ids the real owner will use later), and reads acme;
#   - the admin of one tenant (its lead) binds itself to another tenant.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('attacks', conf => qq{
worklist.sweep_interval = '1h'
});

# Every row of every table of the extension, as the owner sees them.
my $everything = q{
	SELECT string_agg(x, E'\n' ORDER BY x) FROM (
		SELECT 'task ' || t::text FROM worklist.task t
		UNION ALL SELECT 'ticket ' || t::text FROM worklist.ticket t
		UNION ALL SELECT 'event ' || e::text FROM worklist.ticket_event e
		UNION ALL SELECT 'run ' || r::text FROM worklist.run r
		UNION ALL SELECT 'checkpoint ' || c::text FROM worklist.run_checkpoint c
		UNION ALL SELECT 'lease ' || l::text FROM worklist.run_claim l
		UNION ALL SELECT 'binding ' || b::text FROM worklist.tenant_binding b
		UNION ALL SELECT 'retention ' || p::text FROM worklist.retention_policy p
	) s(x)};

$node->safe_psql('postgres', q{
	CREATE EXTENSION worklist;
	CREATE ROLE reviewers;
	CREATE ROLE approvers;
	CREATE ROLE alice LOGIN IN ROLE reviewers;
	CREATE ROLE bob LOGIN IN ROLE reviewers, approvers;
	CREATE ROLE mallory LOGIN;
	CREATE ROLE lead LOGIN;
	SELECT worklist.grant_tenant('acme', 'alice');
	SELECT worklist.grant_tenant('acme', 'bob');
	SELECT worklist.grant_tenant('team', 'lead', 'admin');
	SET worklist.tenant = 'acme';
	SELECT worklist.open_task('review-1', 'c', '{reviewers}', due_at => now() + interval '1 day');
	SELECT worklist.open_task('approve-1', 'c', '{approvers}', due_at => now() + interval '1 day');
	SELECT worklist.claim('review-1', 'bob', '{reviewers}');
	SELECT worklist.claim_run('p', 's', 'r', 'bob', '1 hour');
	SELECT worklist.open_ticket('k1', 'bob', 'a ticket');
});
my $before = $node->safe_psql('postgres', $everything);

# A member of acme.
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.complete('review-1', 'bob', '{"approve": true}')}),
	'42501', 'alice cannot complete a task as bob');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.release('review-1', 'bob')}),
	'42501', 'nor release his claim as bob');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.claim('approve-1', 'alice', '{approvers}')}),
	'42501', 'alice cannot claim with an audience role she does not have');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.claim_next('alice', '{approvers,reviewers}')}),
	'42501', 'nor slip it into claim_next among roles she has');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.sweep(now() + interval '2 days')}),
	'42501', 'alice cannot expire everybody\'s tasks by moving the sweep\'s clock');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.claim_run('p', 's', 'r', 'alice', '1 hour', now() + interval '2 hours')}),
	'42501', 'alice cannot steal bob\'s live lease by moving claim_run\'s clock');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.release_run('p', 's', 'r', 1, now() + interval '2 hours')}),
	'42501', 'nor move release_run\'s clock');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.report('k1', 'bob', 'abandoned', reason => 'quit')}),
	'42501', 'alice cannot report for bob on a ticket');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.close_ticket('k1', 'alice', 'done', at => now() - interval '1 day')}),
	'42501', 'nor backdate an outcome');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.open_ticket('k2', 'bob', 'in the name of bob')}),
	'42501', 'nor open a ticket in bob\'s name');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.set_retention(tasks => '1 second')}),
	'42501', 'nor set the tenant\'s retention');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.grant_tenant('acme', 'mallory', 'admin')}),
	'42501', 'nor bind anybody to acme');
is($node->as('postgres', 'alice', 'acme', q{SELECT worklist.rotate_channel()}) =~ /^(42501|42883)$/ ? 'refused' : 'allowed',
	'refused', 'nor rotate its notification channel');
is($node->safe_psql('postgres', $everything), $before, 'acme is exactly as it was');
# ... while what she may do, she does.
is($node->as('postgres', 'alice', 'acme', q{SELECT (worklist.claim_next('alice', '{reviewers}')).id}), 'ok:',
	'alice may claim as herself with her own roles (nothing left for reviewers)');

# A login bound to nothing.
$before = $node->safe_psql('postgres', $everything);
for my $tenant ('acme', 'acme-next-year', 'brand-new')
{
	is($node->as('postgres', 'mallory', $tenant, q{SELECT worklist.open_task('review-2', 'c', '{reviewers}')}),
		'42501', "mallory cannot plant a task in tenant $tenant");
	is($node->as('postgres', 'mallory', $tenant, q{SELECT worklist.open_ticket('k9', 'mallory', 'mine', authorities => '{mallory}')}),
		'42501', "nor a ticket only she may close in tenant $tenant");
	is($node->as('postgres', 'mallory', $tenant, q{SELECT worklist.claim_run('p', 's', 'next', 'mallory', '1000 years')}),
		'42501', "nor a 1000-year lease in tenant $tenant");
	is($node->as('postgres', 'mallory', $tenant, q{SELECT worklist.grant_tenant('} . $tenant . q{', 'mallory', 'admin')}),
		'42501', "nor bind herself to tenant $tenant");
}
is($node->as('postgres', 'mallory', 'acme', q{SELECT count(*) FROM worklist.task}), '42501',
	'mallory has no privilege on the tables');
$node->safe_psql('postgres', 'GRANT SELECT ON ALL TABLES IN SCHEMA worklist TO mallory');
is($node->as('postgres', 'mallory', 'acme', q{SELECT count(*) FROM worklist.task}), 'ok:0',
	'and granted SELECT she sees no row of acme');
is($node->as('postgres', 'mallory', 'acme', q{SELECT count(*) FROM worklist.bindings}), 'ok:0',
	'nor any binding');
is($node->safe_psql('postgres', $everything), $before, 'nothing was created anywhere');

# The lead of another tenant, its admin.
is($node->as('postgres', 'lead', 'team', q{SELECT worklist.grant_tenant('team', 'mallory')}), 'ok:',
	'the lead binds people to its own tenant');
$before = $node->safe_psql('postgres', $everything);
is($node->as('postgres', 'lead', 'team', q{SELECT worklist.grant_tenant('acme', 'lead', 'admin')}), '42501',
	'but cannot bind itself to acme');
is($node->as('postgres', 'lead', 'acme', q{SELECT worklist.grant_tenant('acme', 'lead', 'admin')}), '42501',
	'not even with the tenant setting pointing at acme');
is($node->as('postgres', 'lead', 'team', q{SELECT worklist.revoke_tenant('acme', 'bob')}), '42501',
	'nor unbind acme\'s members');
is($node->as('postgres', 'lead', 'acme', q{SELECT worklist.erase_tenant()}), '42501',
	'nor erase acme');
is($node->safe_psql('postgres', $everything), $before, 'acme is exactly as it was');

$node->stop;
done_testing();
