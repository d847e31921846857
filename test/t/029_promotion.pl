# A model's life on a schedule: the nightly job of doc/models.md's recipe
# retrains from what each night loaded, holding out a tenth of the baskets,
# under the promotion rule the database carries (ALTER DATABASE ... SET
# mtdpp.promote), so that the job itself holds no logic.  A good night
# (every order loaded) is promoted; a night whose lines were half loaded
# keeps the previous version, and a NOTICE gives both figures; a rollback
# (mtdpp_activate of an older version) still works under the rule.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $data = "$FindBin::Bin/../../data";
my $node = mtdpp_node('promotion');
$node->safe_psql('postgres', slurp_file("$data/load.sql"),
	extra_params => [ '-v', "dir=$data/amazon_diaper" ]);

# the lines a night loaded: the orders up to a quantile of the order ids
sub load_night
{
	my ($share) = @_;
	$node->safe_psql('postgres', qq{
CREATE OR REPLACE VIEW nightly_lines AS
SELECT order_id, item_id, position FROM orders
WHERE order_id <= (SELECT percentile_disc($share) WITHIN GROUP (ORDER BY order_id) FROM orders)});
	return;
}

# the job, as pg_cron runs it: a session of its own, the same statements every night
my $job = q{SELECT version FROM mtdpp_train('shop', 'nightly_lines', position_col => 'position',
                                  warm_start => true, test_share => 0.1);
SELECT mtdpp_prune('shop', keep => 3)};

sub night
{
	my ($ret, $out, $err) = $node->psql('postgres', $job);
	is($ret, 0, 'the job ran') or diag($err);
	return $err;
}

sub active_version
{
	return $node->safe_psql('postgres', q{SELECT version FROM mtdpp_models WHERE name = 'shop' AND active});
}

$node->safe_psql('postgres', q{ALTER DATABASE postgres SET mtdpp.promote = 'if_better:mpr'});
is($node->safe_psql('postgres', 'SHOW mtdpp.promote'), 'if_better:mpr',
	'a session of the database carries the rule');

# the first version: no active one to beat
load_night(0.4);
$node->safe_psql('postgres', q{SELECT version FROM mtdpp_train('shop', 'nightly_lines', position_col => 'position', test_share => 0.1)});
is(active_version(), '1', 'the first version of a name is promoted');
is($node->safe_psql('postgres', q{SELECT promotion->>'active_version' IS NULL AND promoted FROM mtdpp_models WHERE name = 'shop' AND version = 1}),
	't', 'and says there was no active version');

# a good night: every order is in
load_night(1);
my $err = night();
is($err, '', 'a good night says nothing');
is(active_version(), '2', 'a good night is promoted');
my ($value, $against, $active_value, $baskets) = split /\|/, $node->safe_psql('postgres', q{
SELECT promotion->>'value', promotion->>'active_version', promotion->>'active_value', promotion->>'baskets'
FROM mtdpp_models WHERE name = 'shop' AND version = 2});
cmp_ok($value, '>', $active_value, "its test MPR ($value) beats version 1's on the same $baskets baskets ($active_value)");
is($against, '1', 'compared with the version it replaces');
cmp_ok($baskets, '>', 500, 'on a tenth of the baskets');

# a night whose lines were half loaded
load_night(0.5);
$err = night();
like($err, qr/NOTICE:  version 3 of model "shop" is not activated: its mpr on the \d+ held-out baskets, [\d.]+, is not above that of active version 2, [\d.]+/,
	'a half-loaded night says why its version stays inactive, with both figures');
like($err, qr/HINT:  mtdpp_activate\('shop', 3\) activates it all the same/, 'and how to activate it anyway');
is(active_version(), '2', 'the previous version stays active');
is($node->safe_psql('postgres', q{SELECT promoted FROM mtdpp_models WHERE name = 'shop' AND version = 3}),
	'f', 'mtdpp_models shows it was not promoted');
is($node->safe_psql('postgres', q{SELECT promotion->>'rule' FROM mtdpp_models WHERE name = 'shop' AND version = 3}),
	'if_better:mpr', 'and by which rule');
is($node->safe_psql('postgres', q{SELECT count(*) FROM mtdpp_complete(ARRAY[8], 5)}), '5',
	'completions answer from the active version');

# a rollback, and activating the kept version by hand
is($node->safe_psql('postgres', q{SELECT version FROM mtdpp.models WHERE model_id = mtdpp_activate('shop', 1)}),
	'1', 'a rollback to version 1 works under the rule');
is(active_version(), '1', 'version 1 is active');
$node->safe_psql('postgres', q{SELECT mtdpp_activate('shop', 3)});
is(active_version(), '3', 'the kept version can be activated by hand');

# the setting is the database's: a session may set another rule
$node->safe_psql('postgres', q{SELECT mtdpp_activate('shop', 2)});
$node->safe_psql('postgres', qq{SET mtdpp.promote = 'always'; $job});
is(active_version(), '4', "a session's promote = 'always' activates every training");

$node->stop;
done_testing();
