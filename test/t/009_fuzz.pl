# Hostile inputs, continuously: a short fuzzing run of everything that
# parses bytes or user values.
#
# 1. The libFuzzer harnesses of fuzz/ (AddressSanitizer, UBSan): the
#    mtdpp_fit state deserialiser, the merge of order lines, the model value
#    of mtdpp_save; each replays its seed corpus and its regression inputs
#    (fuzz/regress: inputs that once found a bug), then fuzzes for
#    MTDPP_FUZZ_SECONDS (default 12) seconds.
# 2. What needs a real server, for MTDPP_SERVER_FUZZ_SECONDS (default 30)
#    seconds of seeded random cases (MTDPP_FUZZ_SEED):
#    - hostile hyperparameter jsonb given to mtdpp_fit and mtdpp_train (the
#      params parser), the model trained with it then used;
#    - hand-corrupted rows of mtdpp.items and mtdpp.models (wrong array
#      lengths, 2-D arrays, NULLs, NaN, infinite, huge and subnormal values,
#      negative or extreme popularity, duplicate or unknown neighbours,
#      missing or extra rows, another kind or rank), read by the row loader
#      of mtdpp_complete, mtdpp_score and mtdpp_evaluate;
#    - model values for mtdpp_save mutated field by field (extreme sizes,
#      NaN, infinities, neighbour lists) and byte by byte, then used.
#    Each case runs in a subtransaction that is rolled back, so every case
#    starts from the same models.  Every call must succeed with finite
#    answers or fail with an ERROR that is not an internal error (XX000);
#    no backend may die, and the server must keep accepting connections.
#
#     MTDPP_FUZZ_SECONDS=600 MTDPP_SERVER_FUZZ_SECONDS=1800 MTDPP_FUZZ_SEED=7 \
#         scripts/test --tap-only test/t/009_fuzz.pl
#
# Every failing case is printed with its SQL (setup, then probe).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $top = "$FindBin::Bin/../..";
my $lib_seconds = $ENV{MTDPP_FUZZ_SECONDS} // 12;
my $server_seconds = $ENV{MTDPP_SERVER_FUZZ_SECONDS} // 30;
my $seed = $ENV{MTDPP_FUZZ_SEED} // int(time) % 100000;
srand($seed);
note "seed $seed (MTDPP_FUZZ_SEED), libFuzzer $lib_seconds s per harness, server $server_seconds s";

# ---------------------------------------------------------------------
# 1. libFuzzer harnesses
# ---------------------------------------------------------------------

SKIP:
{
	skip 'MTDPP_FUZZ_SECONDS=0', 1 if $lib_seconds == 0;
	my $work = "$top/tmp_check/fuzz";
	mkdir "$top/tmp_check";
	my $out = `cd '$top' && MTDPP_FUZZ_WORK='$work' fuzz/run $lib_seconds 2>&1`;
	my $status = $?;
	note $out;
	is($status, 0, 'the libFuzzer harnesses find nothing') or diag($out);
}

# ---------------------------------------------------------------------
# 2. Through a server
# ---------------------------------------------------------------------

# a crash must not end the test: the postmaster reinitialises and goes on
my $node = mtdpp_node('fuzz_server', 'restart_after_crash = on');
load_planted($node, baskets => 600);

