# The training aggregate under parallel query: the plan reads the order lines
# in parallel workers (Partial Aggregate under a Gather) and the model it
# returns is the one a serial plan returns, whatever the order the rows
# arrive in (the final function sorts the lines before fitting).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('parallel', 'max_worker_processes = 8', 'max_parallel_workers = 8');
load_planted($node, baskets => 20000);
$node->safe_psql('postgres', q{
CREATE TABLE orders_shuffled AS SELECT * FROM orders ORDER BY md5(order_id || ':' || item_id);
ANALYZE orders_shuffled;
});
my $lines = $node->safe_psql('postgres', 'SELECT count(*) FROM orders');
note "$lines order lines";

my $parallel = q{
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
};
my $serial = q{SET max_parallel_workers_per_gather = 0;};
sub fit
{
	my ($table) = @_;
	return qq{SELECT mtdpp_fit(order_id, item_id, position, '{"kind": "multitask", "epochs": 2}') AS model FROM $table};
}

my $plan = $node->safe_psql('postgres', $parallel . 'EXPLAIN (COSTS OFF) ' . fit('orders'));
like($plan, qr/Finalize Aggregate.*Gather.*Partial Aggregate.*Parallel Seq Scan on orders/s,
	'the parallel plan aggregates partially under a Gather')
  or diag($plan);

# EXPLAIN ANALYZE of CREATE TABLE AS runs the plan and keeps its result.
my $run = $node->safe_psql('postgres', $parallel
	  . 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) CREATE TABLE fit_parallel AS '
	  . fit('orders'));
like($run, qr/Workers Launched: [12]\b/, 'parallel workers ran the partial aggregates')
  or diag($run);
like($run, qr/Partial Aggregate/, 'the executed plan is the parallel one');

$run = $node->safe_psql('postgres', $serial
	  . 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) CREATE TABLE fit_serial AS '
	  . fit('orders'));
unlike($run, qr/Gather|Partial/, 'the serial plan has no parallel part') or diag($run);

$node->safe_psql('postgres', $serial . 'CREATE TABLE fit_shuffled AS ' . fit('orders_shuffled'));

# The serialised model records its training time, so two fits of the same
# data may differ in those 8 bytes and nowhere else.
sub same_model
{
	my ($x, $y) = @_;
	my ($len_a, $len_b, $same_md5, $diff_bytes, $span) = split /\|/, $node->safe_psql('postgres', qq{
SELECT length(a.model), length(b.model), md5(a.model) = md5(b.model),
       count(i), coalesce(max(i) - min(i) + 1, 0)
FROM $x a CROSS JOIN $y b
LEFT JOIN generate_series(0, length(a.model) - 1) AS i
  ON length(a.model) = length(b.model) AND get_byte(a.model, i) <> get_byte(b.model, i)
GROUP BY a.model, b.model});
	ok($len_a > 1000, "$x holds a model ($len_a bytes)");
	is($len_b, $len_a, "$x and $y have the same length");
	if ($same_md5 eq 't')
	{
		pass("$x and $y have the same md5");
	}
	else
	{
		ok($span <= 8, "$x and $y differ at most in the 8 bytes of the training time "
			  . "($diff_bytes bytes differ, over a span of $span)");
	}
	return;
}
same_model('fit_parallel', 'fit_serial');
same_model('fit_parallel', 'fit_shuffled');

# The leader reading lines too (its own run merged with the workers').
(my $with_leader = $parallel) =~ s/parallel_leader_participation = off/parallel_leader_participation = on/;
$run = $node->safe_psql('postgres', $with_leader
	  . 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) CREATE TABLE fit_with_leader AS '
	  . fit('orders_shuffled'));
like($run, qr/Workers Launched: [12]\b/, 'parallel workers ran beside the leader') or diag($run);
same_model('fit_with_leader', 'fit_serial');

