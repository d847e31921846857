# A session caches the models it answers from; any change to the model
# tables, by mtdpp's functions or by hand in another session, must show in
# that session's very next statement.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('cache');
load_planted($node, baskets => 1000);
$node->safe_psql('postgres', "SELECT * FROM mtdpp_train('a', 'train_lines', epochs => 5, seed => 1, kind => 'multitask')");

my $q = q{SELECT string_agg(item_id || ':' || score, ',' ORDER BY rank) FROM mtdpp_complete('{1,2}', 5, 'a')};
my $q_default = q{SELECT string_agg(item_id || ':' || score, ',' ORDER BY rank) FROM mtdpp_complete('{11,12}', 5)};

# Session A stays open throughout; each of B's changes is a statement of
# its own session (safe_psql), and "fresh" is a new session too.
my $A = $node->background_psql('postgres', on_error_stop => 0);
$A->set_query_timer_restart;
$A->query_safe('\set VERBOSITY verbose');
sub fresh { return $node->safe_psql('postgres', $_[0]); }
sub B { return $node->safe_psql('postgres', $_[0]); }

my $v1 = $A->query_safe($q);
like($v1, qr/^(\d+:[-0-9.e]+,){4}\d+:[-0-9.e]+$/, 'A completes a basket with version 1');
is($A->query_safe($q), $v1, 'A answers the same twice (from its cache)');
is(fresh($q), $v1, 'a fresh session answers the same');

# B trains version 2, a different kind: it becomes the active version.
B("SELECT * FROM mtdpp_train('a', 'train_lines', kind => 'popularity')");
my $v2 = $A->query_safe($q);
isnt($v2, $v1, "A's next statement answers from version 2");
is($v2, fresh($q), 'as a fresh session does');

# B reactivates version 1.
B("SELECT mtdpp_activate('a', 1)");
is($A->query_safe($q), $v1, "A's next statement answers from version 1 again");

# By hand: B activates version 2 with plain UPDATEs.
B(q{
BEGIN;
UPDATE mtdpp.models SET active = false WHERE name = 'a';
UPDATE mtdpp.models SET active = true, activated_at = clock_timestamp() WHERE name = 'a' AND version = 2;
COMMIT;
});
is($A->query_safe($q), $v2, "a hand-made activation shows in A's next statement");

# By hand: B edits the factors of version 1 and reactivates it.
B(q{
UPDATE mtdpp.items SET factors = (SELECT array_agg(f * 0.5) FROM unnest(factors) AS f)
WHERE model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'a' AND version = 1);
SELECT mtdpp_activate('a', 1);
});
my $edited = $A->query_safe($q);
is($edited, fresh($q), "hand-edited factors show in A's next statement");
isnt($edited, $v1, 'the edit changed the answer');

# The default model (no name given): the only model; once B trains a
# second, the one A's mtdpp.model names, whatever B trains or activates.
my $d1 = $A->query_safe($q_default);
is($d1, fresh($q_default), 'A and a fresh session agree on the default model, the only one');
B("SELECT * FROM mtdpp_train('b', 'train_lines', epochs => 5, seed => 7, kind => 'multitask')");
my ($none, $none_failed) = $A->query($q_default);
ok($none_failed, "with a second model and mtdpp.model empty, A's next call without a model fails");
like($A->{stderr}, qr/ERROR:\s+42704: no model is named, and mtdpp.model is not set/, '... naming the setting');
$A->{stderr} = '';
$A->query_safe(q{SET mtdpp.model = 'b'});
my $d2 = $A->query_safe($q_default);
is($d2, fresh("SET mtdpp.model = 'b'; $q_default"), "A's default model is the one its setting names");
isnt($d2, $d1, 'the default model changed');
$A->query_safe(q{SET mtdpp.model = 'a'});
is($A->query_safe($q_default), $d1, 'set back to a, A answers with a');
B("SELECT * FROM mtdpp_train('b', 'train_lines', kind => 'popularity')");
is($A->query_safe($q_default), $d1, "a new version of b changes nothing for A's default");
$A->query_safe(q{RESET mtdpp.model});

# B renames a: A's next statement no longer finds it under the old name.
B("SELECT mtdpp_rename('a', 'a2')");
my ($out, $failed) = $A->query($q);
ok($failed, "after mtdpp_rename, A's next statement fails for the old name");
like($A->{stderr}, qr/ERROR:\s+42704:.*"a"/, 'with the unknown-model error (42704)');
$A->{stderr} = '';
is($A->query_safe($q =~ s/'a'\)/'a2')/r), fresh($q =~ s/'a'\)/'a2')/r),
	'and finds the model under its new name');
B("SELECT mtdpp_rename('a2', 'a')");
is($A->query_safe($q), fresh($q), 'renamed back, A finds it again');

# B drops a: A's next statement fails with the unknown-model error.
B("SELECT mtdpp_drop('a')");
($out, $failed) = $A->query($q);
ok($failed, "after mtdpp_drop, A's next statement fails");
like($A->{stderr}, qr/ERROR:\s+42704:.*"a"/, 'with the unknown-model error (42704)');
my ($ret, $fout, $ferr) = $node->psql('postgres', $q, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($ferr, qr/ERROR:\s+42704:.*"a"/, 'as a fresh session does');
$A->{stderr} = '';
is($A->query_safe('SELECT 1'), '1', 'A goes on working');

$A->quit;
done_testing();