my %rank = (mt => 4, nb => 3, lg => 4, lr => 5, knn => 0, pop => 0, ease => 0, pf => 3);
$node->safe_psql('postgres', q{
SELECT * FROM mtdpp_train('mt', 'train_lines', rank => 4, epochs => 2, seed => 1, kind => 'multitask');
SELECT * FROM mtdpp_train('nb', 'train_lines', kind => 'multitask_nobias', rank => 3, epochs => 2);
SELECT * FROM mtdpp_train('lg', 'train_lines', kind => 'logistic', rank => 4, epochs => 2);
SELECT * FROM mtdpp_train('lr', 'train_lines', kind => 'lowrank', rank => 5, epochs => 2);
SELECT * FROM mtdpp_train('knn', 'train_lines', kind => 'itemknn');
SELECT * FROM mtdpp_train('pop', 'train_lines', kind => 'popularity');
SELECT * FROM mtdpp_train('ease', 'train_lines', kind => 'ease');
SELECT * FROM mtdpp_train('pf', 'train_lines', kind => 'poisson', rank => 3, epochs => 5);
CREATE TABLE small_lines AS SELECT * FROM train_lines WHERE order_id % 20 = 0;

-- one case: SETUP then PROBE (one text value) in a subtransaction that is
-- always rolled back; returns ok|value, error|stage|sqlstate|message or
-- timeout|stage
CREATE FUNCTION fuzz_case(setup text, probe text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    stage text := 'setup';
    r text;
    st text;
    msg text;
BEGIN
    BEGIN
        IF setup IS NOT NULL THEN
            EXECUTE setup;
        END IF;
        stage := 'probe';
        EXECUTE probe INTO r;
        RAISE EXCEPTION USING ERRCODE = 'FZ000', MESSAGE = coalesce(r, 'NULL');
    EXCEPTION
        WHEN SQLSTATE 'FZ000' THEN
            GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
            RETURN 'ok|' || msg;
        WHEN query_canceled THEN
            RETURN 'timeout|' || stage;
        WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
            RETURN 'error|' || stage || '|' || st || '|' || replace(msg, E'\n', ' ');
    END;
END $$;
});
my %model_id = map { split /\|/ } split /\n/,
  $node->safe_psql('postgres', q{SELECT name, model_id FROM mtdpp.models});

# every kind of the registry, and whether its models have item factors
my %factors = map { split /\|/ } split /\n/,
  $node->safe_psql('postgres', q{SELECT name, 'factors' = ANY (traits) FROM mtdpp_kinds()});
my @kinds = sort keys %factors;

# valid model values of every kind, as bytes
my %blob;
for my $kind (@kinds)
{
	my $params = $factors{$kind} eq 't' ? qq{{"kind": "$kind", "rank": 3, "epochs": 2}} : qq{{"kind": "$kind"}};
	my $hex = $node->safe_psql('postgres',
		qq{SELECT encode(mtdpp_fit(order_id, item_id, position, '$params'), 'hex') FROM small_lines});
	$blob{$kind} = pack('H*', $hex);
}

sub pick { return $_[ int(rand(@_)) ]; }
sub chance { return rand() < $_[0]; }
sub lit { my ($s) = @_; return "'" . ($s =~ s/'/''/gr) . "'"; }

# ---- probes: one text value each, checked by check_answer

sub rand_basket
{
	return pick(q{'{}'}, q{'{1}'}, q{'{1,2,3}'}, q{'{11,12,13,14}'}, q{'{59,60,61,-1}'}, q{'{2147483647,-2147483648,5}'},
		q{ARRAY(SELECT g FROM generate_series(1, 60) AS g)}, q{'{7,7,7,8}'});
}

sub probe_for
{
	my ($model) = @_;
	my $r = rand();
	my $b = rand_basket();
	return "SELECT 'complete ' || count(*) || ' ' || count(*) FILTER (WHERE NOT (score > '-Infinity' AND score < 'Infinity'))"
	  . " FROM mtdpp_complete($b, " . pick(1, 5, 60, 1000) . ", '$model')"
	  if $r < 0.55;
	return "SELECT 'score ' || count(*) || ' ' || count(*) FILTER (WHERE score IS NOT NULL AND NOT (score > '-Infinity' AND score < 'Infinity'))"
	  . " FROM mtdpp_score($b, " . rand_basket() . ", '$model')"
	  if $r < 0.85;
	return "SELECT 'evaluate ' || baskets || ' ' || CASE WHEN mpr >= 0 AND mpr <= 100 THEN 0 ELSE 1 END"
	  . " FROM mtdpp_evaluate('$model', 'test_baskets')";
}

# ---- hostile hyperparameters

my @keys = qw(kind rank epochs target seed verbose learning_rate lr_decay batch_size negatives positives
  patience l2 l2_bias w init_scale optimizer momentum validation_fraction validation_baskets
  validation_candidates max_context loss negative_power lambda max_neighbors a c);

sub json_string
{
	return pick('""', (map { qq{"$_"} } @kinds),
		'"last"', '"random"', '"adam"', '"momentum"', '"softmax"', '"logistic"', '"NaN"', '"Infinity"',
		'"-Infinity"', '"1e400"', '"\u00e9"', '"\ud83d\ude00"', '"a\"b"', '"\\\\"', '"' . ('x' x pick(100, 5000)) . '"',
		'"multitask "', '"MULTITASK"', '"\t"');
}

sub json_number
{
	return pick(0, 1, 2, 3, -1, 0.5, 1.5, 64, 100, 1000, 1024, 1025, 100000, 100001, 2147483647, 2147483648,
		-2147483648, -2147483649, 9e15, -9e15, 9.1e15, 9223372036854775807, 1e-9, 1e-12, 1e12, 1e13, 0.001,
		0.999, 1.0000000000000002, '1e308', '-1e308', '1e309', '1e-320', '1e-400', '1e400', '-0', '0.0',
		'123456789012345678901234567890', '0.' . ('0' x 300) . '1');
}

sub json_value
{
	my ($depth) = @_;
	my $r = rand();
	return json_number() if $r < 0.45;
	return json_string() if $r < 0.65;
	return pick('true', 'false', 'null') if $r < 0.75;
	return '[' . join(', ', map { json_value($depth + 1) } 1 .. pick(0 .. 3)) . ']' if $depth < 3 && $r < 0.85;
	return json_object($depth + 1) if $depth < 3;
	return json_number();
}

sub json_object
{
	my ($depth) = @_;
	my @pairs;
	for (1 .. pick(0 .. 5))
	{
		my $key = chance(0.85) ? pick(@keys) : pick('', 'Rank', 'rank ', 'unknown', "\\u0000", 'é', 'k' x 300, 'epochs');
		push @pairs, qq{"$key": } . json_value($depth + 1);
	}
	return '{' . join(', ', @pairs) . '}';
}

sub rand_params
{
	my $r = rand();
	return json_object(0) if $r < 0.85;
	return json_value(0) if $r < 0.95;
	return pick('{', '{"rank": }', '{"rank": 1,}', '{"a": "\u0000"}', '[1,', '', 'nul');
}

sub case_params
{
	my $json = lit(rand_params()) . '::jsonb';
	my $r = rand();
	if ($r < 0.5)
	{
		# trained, saved, then used
		return ("SELECT mtdpp_save('fzp', mtdpp_fit(order_id, item_id, position, $json)) FROM small_lines",
			probe_for('fzp'));
	}
	if ($r < 0.8)
	{
		return (undef, "SELECT 'fit ' || length(mtdpp_fit(order_id, item_id, position, $json)) FROM small_lines");
	}
	return ("SELECT * FROM mtdpp_train('fzt', 'small_lines', epochs => 2, params => $json)", probe_for('fzt'));
}

# ---- hand-corrupted rows

sub real_value
{
	return pick(0, 1, -1, 0.5, 3e38, -3e38, 3.4e38, '1e-45', '1e-40', '1e-38', '1e10', '-1e10', 100, '-0',
		q{'NaN'}, q{'Infinity'}, q{'-Infinity'});
}

sub real_array
{
	my ($n) = @_;
	my $r = rand();
	my $elems = sub { my $m = shift; return join(',', map { chance(0.8) ? pick(0.1, -0.2, 0.3, 1) : real_value() } 1 .. $m) };
	my $arr = sub { my $body = shift; return "ARRAY[$body]::real[]" };
	return $arr->($elems->($n)) if $r < 0.35 && $n > 0;
	return $arr->($elems->(pick(1, 2, $n + 1, $n > 1 ? $n - 1 : 3, 1000))) if $r < 0.5;
	return q{'{}'::real[]} if $r < 0.57;
	return sprintf(q{'{{%s},{%s}}'::real[]}, join(',', (0.1) x pick(1, 2, $n || 1)), join(',', (0.2) x pick(1, 2, $n || 1)))
	  if $r < 0.67;
	return sprintf(q{'[0:%d]={%s}'::real[]}, ($n || 1) - 1, join(',', (0.1) x ($n || 1))) if $r < 0.74;
	return sprintf(q{'{%s}'::real[]}, join(',', ('0.1') x (($n || 2) - 1), 'NULL')) if $r < 0.81;
	return "array_fill(" . real_value() . "::real, ARRAY[" . ($n || 1) . "])" if $r < 0.93;
	return 'NULL';
}

sub int_array
{
	my $r = rand();
	return 'ARRAY[' . join(',', map { pick(1 .. 60) } 1 .. pick(1, 3, 10)) . ']' if $r < 0.3;
	return q{'{}'::int[]} if $r < 0.38;
	return q{'{1,1,1,2}'::int[]} if $r < 0.45;
	return 'ARRAY[' . join(',', map { pick(0, -1, 61, 1000000, 2147483647, -2147483648) } 1 .. pick(1, 2, 5)) . ']'
	  if $r < 0.6;
	return q{'{{1,2},{3,4}}'::int[]} if $r < 0.68;
	return q{'{1,NULL,3}'::int[]} if $r < 0.75;
	return q{'[5:6]={2,3}'::int[]} if $r < 0.8;
	return 'ARRAY[item_id]' if $r < 0.87;
	return 'ARRAY(SELECT g FROM generate_series(1, 60) AS g)' if $r < 0.93;
	return 'NULL';
}

sub item_corruption
{
	my ($model) = @_;
	my $id = $model_id{$model};
	my $n = $rank{$model};
	my $where = "model_id = $id AND " . pick('item_id = ' . pick(1 .. 60), 'item_id % 7 = 3', 'true', 'item_id IN (1, 2)');
	my $r = rand();
	my $set;
	if ($r < 0.12) { $set = 'popularity = ' . pick(-2147483648, -1, 0, 1, 2147483647); }
	elsif ($r < 0.24) { $set = 'bias = ' . real_value(); }
	elsif ($r < 0.40) { $set = 'factors = ' . real_array($n); }
	elsif ($r < 0.52) { $set = 'task_factors = ' . real_array($n); }
	elsif ($r < 0.60) { $set = "factors[" . pick(1, $n || 1, 0, -1, 1000) . '] = ' . real_value(); }
	elsif ($r < 0.70) { $set = 'neighbors = ' . int_array(); }
	elsif ($r < 0.80) { $set = 'neighbor_weights = ' . real_array(pick(1, 3, 10, 59)); }
	elsif ($r < 0.84)
	{
		$set = 'neighbors = ' . int_array() . ', neighbor_weights = ' . real_array(pick(1, 3, 10));
	}
	elsif ($r < 0.89) { $set = 'item_id = ' . pick(-2147483648, 2147483647, 0, 61, 1000000) . ' + (item_id % 2)'; }
	elsif ($r < 0.94)
	{
		return "DELETE FROM mtdpp.items WHERE $where";
	}
	else
	{
		my $new = pick(0, 61, -5, 2147483647, -2147483648, 1000000);
		return "INSERT INTO mtdpp.items SELECT model_id, $new, popularity, bias, factors, task_factors, neighbors, "
		  . "neighbor_weights FROM mtdpp.items WHERE model_id = $id AND item_id = " . pick(1 .. 60);
	}
	return "UPDATE mtdpp.items SET $set WHERE $where";
}

sub model_corruption
{
	my ($model) = @_;
	my $id = $model_id{$model};
	my $n = $rank{$model};
	my $set = pick(
		'rank = ' . pick(0, -1, $n + 1, $n > 0 ? $n - 1 : 1, 1024, 1025, 2147483647),
		'n_items = ' . pick(0, -1, 59, 61, 2147483647, -2147483648),
		'n_baskets = ' . pick(0, -1, -2147483648, 2147483647),
		'log_w = ' . pick(q{'NaN'}, q{'Infinity'}, q{'-Infinity'}, '1e308', '-1e308', 0, 700, -745, 1e10),
		'kind = ' . pick(map { "'$_'" } @kinds));
	return "UPDATE mtdpp.models SET $set WHERE model_id = $id";
}

sub case_rows
{
	my $model = pick(sort keys %rank);
	my @setup = map { chance(0.75) ? item_corruption($model) : model_corruption($model) } 1 .. pick(1, 1, 2, 3);
	return (join('; ', @setup), probe_for($model));
}

# ---- mutated model values

# field offsets of a model value (src/model/model.c, SerialHeader and what follows)
sub blob_fields
{
	my ($b) = @_;
	my ($n, $r) = unpack('l< l<', substr($b, 8, 8));
	my $kind = unpack('S<', substr($b, 6, 2));
	my $epochs = unpack('l<', substr($b, 28, 4));
	my $json = unpack('l<', substr($b, 44, 4));
	my $at = 64 + $json;
	my %f = (n_items => [ 8, 'l' ], rank => [ 12, 'l' ], log_w => [ 16, 'd' ], n_baskets => [ 24, 'l' ],
		epochs_run => [ 28, 'l' ], n_examples => [ 32, 'q' ], best_epoch => [ 40, 'l' ], json_len => [ 44, 'l' ],
		final_loss => [ 48, 'd' ], kind => [ 6, 's' ], format => [ 4, 's' ]);
	my @arrays;
	push @arrays, [ 'loss_history', $at, 'd', $epochs ], [ 'val_history', $at + 8 * $epochs, 'd', $epochs ];
	$at += 16 * $epochs;
	push @arrays, [ 'item_ids', $at, 'l', $n ];
	$at += 4 * $n;
	push @arrays, [ 'popularity', $at, 'l', $n ];
	$at += 4 * $n;
	push @arrays, [ 'bias', $at, 'd', $n ];
	$at += 8 * $n;
	push @arrays, [ 'V', $at, 'd', $n * $r ];
	$at += 8 * $n * $r;
	push @arrays, [ 'R', $at, 'd', $n * $r ];
	$at += 8 * $n * $r;
	if ($kind == 4 || $kind == 6)    # itemknn, ease: neighbour lists
	{
		push @arrays, [ 'nbr_start', $at, 'q', $n + 1 ];
		my $nn = unpack('q<', substr($b, $at + 8 * $n, 8));
		$at += 8 * ($n + 1);
		push @arrays, [ 'nbr_index', $at, 'l', $nn ];
		push @arrays, [ 'nbr_weight', $at + 4 * $nn, 'f', $nn ];
	}
	return (\%f, \@arrays);
}

sub extreme
{
	my ($type) = @_;
	return pack('l<', pick(0, -1, 1, 2, 59, 60, 61, 1024, 1025, 65536, 2147483647, -2147483648)) if $type eq 'l';
	return pack('s<', pick(0, 1, 2, 4, 5, 6, 7, -1)) if $type eq 's';
	return pack('q<', pick(0, -1, 1, 61, 1000, 2**31, 2**40, -(2**62))) if $type eq 'q';
	my @d = (0, -0.0, 1e308, -1e308, 3e38, 3.5e38, 1e-310, 1e-45, 1, -1, 9**9**9, -9**9**9, 'nan');
	my $v = pick(@d);
	$v = 9**9**9 / 9**9**9 if $v eq 'nan';
	return $type eq 'f' ? pack('f<', $v) : pack('d<', $v);
}

sub mutate_blob
{
	my ($b) = @_;
	my ($fields, $arrays) = blob_fields($b);
	for (1 .. pick(1, 1, 1, 2, 3))
	{
		my $r = rand();
		if ($r < 0.3)
		{
			my $name = pick(sort keys %$fields);
			my ($at, $type) = @{ $fields->{$name} };
			my $v = extreme($type);
			substr($b, $at, length($v)) = $v if $at + length($v) <= length($b);
		}
		elsif ($r < 0.65)
		{
			my @nonempty = grep { $_->[3] > 0 } @$arrays;
			next unless @nonempty;
			my ($name, $at, $type, $count) = @{ pick(@nonempty) };
			my $v = extreme($type);
			my $i = pick(0, int(rand($count)), $count - 1);
			substr($b, $at + $i * length($v), length($v)) = $v if $at + ($i + 1) * length($v) <= length($b);
		}
		elsif ($r < 0.8)
		{
			my $at = int(rand(length($b)));
			substr($b, $at, 1) = chr(int(rand(256))) if $at < length($b);
		}
		elsif ($r < 0.9)
		{
			$b = substr($b, 0, int(rand(length($b))));
		}
		else
		{
			$b .= join('', map { chr(int(rand(256))) } 1 .. pick(1, 8, 100));
		}
	}
	return $b;
}

sub case_blob
{
	my $b = mutate_blob($blob{ pick(sort keys %blob) });
	return ("SELECT mtdpp_save('fzsave', '\\x" . unpack('H*', $b) . "'::bytea)", probe_for('fzsave'));
}

# ---- running cases

sub check_answer
{
	my ($value) = @_;
	# complete ROWS NONFINITE, score ROWS NONFINITE, evaluate BASKETS BAD, fit LENGTH
	my ($what, $a, $bad) = split / /, $value;
	return 1 if $what eq 'fit';
	return defined $bad && $bad == 0;
}

sub server_up
{
	my ($ret, $out) = $node->psql('postgres', 'SELECT 1');
	return 1 if $ret == 0 && $out eq '1';
	return $node->poll_query_until('postgres', 'SELECT 1', '1');
}

my (@crashes, @internal, @nonfinite, @not_up, @lost, @slow);
my %outcomes;
my %families;
my $n_cases = 0;
my $t0 = time;
while (time - $t0 < $server_seconds)
{
	my @batch;
	for (1 .. 20)
	{
		my $r = rand();
		my $family = $r < 0.3 ? 'params' : $r < 0.7 ? 'rows' : 'blob';
		my ($setup, $probe) = $family eq 'params' ? case_params() : $family eq 'rows' ? case_rows() : case_blob();
		push @batch, { family => $family, setup => $setup, probe => $probe };
		$families{$family}++;
	}
	my $sql = "SET statement_timeout = '5s';\n";
	for my $i (0 .. $#batch)
	{
		my $setup = defined $batch[$i]{setup} ? lit($batch[$i]{setup}) : 'NULL';
		$sql .= "SELECT '$i|' || fuzz_case($setup, " . lit($batch[$i]{probe}) . ");\n";
	}
	my $t = time;
	my ($ret, $out, $err) = $node->psql('postgres', $sql, on_error_stop => 0);
	push @slow, sprintf('%.1f s for a batch of %d cases', time - $t, scalar @batch) if time - $t > 60;
	my %got;
	for my $line (split /\n/, $out)
	{
		my ($i, $kind, @rest) = split /\|/, $line;
		next unless defined $kind && $i =~ /^\d+$/;
		$got{$i} = 1;
		my $c = $batch[$i];
		my $text = "-- setup: " . ($c->{setup} // '') . "\n-- probe: $c->{probe}";
		$text = substr($text, 0, 3000) . '...' if length($text) > 3000;
		if ($kind eq 'ok')
		{
			$outcomes{"$c->{family} ok"}++;
			push @nonfinite, "$text\n-- answer: $rest[0]" unless check_answer($rest[0]);
		}
		elsif ($kind eq 'error')
		{
			my ($stage, $state, $msg) = @rest;
			$outcomes{"$c->{family} $stage $state"}++;
			# 22P01: a trap (SIGFPE) in C code, turned into an ERROR by the backend
			push @internal, "$text\n-- $state: $msg" if $state =~ /^(XX000|22P01)$/ || $state !~ /^[0-9A-Z]{5}$/;
		}
		else
		{
			$outcomes{"$c->{family} timeout"}++;
		}
	}
	$n_cases += scalar(keys %got);
	my @missing = grep { !$got{$_} } 0 .. $#batch;
	if (@missing)
	{
		my $c = $batch[ $missing[0] ];
		my $text = "-- setup: " . ($c->{setup} // '') . "\n-- probe: $c->{probe}\n-- $err";
		if ($err =~ /server closed the connection|connection to server was lost|terminat/)
		{
			push @crashes, $text;
		}
		else
		{
			push @lost, $text;
		}
		unless (server_up())
		{
			push @not_up, $text;
			last;
		}
	}
}
my $elapsed = time - $t0;

note sprintf('%d cases in %.0f s (%s)', $n_cases, $elapsed, join(', ', map { "$_ $families{$_}" } sort keys %families));
note 'outcomes: ' . join(', ', map { "$_: $outcomes{$_}" } sort keys %outcomes);
cmp_ok($n_cases, '>', 0, 'cases ran');
is(scalar(@crashes), 0, 'no case crashes a backend') or diag("crashes:\n" . join("\n\n", @crashes));
is(scalar(@internal), 0, 'no case fails with an internal error (XX000) or a trap (22P01)')
  or diag("internal errors:\n" . join("\n\n", @internal));
is(scalar(@lost), 0, 'every case gives an answer or an error') or diag("no answer:\n" . join("\n\n", @lost));
is(scalar(@not_up), 0, 'the server accepts connections after every case')
  or diag("server down after:\n" . join("\n\n", @not_up));
is(scalar(@nonfinite), 0, 'every answer is finite')
  or diag("non-finite answers:\n" . join("\n\n", @nonfinite[0 .. ($#nonfinite < 9 ? $#nonfinite : 9)]));
diag("slow:\n" . join("\n", @slow)) if @slow;

# ---------------------------------------------------------------------
# What the fuzzing found, replayed
# ---------------------------------------------------------------------

sub replay
{
	my ($setup, $probe, $expect, $what) = @_;
	my $got = $node->safe_psql('postgres', 'SELECT fuzz_case(' . lit($setup) . ', ' . lit($probe) . ')');
	like($got, qr/^$expect/, $what);
	return;
}

# a DPP kind of rank 0 was scored with a division by zero (SIGFPE: 22P01)
{
	my $b = $blob{logistic};
	substr($b, 12, 4) = pack('l<', 0);
	replay("SELECT mtdpp_save('r0', '\\x" . unpack('H*', $b) . "'::bytea)", "SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'r0')",
		'error\|setup\|22P03\|', 'mtdpp_save refuses a logistic model value of rank 0');
	replay("UPDATE mtdpp.models SET rank = 0 WHERE model_id = $model_id{lg}; "
		  . "UPDATE mtdpp.items SET factors = '{}' WHERE model_id = $model_id{lg}",
		"SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'lg')",
		'error\|probe\|XX001\|', 'a logistic model of rank 0 in mtdpp.models is data_corrupted');
	replay("UPDATE mtdpp.models SET rank = 2147483647 WHERE model_id = $model_id{mt}",
		"SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'mt')",
		'error\|probe\|XX001\|', 'a rank of 2^31 - 1 in mtdpp.models is data_corrupted, not an allocation');
	replay("UPDATE mtdpp.models SET kind = 'logistic' WHERE model_id = $model_id{pop}",
		"SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'pop')",
		'error\|probe\|XX001\|', 'a popularity model turned logistic (rank 0) is data_corrupted');
}
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP:|AddressSanitizer|runtime error:/,
	'no backend died, no sanitizer report (server log)');

done_testing();
