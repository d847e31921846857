# Randomised bad input: a few hundred calls of every SQL function with
# arguments drawn (seeded) from bad and borderline values: arrays with NULL
# elements, several dimensions, huge, negative or 5,000 ids; k of 0, -1,
# NULL, 2^31 - 1; missing, empty and very long model names; hyperparameter
# jsonb with unknown keys, wrong types, out-of-range numbers, nested values;
# odd sources and column names; corrupted model values.  Each call must
# succeed or fail with an ERROR that is not an internal error (XX000), the
# server must accept a new connection afterwards, and the model tables must
# be as they were (mtdpp.models.metrics aside, which mtdpp_evaluate writes;
# a model that a call did add is checked, then dropped, before comparing).
#
#     MTDPP_FUZZ_SEED=42 MTDPP_FUZZ_CALLS=1000 scripts/test --tap-only test/t/008_random_bad_input.pl
#
# Every failing call is printed with its exact SQL.  Inputs that once failed
# uncleanly are replayed as fixed inputs at the end.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $seed = $ENV{MTDPP_FUZZ_SEED} // 20240611;
my $n_calls = $ENV{MTDPP_FUZZ_CALLS} // 300;
srand($seed);
note "seed $seed, $n_calls calls";

# a crash must not end the test: the postmaster reinitialises and goes on
my $node = mtdpp_node('fuzz', 'restart_after_crash = on');
load_planted($node, baskets => 1000);
$node->safe_psql('postgres', q{
SELECT * FROM mtdpp_train('m', 'train_lines', epochs => 5, seed => 1, kind => 'multitask');
SELECT * FROM mtdpp_train('pop', 'train_lines', kind => 'popularity');
SELECT * FROM mtdpp_train('knn', 'train_lines', kind => 'itemknn');
SELECT * FROM mtdpp_train('ease', 'train_lines', kind => 'ease');
SELECT * FROM mtdpp_train('lr', 'train_lines', kind => 'logistic', rank => 4, epochs => 3);
SELECT * FROM mtdpp_train('mt2', 'train_lines', rank => 4, epochs => 3, activate => false, kind => 'multitask');
SELECT mtdpp_activate('m');
-- the test helper the library holds and the extension does not declare
CREATE FUNCTION gradient_check(rank integer, context_size integer, seed bigint DEFAULT 0,
                               softmax boolean DEFAULT true)
RETURNS float8 AS '$libdir/mtdpp', 'mtdpp_gradient_check' LANGUAGE C STRICT VOLATILE;

-- sources with odd columns, types and contents
CREATE TABLE odd_lines AS
SELECT order_id, item_id, position, order_id::text AS order_text, item_id::bigint + 3000000000 AS item_big,
       position::numeric AS pos_numeric, item_id::text AS item_text, -item_id AS item_neg,
       (order_id % 3)::smallint AS small, NULL::int AS nothing
FROM orders;
CREATE TABLE empty_lines (order_id int, item_id int, position int);
CREATE TABLE single_lines AS SELECT order_id, min(item_id) AS item_id, 1 AS position FROM orders GROUP BY order_id;
CREATE TABLE "Odd ""Name""" ("Order Id" int, "it'em" int, "pos;ition" int);
INSERT INTO "Odd ""Name""" SELECT order_id, item_id, position FROM orders;
CREATE TABLE odd_tests AS
SELECT basket, held_out, basket::text AS basket_text, held_out::bigint + 3000000000 AS held_big,
       ARRAY[basket, basket] AS basket_2d, basket || NULL::int AS basket_nulls, -held_out AS held_neg,
       array_fill(held_out, ARRAY[3]) AS basket_same
FROM test_baskets
UNION ALL SELECT NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL
UNION ALL SELECT '{}', 1, '{}', 1, '{}', '{}', -1, '{}'
UNION ALL SELECT '{1,2}', NULL, '{1,2}', NULL, '{{1,2},{3,4}}', '{1,NULL}', NULL, '{1}';
CREATE TABLE empty_tests (basket int[], held_out int);

-- valid model values of three kinds, to corrupt
CREATE TABLE blobs AS
SELECT 'multitask' AS kind, mtdpp_fit(order_id, item_id, position, '{"kind": "multitask", "epochs": 2, "rank": 4}') AS b FROM train_lines
UNION ALL SELECT 'itemknn', mtdpp_fit(order_id, item_id, position, '{"kind": "itemknn"}') FROM train_lines
UNION ALL SELECT 'popularity', mtdpp_fit(order_id, item_id, position, '{"kind": "popularity"}') FROM train_lines;
});

# ---------------------------------------------------------------------
# Random values, as SQL text
# ---------------------------------------------------------------------

