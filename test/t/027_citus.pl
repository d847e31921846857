# An order history distributed with Citus: a coordinator and two workers on
# this machine, each preloading citus and mtdpp (doc/scaling.md, "Citus").
#
# - Training from order lines distributed by order id gives the same model,
#   row for row, as training from the same lines in a plain table.
# - The model tables, made reference tables, are on every node: a session
#   connected to a worker completes with the model trained on the
#   coordinator, and with each new version (a retraining, an activation)
#   from its next statement.  Worker 1 shares one copy of a model between
#   its backends, worker 2 keeps one per backend (mtdpp.shared_cache_size 0).
# - A batch of completions over carts and suggestions distributed by cart id
#   (co-located) runs on the workers, each completing its own shards'
#   carts, with the answers a single server gives.
#
# Citus supports PostgreSQL 16 to 18; without it installed for the
# PostgreSQL under test (scripts/install-deps builds it into PostgreSQL 18),
# the test is skipped.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $coord = PostgreSQL::Test::Cluster->new('coordinator');
my $sharedir = $coord->config_data('--sharedir');
my $pkglibdir = $coord->config_data('--pkglibdir');
plan skip_all => "Citus is not installed for PostgreSQL " . $coord->pg_version
  . " (no $sharedir/extension/citus.control): scripts/install-deps builds it into PostgreSQL 18"
  unless -f "$sharedir/extension/citus.control" && -f "$pkglibdir/citus.so";

# Three nodes, citus first in shared_preload_libraries (Citus requires it).
my $w1 = PostgreSQL::Test::Cluster->new('worker1');
my $w2 = PostgreSQL::Test::Cluster->new('worker2');
for my $node ($coord, $w1, $w2)
{
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'citus, mtdpp'");
}
$w2->append_conf('postgresql.conf', 'mtdpp.shared_cache_size = 0');
$_->start for ($coord, $w1, $w2);
$_->safe_psql('postgres', 'CREATE EXTENSION citus') for ($coord, $w1, $w2);
# the nodes reach each other by their socket directories
$coord->safe_psql('postgres', sprintf(q{
SELECT citus_set_coordinator_host('%s', %d);
SELECT citus_add_node('%s', %d);
SELECT citus_add_node('%s', %d);
}, $coord->host, $coord->port, $w1->host, $w1->port, $w2->host, $w2->port));
is($coord->safe_psql('postgres', 'SELECT count(*) FROM citus_get_active_worker_nodes()'), '2',
	'a coordinator and two workers');

# CREATE EXTENSION on the coordinator creates it on the workers too; then
# the model tables become reference tables: a copy on every node, written
# by the coordinator in one distributed transaction.  Citus distributes a
# table with triggers (mtdpp's, which invalidate the cached models) only
# with enable_unsafe_triggers, and copies them to each copy; it takes no
# policy that reads another table, so mtdpp's policies (isolation by role)
# go first, on every node.
$coord->safe_psql('postgres', q{
CREATE EXTENSION mtdpp;
-- mtdpp's policies go, here and on the workers: Citus takes no subquery in them
DROP POLICY mtdpp_own ON mtdpp.models; DROP POLICY mtdpp_shared ON mtdpp.models;
DROP POLICY mtdpp_own ON mtdpp.items; DROP POLICY mtdpp_shared ON mtdpp.items;
ALTER TABLE mtdpp.models DISABLE ROW LEVEL SECURITY; ALTER TABLE mtdpp.items DISABLE ROW LEVEL SECURITY;
SELECT run_command_on_workers($$
    DROP POLICY mtdpp_own ON mtdpp.models; DROP POLICY mtdpp_shared ON mtdpp.models;
    DROP POLICY mtdpp_own ON mtdpp.items; DROP POLICY mtdpp_shared ON mtdpp.items;
    ALTER TABLE mtdpp.models DISABLE ROW LEVEL SECURITY; ALTER TABLE mtdpp.items DISABLE ROW LEVEL SECURITY$$);
SET citus.enable_unsafe_triggers = on;
SELECT create_reference_table('mtdpp.models');
SELECT create_reference_table('mtdpp.items');
});
is($coord->safe_psql('postgres', q{
SELECT string_agg(format('%s %s %s', t.logicalrelid, t.partmethod, (SELECT count(*) FROM pg_dist_shard s
       JOIN pg_dist_shard_placement p USING (shardid) WHERE s.logicalrelid = t.logicalrelid)), ', '
       ORDER BY t.logicalrelid::text)
FROM pg_dist_partition t WHERE t.logicalrelid IN ('mtdpp.models'::regclass, 'mtdpp.items'::regclass)}),
	'mtdpp.items n 3, mtdpp.models n 3', 'the model tables are reference tables, with a copy on each of the 3 nodes');
