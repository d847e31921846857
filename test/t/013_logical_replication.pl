# Models published by logical replication: subscriber clusters complete with
# every new version from their next statement once it has arrived (the apply
# worker's writes invalidate the sessions' caches, as local writes do), with
# the same answers as the publisher.  The subscriber preloads mtdpp, so its
# sessions share one copy of each model: each version that arrives, and a
# hand edit of item rows, gets a copy of its own, which replaces the old one.
# Isolation by role, published with its tables, isolates the subscriber too,
# as its rows arrive, and lifts when they go.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pub = mtdpp_node('publisher', 'wal_level = logical', 'max_wal_senders = 10', 'max_replication_slots = 10');
load_planted($pub, baskets => 600);
$pub->safe_psql('postgres', q{
SELECT * FROM mtdpp_train('shop', 'train_lines', epochs => 3, seed => 1, kind => 'multitask');
CREATE PUBLICATION models FOR TABLE mtdpp.models, mtdpp.items;
});

my $sub = mtdpp_node('subscriber', "shared_preload_libraries = 'mtdpp'");
my $shared = q{SELECT string_agg(format('%s %s', s.model_id, s.backends), '; ' ORDER BY s.model_id)
               FROM mtdpp_shared_models() s};
sub active_id
{
	return $sub->safe_psql('postgres',
		"SELECT model_id FROM mtdpp.models WHERE name = 'shop' AND version = $_[0]");
}
my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION models CONNECTION '$connstr' PUBLICATION models");
$sub->wait_for_subscription_sync($pub, 'models');

my $q = q{SELECT string_agg(item_id || ':' || score, ',' ORDER BY rank) FROM mtdpp_complete('{1,2,3}', 10, 'shop')};
my $v1 = $pub->safe_psql('postgres', $q);
is($sub->safe_psql('postgres', $q), $v1, 'the subscriber completes as the publisher does');

# a session on the subscriber that stays open, with the model cached
my $S = $sub->background_psql('postgres', on_error_stop => 0);
is($S->query_safe($q), $v1, 'a subscriber session completes with version 1');
is($sub->safe_psql('postgres', $shared), active_id(1) . ' 1', 'from the shared copy of version 1');
my $S2 = $sub->background_psql('postgres', on_error_stop => 0);
is($S2->query_safe($q), $v1, 'a second subscriber session too');
is($sub->safe_psql('postgres', $shared), active_id(1) . ' 2', 'the same copy');

# a retraining on the publisher: the session's next statement after the
# change has arrived uses version 2
$pub->safe_psql('postgres', q{SELECT * FROM mtdpp_train('shop', 'train_lines', epochs => 3, seed => 2, kind => 'multitask')});
my $v2 = $pub->safe_psql('postgres', $q);
isnt($v2, $v1, 'version 2 completes differently');
$pub->wait_for_catchup('models');
is($S->query_safe(q{SELECT version FROM mtdpp.models WHERE name = 'shop' AND active}), '2',
	'version 2 has arrived');
is($S->query_safe($q), $v2, "the subscriber session's next completion uses version 2");
is($S2->query_safe($q), $v2, 'the second one too');
is($sub->safe_psql('postgres', $shared), active_id(2) . ' 2', 'one shared copy of version 2 replaces version 1');

# an activation alone (an UPDATE of mtdpp.models)
$pub->safe_psql('postgres', q{SELECT mtdpp_activate('shop', 1)});
$pub->wait_for_catchup('models');
is($S->query_safe($q), $v1, 'a re-activation of version 1 shows on the subscriber');

# a hand edit of items (UPDATE of mtdpp.items only)
$pub->safe_psql('postgres', q{
UPDATE mtdpp.items SET factors = (SELECT array_agg(f * 0.5) FROM unnest(factors) AS f)
WHERE model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'shop' AND version = 1)});
$pub->wait_for_catchup('models');
my $edited = $pub->safe_psql('postgres', $q);
isnt($edited, $v1, 'the edit changes the answer on the publisher');
is($S->query_safe($q), $edited, 'and on the subscriber session');
is($S2->query_safe($q), $edited, 'and the second one');
is($sub->safe_psql('postgres', $shared), active_id(1) . ' 2', 'from one shared copy of the edited rows');

# a dropped model
$pub->safe_psql('postgres', q{SELECT mtdpp_drop('shop')});
$pub->wait_for_catchup('models');
my ($out, $failed) = $S->query($q);
ok($failed, 'a dropped model no longer answers on the subscriber');
like($S->{stderr}, qr/model "shop" does not exist/, 'with the unknown-model error');
$S->{stderr} = '';

$S->quit;
$S2->quit;
$sub->poll_query_until('postgres', $shared, '') or fail('the copies go with the sessions');
pass('the copies go with the sessions');

# isolation by role, published with its two tables: the subscriber's
# policies, which always exist, read its rows as they arrive, and a role
# there sees only its own models until they go
$sub->safe_psql('postgres', q{
CREATE ROLE tenant LOGIN;
GRANT USAGE ON SCHEMA mtdpp TO tenant;
GRANT SELECT ON mtdpp.models, mtdpp.items TO tenant;
});
$pub->safe_psql('postgres', q{SELECT version FROM mtdpp_train('iso', 'train_lines', kind => 'popularity')});
$pub->wait_for_catchup('models');
my $seen = q{SELECT count(*) FROM mtdpp.models};
my $all = $sub->safe_psql('postgres', $seen);
isnt($all, '0', 'the subscriber has models');
is($sub->safe_psql('postgres', $seen, extra_params => [ '-U', 'tenant' ]), $all,
	'without isolation, a role on the subscriber sees every model');
$pub->safe_psql('postgres', q{
ALTER PUBLICATION models ADD TABLE mtdpp.isolation, mtdpp.model_readers;
SELECT mtdpp_isolate('role');
});
$sub->safe_psql('postgres', 'ALTER SUBSCRIPTION models REFRESH PUBLICATION');
$sub->wait_for_subscription_sync($pub, 'models');
$sub->poll_query_until('postgres', 'SELECT count(*) FROM mtdpp.isolation', '1')
  or fail('the isolation arrives on the subscriber');
is($sub->safe_psql('postgres', $seen, extra_params => [ '-U', 'tenant' ]), '0',
	'the subscriber isolates its models: the role sees none it did not train');
$pub->safe_psql('postgres', q{SELECT mtdpp_isolate('none')});
$pub->wait_for_catchup('models');
is($sub->safe_psql('postgres', $seen, extra_params => [ '-U', 'tenant' ]), $all,
	'and lifts it with the publisher');

done_testing();
