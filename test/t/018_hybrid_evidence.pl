# The hybrid's two kinds of evidence together: on the demo data
# (data/amazon_diaper), the search over pairs of weights chooses
# beta * cosine + ease_beta * EASE's weight, whose neighbour lists are the
# union of the two.  Each score must be the DPP's plus that evidence,
# computed here in SQL from the order lines and from an ease model of the
# same lambda and dropout, and the pruned top k must be the ranking of every score.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('hybrid_evidence');
my $data = "$FindBin::Bin/../../data";
$node->safe_psql('postgres', slurp_file("$data/load.sql"),
	extra_params => [ '-v', "dir=$data/amazon_diaper" ]);

$node->safe_psql('postgres',
	"SELECT * FROM mtdpp_train('h', 'train_lines', kind => 'hybrid', seed => 5)");
my ($form, $beta, $ease_beta, $lambda) = split /\|/, $node->safe_psql('postgres', q{
SELECT hyperparams->>'evidence', hyperparams->>'evidence_weight',
       hyperparams->>'evidence_ease_weight', hyperparams->>'evidence_lambda'
FROM mtdpp.models WHERE name = 'h' AND active});
is($form, 'cosine+ease', 'the demo data chooses both kinds of evidence (seed 5)');
ok($beta > 0 && $ease_beta > 0 && $lambda > 0,
	"both weights and EASE's lambda are recorded ($beta, $ease_beta, $lambda)");
is($node->safe_psql('postgres', q{SELECT hyperparams->>'evidence_ease_dropout' FROM mtdpp.models WHERE name = 'h' AND active}),
	'0.5', "EASE's weights are fitted exactly with dropout 0.5, the hybrid's default");

# The DPP part alone, as a multitask model of the same factors, and EASE's
# weights from an ease model of the same lambda and dropout.
$node->safe_psql('postgres', qq{
SELECT * FROM mtdpp_train('e', 'train_lines', kind => 'ease', params => '{"lambda": $lambda, "ease_dropout": 0.5}');
INSERT INTO mtdpp.models (name, version, kind, active, rank, n_items, n_baskets, n_examples, log_w, hyperparams)
SELECT 'd', 1, 'multitask', true, rank, n_items, n_baskets, n_examples, log_w, '{}'
FROM mtdpp.models WHERE name = 'h' AND active;
INSERT INTO mtdpp.items (model_id, item_id, popularity, bias, factors, task_factors)
SELECT (SELECT model_id FROM mtdpp.models WHERE name = 'd'), item_id, popularity, bias, factors, task_factors
FROM mtdpp.items JOIN mtdpp.models USING (model_id) WHERE name = 'h' AND active;
CREATE TABLE evidence AS
WITH b AS (SELECT DISTINCT order_id, item_id FROM train_lines),
     f AS (SELECT item_id, count(*) AS n FROM b GROUP BY item_id),
     c AS (SELECT x.item_id AS j, y.item_id AS c, count(*) AS n
           FROM b x JOIN b y ON x.order_id = y.order_id AND x.item_id <> y.item_id GROUP BY 1, 2),
     g AS (SELECT c.j, c.c, $beta * c.n / sqrt(fj.n * fc.n) AS g
           FROM c JOIN f fj ON fj.item_id = c.j JOIN f fc ON fc.item_id = c.c
           UNION ALL
           SELECT i.item_id, n.c, $ease_beta * n.w
           FROM mtdpp.items i JOIN mtdpp.models m USING (model_id),
                unnest(i.neighbors, i.neighbor_weights) n(c, w)
           WHERE m.name = 'e' AND m.active)
SELECT j, c, sum(g) AS g FROM g GROUP BY j, c;
CREATE TABLE catalog AS SELECT array_agg(DISTINCT item_id) AS items FROM orders;
CREATE TABLE contexts AS
SELECT order_id, array_remove(basket, held_out) AS context FROM test_baskets ORDER BY order_id LIMIT 100;
});

my ($compared, $with_evidence, $max_error) = split /\|/, $node->safe_psql('postgres', q{
SELECT count(*), count(*) FILTER (WHERE ev.e > 0),
       max(abs(h.score - (d.score + coalesce(ev.e, 0))) / (1 + abs(h.score)))
FROM contexts t, catalog,
     mtdpp_score(t.context, catalog.items, 'h') WITH ORDINALITY h(item_id, score, o)
JOIN mtdpp_score(t.context, catalog.items, 'd') WITH ORDINALITY d(item_id, score, o) USING (o)
LEFT JOIN LATERAL (SELECT sum(g) AS e FROM evidence WHERE j = ANY (t.context) AND c = h.item_id) ev ON true
WHERE h.score IS NOT NULL});
ok($compared > 5000 && $with_evidence > 1000,
	"scores compared: $compared, $with_evidence of them with evidence");
cmp_ok($max_error, '<', 1e-5, 'each score is the DPP\'s plus beta * cosine + ease_beta * EASE');

is($node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE pruned IS DISTINCT FROM brute)
FROM (SELECT (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(t.context, 10, 'h')) AS pruned,
             (SELECT (array_agg(item_id ORDER BY score DESC, item_id))[1:10]
              FROM mtdpp_score(t.context, catalog.items, 'h') WHERE score IS NOT NULL) AS brute
      FROM contexts t, catalog) x}), '0', 'the pruned top 10 is the ranking of every score');

done_testing();