for my $node ($w1, $w2)
{
	is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'mtdpp'}),
		$coord->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'mtdpp'}),
		$node->name . ' has the extension');
}

# The order lines: the same rows in a plain table and in one distributed by
# order id.  Training reads the shards in parallel, then writes the model to
# the reference tables, which their foreign key lets Citus do in one
# transaction only over one connection per node: the training session asks
# for that (sequential), or Citus refuses the write.
load_planted($coord, baskets => 600);
$coord->safe_psql('postgres', q{
CREATE TABLE plain_lines AS SELECT order_id, item_id, position FROM train_lines;
CREATE TABLE order_lines (LIKE plain_lines);
SELECT create_distributed_table('order_lines', 'order_id');
INSERT INTO order_lines SELECT * FROM plain_lines;
});
is($coord->safe_psql('postgres', q{SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'order_lines'::regclass}),
	'2', 'the order lines are on both workers');
my $train = sub {
	my ($name, $source, $seed) = @_;
	return $coord->safe_psql('postgres', qq{
BEGIN;
SET LOCAL citus.multi_shard_modify_mode = 'sequential';
SELECT version FROM mtdpp_train('$name', '$source', order_col => 'order_id', item_col => 'item_id',
                                position_col => 'position', seed => $seed);
COMMIT;});
};
$train->('plain', 'plain_lines', 1);
# the coordinator's combining aggregate hands the model to mtdpp_train in
# memory, as a single server's does (train/handoff.c), not as a value
my ($train_rc, $train_out, $train_log) = $coord->psql('postgres', q{
BEGIN;
SET LOCAL citus.multi_shard_modify_mode = 'sequential';
SET LOCAL client_min_messages = debug1;
SELECT version FROM mtdpp_train('shop', 'order_lines', order_col => 'order_id', item_col => 'item_id',
                                position_col => 'position', seed => 1);
COMMIT;});
is($train_out, '1', 'a model trained from the distributed order lines');
like($train_log, qr/mtdpp_fit hands a model of 60 items at rank \d+ to mtdpp_train in memory/,
	'... handed over in memory by the coordinator\'s aggregate');

# the same model: its row (all but its name, ids and times) and every item row
is($coord->safe_psql('postgres', q{
SELECT (a.kind, a.rank, a.n_items, a.n_baskets, a.n_examples, a.log_w, a.hyperparams, a.loss_history,
        a.val_mpr_history, a.final_loss, a.best_epoch, a.weights)
       IS NOT DISTINCT FROM
       (b.kind, b.rank, b.n_items, b.n_baskets, b.n_examples, b.log_w, b.hyperparams, b.loss_history,
        b.val_mpr_history, b.final_loss, b.best_epoch, b.weights)
FROM mtdpp.models a, mtdpp.models b WHERE a.name = 'plain' AND b.name = 'shop'}),
	't', 'the row of the model trained from the distributed lines is the plain one\'s');
is($coord->safe_psql('postgres', q{
SELECT format('%s items, %s the same, %s different',
              count(*), count(*) FILTER (WHERE same), count(*) FILTER (WHERE NOT same))
FROM (SELECT (a.popularity, a.bias, a.factors, a.task_factors, a.neighbors, a.neighbor_weights)
             IS NOT DISTINCT FROM
             (b.popularity, b.bias, b.factors, b.task_factors, b.neighbors, b.neighbor_weights) AS same
      FROM mtdpp.items a
      FULL JOIN mtdpp.items b ON b.item_id = a.item_id
       AND b.model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'shop')
      WHERE a.model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'plain')) s}),
	'60 items, 60 the same, 0 different', 'and so is every item row, bit for bit');