sub pick { return $_[ int(rand(@_)) ]; }
sub chance { return rand() < $_[0]; }
sub lit { my ($s) = @_; return defined $s ? "'" . ($s =~ s/'/''/gr) . "'" : 'NULL'; }

sub shuffled
{
	my @a = @_;
	for (my $i = $#a; $i > 0; $i--)
	{
		my $j = int(rand($i + 1));
		@a[ $i, $j ] = @a[ $j, $i ];
	}
	return @a;
}

# long texts as expressions, so that the SQL printed for a failure is exact and short
my $long = q{repeat('x', 100000)};

# Arguments of a call.  Each spec is [name, good values, bad values,
# required]; a value is SQL text or code returning it.  A draw makes none,
# one, two or three arguments bad, and leaves out half of the good optional
# ones (their default then applies).  The first $positional specs are passed
# by position, the others by name.
sub draw_args
{
	my ($positional, @specs) = @_;
	my $n_bad = pick(0, 0, 1, 1, 1, 2, 3);
	my @order = shuffled(grep { @{ $specs[$_][2] } } 0 .. $#specs);
	my %bad = map { ($_ => 1) } @order[ 0 .. ($n_bad < @order ? $n_bad : scalar @order) - 1 ];
	my @out;
	for my $i (0 .. $#specs)
	{
		my ($name, $good, $badv, $required) = @{ $specs[$i] };
		next if !$bad{$i} && $i >= $positional && !$required && chance(0.5);
		my $v = pick(@{ $bad{$i} ? $badv : $good });
		$v = $v->() if ref $v eq 'CODE';
		push @out, $i < $positional ? $v : "$name => $v";
	}
	return @out;
}

sub rand_id
{
	return pick(1 .. 60) if chance(0.75);
	return pick(0, -1, -60, 61, 999, 2147483647, -2147483648, 1000000);
}

sub literal_basket
{
	return 'ARRAY[' . join(', ', map { rand_id() } 1 .. pick(1 .. 6)) . ']::int[]';
}

# int[] arguments: legal ones (empty, odd bounds, unknown ids, 5,000 items)
# and bad ones (NULL, NULL elements, several dimensions, out of range)
my @good_arrays = ((\&literal_basket) x 8,
	q{'{}'::int[]}, q{'[5:7]={1,2,3}'::int[]}, q{'[-3:-2]={11,12}'::int[]}, q{ARRAY[2147483647, -2147483648]},
	q{ARRAY[-1, -2, -3]}, q{array_fill(7, ARRAY[1000])}, q{'{}'::int[][]}, q{array_fill(1, ARRAY[2, 0])},
	q{ARRAY(SELECT 1 + g % 60 FROM generate_series(1, 5000) AS g)},
	q{ARRAY(SELECT g FROM generate_series(1, 5000) AS g)},
	q{ARRAY(SELECT -g FROM generate_series(1, 5000) AS g)},
	q{ARRAY(SELECT 2147483647 - g FROM generate_series(1, 5000) AS g)},
	q{ARRAY(SELECT (hashint4(g) % 80)::int FROM generate_series(1, 5000) AS g)});
my @bad_arrays = (q{NULL::int[]}, q{ARRAY[NULL]::int[]}, q{ARRAY[1, NULL, 3]}, q{'{{1,2},{3,4}}'::int[]},
	q{'{{{1}}}'::int[]}, q{'{3000000000}'::int[]}, q{'{a}'::int[]}, q{'{1,2}'::bigint[]}, q{ARRAY[1.5, 2]},
	q{ARRAY(SELECT CASE WHEN g % 100 = 0 THEN NULL ELSE g % 70 END FROM generate_series(1, 5000) AS g)},
	q{ARRAY(SELECT ARRAY[g, g] FROM generate_series(1, 2500) AS g)});

my @good_k = (1, 5, 5, 10, 59, 60, 61, 1000, 2147483647, "'5'");
my @bad_k = (0, -1, 'NULL', -2147483648, '5.5', "'x'", '3000000000');

my @good_models = ('NULL', q{'m'}, q{'pop'}, q{'knn'}, q{'lr'}, q{'ease'});
my @bad_models = (q{''}, q{'nope'}, $long, q{'M'}, q{' m'}, q{'mt2'}, q{'it''s'}, q{'a"b'}, q{'é'},
	q{'m; DROP TABLE orders'}, q{repeat('y', 201)});

# a name for a call that stores a model: never an existing one
my $fresh = 0;
sub new_name { return lit(sprintf('fz%03d', ++$fresh)); }
my @bad_new_names = ('NULL', q{''}, $long, q{repeat('y', 201)});

# ---- hyperparameters

# every kind of the registry but the default one, which a call naming none trains
my @kinds = split /\n/, $node->safe_psql('postgres', q{
SELECT name FROM mtdpp_kinds()
WHERE name <> (SELECT default_value::jsonb #>> '{}' FROM mtdpp_hyperparameters() WHERE key = 'kind')
ORDER BY number});

my %good_values = (
	kind => [ map { qq{"$_"} } @kinds ],
	target => [ '"random"', '"last"' ],
	optimizer => [ '"adam"', '"momentum"' ],
	loss => [ '"softmax"', '"logistic"' ],
	rank => [ 1, 2, 8, 'null' ],
	epochs => [ 1, 2, 2.0 ],
	seed => [ 0, -1, 42, 9e15, -9e15 ],
	verbose => [ 'true', 'false' ],
	learning_rate => [ 1e-9, 0.001, 0.02, 10 ],
	lr_decay => [ 0.01, 0.5, 1 ],
	batch_size => [ 1, 7, 1000000 ],
	negatives => [ 1, 5, 100 ],
	positives => [ 0, 1, 1000 ],
	patience => [ 1, 100000 ],
	l2 => [ 0, 1e-4, 100 ],
	l2_bias => [ 0, 1e-4, 100 ],
	w => [ 1e-12, 0.01, 1, 1e12 ],
	init_scale => [ 0, 0.1, 10 ],
	momentum => [ 0, 0.5, 0.999 ],
	validation_fraction => [ 0, 0.1, 0.5 ],
	validation_baskets => [ -1, 0, 1, 1000000 ],
	max_context => [ 1, 2, 100 ],
	negative_power => [ 0, 0.75, 2 ],
	lambda => [ 'null', 0.5, 100, 1e12 ],
	max_neighbors => [ 1, 5, 1000000 ],
	min_support => [ 'null', 1e-9, 0.05, 1 ],
	min_confidence => [ 'null', 0, 0.2, 1 ],
	max_antecedent => [ 'null', 1, 2, 3 ],
);
my %bad_values = (
	kind => [ '"MULTITASK"', '""', '"dpp"' ],
	target => [ '"first"', '""' ],
	optimizer => [ '"sgd"' ],
	loss => [ '"hinge"' ],
	rank => [ 0, -1, 645, 1024, 1025, 2147483647, 1.5, '"8"' ],
	epochs => [ 0, -1, 100001, 1.5, '"2"', 2147483648 ],
	seed => [ 9.1e15, 9223372036854775807, 1.5, '"1"' ],
	verbose => [ 1, '"true"' ],
	learning_rate => [ 0, -1, 10.5, '1e400' ],
	lr_decay => [ 0, 1.01 ],
	batch_size => [ 0, 1000001 ],
	negatives => [ 0, 101 ],
	positives => [ -1, 1001 ],
	patience => [ 0, 100001 ],
	l2 => [ -1e-9, 100.5 ],
	l2_bias => [ -1, '1e-400' ],
	w => [ 0, 1e-13, 1e13, '-0' ],
	init_scale => [ -0.1, 10.1 ],
	momentum => [ 1, -0.1 ],
	validation_fraction => [ 0.51, -0.1 ],
	validation_baskets => [ -2, 1000001 ],
	max_context => [ 0, 101 ],
	negative_power => [ -0.1, 2.1 ],
	lambda => [ -1, -1e-9, 1.1e12, '"1"' ],
	max_neighbors => [ 0, -1, 1000001, 1.5 ],
	min_support => [ 0, -0.1, 1.01, '"0.1"' ],
	min_confidence => [ -0.1, 1.1, 'true' ],
	max_antecedent => [ 0, 4, 1.5, -1 ],
);
my @valid_keys = sort keys %good_values;
my @bad_keys = ('Rank', 'unknown', '', ' epochs', 'learning-rate', 'kind ', 'é', 'k' x 200);

sub any_json_value
{
	my ($depth) = @_;
	if ($depth < 2 && chance(0.15))
	{
		return '[' . join(', ', map { any_json_value($depth + 1) } 1 .. pick(0 .. 3)) . ']';
	}
	if ($depth < 2 && chance(0.15))
	{
		return '{' . join(', ', map { qq{"k$_": } . any_json_value($depth + 1) } 1 .. pick(0 .. 2)) . '}';
	}
	return pick(0, -1, 1, 0.5, 1e-12, 1e13, '1e308', '-1e308', '1e400', '1e-400', 2147483648, -2147483649,
		'true', 'false', '""', '"x"', '"NaN"', '"Infinity"', '"1"', '"é"', '"' . ('z' x 300) . '"');
}

# A jsonb argument: an object of good keys and values, with (if BAD) one or
# two bad keys or values, or a value that is not an object.  NAMED: whether
# the keys that mtdpp_train takes as arguments may appear (mtdpp_fit).
sub rand_params
{
	my ($named, $bad) = @_;
	return pick(q{'[]'::jsonb}, q{'1'::jsonb}, q{'"x"'::jsonb}, q{'null'::jsonb},
		q{'[{"rank": 8}]'::jsonb}, q|'{"rank": 8'::jsonb|)
	  if $bad && chance(0.15);
	my @keys = grep { $named || !/^(kind|rank|epochs|target|seed|verbose)$/ } @valid_keys;
	my %o = map { ($_ => pick(@{ $good_values{$_} })) } map { pick(@keys) } 1 .. pick(0 .. 4);
	for (1 .. ($bad ? pick(1, 1, 1, 2) : 0))
	{
		my $r = rand();
		if ($r < 0.45)
		{
			my $key = pick(@valid_keys);
			$o{$key} = pick(@{ $bad_values{$key} });
		}
		elsif ($r < 0.7)
		{
			$o{ pick(@valid_keys) } = any_json_value(0);
		}
		elsif ($r < 0.85)
		{
			$o{ pick(@bad_keys) } = any_json_value(0);
		}
		else
		{
			# an argument of mtdpp_train inside params, or null (the default)
			$o{ pick(qw(kind rank epochs target seed verbose learning_rate)) } = pick(2, 'null');
		}
	}
	# never the slow combinations: every positive with many negatives, a
	# rank in the hundreds with many negatives or many epochs
	$o{negatives} = 5 if exists $o{negatives} && exists $o{positives};
	if (exists $o{rank} && $o{rank} =~ /^\d+$/ && $o{rank} > 100)
	{
		$o{negatives} = 5 if exists $o{negatives};
		$o{epochs} = 1 if $named;
	}
	$o{epochs} //= 2 if $named && !exists $o{kind};
	return lit('{' . join(', ', map { qq{"$_": $o{$_}} } sort keys %o) . '}') . '::jsonb';
}

# ---- order lines: a source and its columns

my %line_sources = (
	q{'train_lines'} => [ ['order_id'], ['item_id'], ['position'] ],
	q{'orders'} => [ ['order_id'], ['item_id'], ['position'] ],
	q{'odd_lines'} => [ [ 'order_id', 'order_text', 'small' ], [ 'item_id', 'item_neg', 'item_big', 'item_text' ], [ 'position', 'item_neg', 'small' ] ],
	q{'"Odd ""Name"""'} => [ ['Order Id'], ["it'em"], ['pos;ition'] ],
	q{'mtdpp.items'} => [ ['model_id'], ['item_id'], ['popularity'] ],
);
my @bad_line_sources = (q{'empty_lines'}, q{'single_lines'}, q{'test_baskets'}, q{'pg_class'}, q{'nonexistent'},
	'NULL', '0::oid::regclass');
my @bad_columns = ('NULL', q{'nope'}, q{''}, q{'ctid'}, q{'xmin'}, q{'pos_numeric'},
	q{'nothing'}, q{'ORDER_ID'}, q{'order_id '}, q{'item_id); DROP TABLE orders; --'}, q{repeat('x', 70000)});

# ---------------------------------------------------------------------
# The calls: each returns (function, sql, details)
# ---------------------------------------------------------------------

sub call_complete
{
	my ($basket, $k, @model) = draw_args(2,
		[ 'basket', \@good_arrays, \@bad_arrays ],
		[ 'k', \@good_k, \@bad_k ],
		[ 'model', \@good_models, \@bad_models ]);
	my $call = 'mtdpp_complete(' . join(', ', $basket, $k, @model) . ')';
	# checked on success: ranks 1..n, distinct items, none of the basket,
	# at most k
	my ($ids) = $basket =~ /^ARRAY\[([-\d, ]+)\]::int\[\]$/;
	return ('complete', qq{SELECT count(*), count(DISTINCT c.item_id), coalesce(max(c.rank), 0),
       count(*) FILTER (WHERE c.item_id = ANY ($basket)), count(*) FILTER (WHERE c.score IS NULL)
FROM $call AS c}, { k => $k, ids => defined $ids ? [ split /,\s*/, $ids ] : undef });
}

sub call_score
{
	my @args = draw_args(2,
		[ 'basket', \@good_arrays, \@bad_arrays ],
		[ 'items', \@good_arrays, \@bad_arrays ],
		[ 'model', \@good_models, \@bad_models ]);
	return ('score', 'SELECT count(*), count(score) FROM mtdpp_score(' . join(', ', @args) . ')', {});
}

sub call_train
{
	my $source = pick(sort keys %line_sources);
	my ($orders, $items, $positions) = @{ $line_sources{$source} };
	my $custom = $source =~ /Odd|mtdpp/;
	my @args = draw_args(0,
		[ 'name', [ \&new_name ], \@bad_new_names, 1 ],
		[ 'source', [$source], \@bad_line_sources, 1 ],
		[ 'order_col', [ map { lit($_) } @$orders ], \@bad_columns, $custom ],
		[ 'item_col', [ map { lit($_) } @$items ], \@bad_columns, $custom ],
		[ 'position_col', [ 'NULL', map { lit($_) } @$positions ], \@bad_columns ],
		[ 'rank', [ 'NULL', 1, 4, 8 ], [ 0, -1, 645, 1025, 2147483647, -2147483648 ] ],
		[ 'epochs', [ 1, 2 ], [ 0, -1, 100001, 2147483647 ], 1 ],    # short trainings
		[ 'kind', [ 'NULL', map { "'$_'" } @kinds ],
			[ q{''}, q{'MULTITASK'}, q{'it''s'}, q{'a"b'}, q{'a\\b'}, $long ] ],
		[ 'target', [ 'NULL', q{'random'}, q{'last'} ], [ q{''}, q{'first'}, q{E'x\ny'} ] ],
		[ 'seed', [ 'NULL', 0, -1, 42 ], [ 9223372036854775807, '-9223372036854775808' ] ],
		[ 'verbose', [ 'NULL', 'true', 'false' ], [] ],
		[ 'activate', [ 'NULL', 'true', 'false' ], [] ],
		[ 'params', [ 'NULL', q{'{}'::jsonb}, sub { rand_params(0, 0) } ], [ sub { rand_params(0, 1) } ] ]);
	return ('train', 'SELECT name, version, kind, items FROM mtdpp_train(' . join(', ', @args) . ')', {});
}

sub call_fit
{
	my @args = draw_args(4,
		[ 'order_id', [ 'order_id', '-order_id', 'order_id * 1000000000000', 'order_id % 200' ],
			[ 'NULL::bigint', '0', 'order_id::numeric' ] ],
		[ 'item_id', [ 'item_id', '-item_id', '2147483647 - item_id', 'item_id + 1000000' ],
			[ 'NULL::int', 'item_id % 2', 'item_id::bigint' ] ],
		[ 'position', [ 'position', 'NULL::int', '-position', '2147483647', '0' ], [ 'position::text' ] ],
		[ 'params', [ q{'{"epochs": 2}'::jsonb}, sub { rand_params(1, 0) } ], [ sub { rand_params(1, 1) } ] ]);
	my $n = pick(2, 3, 4, 4, 4);
	my $src = chance(0.8) ? pick('train_lines', 'orders', '(SELECT * FROM orders WHERE order_id % 5 = 0) AS t')
	  : pick('empty_lines', 'single_lines', '(SELECT * FROM orders ORDER BY order_id LIMIT 5) AS t');
	# the two- and three-argument forms train with the defaults: 30 epochs
	return ('fit', 'SELECT length(mtdpp_fit(' . join(', ', @args[ 0 .. $n - 1 ]) . ")) FROM $src", {});
}

sub call_evaluate
{
	my $source = pick(q{'test_baskets'}, q{'odd_tests'});
	my @args = draw_args(0,
		[ 'model', [ @good_models, q{'mt2'} ], \@bad_models, 1 ],
		[ 'source', [$source], [ q{'empty_tests'}, q{'train_lines'}, q{'nonexistent'}, 'NULL', '0::oid::regclass',
				q{'mtdpp.models'}, q{'pg_class'} ], 1 ],
		[ 'basket_col', [ q{'basket'}, $source eq q{'odd_tests'} ? (q{'basket_text'}, q{'basket_same'}) : () ],
			[ 'NULL', q{'basket_2d'}, q{'basket_nulls'}, q{'held_out'}, q{'nope'}, q{''}, q{'ctid'},
				q{'loss_history'}, q{repeat('x', 70000)} ] ],
		[ 'held_out_col', [ q{'held_out'}, $source eq q{'odd_tests'} ? (q{'held_neg'}) : () ],
			[ 'NULL', q{'held_big'}, q{'basket'}, q{'order_id'}, q{'nope'}, q{'rank'} ] ],
		[ 'catalog_size', [ 'NULL', -1, 60, 61, 1000, 2147483647 ], [ 0, 1, 59, -2, -2147483648 ] ]);
	# 'mt2' has no active version
	return ('evaluate', 'SELECT baskets FROM mtdpp_evaluate(' . join(', ', @args) . ')', {});
}

sub call_similar
{
	my @args = draw_args(2,
		[ 'item', [ \&rand_id, 1, 30, 60, "'7'" ], [ 'NULL', '5.5', q{'x'}, '3000000000' ] ],
		[ 'k', \@good_k, \@bad_k ],
		[ 'model', \@good_models, \@bad_models ],
		[ 'allowed', [ 'NULL', @good_arrays ], \@bad_arrays ],
		[ 'excluded', [ 'NULL', @good_arrays ], \@bad_arrays ]);
	return ('similar', 'SELECT count(*), count(DISTINCT item_id), coalesce(max(rank), 0) FROM mtdpp_similar('
		  . join(', ', @args) . ')', {});
}

sub call_evaluate_at
{
	my $source = pick(q{'test_baskets'}, q{'odd_tests'});
	my @args = draw_args(0,
		[ 'model', [ @good_models, q{'mt2'} ], \@bad_models, 1 ],
		[ 'source', [$source], [ q{'empty_tests'}, q{'train_lines'}, q{'nonexistent'}, 'NULL', '0::oid::regclass' ], 1 ],
		[ 'k', [ q{ARRAY[5, 10, 20]}, q{ARRAY[1]}, q{ARRAY[100000, 3, 3]}, q{'[2:3]={7,8}'::int[]} ],
			[ 'NULL', q{'{}'::int[]}, q{ARRAY[0]}, q{ARRAY[5, NULL]}, q{'{{1},{2}}'::int[]}, q{ARRAY[100001]},
				q{ARRAY[-2147483648]}, q{array_fill(5, ARRAY[1001])} ] ],
		[ 'basket_col', [ q{'basket'} ], [ 'NULL', q{'held_out'}, q{'nope'}, q{''} ] ],
		[ 'held_out_col', [ q{'held_out'}, q{'basket'} ], [ 'NULL', q{'order_id'}, q{'nope'} ] ],
		[ 'catalog_size', [ 'NULL', 60, 1000 ], [ 0, 59, -2147483648 ] ]);
	return ('evaluate_at', 'SELECT count(*) FROM mtdpp_evaluate_at(' . join(', ', @args) . ')', {});
}

sub blob_of { return "(SELECT b FROM blobs WHERE kind = '$_[0]')"; }

# the model values of the blobs table: a choice of kinds, one of each shape
# (factors, neighbour lists, neither)
my @blob_kinds = qw(multitask itemknn popularity);

sub bad_blob
{
	my $kind = pick(@blob_kinds);
	my $b = blob_of($kind);
	return pick(
		'NULL', q{''::bytea}, q{'\x00'::bytea}, q{'\x5044444d'::bytea}, q{'not a model'::bytea},
		sprintf(q{decode('%s', 'hex')}, join('', map { sprintf('%02x', int(rand(256))) } 1 .. pick(1, 8, 64, 200))),
		sprintf('substr(%s, 1, %d)', $b, pick(4, 8, 63, 64, 65, 100, 500, 1000, 1431, 1440)),
		sprintf('substr(%s, 1, length(%s) - %d)', $b, $b, pick(1, 4, 8)),
		# the format word, the kind, the magic
		sprintf(q{overlay(%s placing '\x0200'::bytea from 5 for 2)}, $b),
		sprintf(q{overlay(%s placing '\x%s'::bytea from 7 for 2)}, $b, pick('0600', 'ffff', '0700')),
		sprintf(q{overlay(%s placing '\x00000000'::bytea from 1 for 4)}, $b),
		# negative or excessive sizes: n_items, rank, epochs_run, json_len
		sprintf(q{overlay(%s placing '\x%s'::bytea from %d for 4)}, $b, pick('ffffffff', 'ffffff7f', '01040000'),
			pick(9, 13, 29, 45)),
		# log_w NaN
		sprintf(q{overlay(%s placing '\x000000000000f87f'::bytea from 17 for 8)}, $b),
		# a byte of the hyperparameters, histories or items changed (not the
		# neighbour lists of itemknn: see the fixed inputs at the end)
		sprintf('set_byte(%s, %d, %d)', blob_of(pick('multitask', 'popularity')),
			64 + int(rand(1360)), int(rand(256))));
}

sub call_save
{
	my @args = draw_args(0,
		[ 'name', [ \&new_name ], \@bad_new_names, 1 ],
		[ 'model', [ map { blob_of($_) } @blob_kinds ], [ \&bad_blob ], 1 ],
		[ 'activate', [ 'NULL', 'true', 'false' ], [] ],
		[ 'source', [ 'NULL', q{''}, q{'somewhere'}, $long ], [] ]);
	return ('save', 'SELECT mtdpp_save(' . join(', ', @args) . ')', {});
}

sub call_manage
{
	# never a change: unknown names, versions that do not exist, names taken
	my $name = pick('NULL', q{''}, q{'nope'}, $long, q{'m'}, q{'pop'}, q{'mt2'});
	my $known = $name =~ /^'(m|pop|mt2)'$/;
	my $version = $known ? pick(0, -1, 3, 2147483647, -2147483648)
	  : pick('NULL', 0, 1, -1, 2147483647);
	my $r = rand();
	return ('activate', "SELECT mtdpp_activate($name, $version)", {}) if $r < 0.35;
	return ('drop', "SELECT mtdpp_drop($name, $version)", {}) if $r < 0.7;
	my $new = pick('NULL', q{''}, q{repeat('y', 201)}, $long, q{'pop'}, q{'m'}, q{'knn'});
	return ('rename', "SELECT mtdpp_rename($name, $new)", {});
}

sub call_gradient_check
{
	my @args = draw_args(4,
		[ 'rank', [ 1, 4, 64 ], [ 0, 65, -1, 2147483647, 'NULL' ] ],
		[ 'context_size', [ 1, 5, 9 ], [ 0, 10, -1, 'NULL' ] ],
		[ 'seed', [ 0, -1, 9223372036854775807 ], ['NULL'] ],
		[ 'softmax', [ 'true', 'false' ], ['NULL'] ]);
	return ('gradient_check', 'SELECT public.gradient_check(' . join(', ', @args) . ') IS NOT NULL', {});
}

my @generators = (
	[ 0.18, \&call_complete ], [ 0.10, \&call_score ], [ 0.04, \&call_similar ], [ 0.20, \&call_train ],
	[ 0.12, \&call_fit ], [ 0.10, \&call_evaluate ], [ 0.04, \&call_evaluate_at ], [ 0.12, \&call_save ],
	[ 0.07, \&call_manage ], [ 0.03, \&call_gradient_check ]);

sub rand_call
{
	my $r = rand();
	for my $g (@generators)
	{
		return $g->[1]->() if $r < $g->[0];
		$r -= $g->[0];
	}
	return $generators[0][1]->();
}

# ---------------------------------------------------------------------
# Running a call
# ---------------------------------------------------------------------

my $checksum_sql = q{
SELECT 1,
  (SELECT count(*) || ' ' || md5(string_agg((m.model_id, m.name, m.version, m.kind, m.active, m.rank, m.n_items,
          m.n_baskets, m.n_examples, m.log_w, m.hyperparams, m.loss_history, m.val_mpr_history, m.final_loss,
          m.best_epoch, m.train_seconds, m.source, m.trained_at, m.trained_by, m.activated_at)::text,
          E'\n' ORDER BY m.model_id))
   FROM mtdpp.models m),
  (SELECT count(*) || ' ' || md5(string_agg(i::text, E'\n' ORDER BY i.model_id, i.item_id)) FROM mtdpp.items i)};

# Runs SQL in a new session; returns a hash: ret, out, err, state (the
# SQLSTATE of the error, if any), crashed.
sub run_sql
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "SET statement_timeout = '60s';\n$sql",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	my ($state) = $err =~ /(?:ERROR|FATAL|PANIC):\s+([0-9A-Z]{5}):/;
	my $crashed = $ret == 2 || $err =~ /server closed the connection|connection to server was lost/;
	return { ret => $ret, out => $out, err => $err, state => $state, crashed => $crashed };
}

# After a crash the postmaster reinitialises: wait for it to accept again.
sub server_up
{
	my ($ret, $out) = $node->psql('postgres', 'SELECT 1');
	return 1 if $ret == 0 && $out eq '1';
	return $node->poll_query_until('postgres', 'SELECT 1', '1');
}

my ($baseline) = $node->safe_psql('postgres', $checksum_sql);
my (@crashes, @internal, @changed, @not_up, @bad_answers, @slow, @long_messages);
my %states;
my %kinds;
my $succeeded = 0;

sub check_new_model
{
	my ($name, $what) = @_;
	# a model a call stored: used, then dropped
	for my $sql (qq{SELECT count(*) FROM mtdpp_complete('{1,2,3}', 10, $name)},
		qq{SELECT count(*) FROM mtdpp_complete(ARRAY(SELECT g FROM generate_series(1, 5000) AS g), 5, $name)},
		qq{SELECT count(*) FROM mtdpp_score('{1,2}', '{3,4,999}', $name)},
		qq{SELECT baskets FROM mtdpp_evaluate($name, 'test_baskets')})
	{
		my $res = run_sql($sql);
		if ($res->{crashed})
		{
			push @crashes, "$sql\n  -- after: $what\n  -- $res->{err}";
			server_up();
		}
		elsif (($res->{state} // '') eq 'XX000')
		{
			push @internal, "$sql\n  -- after: $what\n  -- $res->{err}";
		}
	}
	my $drop = run_sql(qq{SELECT mtdpp_drop($name)});
	push @changed, "could not drop the model stored by: $what\n  -- $drop->{err}" if $drop->{ret} != 0;
	return;
}

my $t0 = time;
for my $n (1 .. $n_calls)
{
	my ($kind, $sql, $details) = rand_call();
	$kinds{$kind}++;
	my $t = time;
	my $res = run_sql($sql);
	my $seconds = time - $t;
	push @slow, sprintf("%.1f s: %s", $seconds, $sql) if $seconds > 10;
	my $state = $res->{state} // ($res->{ret} == 0 ? 'ok' : 'no SQLSTATE');
	$states{$state}++;
	my $short = length($sql) > 2000 ? substr($sql, 0, 2000) . '...' : $sql;

	if ($res->{crashed})
	{
		push @crashes, "$short\n  -- $res->{err}";
	}
	elsif ($state eq 'XX000' || $state eq 'no SQLSTATE')
	{
		push @internal, "$short\n  -- $res->{err}";
	}
	# an error quotes names and values in part: no message of 100,000 characters
	my ($message) = $res->{err} =~ /^(?:ERROR|FATAL):\s+(.*)$/m;
	push @long_messages, "$short\n  -- " . substr($message, 0, 300) . '...'
	  if defined $message && length($message) > 1000;
	$succeeded++ if $res->{ret} == 0;

	if ($res->{ret} == 0 && $kind eq 'complete')
	{
		my ($rows, $distinct, $max_rank, $in_basket, $null_scores) = split /\|/, $res->{out};
		my $k = $details->{k} =~ /^'?(-?\d+)'?$/ ? $1 : undef;
		# every model that answers has items 1 to 60: k of those not in the basket
		my $expect;
		if (defined $k && $details->{ids})
		{
			my %in = map { ($_ => 1) } grep { $_ >= 1 && $_ <= 60 } @{ $details->{ids} };
			$expect = 60 - scalar(keys %in);
			$expect = $k if $k < $expect;
		}
		push @bad_answers, "$short\n  -- got $res->{out}" . (defined $expect ? ", expected $expect rows" : '')
		  unless $distinct == $rows && $max_rank == $rows && $in_basket == 0 && $null_scores == 0
		  && (!defined $k || $rows <= $k) && (!defined $expect || $rows == $expect);
	}

	note sprintf('call %d, %s, %.2f s: %s', $n, $state,
		$seconds, length($sql) > 300 ? substr($sql, 0, 300) . '...' : $sql);

	# a call that stored a model: checked and dropped before comparing
	if ($res->{ret} == 0 && ($kind eq 'train' || $kind eq 'save'))
	{
		my ($name) = $sql =~ /name => ('(?:[^']|'')*')/;
		check_new_model($name, $short);
	}
	# a new session: the server accepts connections; the tables as before
	my ($ret, $now) = $node->psql('postgres', $checksum_sql);
	if ($ret != 0)
	{
		unless (server_up())
		{
			push @not_up, $short;
			last;
		}
		$now = $node->safe_psql('postgres', $checksum_sql);
	}
	if ($now ne $baseline)
	{
		push @changed, $short;
		$baseline = $now;    # report each change once
	}
}
my $elapsed = time - $t0;

note sprintf('%d calls in %.0f s: %d succeeded; by function: %s', $n_calls, $elapsed, $succeeded,
	join(', ', map { "$_ $kinds{$_}" } sort keys %kinds));
note 'outcomes: ' . join(', ', map { "$_ $states{$_}" } sort keys %states);
cmp_ok($succeeded, '>', $n_calls / 20, 'some calls succeed (the draws are not all rejected)');
cmp_ok(scalar(keys %states), '>=', 8, 'the calls fail in many different ways');

is(scalar(@crashes), 0, 'no call crashes the server') or diag("crashes:\n" . join("\n\n", @crashes));
is(scalar(@internal), 0, 'no call fails with an internal error (XX000)')
  or diag("internal errors:\n" . join("\n\n", @internal));
is(scalar(@not_up), 0, 'the server accepts a connection after every call')
  or diag("server down after:\n" . join("\n\n", @not_up));
is(scalar(@changed), 0, 'the model tables are unchanged after every call (metrics aside)')
  or diag("tables changed by:\n" . join("\n\n", @changed));
is(scalar(@bad_answers), 0, 'every completion that succeeds is well formed')
  or diag("bad completions:\n" . join("\n\n", @bad_answers));
is(scalar(@long_messages), 0, 'no error message runs over 1000 characters')
  or diag("long messages:\n" . join("\n\n", @long_messages));
diag("slow calls:\n" . join("\n", @slow)) if @slow;
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP:/, 'no backend crashed (server log)');

# ---------------------------------------------------------------------
# Inputs that once failed uncleanly, by fixed inputs.
# ---------------------------------------------------------------------

sub clean
{
	my ($sql, $what) = @_;
	my $res = run_sql($sql);
	my $ok = !$res->{crashed} && ($res->{state} // '') ne 'XX000';
	ok($ok, $what) or diag("$sql\n  -- $res->{err}");
	server_up() if $res->{crashed};
	return $res;
}

{
	clean(q{SELECT length(mtdpp_fit(order_id, item_id, position, '{"kind": "multitask", "epochs": 1, "rank": 645}')) FROM train_lines},
		'mtdpp_fit with rank 645 (within the documented 1..1024) fails cleanly or trains');
	clean(q{SELECT name, version FROM mtdpp_train('big_rank', 'train_lines', rank => 1024, epochs => 1, kind => 'multitask')},
		'mtdpp_train with rank 1024 fails cleanly or trains');
	run_sql(q{SELECT mtdpp_drop('big_rank')});

	# header fields of a model value: json_len (bytes 45-48), n_items (9-12), epochs_run (29-32)
	for my $field ([ 'json_len', 45 ], [ 'n_items', 9 ], [ 'epochs_run', 29 ])
	{
		my ($name, $at) = @$field;
		clean(qq{SELECT mtdpp_save('corrupt', overlay(b placing '\\xffffff7f'::bytea from $at for 4)) FROM blobs WHERE kind = 'multitask'},
			"mtdpp_save of a model value with $name = 2^31 - 1 fails cleanly");
		run_sql(q{SELECT mtdpp_drop('corrupt')});
	}

	# a NaN factor in a model value: mtdpp_save refuses it
	my $v0 = $node->safe_psql('postgres', q{
SELECT 1 + 64 + get_byte(b, 44) + 256 * get_byte(b, 45) + 2 * 8 * (get_byte(b, 28) + 256 * get_byte(b, 29))
       + 60 * (4 + 4 + 8)
FROM blobs WHERE kind = 'multitask'});
	my $nan = clean(qq{SELECT mtdpp_save('nan_factor', overlay(b placing '\\x000000000000f87f'::bytea from $v0 for 8), activate => true)
		   FROM blobs WHERE kind = 'multitask'}, 'mtdpp_save of a model value with a NaN factor fails cleanly');
	is($nan->{state}, '22P03', 'a NaN factor in a model value is invalid_binary_representation');
	run_sql(q{SELECT mtdpp_drop('nan_factor')});

	# the same by hand: NaN bias, infinite factor
	$node->safe_psql('postgres', q{
SELECT * FROM mtdpp_train('hand', 'train_lines', epochs => 2, kind => 'multitask');
UPDATE mtdpp.items SET bias = 'NaN'
WHERE item_id = 1 AND model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'hand');});
	my $hand = clean(q{SELECT * FROM mtdpp_complete('{1,2}', 5, 'hand')},
		'completing after a NaN bias was written by hand fails cleanly');
	is($hand->{state}, 'XX001', 'a NaN bias written by hand is data_corrupted');
	$node->safe_psql('postgres', q{
UPDATE mtdpp.items SET bias = 0.1, factors[1] = 'Infinity'
WHERE item_id = 1 AND model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'hand');});
	$hand = clean(q{SELECT * FROM mtdpp_complete('{1,2,5}', 5, 'hand')},
		'completing after an infinite factor was written by hand fails cleanly');
	is($hand->{state}, 'XX001', 'an infinite factor written by hand is data_corrupted');
	run_sql(q{SELECT mtdpp_drop('hand')});

	# a kind holding a double quote is spliced into the hyperparameter JSON
	my $res = run_sql(q{SELECT kind FROM mtdpp_train('inject', 'train_lines', kind => 'multitask", "rank": 3, "kind": "multitask', epochs => 2)});
	my $got = $res->{ret} == 0
	  ? 'a model of rank ' . $node->safe_psql('postgres', q{SELECT rank FROM mtdpp.models WHERE name = 'inject'})
	  : $res->{err};
	is($res->{state} // 'ok', '22023', q{kind => 'multitask", "rank": 3, ...' is an unknown kind, not spliced into the JSON})
	  or diag("got $got");
	run_sql(q{SELECT mtdpp_drop('inject')});

	# itemknn neighbour lists whose first start is negative: the first
	# start (nbr_start[0]) follows the 64-byte header, the hyperparameter
	# text (its length at bytes 45-46) and 60 items of 16 bytes
	my $nbr_start = $node->safe_psql('postgres', q{SELECT 64 + get_byte(b, 44) + 256 * get_byte(b, 45) + 60 * 16 + 1
	                                  FROM blobs WHERE kind = 'itemknn'});
	like($nbr_start, qr/^\d+$/, "nbr_start[0] is at byte $nbr_start");
	clean(qq{SELECT mtdpp_save('knn_corrupt', overlay(b placing '\\xf6ffffffffffffff'::bytea from $nbr_start for 8)) FROM blobs WHERE kind = 'itemknn'},
		'mtdpp_save of itemknn neighbour lists starting at -10 fails cleanly');
	run_sql(q{SELECT mtdpp_drop('knn_corrupt')});
}
# Bad input that once got a poor answer: a raw error, a message quoting
# hundreds of characters, a setting accepted and ignored, a long run.
{
	my %fixed = (
		q{SELECT count(*) FROM mtdpp_complete_set('{1,2}', 100000, 'm')} => '54000',
		q{SELECT length(mtdpp_fit(order_id, item_id, position, '{"kind": "multitask", "learning_rate": 1e400}')) FROM train_lines} => '22023',
		q{SELECT length(mtdpp_fit(order_id, item_id, position, '{"kind": "itemknn", "lambda": 1}')) FROM train_lines} => '22023',
		q{SELECT length(mtdpp_fit(order_id, item_id, position, '{"kind": "hybrid", "validation_fraction": 0}')) FROM train_lines} => '22023',
		q{SELECT name FROM mtdpp_train('fixed', 'odd_lines', item_col => 'pos_numeric', kind => 'popularity')} => '42804',
		q{SELECT mtdpp_save('fixed', b || '\x00'::bytea) FROM blobs WHERE kind = 'popularity'} => '22P03',
		q{SELECT * FROM mtdpp_complete('{1}', 5, repeat('x', 100000))} => '42704',
	);
	for my $sql (sort keys %fixed)
	{
		my $res = clean($sql, "fails cleanly: $sql");
		is($res->{state} // 'ok', $fixed{$sql}, "SQLSTATE $fixed{$sql}: $sql");
		my ($message) = $res->{err} =~ /^ERROR:\s+(.*)$/m;
		cmp_ok(length($message // ''), '<', 300, "a short message: $sql");
	}
	my $res = clean(q{SELECT name FROM mtdpp_train('fixed', 'orders', kind => 'popularity', seed => 9223372036854775807)},
		'a seed of 2^63 - 1 trains');
	is($res->{state} // 'ok', 'ok', 'a seed of 2^63 - 1 is accepted');
	run_sql(q{SELECT mtdpp_drop('fixed')});
}
ok(server_up(), 'the server is up at the end');

done_testing();
