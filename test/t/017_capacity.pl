# The rank and L2 of the multi-task kinds: chosen on the validation slice
# when neither is given, and recorded with the model; a rank or an L2 given,
# or a warm start, makes a single fit without a search.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('capacity');
load_planted($node, baskets => 1500);

sub q1 { return $node->safe_psql('postgres', $_[0]); }

# what a model records: its rank, and its hyperparams' rank, l2, patience, capacity
sub record
{
	my ($name) = @_;
	return q1(qq{SELECT m.rank, m.hyperparams ->> 'rank', m.hyperparams ->> 'l2', m.hyperparams ->> 'patience',
	                    m.hyperparams -> 'capacity' IS NOT NULL
	             FROM mtdpp.models m WHERE m.name = '$name' AND m.active});
}

# The default: two candidates on the same slice, the better kept.
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM mtdpp_train('m', 'train_lines', seed => 1, verbose => true, kind => 'multitask')");
is($ret, 0, 'training with the defaults succeeds');
like($err, qr/capacity: rank 32 \(l2 1e-05\) reached validation MPR [0-9.]+ in \d+ epochs; rank 128 \(l2 1e-06\) may run \d+/,
	'verbose reports the small candidate and the budget of the large one');
like($err, qr/capacity: rank (32|128), l2 1e-0[56] chosen on \d+ validation baskets \(MPR [0-9.]+ against [0-9.]+ at rank (32|128)/,
	'verbose reports the choice');

my $cands = q1(q{SELECT string_agg(format('%s %s %s %s %s', c ->> 'rank', c ->> 'l2', c ->> 'patience',
                                          c ->> 'max_epochs', c ->> 'epochs'), '; ' ORDER BY ord)
                 FROM mtdpp.models m, jsonb_array_elements(m.hyperparams -> 'capacity' -> 'candidates')
                      WITH ORDINALITY AS t(c, ord)
                 WHERE m.name = 'm' AND m.active});
like($cands, qr/^32 0\.00001 4 30 \d+; 128 0\.000001 4 \d+ \d+$/, 'both candidates recorded');
my ($small_epochs, $large_max) = $cands =~ /^32 \S+ 4 30 (\d+); 128 \S+ 4 (\d+) /;
is($large_max, int($small_epochs / 2) || 1,
	'the large candidate may run the epochs the budget allows');

is(q1(q{SELECT m.rank = CASE WHEN (c -> 1 ->> 'validation_mpr')::float8 > (c -> 0 ->> 'validation_mpr')::float8
                          THEN 128 ELSE 32 END
               AND (m.hyperparams ->> 'rank')::int = m.rank
               AND (m.hyperparams ->> 'l2')::float8 = CASE m.rank WHEN 128 THEN 1e-6 ELSE 1e-5 END
               AND m.hyperparams ->> 'epochs' = '30'
               AND m.hyperparams -> 'capacity' ->> 'chosen' = 'on validation'
               AND (m.hyperparams -> 'capacity' ->> 'baskets')::int > 0
               AND abs(m.val_mpr_history[m.best_epoch] - CASE m.rank WHEN 128 THEN (c -> 1 ->> 'validation_mpr')::float8
                                                         ELSE (c -> 0 ->> 'validation_mpr')::float8 END) < 1e-4
        FROM mtdpp.models m, LATERAL (SELECT m.hyperparams -> 'capacity' -> 'candidates') AS x(c)
        WHERE m.name = 'm' AND m.active}),
	't', 'the candidate of the better validation MPR is kept, its history and settings recorded');

# the same seed, the same choice and the same model
q1("SELECT * FROM mtdpp_train('m2', 'train_lines', seed => 1, kind => 'multitask')");
is(q1(q{SELECT count(DISTINCT (m.rank, m.val_mpr_history, m.hyperparams - 'capacity'))
        FROM mtdpp.models m WHERE m.name IN ('m', 'm2') AND m.active}),
	'1', 'the search is deterministic for a seed');

# Where epochs sample the baskets, the large candidate's samples are a quarter
# the size, so that its epochs cost no more than the small one's.
q1(q{SELECT * FROM mtdpp_train('eb', 'train_lines', seed => 1, params => '{"epoch_baskets": 400}', kind => 'multitask')});
is(q1(q{SELECT string_agg(c ->> 'epoch_baskets', ' ' ORDER BY ord) || ' ' || (hyperparams ->> 'epoch_baskets')
        FROM mtdpp.models m, jsonb_array_elements(m.hyperparams -> 'capacity' -> 'candidates')
             WITH ORDINALITY AS t(c, ord)
        WHERE m.name = 'eb' AND m.active GROUP BY hyperparams}),
	'400 100 400', 'epoch_baskets: a quarter for the large candidate, the call\'s in the model');

# A rank given: one fit, L2 as before.
($ret, $out, $err) = $node->psql('postgres',
	"SELECT * FROM mtdpp_train('r64', 'train_lines', rank => 64, seed => 1, verbose => true, kind => 'multitask')");
is($ret, 0, 'training at a given rank succeeds');
unlike($err, qr/capacity:/, 'a rank given: no search reported');
is(record('r64'), '64|64|0.00001|4|f', 'a rank given: that rank, l2 1e-5, no capacity record');

# An L2 given: rank 32.
q1(q{SELECT * FROM mtdpp_train('l2', 'train_lines', seed => 1, params => '{"l2": 1e-6}', kind => 'multitask')});
is(record('l2'), '32|32|0.000001|4|f', 'an l2 given: rank 32, no search');

# A kind without task factors keeps its own fixed rank.
q1(q{SELECT * FROM mtdpp_train('lr', 'train_lines', kind => 'lowrank', epochs => 2, seed => 1)});
is(record('lr'), '32|32|0.00001|4|f', 'lowrank: rank 32, no search');

# A warm start keeps its model's rank and L2.
my $rank = q1("SELECT rank FROM mtdpp.models WHERE name = 'm' AND active");
my $l2 = q1("SELECT hyperparams ->> 'l2' FROM mtdpp.models WHERE name = 'm' AND active");
q1("SELECT * FROM mtdpp_train('m', 'train_lines', warm_start => true, epochs => 2, seed => 2, kind => 'multitask')");
is(record('m'), "$rank|$rank|$l2|2|f", 'a warm start keeps the rank and l2 of its model (its patience: warm_patience)');

# The hybrid's DPP goes through the same choice.
q1("SELECT * FROM mtdpp_train('h', 'train_lines', kind => 'hybrid', seed => 1)");
is(q1(q{SELECT kind || ' ' || (hyperparams -> 'capacity' ->> 'chosen') || ' '
               || jsonb_array_length(hyperparams -> 'capacity' -> 'candidates')
               || ' ' || (rank = (hyperparams ->> 'rank')::int)
        FROM mtdpp.models WHERE name = 'h' AND active}),
	'hybrid on validation 2 true', 'the hybrid records the choice of its DPP');

# The defaults say the rank and L2 are chosen.
is(q1(q{SELECT string_agg(key || '=' || default_value, ' ' ORDER BY key) FROM mtdpp_hyperparameters('multitask')
        WHERE key IN ('rank', 'l2')}), 'l2=null rank=null', 'mtdpp_hyperparameters: rank and l2 chosen');
is(q1(q{SELECT string_agg(key || '=' || default_value, ' ' ORDER BY key) FROM mtdpp_hyperparameters('lowrank')
        WHERE key IN ('rank', 'l2')}), 'l2=1e-05 rank=32', 'a single-kernel kind keeps rank 32');

done_testing();
