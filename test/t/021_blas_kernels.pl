# Every kind trains on a server whose OpenBLAS runs its generic SSE3 kernels
# (OPENBLAS_CORETYPE=Prescott), as it does on any CPU it does not know, on
# catalogs of sizes where those kernels once crashed the backend (odd sizes
# above 256: 701 and 965 items).  Then the same fits under another kernel
# set (Haswell's where this CPU runs them, else Nehalem's): the ease weights
# agree within single precision, and the stochastic-gradient kinds, which
# train in the numeric core's reproducible mode (src/numeric/linalg_fixed.c), give
# the same model bit for bit.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{OPENBLAS_CORETYPE} = 'Prescott';
my $node = mtdpp_node('blas_kernels');

# the postmaster's environment, which every backend inherits
like(slurp_file("/proc/$node->{_pid}/environ"), qr/(^|\0)OPENBLAS_CORETYPE=Prescott\0/,
	'the server runs with OPENBLAS_CORETYPE=Prescott');

# A catalog of N items, every one bought: each basket holds three items
# spread over the catalog and two of its group of 16, with repeats dropped,
# in the order of their ids (the kinds that learn the order of a basket read it).
sub catalog
{
	my ($table, $n, $baskets) = @_;
	$node->safe_psql('postgres', qq{
CREATE TABLE $table AS
SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY item_id)::int AS pos
FROM (SELECT DISTINCT b AS order_id, item_id
      FROM generate_series(1, $baskets) b,
           LATERAL (VALUES (b % $n + 1), ((b * 37) % $n + 1), ((b * 101 + 13) % $n + 1),
                           (((b % $n) / 16) * 16 % $n + 1 + (b * 7) % 16 % 3),
                           ((((b % $n) / 16) * 16 + (b * 11) % 16) % $n + 1)) v(item_id)) s;
});
	is($node->safe_psql('postgres', "SELECT count(DISTINCT item_id) FROM $table"),
		$n, "$table: every one of the $n items is bought");
}

catalog('lines_701', 701, 3000);
catalog('lines_965', 965, 4000);

# every kind of the registry
my @kinds = split /\n/, $node->safe_psql('postgres', 'SELECT name FROM mtdpp_kinds() ORDER BY name');
for my $table (qw(lines_701 lines_965))
{
	for my $kind (@kinds)
	{
		my $name = "${kind}_$table";
		my ($ok, $out, $err) = $node->psql('postgres',
			"SELECT * FROM mtdpp_train('$name', '$table', position_col => 'pos', kind => '$kind')");
		is($ok, 0, "$kind trains on $table under Prescott") or diag($err);
		is($node->safe_psql('postgres', qq{
SELECT count(*) FILTER (WHERE score OPERATOR(pg_catalog.>) '-Infinity'::float8
                         AND score OPERATOR(pg_catalog.<) 'Infinity'::float8)
FROM mtdpp_complete(ARRAY[1, 2, 17], 10, '$name')}), 10,
			"$kind on $table completes a basket with 10 finite scores");
	}
}
ok($node->safe_psql('postgres', 'SELECT 1') eq '1', 'the server is still up');

# The same fits under another kernel set.
my $flags = (grep { /^flags/ } split /\n/, slurp_file('/proc/cpuinfo'))[0] // '';
my $other = ($flags =~ /\bavx2\b/ && $flags =~ /\bfma\b/) ? 'Haswell'
  : ($flags =~ /\bsse4_2\b/) ? 'Nehalem' : undef;
my @sgd = qw(multitask_nobias lowrank);

# every stored float of the active model NAME, as one digest
sub fingerprint
{
	my ($name) = @_;
	return $node->safe_psql('postgres', qq{
SELECT md5(m.log_w::text || string_agg(concat_ws(',', i.item_id, i.bias, i.factors, i.task_factors,
                                                 i.neighbors, i.neighbor_weights), ';' ORDER BY i.item_id))
FROM mtdpp.models m JOIN mtdpp.items i USING (model_id)
WHERE m.name = '$name' AND m.active GROUP BY m.log_w});
}

SKIP:
{
	skip 'this CPU runs no kernel set but the generic one', 2 + @sgd
	  unless defined $other;

	$node->safe_psql('postgres', qq{
SELECT * FROM mtdpp_train('ease_prescott', 'lines_965', kind => 'ease', params => '{"lambda": 20}')});
	my %prescott = map { $_ => fingerprint("${_}_lines_701") } @sgd;
	$node->stop;
	$ENV{OPENBLAS_CORETYPE} = $other;
	$node->start;
	$node->safe_psql('postgres', qq{
SELECT * FROM mtdpp_train('ease_other', 'lines_965', kind => 'ease', params => '{"lambda": 20}')});
	my ($pairs, $common, $worst) = split /\|/, $node->safe_psql('postgres', q{
CREATE TABLE weights AS
SELECT m.name, i.item_id, n.c, n.w
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id),
     unnest(i.neighbors, i.neighbor_weights) n(c, w)
WHERE m.name IN ('ease_prescott', 'ease_other') AND m.active;
ANALYZE weights;
SELECT count(*), count(h.w), max(abs(p.w - h.w) / greatest(abs(h.w), 1e-3))
FROM (SELECT * FROM weights WHERE name = 'ease_prescott') p
LEFT JOIN (SELECT * FROM weights WHERE name = 'ease_other') h USING (item_id, c)});
	ok($pairs > 0 && $common >= 0.99 * $pairs,
		"ease under $other keeps the same neighbours ($common of $pairs)");
	cmp_ok($worst, '<', 1e-3, "and the same weights within single precision (worst relative difference $worst)");

	for my $kind (@sgd)
	{
		$node->safe_psql('postgres',
			"SELECT * FROM mtdpp_train('${kind}_other', 'lines_701', position_col => 'pos', kind => '$kind')");
		is(fingerprint("${kind}_other"), $prescott{$kind},
			"$kind trains the same model, bit for bit, under Prescott and $other");
	}
}

$node->stop;
done_testing();
