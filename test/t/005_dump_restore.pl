# Trained models are data of ordinary tables that pg_dump keeps: restored
# into a new database (custom format, directory format with pg_restore -j 2,
# and plain format), every model, version,
# activation and metric is back, completions are identical, and training
# goes on from there.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('dump');
$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql('shop', 'CREATE EXTENSION mtdpp');
load_planted($node, dbname => 'shop', baskets => 1000);
$node->safe_psql('shop', q{
SELECT * FROM mtdpp_train('a', 'train_lines', epochs => 5, seed => 1, kind => 'multitask', test_share => 0.2);
SELECT * FROM mtdpp_evaluate('a', 'test_baskets');
SELECT * FROM mtdpp_train('a', 'train_lines', epochs => 3, seed => 2, activate => false, kind => 'multitask');
SELECT * FROM mtdpp_train('b', 'train_lines', kind => 'popularity');
SELECT * FROM mtdpp_train('c', 'train_lines', epochs => 3, seed => 3, position_col => 'position', target => 'last', kind => 'multitask');
SELECT * FROM mtdpp_train('d', 'train_lines', kind => 'itemknn', test_share => 0.2, promote => 'if_better:mpr');
SELECT * FROM mtdpp_train('e', 'train_lines', epochs => 2, rank => 4, position_col => 'position', kind => 'gru',
                          params => '{"learning_rate": 0.1}');
SELECT mtdpp_activate('a');
});

my %probe = (
	models => q{SELECT * FROM mtdpp_models},
	rows => q{SELECT model_id, name, version, kind, active, rank, n_items, n_baskets, n_examples, log_w,
	                 hyperparams, loss_history, val_mpr_history, final_loss, best_epoch, train_seconds,
	                 source, metrics, trained_at, trained_by, activated_at, weights,
	                 test, promotion, test_baskets
	          FROM mtdpp.models ORDER BY model_id},
	items => q{SELECT count(*) || ' ' || md5(string_agg(format('%s %s %s %s %s %s %s %s', model_id, item_id,
	                  popularity, bias, factors, task_factors, neighbors, neighbor_weights),
	                  E'\n' ORDER BY model_id, item_id))
	           FROM mtdpp.items},
	# a rollback under a rule compares the versions on the baskets version 1
	# kept: the same figures from the restored rows (undone, as before the dump)
	rule => q{
BEGIN;
SELECT mtdpp_activate('a', 1, promote => 'if_better:mpr');
SELECT promotion - 'decided_by' FROM mtdpp.models WHERE name = 'a' AND version = 1;
ROLLBACK},
	# the default model: the one the session's mtdpp.model names
	complete => q{
SET mtdpp.model = 'a';
SELECT string_agg(format('%s %s %s %s', coalesce(m.name, '(default)'), c.rank, c.item_id, c.score),
                  E'\n' ORDER BY b.order_id, m.name NULLS FIRST, c.rank)
FROM (SELECT order_id, array_remove(basket, held_out) AS basket FROM test_baskets ORDER BY order_id LIMIT 20) b
CROSS JOIN (VALUES (NULL), ('a'), ('b'), ('c'), ('d'), ('e')) AS m(name)
CROSS JOIN LATERAL mtdpp_complete(b.basket, 5, m.name) AS c},
);
# mtdpp_evaluate stores what it measures (its run time included) in the
# model's metrics: measured once here, before the snapshot and the dumps.
my $evaluate = q{SELECT baskets, mpr, precision_at_5, precision_at_10, precision_at_20
                  FROM mtdpp_evaluate('a', 'test_baskets')};
my $before_evaluate = $node->safe_psql('shop', $evaluate);
my %before = map { ($_ => $node->safe_psql('shop', $probe{$_})) } keys %probe;
my @models = split /\n/, $before{models};
is(scalar @models, 6, 'six models stored before the dump');
like($before{complete}, qr/^\(default\) 1 /, 'the default model answers');

my $dir = PostgreSQL::Test::Utils::tempdir;

sub check_restored
{
	my ($db, $how) = @_;
	for my $what (sort keys %probe)
	{
		is($node->safe_psql($db, $probe{$what}), $before{$what}, "$how: $what identical");
	}
	# mtdpp_evaluate rewrites the metrics: checked after the rest.
	is($node->safe_psql($db, $evaluate), $before_evaluate,
		"$how: mtdpp_evaluate gives the same figures");
	# Training goes on: the next version, under a new model_id (the
	# sequence was restored too).
	is($node->safe_psql($db,
			"SELECT version FROM mtdpp_train('a', 'train_lines', epochs => 2, seed => 4, kind => 'multitask')"),
		'3', "$how: training after the restore adds version 3");
	is($node->safe_psql($db, 'SELECT count(DISTINCT model_id) = 7 FROM mtdpp.models'), 't',
		"$how: seven models, each with its own model_id");
	return;
}

# Custom format, pg_restore.
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/shop.dump", '-d', $node->connstr('shop') ],
	'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored'), "$dir/shop.dump" ],
	'pg_restore into a new database');
check_restored('restored', 'pg_restore');

# Parallel restore: the two model tables' data load at the same time, in
# no order (no foreign key between them may refuse the items first).
$node->command_ok([ 'pg_dump', '-Fd', '-f', "$dir/shop.dir", '-d', $node->connstr('shop') ], 'pg_dump -Fd');
$node->safe_psql('postgres', 'CREATE DATABASE restored_j');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-j', '2', '-d', $node->connstr('restored_j'), "$dir/shop.dir" ],
	'pg_restore -j 2 into a new database');
check_restored('restored_j', 'pg_restore -j 2');

# A model's items go with it, as the foreign key's ON DELETE CASCADE did
# (by hand, and by mtdpp_drop), and its model_id does not change under them.
$node->safe_psql('restored_j', q{DELETE FROM mtdpp.models WHERE name = 'b'});
is($node->safe_psql('restored_j', q{SELECT mtdpp_drop('c')}), '1', 'mtdpp_drop drops model c');
is($node->safe_psql('restored_j',
		q{SELECT count(*) FROM mtdpp.items WHERE model_id NOT IN (SELECT model_id FROM mtdpp.models)}),
	'0', 'no item row outlives its model');
my ($ret, $out, $err) = $node->psql('restored_j',
	q{UPDATE mtdpp.models SET model_id = model_id + 1000 WHERE name = 'd'});
like($err, qr/model_id \d+ of mtdpp.models cannot change: mtdpp.items holds items of it/,
	'the model_id of a model with items does not change');
$node->safe_psql('restored_j', q{TRUNCATE mtdpp.models});
is($node->safe_psql('restored_j', q{SELECT count(*) FROM mtdpp.items}), '0', 'TRUNCATE takes the items along');

# Plain format, psql.
$node->command_ok([ 'pg_dump', '-f', "$dir/shop.sql", '-d', $node->connstr('shop') ], 'pg_dump (plain)');
$node->safe_psql('postgres', 'CREATE DATABASE restored_plain');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('restored_plain'), '-f', "$dir/shop.sql" ],
	'plain dump replayed by psql');
check_restored('restored_plain', 'plain dump');

done_testing();