my $evaluate = q{SELECT string_agg(format('%s %s baskets, MPR %s, P@5 %s, P@20 %s', m.name, e.baskets, round(e.mpr::numeric, 6),
                                          round(e.precision_at_5::numeric, 6), round(e.precision_at_20::numeric, 6)), '; ' ORDER BY m.name)
                 FROM unnest(ARRAY['plain', 'shop']) AS m(name), mtdpp_evaluate(m.name, 'test_baskets') e};
my ($plain_eval, $shop_eval) = split /; /, $coord->safe_psql('postgres', $evaluate);
$plain_eval =~ s/^plain //;
$shop_eval =~ s/^shop //;
is($shop_eval, $plain_eval, "the two evaluate the same on the test baskets ($plain_eval)");

# a session connected to a worker completes with the model trained on the
# coordinator, as the coordinator does
my $q = q{SELECT string_agg(item_id || ':' || score, ',' ORDER BY rank) FROM mtdpp_complete('{1,2,3}', 10, model => 'shop')};
my $v1 = $coord->safe_psql('postgres', $q);
for my $node ($w1, $w2)
{
	is($node->safe_psql('postgres', q{SELECT string_agg(name || ' ' || version, ', ' ORDER BY name) FROM mtdpp.models WHERE active}),
		'plain 1, shop 1', $node->name . ' reads the models of the coordinator');
	is($node->safe_psql('postgres', $q), $v1, $node->name . ' completes as the coordinator does');
}
my %session = map { $_->name => $_->background_psql('postgres', on_error_stop => 0) } ($w1, $w2);
for my $node ($w1, $w2)
{
	is($session{ $node->name }->query_safe($q), $v1, 'a session on ' . $node->name . ' completes with version 1');
}
is($w1->safe_psql('postgres', q{SELECT string_agg(format('%s %s', m.name, s.backends), ', ') FROM mtdpp_shared_models() s
                               JOIN mtdpp.models m USING (model_id)}),
	'shop 1', 'worker1 keeps one copy of it, which the session maps');

# A batch over carts and suggestions distributed by cart id, co-located.
# Each worker completes the carts of its own shards: mtdpp reads the model
# (reference tables, local on every node) in a query on a shard, which it
# allows Citus for those reads alone; the batch needs no setting.
$coord->safe_psql('postgres', q{
CREATE TABLE carts (cart_id bigint PRIMARY KEY, items int[] NOT NULL);
CREATE TABLE recs (cart_id bigint NOT NULL, item_id int, score float8, rank int, from_basket boolean);
SELECT create_distributed_table('carts', 'cart_id');
SELECT create_distributed_table('recs', 'cart_id', colocate_with => 'carts');
INSERT INTO carts SELECT order_id, basket FROM test_baskets;
});
my $batch = q{INSERT INTO recs SELECT c.cart_id, r.* FROM carts c CROSS JOIN LATERAL mtdpp_complete(c.items, 10, model => 'shop') r};
my $run_batch = qq{
TRUNCATE recs;
$batch;
};
# the setting stays as it was for everything but mtdpp's reads of the model
is($coord->safe_psql('postgres', q{SHOW citus.allow_nested_distributed_execution}), 'off',
	'nested distributed execution stays refused for other queries');

my $plan = $coord->safe_psql('postgres', qq{
SET citus.explain_all_tasks = on;
EXPLAIN (COSTS OFF) $batch});
like($plan, qr/INSERT\/SELECT method: repartition/, 'the plan: completions by tasks on the shards, sent to the co-located shards of recs');
unlike($plan, qr/pull to coordinator/, 'the carts are not pulled to the coordinator');
my %task_nodes = map { $_ => 1 } $plan =~ /Node: host=\S+ port=(\d+)/g;
is(join(',', sort keys %task_nodes), join(',', sort ($w1->port, $w2->port)), 'the tasks run on both workers');
like($plan, qr/Seq Scan on carts_\d+ c\n\s+->  Function Scan on mtdpp_complete r/,
	'each completes the carts of one shard');

