# A server as PostgreSQL sets it up: maintenance_work_mem 64MB, work_mem
# 4MB.  The README's first training (instacart_sample) and the default kind
# on uk_retail (its training baskets, and its whole order history) train there, choosing what fits and saying what they gave up
# in a NOTICE; what cannot fit is refused within a second of processor time, with the figure
# to set.  The datasets are read from MTDPP_DATA (scripts/test passes the
# shared/data beside the repository).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $data = $ENV{MTDPP_DATA} // "$FindBin::Bin/../../../shared/data";
plan skip_all => "no datasets in $data (set MTDPP_DATA)"
  unless -f "$data/instacart_sample/orders.csv" && -f "$data/uk_retail/orders.csv";
my $load = "$FindBin::Bin/../../data/load.sql";

my $node = mtdpp_node('defaults');
sub q1 { return $node->safe_psql('postgres', $_[0]); }

is(q1('SHOW maintenance_work_mem'), '64MB', 'maintenance_work_mem is the default');
is(q1('SHOW work_mem'), '4MB', 'work_mem is the default');

for my $ds (qw(instacart_sample uk_retail))
{
	$node->safe_psql('postgres', '',
		extra_params => [ '-v', "dir=$data/$ds", '-v', "schema=$ds", '-f', $load ]);
}
# the README's table
q1(q{CREATE VIEW order_lines AS
     SELECT order_id, item_id AS product_id, position AS add_to_cart_order
     FROM instacart_sample.train_lines});

# Trains; returns how long it took, its NOTICEs and whether it succeeded.
sub train
{
	my ($sql) = @_;
	my $t0 = time;
	my ($ret, $out, $err) = $node->psql('postgres', $sql);
	return (time - $t0, $err, $ret == 0);
}

# What a large rank would need is more than 64MB: the search keeps what fits.
my ($secs, $err, $ok) = train(q{SELECT * FROM mtdpp_train('shop', 'order_lines',
	order_col => 'order_id', item_col => 'product_id', position_col => 'add_to_cart_order')});
ok($ok, "the README's first training succeeds under the default settings") or diag($err);
like($err, qr/NOTICE:  the rank is not chosen between 32 and 128: rank 128 of 3661 items needs \d+ kB, more than maintenance_work_mem \(65536 kB\); rank 32 is trained/,
	'a NOTICE says what the rank search gave up and what it needs');
like($err, qr/HINT:  SET maintenance_work_mem = '\d+MB' lets the choice try rank 128 too/,
	'and the figure to set');
is(q1(q{SELECT kind || ' ' || rank || ' ' || (hyperparams -> 'capacity' ->> 'chosen')
        FROM mtdpp.models WHERE name = 'shop' AND active}),
	'hybrid 32 larger rank over maintenance_work_mem', 'the model says why its rank was not chosen');
is(q1(q{SELECT count(*) FROM mtdpp_complete(ARRAY[24852, 13176], 10, 'shop')}), '10',
	'it completes a basket');

($secs, $err, $ok) = train(q{SELECT * FROM mtdpp_train('uk', 'uk_retail.train_lines')});
ok($ok, 'the default kind trains on uk_retail under the default settings') or diag($err);
like($err, qr/rank 32 is trained/, 'saying what it gave up');

# The whole order history, wholesale orders of up to 1,110 lines included:
# the cosine lists of the evidence ride the pass of EASE's neighbourhoods,
# and are cut to what fits beside them rather than fail after the DPP's fit.
($secs, $err, $ok) = train(q{SELECT * FROM mtdpp_train('uk_whole', 'uk_retail.orders')});
ok($ok, "the default kind trains on uk_retail's whole history under the default settings") or diag($err);
like($err, qr/NOTICE:  kept the \d+ strongest neighbours of each item/, 'keeping the neighbours that fit, as a NOTICE says');
is(q1(q{SELECT count(*) FROM mtdpp_complete(ARRAY[1, 2], 10, 'uk_whole')}), '10', 'it completes a basket');

# ease alone: exactly where that fits, else on neighbourhoods, and said so
($secs, $err, $ok) = train(q{SELECT * FROM mtdpp_train('uk_ease', 'uk_retail.train_lines', kind => 'ease')});
ok($ok, 'ease trains on uk_retail under the default settings') or diag($err);
($secs, $err, $ok) = train(q{SET maintenance_work_mem = '48MB';
	SELECT * FROM mtdpp_train('ic_ease', 'instacart_sample.train_lines', kind => 'ease')});
ok($ok, 'ease trains on instacart_sample in 48MB') or diag($err);
like($err, qr/NOTICE:  EASE's weights of 3661 items are fitted on neighbourhoods: the exact fit needs \d+ kB, more than maintenance_work_mem \(49152 kB\)/,
	'on neighbourhoods, as a NOTICE says');
is(q1(q{SELECT hyperparams ->> 'ease_solver' FROM mtdpp.models WHERE name = 'ic_ease' AND active}),
	'neighborhood', 'and the model records');

# What no setting of the model can bring under the limit is refused at once:
# within a second of the backend's processor time (the wall time grows with
# the machine's load, which CI's varies), and 10 s of wall time.
my $bg = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_safe(q{SET maintenance_work_mem = '1MB'});
$bg->{stderr} = '';
my ($cpu, $t0) = (backend_cpu_seconds($pid), time);
$bg->query(q{SELECT * FROM mtdpp_train('tiny', 'uk_retail.train_lines')});
my ($wall, $cpu_used) = (time - $t0, backend_cpu_seconds($pid) - $cpu);
$err = $bg->{stderr};
$bg->quit;
like($err, qr/ERROR:  /, 'a training that cannot fit in 1MB is refused');
like($err, qr/maintenance_work_mem \((\d+ of )?1024 kB\)/, 'naming the limit');
like($err, qr/HINT:  .*maintenance_work_mem/, 'and the setting to raise');
cmp_ok($cpu_used, '<', 1.0, sprintf('within a second of its processor time (%.2f s; %.2f s of wall time)', $cpu_used, $wall));
cmp_ok($wall, '<', 10, 'and within 10 s of wall time');

$node->stop;
done_testing();