# Partitionwise aggregation: partial states of one process combined
# without serialisation (lines, not runs), with and without workers.
$node->safe_psql('postgres', q{
CREATE TABLE orders_parted (order_id bigint, item_id int, position int) PARTITION BY HASH (order_id);
CREATE TABLE orders_parted_0 PARTITION OF orders_parted FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE orders_parted_1 PARTITION OF orders_parted FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE orders_parted_2 PARTITION OF orders_parted FOR VALUES WITH (MODULUS 3, REMAINDER 2);
INSERT INTO orders_parted SELECT order_id, item_id, position FROM orders;
ANALYZE orders_parted;
});
my $partitionwise = q{SET enable_partitionwise_aggregate = on;};
$run = $node->safe_psql('postgres', $serial . $partitionwise
	  . 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) CREATE TABLE fit_parted AS '
	  . fit('orders_parted'));
like($run, qr/Partial Aggregate/, 'the partitionwise plan aggregates each partition partially')
  or diag($run);
same_model('fit_parted', 'fit_serial');
$node->safe_psql('postgres', $with_leader . $partitionwise
	  . 'CREATE TABLE fit_parted_parallel AS ' . fit('orders_parted'));
same_model('fit_parted_parallel', 'fit_serial');

# Lines are held 8 bytes each while order ids fit 32 bits and no position is
# given, 16 otherwise; the first line that does not fit converts those held
# so far.  Shifting every order id or every position by the same amount
# changes no basket, so these fits must give the model of the original
# lines: order ids past 2^31 from the start (all 16 bytes), order ids that
# cross 2^31 in the middle of the scan, and positions that start at 0, the
# lines with position 0 read first.
$node->safe_psql('postgres', q{
CREATE TABLE orders_big_ids AS
  SELECT order_id + (1::bigint << 40) AS order_id, item_id, position FROM orders_shuffled;
CREATE TABLE orders_crossing AS
  SELECT order_id + 2147483647 - (SELECT max(order_id) / 2 FROM orders) AS order_id, item_id, position
  FROM orders ORDER BY order_id > (SELECT max(order_id) / 2 FROM orders), md5(order_id || ':' || item_id);
CREATE TABLE orders_from_zero AS
  SELECT order_id, item_id, position - 1 AS position FROM orders
  ORDER BY position > 1, md5(order_id || ':' || item_id);
CREATE TABLE orders_no_positions AS SELECT order_id, item_id, NULL::int AS position FROM orders_shuffled;
CREATE TABLE orders_no_positions_big AS
  SELECT order_id - (1::bigint << 40) AS order_id, item_id, position FROM orders_no_positions;
ANALYZE orders_big_ids, orders_crossing, orders_from_zero, orders_no_positions, orders_no_positions_big;
});
for my $t (qw(orders_big_ids orders_crossing orders_from_zero))
{
	$node->safe_psql('postgres', $serial . "CREATE TABLE fit_$t AS " . fit($t));
	same_model("fit_$t", 'fit_serial');
	$node->safe_psql('postgres', $with_leader . "CREATE TABLE fit_${t}_parallel AS " . fit($t));
	same_model("fit_${t}_parallel", 'fit_serial');
}
# Without positions (8-byte lines), serial and parallel agree, and agree with
# the same baskets held 16 bytes a line (negative order ids past 32 bits).
$node->safe_psql('postgres', $serial . 'CREATE TABLE fit_no_positions AS ' . fit('orders_no_positions'));
for my $t (qw(orders_no_positions orders_no_positions_big))
{
	$node->safe_psql('postgres', $with_leader . "CREATE TABLE fit_${t}_parallel AS " . fit($t));
	same_model("fit_${t}_parallel", 'fit_no_positions');
}
$node->safe_psql('postgres', $serial . 'CREATE TABLE fit_no_positions_big AS ' . fit('orders_no_positions_big'));
same_model('fit_no_positions_big', 'fit_no_positions');

