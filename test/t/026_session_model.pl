# The model each session means: a call that names no model answers with
# the model mtdpp.model names, set per session, per role or per database,
# so that two sessions complete the same basket each with its own model and
# a training or an activation elsewhere changes neither.  With the setting
# empty and two models, such a call fails and names the setting; with one,
# that one answers.  A basket of items the model does not know is answered
# by popularity with one NOTICE per statement, however many baskets the
# statement completes.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('session_model');
load_planted($node, baskets => 600);
$node->safe_psql('postgres', q{
SELECT version FROM mtdpp_train('knn', 'train_lines', kind => 'itemknn');
CREATE ROLE app LOGIN;
GRANT USAGE ON SCHEMA mtdpp TO app;
GRANT SELECT ON mtdpp.models, mtdpp.items TO app;
GRANT SELECT ON mtdpp_models TO app;
});

my $basket = q{'{1,2,3}'};
my $complete = "SELECT string_agg(item_id::text, ',' ORDER BY rank) FROM mtdpp_complete($basket, 5)";
my $named = sub { return $node->safe_psql('postgres',
	"SELECT string_agg(item_id::text, ',' ORDER BY rank) FROM mtdpp_complete($basket, 5, '$_[0]')") };

# one model: it answers a call that names none
my $knn = $named->('knn');
is($node->safe_psql('postgres', $complete), $knn, 'one model: it answers a call that names none');

# two models, no setting: an error that names the setting and the models
$node->safe_psql('postgres', q{SELECT version FROM mtdpp_train('pop', 'train_lines', kind => 'popularity')});
my $pop = $named->('pop');
isnt($pop, $knn, 'the two models answer differently');
my ($ret, $out, $err) = $node->psql('postgres', $complete);
isnt($ret, 0, 'two models, no setting: a call that names none fails');
like($err, qr/no model is named, and mtdpp.model is not set: 2 models could answer.*HINT:.*mtdpp.model.*'knn', 'pop'/s,
	'... naming the setting and the models');

# two sessions, each with its own setting
my $A = $node->background_psql('postgres', on_error_stop => 0);
my $B = $node->background_psql('postgres', on_error_stop => 0);
$A->query_safe(q{SET mtdpp.model = 'knn'});
$B->query_safe(q{SET mtdpp.model = 'pop'});
is($A->query_safe($complete), $knn, 'session A completes with knn, the model it names');
is($B->query_safe($complete), $pop, 'session B completes the same basket with pop');
# a training and an activation elsewhere change neither
$node->safe_psql('postgres', q{
SELECT version FROM mtdpp_train('other', 'train_lines', kind => 'popularity');
SELECT mtdpp_activate('pop', 1);
});
is($A->query_safe($complete), $knn, 'after another training: session A still with knn');
is($B->query_safe($complete), $pop, 'and session B with pop');
$A->quit;
$B->quit;

# per role and per database; the session's own setting comes first
$node->safe_psql('postgres', q{ALTER DATABASE postgres SET mtdpp.model = 'pop'});
$node->safe_psql('postgres', q{ALTER ROLE app SET mtdpp.model = 'knn'});
is($node->safe_psql('postgres', $complete), $pop, "the database's setting: pop");
is($node->safe_psql('postgres', $complete, extra_params => [ '-U', 'app' ]), $knn,
	"role app's setting over the database's: knn");
is($node->safe_psql('postgres', "SET mtdpp.model = 'pop'; $complete", extra_params => [ '-U', 'app' ]), $pop,
	"the session's setting over the role's: pop");
is($node->safe_psql('postgres', q{SELECT name FROM mtdpp_models WHERE is_default}, extra_params => [ '-U', 'app' ]),
	'knn', 'mtdpp_models marks the model the setting names');
($ret, $out, $err) = $node->psql('postgres', "SET mtdpp.model = 'gone'; $complete");
like($err, qr/model "gone" does not exist.*DETAIL:  mtdpp.model names it/s,
	'a setting that names no model: the error says the setting named it');
$node->safe_psql('postgres', q{ALTER ROLE app RESET mtdpp.model; ALTER DATABASE postgres RESET mtdpp.model});

# a basket of items the model does not know: one NOTICE per statement
my $unknown = q{SELECT count(*) FROM generate_series(1, 50) g, mtdpp_complete(ARRAY[100000 + g], 3, 'knn')};
($ret, $out, $err) = $node->psql('postgres', $unknown);
is($out, '150', 'fifty baskets of unknown items are completed');
my @notices = $err =~ /NOTICE:  no item of the basket is known to model "knn": the answer is the most popular items/g;
is(scalar @notices, 1, 'with one NOTICE for the statement');
($ret, $out, $err) = $node->psql('postgres', "$unknown; $unknown");
@notices = $err =~ /NOTICE:  no item of the basket is known/g;
is(scalar @notices, 2, 'two statements in one query string: one NOTICE each');
($ret, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM mtdpp_complete(ARRAY[1, 100001], 3, 'knn')");
unlike($err, qr/no item of the basket is known/, 'a basket with one known item: not the NOTICE of an unknown basket');
like($err, qr/NOTICE:  mtdpp_complete ignored 1 item of a basket that model "knn" does not know/,
	'but the NOTICE that counts the item it ignores');
($ret, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM mtdpp_complete('{}', 3, 'knn')");
unlike($err, qr/NOTICE/, 'an empty basket, which asks for popularity: no NOTICE');

$node->stop;
done_testing();
