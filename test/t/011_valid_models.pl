# A model that loads gives a finite score to every item, for every basket.
# Random changes to the values of trained models, of every kind, written by
# hand into the model tables: after each, every completion must either be
# refused (data_corrupted, as the model is read) or give every candidate a
# finite score, none missing, from baskets of 0 to 59 items.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('valid');
load_planted($node, baskets => 1000);
# every kind of the registry
my @kinds = split /\n/, $node->safe_psql('postgres', 'SELECT name FROM mtdpp_kinds() ORDER BY number');
for my $kind (@kinds)
{
	$node->safe_psql('postgres',
		"SELECT * FROM mtdpp_train('$kind', 'train_lines', position_col => 'position', kind => '$kind', rank => 8, epochs => 2, seed => 3)");
}
$node->safe_psql('postgres', q{
CREATE TABLE saved_items AS SELECT * FROM mtdpp.items;
CREATE TABLE saved_models AS SELECT model_id, log_w, n_baskets FROM mtdpp.models;
CREATE FUNCTION restore() RETURNS void LANGUAGE sql AS $$
    UPDATE mtdpp.items i SET popularity = o.popularity, bias = o.bias, factors = o.factors,
        task_factors = o.task_factors, neighbors = o.neighbors, neighbor_weights = o.neighbor_weights
    FROM saved_items o WHERE i.model_id = o.model_id AND i.item_id = o.item_id;
    UPDATE mtdpp.models m SET log_w = o.log_w, n_baskets = o.n_baskets
    FROM saved_models o WHERE m.model_id = o.model_id;
$$;
CREATE TABLE baskets AS
SELECT b, (SELECT array_agg(i) FROM generate_series(1, 60) i WHERE i <> ALL (b)) AS others
FROM (VALUES ('{}'::int[]), ('{1}'), ('{1,2,3,4,5}'), ('{11,12,13,21,22,23,31,32,33,41}'),
             ((SELECT array_agg(i) FROM generate_series(1, 30) i)),
             ((SELECT array_agg(i) FROM generate_series(1, 59) i))) v(b);
});

# per basket: candidates, finite scores from mtdpp_score, finite and returned by mtdpp_complete
sub check
{
	my ($model) = @_;
	return $node->psql('postgres', qq{\\set VERBOSITY verbose
SELECT count(*) FILTER (WHERE s_bad > 0 OR c_bad > 0 OR c_n <> cardinality(others))
FROM baskets,
LATERAL (SELECT count(*) FILTER (WHERE NOT (score > '-infinity' AND score < 'infinity')) AS s_bad
         FROM mtdpp_score(b, others, '$model')) s,
LATERAL (SELECT count(*) FILTER (WHERE NOT (score > '-infinity' AND score < 'infinity')) AS c_bad,
                count(*) AS c_n
         FROM mtdpp_complete(b, 60, '$model')) c}, on_error_stop => 0);
}

for my $kind (@kinds)
{
	my ($ret, $out, $err) = check($kind);
	is(($err =~ /ERROR/ ? $err : '') . $out, '0', "the trained $kind model scores every candidate finitely") or diag($err);
}

srand(11);
sub scale { return sprintf('1e%d', int(rand(91)) - 45); }

my ($rounds, $refused, $rejected_by_table, $finite, @violations) = (0, 0, 0, 0);
for my $round (1 .. 150)
{
	my $kind = $kinds[ int(rand(@kinds)) ];
	my $item = 1 + int(rand(60));
	my $where = rand() < 0.5 ? "item_id = $item" : 'true';
	my $model = "(SELECT model_id FROM mtdpp.models WHERE name = '$kind')";
	my $s = scale();
	my @changes = (
		"UPDATE mtdpp.items SET factors = (SELECT array_agg(f * ${s}::float8 ORDER BY o) FROM unnest(factors) WITH ORDINALITY u(f, o)) WHERE model_id = $model AND $where",
		"UPDATE mtdpp.items SET task_factors = (SELECT array_agg(f * ${s}::float8 ORDER BY o) FROM unnest(task_factors) WITH ORDINALITY u(f, o)) WHERE model_id = $model AND $where",
		"UPDATE mtdpp.items SET bias = bias * ${s}::float8 WHERE model_id = $model AND $where",
		"UPDATE mtdpp.items SET bias = 0, factors = array_fill(${s}::real, ARRAY[cardinality(factors)]), task_factors = array_fill(" . scale() . "::real, ARRAY[cardinality(task_factors)]) WHERE model_id = $model",
		"UPDATE mtdpp.items SET popularity = " . (int(rand(2**32)) - 2**31) . " WHERE model_id = $model AND $where",
		"UPDATE mtdpp.models SET log_w = " . (rand() < 0.5 ? '-' : '') . "$s WHERE model_id = $model",
		"UPDATE mtdpp.models SET n_baskets = " . int(rand(1000)) . " WHERE model_id = $model",
		"UPDATE mtdpp.items SET neighbor_weights = (SELECT array_agg(w * ${s}::float8 ORDER BY o) FROM unnest(neighbor_weights) WITH ORDINALITY u(w, o)) WHERE model_id = $model AND $where",
	);
	my $change = $changes[ int(rand(@changes)) ];
	my ($uret, $uout, $uerr) = $node->psql('postgres', $change, on_error_stop => 0);
	$rounds++;
	if ($uerr =~ /ERROR/)
	{
		$rejected_by_table++;    # beyond real: the table itself refuses it
		next;
	}
	my ($ret, $out, $err) = check($kind);
	if ($err !~ /ERROR/ && $out eq '0')
	{
		$finite++;
	}
	elsif ($err =~ /ERROR:\s+XX001:/)
	{
		$refused++;
	}
	else
	{
		push @violations, "$kind: $change\n  -> " . ($err =~ /ERROR/ ? $err : "$out baskets with a non-finite or missing score");
	}
	$node->safe_psql('postgres', 'SELECT restore()');
}
note "$rounds changes: $refused refused as the model was read, $finite gave finite scores, $rejected_by_table beyond real";
is(scalar(@violations), 0, 'every change is refused as the model is read, or every score stays finite')
  or diag(join("\n", @violations[0 .. ($#violations < 9 ? $#violations : 9)]));
cmp_ok($refused, '>', 10, 'many changes are refused');
cmp_ok($finite, '>', 10, 'many changes still give a valid model');

done_testing();
