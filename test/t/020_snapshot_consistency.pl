# A statement completes with the model its snapshot sees in the model
# tables, inside transaction blocks too: a change committed by another
# session shows from the next statement under READ COMMITTED, and not before
# the transaction ends under REPEATABLE READ, as a SELECT on mtdpp.models
# would show it.  Privileges revoked by another session hold from the next
# statement, cached model or not.  Concurrent activations of one name queue.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('snapshot');
load_planted($node, baskets => 600);
$node->safe_psql('postgres', q{
SELECT * FROM mtdpp_train('a', 'train_lines', epochs => 3, seed => 1, kind => 'multitask');
SELECT * FROM mtdpp_train('a', 'train_lines', kind => 'popularity');
SELECT mtdpp_activate('a', 1);
});

my $q = q{SELECT string_agg(item_id::text, ',' ORDER BY rank) FROM mtdpp_complete('{1,2}', 5, 'a')};
my $active = q{SELECT version FROM mtdpp.models WHERE name = 'a' AND active};
sub B { return $node->safe_psql('postgres', $_[0]); }
my $v1 = B($q);
B("SELECT mtdpp_activate('a', 2)");
my $v2 = B($q);
B("SELECT mtdpp_activate('a', 1)");
isnt($v1, $v2, 'versions 1 and 2 complete differently');

my $A = $node->background_psql('postgres', on_error_stop => 0);

# READ COMMITTED: each statement sees what was committed before it.
$A->query_safe('BEGIN');
is($A->query_safe($q), $v1, 'in a transaction block, A completes with version 1');
B("SELECT mtdpp_activate('a', 2)");
is($A->query_safe($q), $v2, "A's next completion uses version 2, in the same transaction");
is($A->query_safe($active), '2', "as A's next SELECT sees version 2 active");
$A->query_safe('COMMIT');

# REPEATABLE READ: the transaction's snapshot decides, to its end.
$A->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($A->query_safe($q), $v2, 'a repeatable read transaction completes with version 2');
B("SELECT mtdpp_activate('a', 1)");
is($A->query_safe($active), '2', 'its snapshot still sees version 2 active');
is($A->query_safe($q), $v2, 'and it still completes with version 2');
$A->query_safe('COMMIT');
is($A->query_safe($q), $v1, 'the next transaction completes with version 1');

# a repeatable read transaction that starts after a change sees it, and the
# cached entry read by an older snapshot does not outlive its transaction
B("SELECT mtdpp_activate('a', 2)");
$A->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($A->query_safe($q), $v2, 'a new repeatable read transaction sees version 2');
B("SELECT mtdpp_activate('a', 1)");
is($A->query_safe($q), $v2, 'and keeps it after another activation');
$A->query_safe('COMMIT');
is($A->query_safe($q), $v1, 'after it, version 1 answers again');
is($A->query_safe($q), $v1, 'from the cache too');

# dropped while A is inside a transaction block
B("SELECT * FROM mtdpp_train('c', 'train_lines', kind => 'popularity')");
$A->query_safe('BEGIN');
ok($A->query_safe(q{SELECT count(*) FROM mtdpp_complete('{1}', 3, 'c')}) == 3, 'A completes with model c');
B("SELECT mtdpp_drop('c')");
my ($out, $failed) = $A->query(q{SELECT count(*) FROM mtdpp_complete('{1}', 3, 'c')});
ok($failed, 'after another session drops c, the same transaction no longer completes with it');
like($A->{stderr}, qr/model "c" does not exist/, 'with the unknown-model error');
$A->{stderr} = '';
$A->query_safe('ROLLBACK');

# privileges revoked by another session hold from A's next statement
B(q{
CREATE ROLE app;
GRANT USAGE ON SCHEMA mtdpp TO app;
GRANT SELECT ON mtdpp.models, mtdpp.items TO app;
});
$A->query_safe('SET ROLE app');
is($A->query_safe($q), $v1, 'role app completes');
B('REVOKE SELECT ON mtdpp.items FROM app');
($out, $failed) = $A->query($q);
ok($failed, 'after a REVOKE in another session, the cached model no longer answers app');
like($A->{stderr}, qr/permission denied for table items/, 'with a permission error');
$A->{stderr} = '';
B('GRANT SELECT ON mtdpp.items TO app');
is($A->query_safe($q), $v1, 'granted again, it answers');
B('REVOKE USAGE ON SCHEMA mtdpp FROM app');
($out, $failed) = $A->query($q);
ok($failed, 'after USAGE on schema mtdpp is revoked, app gets no completion');
like($A->{stderr}, qr/permission denied for schema mtdpp/, 'with a permission error');
$A->{stderr} = '';
$A->query_safe('RESET ROLE');
$A->quit;

# two concurrent activations of one name queue instead of colliding
my $C = $node->background_psql('postgres', on_error_stop => 0);
my $D = $node->background_psql('postgres', on_error_stop => 0);
$C->query_safe('BEGIN');
$C->query_safe("SELECT mtdpp_activate('a', 2)");
$D->query_until(qr/started/, q{\echo started
SELECT mtdpp_activate('a', 1);
});
ok($node->poll_query_until('postgres',
		q{SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted}),
	'the second activation waits for the first');
$C->query_safe('COMMIT');
$node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_locks WHERE locktype = 'advisory'});
like($D->query_safe('SELECT 1'), qr/^\d+\n1$/, 'the second activation succeeded');
like($D->{stderr}, qr/^$/, 'without an error');
is(B($active), '1', 'the later activation won: version 1 is active');
is(B(q{SELECT count(*) FROM mtdpp.models WHERE name = 'a' AND active}), '1', 'one active version');
$C->quit;
$D->quit;

done_testing();