# Past a million lines without positions, the leader merges the workers'
# runs on two threads (orders below a pivot, the others), unless
# max_parallel_maintenance_workers is 0.  Item-kNN neighbours depend on
# which items share a basket, so a basket split or joined at the pivot
# would show.
$node->safe_psql('postgres', q{
CREATE TABLE orders_million AS
  SELECT o AS order_id, (o * 7919 + l * l * 104729) % 997 AS item_id
  FROM generate_series(1, 120000) o, generate_series(1, 10) l
  ORDER BY md5(o::text || ':' || l::text);
ANALYZE orders_million;
});
my $knn = q{SELECT mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "itemknn"}') AS model FROM orders_million};
$serial .= q{SET maintenance_work_mem = '512MB';};
$with_leader .= q{SET maintenance_work_mem = '512MB';};
# An item-kNN fit's bytes are the same every time but for its training time
# (the 8 bytes from offset 56 of the value's header), blanked before hashing.
sub untimed_md5
{
	my ($value) = @_;
	return "md5(overlay($value placing '\\x0000000000000000'::bytea from 57 for 8))";
}
sub knn_md5
{
	my ($settings) = @_;
	return $node->safe_psql('postgres', $settings . 'SELECT ' . untimed_md5('model') . " FROM ($knn) f");
}
my $knn_serial = knn_md5($serial);
$run = $node->safe_psql('postgres', $with_leader . "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $knn");
like($run, qr/Workers Launched: [12]\b/, 'parallel workers read the million lines') or diag($run);
my ($ret, $stdout, $stderr) = $node->psql('postgres', $with_leader
	  . q{SELECT length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "itemknn", "verbose": true}')) FROM orders_million});
like($stderr, qr/gathered 1200000 order lines into 120000 baskets of 997 items, merging [23] sorted runs on 2 threads/,
	'the leader merged the runs on two threads') or diag($stderr);
is(knn_md5($with_leader), $knn_serial, 'two-thread merge: the serial model');
is(knn_md5($with_leader . 'SET max_parallel_maintenance_workers = 0;'), $knn_serial,
	'one-thread merge: the serial model');

# A table stored order by order is sorted order by order (orders past 32
# lines by a radix sort of their own), while it is read or as a worker
# encodes its run: the model is that of the same lines shuffled.
$node->safe_psql('postgres', q{
CREATE TABLE orders_long AS
  SELECT o AS order_id, (o * 31 + l * l * 7) % 500 AS item_id
  FROM generate_series(1, 3000) o CROSS JOIN LATERAL generate_series(1, 1 + o % 90) l;
CREATE TABLE orders_long_shuffled AS SELECT * FROM orders_long ORDER BY md5(order_id || ':' || item_id);
ANALYZE orders_long, orders_long_shuffled;
});
sub long_md5
{
	my ($settings, $table) = @_;
	return $node->safe_psql('postgres', $settings
		  . 'SELECT ' . untimed_md5(q{mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "itemknn"}')}) . " FROM $table");
}
my $long_shuffled = long_md5($serial, 'orders_long_shuffled');
is(long_md5($serial, 'orders_long'), $long_shuffled, 'orders stored in order: the model of the shuffled lines');
is(long_md5($with_leader, 'orders_long'), $long_shuffled, 'the same read by parallel workers');

# Grouped, each group's partial states come up through a Gather Merge (the
# runs through the shared memory of that Gather Merge): each group gets the
# model a serial plan gives it.
my $grouped = 'SELECT order_id % 3 AS g, ' . untimed_md5(q{mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "itemknn"}')})
  . ' FROM orders_long_shuffled GROUP BY 1 ORDER BY 1';
my $sorted_groups = q{SET enable_hashagg = off;};
$plan = $node->safe_psql('postgres', $with_leader . $sorted_groups . "EXPLAIN (COSTS OFF) $grouped");
like($plan, qr/Finalize GroupAggregate.*Gather Merge.*Partial GroupAggregate/s,
	'grouped, the partial states come through a Gather Merge') or diag($plan);
my $grouped_serial = $node->safe_psql('postgres', $serial . $grouped);
is($node->safe_psql('postgres', $with_leader . $sorted_groups . $grouped), $grouped_serial,
	'grouped through a Gather Merge: the serial models');
is($node->safe_psql('postgres', $with_leader . $grouped), $grouped_serial,
	'grouped, the planner\'s choice of plan: the serial models');

# A run holds each item in as few bytes as its span of item ids needs (one
# to four): with ids spread over each span, parallel workers give the
# serial model.
for my $ids ('item_id % 200', 'item_id * 1000', 'item_id * 4000000 - 2000000000')
{
	$node->safe_psql('postgres', qq{
DROP TABLE IF EXISTS orders_ids;
CREATE TABLE orders_ids AS SELECT order_id, $ids AS item_id FROM orders_long_shuffled;
ANALYZE orders_ids;
});
	is(long_md5($with_leader, 'orders_ids'), long_md5($serial, 'orders_ids'),
		"item ids $ids: the serial model in parallel");
}

# Stored, the three are the same model: same factors, same training history.
$node->safe_psql('postgres', q{
SELECT mtdpp_save('parallel', model) FROM fit_parallel;
SELECT mtdpp_save('serial', model) FROM fit_serial;
SELECT mtdpp_save('shuffled', model) FROM fit_shuffled;
});
my $contents = $node->safe_psql('postgres', q{
SELECT m.name, m.n_items, m.n_baskets, m.n_examples, m.final_loss, m.best_epoch, m.loss_history,
       m.hyperparams,
       md5(string_agg(format('%s %s %s %s %s', i.item_id, i.popularity, i.bias, i.factors, i.task_factors),
                      E'\n' ORDER BY i.item_id))
FROM mtdpp.models m JOIN mtdpp.items i USING (model_id)
GROUP BY m.model_id ORDER BY m.name});
my %by_name = map { my @f = split /\|/, $_, 2; ($f[0] => $f[1]) } split /\n/, $contents;
is(scalar(keys %by_name), 3, 'three models stored');
is($by_name{parallel}, $by_name{serial}, 'parallel and serial fits store the same model');
is($by_name{shuffled}, $by_name{serial}, 'the physical order of the rows does not matter');

# mtdpp_train runs the same aggregate through the parallel plan and takes
# its model in memory, without a value: the same model once more.
my ($trained, $train_out, $train_err) = $node->psql('postgres', $parallel . q{SET client_min_messages = debug1;
SELECT items FROM mtdpp_train('trained', 'orders', position_col => 'position', kind => 'multitask', epochs => 2);});
is($trained, 0, 'mtdpp_train trains through the parallel plan') or diag($train_err);
like($train_err, qr/mtdpp_fit hands a model of \d+ items at rank \d+ to mtdpp_train in memory/,
	'its final function hands the model over in memory');
my $same = q{SELECT (a.n_items, a.n_baskets, a.n_examples, a.final_loss, a.best_epoch, a.loss_history, a.val_mpr_history)
                    IS NOT DISTINCT FROM
                    (b.n_items, b.n_baskets, b.n_examples, b.final_loss, b.best_epoch, b.loss_history, b.val_mpr_history)
                    AND (SELECT bool_and((x.popularity, x.bias, x.factors, x.task_factors)
                                         IS NOT DISTINCT FROM (y.popularity, y.bias, y.factors, y.task_factors))
                         FROM mtdpp.items x FULL JOIN mtdpp.items y
                           ON y.item_id = x.item_id AND y.model_id = b.model_id
                         WHERE x.model_id = a.model_id)
             FROM mtdpp.models a, mtdpp.models b WHERE a.name = 'trained' AND b.name = 'serial'};
is($node->safe_psql('postgres', $same), 't', 'mtdpp_train stores the serial model, every item row bit for bit');

# Partial states cross process boundaries: a parallel fit of the shuffled
# table as well.
$node->safe_psql('postgres', $parallel . 'CREATE TABLE fit_parallel_shuffled AS ' . fit('orders_shuffled'));
same_model('fit_parallel_shuffled', 'fit_serial');

done_testing();
