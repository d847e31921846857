# A warm start's own settings: it continues the learning-rate schedule of
# the model it starts from, trains at most warm_epochs with warm_patience,
# each epoch on every new basket and a sample of the old ones, and measures
# on at most a quarter of the new baskets; all of it recorded in the model's
# hyperparams.  Explicit settings win, and a warm start that learns nothing
# keeps the earlier model's parameters.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('warm');
load_planted($node, baskets => 3000);

# order lines arriving in order id order: yesterday's are the first 85%
$node->safe_psql('postgres', q{
CREATE VIEW early_lines AS
SELECT * FROM train_lines
WHERE order_id <= (SELECT percentile_disc(0.85) WITHIN GROUP (ORDER BY order_id)
                   FROM split WHERE role = 'train');
SELECT * FROM mtdpp_train('shop', 'early_lines', epochs => 6, seed => 1, kind => 'multitask');
});

sub sql { return $node->safe_psql('postgres', $_[0]); }

# the hyperparameter KEY of version V of shop
sub hp
{
	my ($v, $key) = @_;
	return sql("SELECT hyperparams ->> '$key' FROM mtdpp.models WHERE name = 'shop' AND version = $v");
}

is(hp(1, 'warm_learning_rate'), '', 'a cold start chooses no warm learning rate');
is(hp(1, 'epochs'), '6', 'and records the epochs given');

# version 2: a warm start with every default
my ($stdout, $stderr);
$node->psql('postgres',
	q{SELECT version FROM mtdpp_train('shop', 'train_lines', seed => 2, warm_start => true, verbose => true, kind => 'multitask')},
	stdout => \$stdout, stderr => \$stderr);
is($stdout, '2', 'a warm start trains version 2');

my $best1 = sql("SELECT best_epoch FROM mtdpp.models WHERE name = 'shop' AND version = 1");
my $expected_rate = 0.01 * 0.95**$best1;
$expected_rate = 0.001 if $expected_rate < 0.001;
cmp_ok(abs(hp(2, 'warm_learning_rate') - $expected_rate), '<', 1e-12,
	"it goes on at the rate where version 1's schedule left it (0.01 x 0.95^$best1)");
is(hp(2, 'learning_rate'), '0.01', 'learning_rate itself is unchanged');
is(hp(2, 'epochs'), '10', 'it trains at most warm_epochs (10) epochs');
is(hp(2, 'patience'), '2', 'with warm_patience (2)');
cmp_ok(sql("SELECT cardinality(loss_history) FROM mtdpp.models WHERE name = 'shop' AND version = 2"),
	'<=', 10, 'and ran no more');

# the new baskets are those beyond the count version 1 was trained on
my ($n_all, $n_old) = split /\|/, sql(q{
SELECT (SELECT count(*) FROM split WHERE role = 'train'),
       (SELECT n_baskets FROM mtdpp.models WHERE name = 'shop' AND version = 1)});
my $n_new = $n_all - $n_old;
my $val = int($n_new / 4);
$val = 200 if $val < 200;
$val = int($n_all * 0.1) if int($n_all * 0.1) < $val;
is(hp(2, 'validation_baskets'), $val,
	"it measures on a quarter of the $n_new new baskets, at least 200 ($val)");
like($stderr, qr/warm start: an epoch trains on @{[$n_new - $val]} new baskets and \d+% of $n_old old ones/,
	'verbose reports the budget of baskets');
like($stderr, qr/learning rate [0-9.e-]+, at most 10 epochs, patience 2/,
	'and the rate, epochs and patience');

# an epoch of the warm start costs a share of an epoch over every basket
sql(q{SELECT version FROM mtdpp_train('all', 'early_lines', epochs => 6, seed => 1, kind => 'multitask');
    SELECT version FROM mtdpp_train('all', 'train_lines', epochs => 3, seed => 2, warm_start => true,
                                    params => '{"warm_old_baskets": 0, "patience": 100}', kind => 'multitask')});
