# A model's life on a schedule: the nightly job of doc/models.md's recipe
# retrains from what each night loaded, holding out a tenth of the baskets,
# under the promotion rule the database carries (ALTER DATABASE ... SET
# mtdpp.promote), so that the job itself holds no logic.  A good night
# (every order loaded) is promoted; a night whose lines were half loaded
# keeps the previous version, and a NOTICE gives both figures; a rollback
# (mtdpp_activate of an older version) still works under the database's
# rule, and is refused when the call itself names 'if_better'.
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

# a rollback: mtdpp_activate follows a rule only when it names one.  Under
# 'if_better' the older, worse version is refused: compared with the active
# one on the baskets its own training held out and kept
my $activate = sub {
	my ($args) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT version FROM mtdpp.models WHERE model_id = (SELECT mtdpp_activate($args))");
	is($ret, 0, "mtdpp_activate($args) ran") or diag($err);
	return ($out, $err);
};
my ($now, $said) = $activate->(q{'shop', 1, promote => 'if_better:mpr'});
is($now, '2', "a rollback to the worse version 1 under 'if_better:mpr' keeps version 2 active");
like($said, qr/NOTICE:  version 1 of model "shop" is not activated: its mpr on the (\d+) baskets its training held out, [\d.]+, is not above that of active version 2, [\d.]+/,
	'and says why, with both figures');
like($said, qr/HINT:  mtdpp_activate\('shop', 1, promote => 'always'\) activates it all the same/, 'and how to roll back all the same');
is(active_version(), '2', 'version 2 stays active');
my ($promoted, $by, $kept, $compared) = split /\|/, $node->safe_psql('postgres', q{
SELECT promotion->>'promoted', promotion->>'decided_by', jsonb_array_length(test_baskets), promotion->>'baskets'
FROM mtdpp.models WHERE name = 'shop' AND version = 1});
is("$promoted $by", 'false mtdpp_activate', 'the decision is recorded with version 1, as a training records it');
cmp_ok($kept, '>', 50, "version 1 kept its $kept held-out baskets");
is($compared, $kept, 'the two versions were compared on them');
($now, $said) = $activate->(q{'shop', 1});
is($now, '1', "a rollback without a rule works, although the database's rule is 'if_better:mpr'");
is($said, '', 'and says nothing');
is(active_version(), '1', 'version 1 is active');
$activate->(q{'shop', 2, promote => 'always'});
($now) = $activate->(q{'shop', 1, promote => 'always'});
is($now, '1', "a rollback with promote => 'always' works");
($now, $said) = $activate->(q{'shop', 2, promote => 'if_better:mpr'});
is($now, '2', 'version 2 beats version 1 on its own kept baskets: activated under the rule');
$node->safe_psql('postgres', q{SELECT mtdpp_activate('shop', 3)});
is(active_version(), '3', 'the kept version 3 can be activated by hand');

# under isolation by role, a tenant's rule reads its own versions and
# baskets, and reaches no other role's model
$node->safe_psql('postgres', q{
CREATE ROLE tenant LOGIN;
GRANT USAGE ON SCHEMA mtdpp TO tenant;
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.models, mtdpp.items TO tenant;
GRANT USAGE ON SEQUENCE mtdpp.models_model_id_seq TO tenant;
GRANT SELECT ON orders TO tenant;
SELECT mtdpp_isolate('role')});
my $as_tenant = sub {
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql, extra_params => [ '-U', 'tenant' ]);
	return ($ret, $out, $err);
};
my ($ret, $out);
($ret, $out, $err) = $as_tenant->(q{
SELECT version FROM mtdpp_train('t', 'SELECT order_id, item_id FROM orders WHERE order_id % 3 = 0', kind => 'itemknn', test_share => 0.2);
SELECT version FROM mtdpp_train('t', 'SELECT order_id, item_id FROM orders', kind => 'itemknn', test_share => 0.2);
SELECT version FROM mtdpp.models WHERE model_id = (SELECT mtdpp_activate('t', 1, promote => 'if_better:mpr'))});
is($ret, 0, "a tenant trains and activates under a rule") or diag($err);
is($out, "1\n2\n2", "its worse version 1 is refused");
like($err, qr/NOTICE:  version 1 of model "t" is not activated/, 'with a NOTICE');
is($node->safe_psql('postgres', q{SELECT trained_by, promotion->>'decided_by' FROM mtdpp.models WHERE name = 't' AND version = 1}),
	'tenant|mtdpp_activate', "the decision is recorded in the tenant's row");
($ret, $out, $err) = $as_tenant->(q{SELECT mtdpp_activate('shop', 1, promote => 'if_better:mpr')});
like($err, qr/ERROR:  model "shop" has no version 1/, "the owner's model is out of a tenant's reach, rule or not: its rows are not seen");
is(active_version(), '3', "and stays as it was");
$node->safe_psql('postgres', q{SELECT mtdpp_isolate('none'); SELECT mtdpp_drop('t')});

# the setting is the database's: a session may set another rule
$node->safe_psql('postgres', q{SELECT mtdpp_activate('shop', 2)});
$node->safe_psql('postgres', qq{SET mtdpp.promote = 'always'; $job});
is(active_version(), '4', "a session's promote = 'always' activates every training");

$node->stop;
done_testing();