$coord->safe_psql('postgres', $run_batch);
my $local = q{SELECT md5(string_agg(format('%s %s %s %s', b.order_id, r.item_id, r.score, r.rank), ',' ORDER BY b.order_id, r.rank))
              FROM test_baskets b CROSS JOIN LATERAL mtdpp_complete(b.basket, 10, model => 'shop') r};
my $distributed = q{SELECT md5(string_agg(format('%s %s %s %s', cart_id, item_id, score, rank), ',' ORDER BY cart_id, rank)) FROM recs};
is($coord->safe_psql('postgres', 'SELECT (SELECT count(*) FROM recs) = 10 * (SELECT count(*) FROM carts)'), 't',
	'the batch fills recs: ten suggestions for each cart');
is($coord->safe_psql('postgres', $distributed), $coord->safe_psql('postgres', $local),
	'the suggestions a single server makes from the same baskets');
is($coord->safe_psql('postgres', q{
SELECT string_agg(format('%s', n > 0), ',' ORDER BY nodeport)
FROM (SELECT s.nodeport, sum(r.result::bigint) AS n
      FROM run_command_on_shards('recs', $$SELECT count(*) FROM %s$$) r JOIN citus_shards s USING (shardid)
      GROUP BY s.nodeport) w}),
	't,t', 'written on both workers');

# A retraining on the coordinator: the workers' sessions answer with version
# 2 from their next statement, and so does the next batch.
is($train->('shop', 'order_lines', 2), '2', 'version 2 trained on the coordinator');
my $v2 = $coord->safe_psql('postgres', $q);
isnt($v2, $v1, 'version 2 completes differently');
for my $node ($w1, $w2)
{
	is($session{ $node->name }->query_safe($q), $v2,
		'the session on ' . $node->name . ' completes with version 2 at its next statement');
}
is($w1->safe_psql('postgres', q{SELECT string_agg(format('%s %s', m.name || ' ' || m.version, s.backends), ', ')
                               FROM mtdpp_shared_models() s JOIN mtdpp.models m USING (model_id)}),
	'shop 2 1', "worker1's copy of version 2 replaced version 1's");
$coord->safe_psql('postgres', $run_batch);
is($coord->safe_psql('postgres', $distributed), $coord->safe_psql('postgres', $local),
	'the next batch completes with version 2');

# an activation alone (an UPDATE of mtdpp.models)
$coord->safe_psql('postgres', q{SELECT mtdpp_activate('shop', 1)});
for my $node ($w1, $w2)
{
	is($session{ $node->name }->query_safe($q), $v1,
		'the session on ' . $node->name . ' completes with version 1, activated again');
}

# a dropped model (a DELETE, which a trigger takes to the items)
my $qplain = $q =~ s/'shop'/'plain'/r;
for my $node ($w1, $w2)
{
	is($session{ $node->name }->query_safe($qplain), $v1, 'the session on ' . $node->name . ' completes with model plain');
}
$coord->safe_psql('postgres', q{SELECT mtdpp_drop('plain')});
for my $node ($w1, $w2)
{
	my ($out, $failed) = $session{ $node->name }->query($qplain);
	ok($failed && $session{ $node->name }->{stderr} =~ /model "plain" does not exist/,
		'the session on ' . $node->name . ': model plain is gone at its next statement');
	$session{ $node->name }->{stderr} = '';
	is($node->safe_psql('postgres', q{SELECT count(*) FROM mtdpp.items WHERE model_id NOT IN (SELECT model_id FROM mtdpp.models)}),
		'0', $node->name . ': no item row outlives its model');
	is($node->safe_psql('postgres', q{SELECT string_agg(name || ' ' || version, ', ' ORDER BY version) FROM mtdpp.models}),
		'shop 1, shop 2', $node->name . ': models left');
}

$_->quit for values %session;
$_->stop for ($w1, $w2, $coord);
done_testing();