my $per_epoch = sql("SELECT n_examples / cardinality(loss_history) FROM mtdpp.models WHERE name = 'all' AND version = 2");
my $budget = sql("SELECT n_examples / cardinality(loss_history) FROM mtdpp.models WHERE name = 'shop' AND version = 2");
cmp_ok($budget, '<', 0.6 * $per_epoch,
	"an epoch trains on new baskets and a sample of the old ($budget examples, $per_epoch with warm_old_baskets 0)");

# a chain of warm starts goes on with the schedule of the one before
sql(q{SELECT version FROM mtdpp_train('shop', 'train_lines', seed => 3, warm_start => true, kind => 'multitask')});
my $best2 = sql("SELECT coalesce(best_epoch, 0) FROM mtdpp.models WHERE name = 'shop' AND version = 2");
my $chained = hp(2, 'warm_learning_rate') * 0.95**$best2;
$chained = 0.001 if $chained < 0.001;
cmp_ok(abs(hp(3, 'warm_learning_rate') - $chained), '<', 1e-12,
	'version 3 goes on from where version 2 left off, never below a tenth of learning_rate');

# explicit settings win
sql(q{SELECT version FROM mtdpp_train('shop', 'train_lines', epochs => 3, seed => 4, warm_start => true,
    params => '{"learning_rate": 0.004, "patience": 5, "validation_baskets": 50}', kind => 'multitask')});
is(hp(4, 'warm_learning_rate'), '0.004', 'an explicit learning_rate is where a warm start begins');
is(hp(4, 'epochs'), '3', 'explicit epochs win over warm_epochs');
is(hp(4, 'patience'), '5', 'explicit patience wins over warm_patience');
is(hp(4, 'validation_baskets'), '50', 'explicit validation_baskets win');
sql(q{SELECT version FROM mtdpp_train('shop', 'train_lines', seed => 5, warm_start => true,
    params => '{"warm_learning_rate": 0.02, "warm_epochs": 4, "warm_patience": 7}', kind => 'multitask')});
is(hp(5, 'warm_learning_rate'), '0.02', 'so does an explicit warm_learning_rate');
is(hp(5, 'epochs') . '/' . hp(5, 'patience'), '4/7', 'and warm_epochs, warm_patience');
is(hp(5, 'warm_start'), 'shop', 'the model started from is recorded');

# a warm start that learns nothing keeps the earlier model's parameters (task
# factors up to their sign, which enters every kernel squared)
sql(q{SELECT version FROM mtdpp_train('shop', 'train_lines', seed => 6, warm_start => true,
    params => '{"warm_learning_rate": 1e-9, "warm_epochs": 1}', kind => 'multitask')});
is(sql(q{
SELECT count(*) FILTER (WHERE abs(a.bias - b.bias) > 1e-6
                           OR (SELECT max(abs(x - y)) FROM unnest(a.factors, b.factors) AS u(x, y)) > 1e-5
                           OR (SELECT max(abs(abs(x) - abs(y))) FROM unnest(a.task_factors, b.task_factors) AS u(x, y)) > 1e-5),
       count(*)
FROM mtdpp.items a JOIN mtdpp.items b USING (item_id)
WHERE a.model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'shop' AND version = 5)
  AND b.model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'shop' AND version = 6)}),
	'0|60', 'a warm start at a negligible rate keeps every item\'s parameters');

# the budget keeps quality: the warm start completes the test baskets about
# as well as a cold start on the same lines
sql(q{SELECT version FROM mtdpp_train('cold', 'train_lines', seed => 2, kind => 'multitask')});
sql(q{SELECT mtdpp_activate('shop', 2)});
my $warm_mpr = sql(q{SELECT round(mpr::numeric, 2) FROM mtdpp_evaluate('shop', 'test_baskets')});
my $cold_mpr = sql(q{SELECT round(mpr::numeric, 2) FROM mtdpp_evaluate('cold', 'test_baskets')});
cmp_ok($warm_mpr, '>', $cold_mpr - 1.0, "the warm start's test MPR ($warm_mpr) is within a point of a cold start's ($cold_mpr)");

$node->stop;
done_testing();
