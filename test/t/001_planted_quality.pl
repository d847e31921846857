# Quality on planted data: 60 items in 6 disjoint groups, baskets drawn
# inside one group with the same popularity profile in every group (see
# test/fixtures/planted.sql).  Popularity cannot tell the groups apart; the
# multi-task DPP must, and must beat popularity by a wide margin.  The
# figures of mtdpp_evaluate are also checked against the benchmark protocol
# computed independently in SQL.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('planted');
load_planted($node, baskets => 2000);

# The protocol of data/README.md over a table of candidate scores
# (order_id, item_id, score) holding, for every test basket, every catalog
# item not in its context (the held-out item included).
$node->safe_psql('postgres', q{
CREATE TABLE catalog AS SELECT DISTINCT item_id FROM orders;
CREATE VIEW candidates AS
SELECT t.order_id, array_remove(t.basket, t.held_out) AS context,
       (SELECT array_agg(c.item_id ORDER BY c.item_id) FROM catalog c
        WHERE c.item_id = t.held_out OR NOT c.item_id = ANY (t.basket)) AS items
FROM test_baskets t;
CREATE FUNCTION protocol(scores regclass)
RETURNS TABLE (baskets bigint, mpr float8, precision_at_5 float8)
LANGUAGE plpgsql AS $f$
BEGIN
  RETURN QUERY EXECUTE format($q$
    WITH h AS (SELECT s.order_id, s.score FROM %1$s s
               JOIN test_baskets t ON t.order_id = s.order_id AND s.item_id = t.held_out),
    r AS (SELECT s.order_id, count(*) AS n,
                 1 + count(*) FILTER (WHERE s.score > h.score)
                   + 0.5 * (count(*) FILTER (WHERE s.score = h.score) - 1) AS rank
          FROM %1$s s JOIN h USING (order_id) GROUP BY s.order_id)
    SELECT count(*), avg(100.0 * (n - rank) / (n - 1))::float8,
           (100.0 * avg((rank <= 5)::int))::float8
    FROM r$q$, scores);
END $f$;
CREATE TABLE popularity_scores AS
SELECT c.order_id, i.item_id, coalesce(p.n, 0)::float8 AS score
FROM candidates c CROSS JOIN LATERAL unnest(c.items) AS i(item_id)
LEFT JOIN (SELECT item_id, count(*) AS n FROM train_lines GROUP BY item_id) p USING (item_id);
});

my ($n_test) = $node->safe_psql('postgres', 'SELECT count(*) FROM test_baskets');
my ($pop_baskets, $pop_mpr, $pop_p5) =
  split /\|/, $node->safe_psql('postgres', "SELECT * FROM protocol('popularity_scores')");
is($pop_baskets, $n_test, 'the SQL protocol scores every test basket');
note "popularity, in SQL: MPR $pop_mpr, P\@5 $pop_p5";

# The popularity kind must reproduce the SQL baseline.
$node->safe_psql('postgres',
	"SELECT * FROM mtdpp_train('planted_popularity', 'train_lines', kind => 'popularity')");
my ($kb, $kind_pop_mpr) = split /\|/, $node->safe_psql('postgres',
	"SELECT baskets, mpr FROM mtdpp_evaluate('planted_popularity', 'test_baskets')");
is($kb, $n_test, 'mtdpp_evaluate counts every test basket');
cmp_ok(abs($kind_pop_mpr - $pop_mpr), '<', 0.5,
	"kind => 'popularity' matches the SQL baseline (MPR $kind_pop_mpr vs $pop_mpr)");

# The multi-task DPP.
my $trained = $node->safe_psql('postgres',
	"SELECT kind, items, baskets FROM mtdpp_train('planted', 'train_lines', position_col => 'position', seed => 1, kind => 'multitask')");
is($trained, 'multitask|60|1400', 'trains a multitask model on 60 items and 1400 baskets');

my ($mb, $mt_mpr, $mt_p5) = split /\|/, $node->safe_psql('postgres',
	"SELECT baskets, mpr, precision_at_5 FROM mtdpp_evaluate('planted', 'test_baskets')");
is($mb, $n_test, 'evaluates every test basket');
note "multitask: MPR $mt_mpr, P\@5 $mt_p5";
cmp_ok($mt_mpr, '>=', $pop_mpr + 10,
	"multitask MPR $mt_mpr beats popularity $pop_mpr by 10 points or more");
cmp_ok($mt_p5, '>', $pop_p5, "multitask precision\@5 $mt_p5 beats popularity $pop_p5");

# mtdpp_evaluate follows the protocol: recompute it from mtdpp_score.
$node->safe_psql('postgres', q{
CREATE TABLE multitask_scores AS
SELECT c.order_id, s.item_id, s.score
FROM candidates c CROSS JOIN LATERAL mtdpp_score(c.context, c.items, 'planted') AS s;
});
my ($sb, $sql_mt_mpr, $sql_mt_p5) =
  split /\|/, $node->safe_psql('postgres', "SELECT * FROM protocol('multitask_scores')");
is($sb, $n_test, 'mtdpp_score scores every candidate of every test basket');
cmp_ok(abs($sql_mt_mpr - $mt_mpr), '<', 0.01,
	"mtdpp_evaluate's MPR ($mt_mpr) is the protocol's, from mtdpp_score ($sql_mt_mpr)");
cmp_ok(abs($sql_mt_p5 - $mt_p5), '<', 0.01,
	"mtdpp_evaluate's precision\@5 ($mt_p5) is the protocol's ($sql_mt_p5)");

# Completions stay inside the basket's group.
my $in_group = $node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE (c.item_id - 1) / 10 = g), count(*)
FROM generate_series(0, 5) AS g
CROSS JOIN LATERAL mtdpp_complete(ARRAY[g * 10 + 1, g * 10 + 2], 5, 'planted') AS c
});
my ($inside, $total) = split /\|/, $in_group;
is($total, 30, 'five completions for each of six baskets');
cmp_ok($inside, '>=', 27, "completions stay inside the basket's group ($inside of $total)");

done_testing();
