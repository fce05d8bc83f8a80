# The sweeper keeps the message of a failed tick in worklist.sweeper_status
# (last_error), cut to the space shared memory gives it.  A message longer
# than that, in a multibyte encoding, must be cut at a character boundary:
# half a character is not valid text, and reading the view would hand the
# client bytes no encoding conversion accepts.
use strict;
use warnings;
use WorklistNode;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = WorklistNode->create('sweeper_error_text',
	init => { extra => [ '--encoding=UTF8', '--locale=C' ] }, conf => qq{
worklist.sweep_interval = 100
}, extension => 'postgres');

# A trigger of the owner that fails every expiry with a long message of
# two-byte characters, so that a cut at an odd number of bytes splits one.
$node->safe_psql('postgres', q{
	CREATE FUNCTION public.refuse_expiry() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		RAISE EXCEPTION '%', pg_catalog.repeat('é', 600);
	END
	$$;
	CREATE TRIGGER refuse_expiry BEFORE UPDATE ON worklist.task
		FOR EACH ROW EXECUTE FUNCTION public.refuse_expiry();
	SELECT worklist.open_task('t', 'c', '{r}', due_at => now() - interval '1 minute');
});
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM worklist.sweeper_status WHERE last_error IS NOT NULL})
  or die 'the sweeper recorded no error';

my ($rc, $out, $err) = $node->psql('postgres', q{
	SELECT octet_length(last_error) < 512,
	       convert_to(last_error, 'UTF8') IS NOT NULL,
	       last_error LIKE 'éé%é'
	  FROM worklist.sweeper_status WHERE last_error IS NOT NULL;
});
is($err, '', 'the recorded message is valid text');
is($out, 't|t|t', 'cut to the space kept, at a character boundary');
is($node->safe_psql('postgres',
		q{SELECT convert_to(last_error, 'LATIN1') IS NOT NULL FROM worklist.sweeper_status WHERE last_error IS NOT NULL}),
	't', 'and converts to another encoding');

$node->stop;
done_testing();
