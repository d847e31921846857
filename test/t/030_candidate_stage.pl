# The candidate stage of a large catalog (score/topk_candidates.c): a
# hybrid of 10,000 items answers mtdpp_complete from the DPP's top M and
# the basket's neighbours while mtdpp.candidates is above 0 (its DEBUG1
# line says so), and from the full scan at 0 (the scan's line alone), with
# the same top 10 either way, which is the top 10 of every item's score
# (ties by item id).  A basket of one item, whose few neighbours leave the
# DPP's top M to settle the answer, too; the multitask kind, which adds no
# evidence, never takes the stage.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('candidate_stage');
$node->safe_psql('postgres', q{
CREATE TABLE lines AS
SELECT g / 5 AS order_id, ((hashint4(g / 5) & 65535) % 200 * 50 + (hashint4(g) & 65535) % 50) % 10000 AS item_id
FROM generate_series(0, 199999) g;
SELECT items FROM mtdpp_train('hy', 'lines', kind => 'hybrid', rank => 8, epochs => 1);
CREATE TABLE baskets AS
SELECT i, CASE WHEN i <= 5 THEN ARRAY[(i * 37) % 10000]
               ELSE ARRAY[(i * 37) % 10000, (i * 101 + 7) % 10000, (i * 13 + 3) % 10000] END AS basket
FROM generate_series(1, 30) i;
});

# the top 10 of each basket, one line per basket, and the server's DEBUG1 lines
sub tops
{
	my ($setting) = @_;
	my ($out, $err) = ('', '');
	$node->psql('postgres', qq{
SET mtdpp.candidates = $setting;
SET client_min_messages = debug1;
SELECT i, (SELECT string_agg(c.item_id::text, ',' ORDER BY c.rank) FROM mtdpp_complete(basket, 10, 'hy') c)
FROM baskets ORDER BY i;
}, stdout => \$out, stderr => \$err, on_error_die => 1);
	return ($out, $err);
}

my $exact = $node->safe_psql('postgres', q{
WITH every AS (SELECT array_agg(item_id) AS items FROM generate_series(0, 9999) item_id)
SELECT i, (SELECT string_agg(s.item_id::text, ',' ORDER BY s.score DESC, s.item_id)
           FROM (SELECT * FROM mtdpp_score(basket, every.items, 'hy') s
                 WHERE s.score IS NOT NULL AND NOT s.item_id = ANY (basket)
                 ORDER BY s.score DESC, s.item_id LIMIT 10) s)
FROM baskets, every ORDER BY i;
});

my ($full, $full_log) = tops(0);
is($full, $exact, 'mtdpp.candidates = 0: the full scan gives every item\'s top 10');
unlike($full_log, qr/candidates from the DPP's top/, '... without the candidate stage');
my $scans = () = $full_log =~ /mtdpp top 10 of \d+ items: scan bounded/g;
is($scans, 30, '... every basket from the scan of the top 10');

for my $m (64, 1, 500)
{
	my ($top, $log) = tops($m);
	is($top, $exact, "mtdpp.candidates = $m: the candidate stage gives every item's top 10");
	my $want = $m < 10 ? 10 : $m;
	my $stage = () = $log =~ /mtdpp top 10 of \d+ items: candidates from the DPP's top $want /g;
	is($stage, 30, "... every basket from the DPP's top $want");
	# the scan the stage runs is of the DPP's top M, not of the top 10 (but where M is 10)
	unlike($log, qr/mtdpp top 10 of \d+ items: scan bounded/, '... and no full scan') if $want > 10;
}

# the default is the stage
is($node->safe_psql('postgres', 'LOAD \'mtdpp\'; SHOW mtdpp.candidates'), '64',
	'mtdpp.candidates is 64 by default');

# the DPP alone adds no evidence: the scan, whatever the setting
$node->safe_psql('postgres', q{
SELECT items FROM mtdpp_train('mt', 'lines', kind => 'multitask', rank => 8, epochs => 1);
});
my ($out, $err) = ('', '');
$node->psql('postgres', q{
SET client_min_messages = debug1;
SELECT count(*) FROM mtdpp_complete('{1,2,3}', 10, 'mt');
}, stdout => \$out, stderr => \$err, on_error_die => 1);
is($out, '10', 'the multitask kind completes');
unlike($err, qr/candidates from the DPP's top/, '... without the candidate stage');
like($err, qr/mtdpp top 10 of \d+ items: scan bounded/, '... from the scan');

# A backend reads a model's rows 4,096 at a time (store/model_read.c): the
# items of the last rows answer from their own stored rows, the weights of
# their lists and the cosines of their factors with items of the first
# rows.  Each call is a session of its own, whose cache reads the model
# from the tables.
$node->safe_psql('postgres', q{SELECT items FROM mtdpp_train('knn', 'lines', kind => 'itemknn')});
is($node->safe_psql('postgres', q{
SELECT count(*) > 20 AND count(*) = count(u.w) AND bool_and(abs(s.similarity - u.w) < 1e-6)
FROM (SELECT i.item_id, i.neighbors, i.neighbor_weights FROM mtdpp.items i JOIN mtdpp.models m USING (model_id)
      WHERE m.name = 'knn' ORDER BY i.item_id DESC LIMIT 10) i
CROSS JOIN LATERAL mtdpp_similar(i.item_id, 10, 'knn') s
LEFT JOIN LATERAL (SELECT u.w FROM unnest(i.neighbors, i.neighbor_weights) u(n, w) WHERE u.n = s.item_id) u ON true}),
	't', 'the last items of a model read in batches answer the weights of their own stored lists');
is($node->safe_psql('postgres', q{
WITH f AS (SELECT i.item_id, i.factors FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'mt'),
cosine AS (
  SELECT a.item_id AS a, b.item_id AS b,
         sum(x::float8 * y) / sqrt(sum(x::float8 * x) * sum(y::float8 * y)) AS c
  FROM (SELECT * FROM f ORDER BY item_id DESC LIMIT 5) a, f b,
       unnest(a.factors, b.factors) u(x, y)
  WHERE b.item_id < 4096
  GROUP BY 1, 2)
SELECT count(*) || ' ' || count(*) FILTER (WHERE abs(s.similarity - c.c) < 1e-5)
FROM (SELECT a FROM cosine GROUP BY a) x
CROSS JOIN LATERAL mtdpp_similar(x.a, 5, 'mt', allowed => (SELECT array_agg(b) FROM cosine WHERE cosine.a = x.a)) s
JOIN cosine c ON c.a = x.a AND c.b = s.item_id}), '25 25',
	'... and the cosines of their stored factors with items of the first rows');

done_testing();
