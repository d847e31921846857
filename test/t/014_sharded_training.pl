# Order lines sharded over servers: a coordinator's partitioned table whose
# partitions are postgres_fdw foreign tables on two shard clusters.  Training
# from it gives the same model, bit for bit, as training from the same lines
# in one local table, with or without asynchronous foreign scans.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $coordinator = mtdpp_node('coordinator');
load_planted($coordinator, baskets => 2000);

# two shards: orders split by order id
my @shards;
for my $s (0, 1)
{
	my $shard = PostgreSQL::Test::Cluster->new("shard$s");
	$shard->init;
	$shard->start;
	$shard->safe_psql('postgres', 'CREATE TABLE order_lines (order_id bigint, item_id int, position int)');
	# the shard's lines, copied from the coordinator's training lines
	my $lines = $coordinator->safe_psql('postgres',
		"SELECT string_agg(format('(%s,%s,%s)', order_id, item_id, position), ',') FROM train_lines WHERE order_id % 2 = $s");
	$shard->safe_psql('postgres', "INSERT INTO order_lines VALUES $lines");
	push @shards, $shard;
}

$coordinator->safe_psql('postgres', q{
CREATE EXTENSION postgres_fdw;
CREATE TABLE sharded_lines (order_id bigint, item_id int, position int) PARTITION BY LIST ((order_id % 2));
});
for my $s (0, 1)
{
	my $port = $shards[$s]->port;
	my $host = $shards[$s]->host;
	$coordinator->safe_psql('postgres', qq{
CREATE SERVER shard$s FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '$host', port '$port', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard$s;
CREATE FOREIGN TABLE sharded_lines_$s PARTITION OF sharded_lines FOR VALUES IN ($s)
    SERVER shard$s OPTIONS (table_name 'order_lines');
});
}
is($coordinator->safe_psql('postgres', 'SELECT count(*) FROM sharded_lines'),
	$coordinator->safe_psql('postgres', 'SELECT count(*) FROM train_lines'),
	'the shards hold the training lines between them');

my $items = q{SELECT md5(string_agg((i.item_id, i.popularity, i.bias, i.factors, i.task_factors)::text, ',' ORDER BY item_id)) FROM mtdpp.items i
              JOIN mtdpp.models m USING (model_id) WHERE m.name = '%s'};
my $train = q{SELECT n_items, n_baskets FROM mtdpp.models WHERE model_id =
              (SELECT model_id FROM mtdpp_train('%s', '%s', order_col => 'order_id', item_col => 'item_id',
                                                position_col => 'position', rank => 8, epochs => 3, seed => 5, kind => 'multitask'))};
my $local = $coordinator->safe_psql('postgres', sprintf($train, 'local', 'train_lines'));
my $sharded = $coordinator->safe_psql('postgres', sprintf($train, 'sharded', 'sharded_lines'));
is($sharded, $local, 'the same items and baskets from the shards');
is($coordinator->safe_psql('postgres', sprintf($items, 'sharded')),
	$coordinator->safe_psql('postgres', sprintf($items, 'local')),
	'the same model, bit for bit');

# asynchronous foreign scans: both shards read at once
$coordinator->safe_psql('postgres', q{
ALTER SERVER shard0 OPTIONS (ADD async_capable 'true');
ALTER SERVER shard1 OPTIONS (ADD async_capable 'true');
});
like($coordinator->safe_psql('postgres', q{EXPLAIN (COSTS OFF) SELECT mtdpp_fit(order_id, item_id) FROM sharded_lines}),
	qr/Async Foreign Scan/, 'the plan reads the shards asynchronously');
$coordinator->safe_psql('postgres', sprintf($train, 'sharded_async', 'sharded_lines'));
is($coordinator->safe_psql('postgres', sprintf($items, 'sharded_async')),
	$coordinator->safe_psql('postgres', sprintf($items, 'local')),
	'the same model with asynchronous scans');

# the completions agree
my $q = q{SELECT string_agg(item_id || ':' || score, ',' ORDER BY rank) FROM mtdpp_complete('{1,2,3}', 10, '%s')};
is($coordinator->safe_psql('postgres', sprintf($q, 'sharded')),
	$coordinator->safe_psql('postgres', sprintf($q, 'local')), 'and so do their completions');

done_testing();
