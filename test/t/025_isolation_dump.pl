# Isolation by role survives the ways a database moves: models isolated
# with mtdpp_isolate('role') and shared with mtdpp_share, dumped with
# pg_dump and restored into a new database (pg_restore alone, with -j 2,
# with --single-transaction, schema first then data with -a, with and
# without --disable-triggers; a plain dump through psql, also into a
# database that has the extension, and a plain data-only one that disables
# the triggers), into a new cluster, and carried by pg_upgrade, keep every
# role to its own models and those shared with it: bob sees none of
# alice's rows in either table, her models do not exist for him, he
# changes none of them, and app completes with the one model shared with
# it.  Lifting the isolation after the restore shows everything again.
# The triggers that fire for replicas only keep that mode on every path,
# though ALTER TABLE ... ENABLE TRIGGER ALL resets it.  A model, and a
# share, is its role's by OID: a renamed role keeps them, a new role of a
# dropped role's name gets none, and a restore into another cluster maps
# them to the OIDs of the roles of their names there (triggers fired or
# not), or leaves them waiting, hidden, for a role of that name.  Last, a database
# isolated by hand under 0.4.0 is told on its update that pg_dump does not
# keep that, and gets no database-wide default model, which would show
# every role one role's name.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $roles = q{
CREATE ROLE alice LOGIN;
CREATE ROLE bob LOGIN;
CREATE ROLE app LOGIN;
};
my $grants = q{
GRANT SELECT ON train_lines TO alice, bob;
GRANT USAGE ON SCHEMA mtdpp TO alice, bob, app;
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.models, mtdpp.items TO alice, bob;
GRANT USAGE ON SEQUENCE mtdpp.models_model_id_seq TO alice, bob;
GRANT SELECT ON mtdpp.models, mtdpp.items TO app;
GRANT SELECT ON mtdpp_models TO alice, bob;
};

# The recipes of doc/models.md, as printed.
my $doc = slurp_file("$FindBin::Bin/../../doc/models.md");
my ($isolate) = grep { /mtdpp_isolate\('role'\)/ } ($doc =~ /```sql\n(.*?)```/sg);
ok(defined $isolate, 'doc/models.md has the isolation recipe');

my $old = PostgreSQL::Test::Cluster->new('isolated');
$old->init;
$old->start;
$old->safe_psql('postgres', $roles);
$old->safe_psql('postgres', 'CREATE DATABASE shop');
$old->safe_psql('shop', 'CREATE EXTENSION mtdpp');
load_planted($old, dbname => 'shop', baskets => 600);
$old->safe_psql('shop', $grants);
$old->safe_psql('shop', $isolate);

sub as_role
{
	my ($node, $db, $role, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql,
		extra_params => [ '-U', $role, '-v', 'VERBOSITY=verbose' ]);
	return $ret == 0 ? $out : "ERROR $err";
}

like(as_role($old, 'shop', 'alice', q{SELECT version FROM mtdpp_train('a_knn', 'train_lines', kind => 'itemknn')}),
	qr/^1$/, 'alice trains item-kNN');
like(as_role($old, 'shop', 'alice', q{SELECT version FROM mtdpp_train('a_pop', 'train_lines', kind => 'popularity')}),
	qr/^1$/, 'alice trains popularity');
like(as_role($old, 'shop', 'bob', q{SELECT version FROM mtdpp_train('b_knn', 'train_lines', kind => 'itemknn')}),
	qr/^1$/, 'bob trains item-kNN');
is(as_role($old, 'shop', 'alice', q{SELECT mtdpp_share('a_knn', 'app')}), 't', 'alice shares a_knn with app');
like(as_role($old, 'shop', 'bob', q{SELECT mtdpp_share('a_knn', 'bob')}),
	qr/ERROR.*42704.*role "bob" has no model "a_knn" to share/s, 'bob cannot share her model');

my $complete = sub {
	my ($model) = @_;
	return "SELECT string_agg(item_id::text, ',' ORDER BY rank) FROM mtdpp_complete('{1,2,3}', 5, '$model')";
};
my %answer = map { $_ => $old->safe_psql('shop', $complete->($_)) } qw(a_knn a_pop b_knn);
like($answer{a_knn}, qr/^\d+(,\d+){4}$/, 'the owner completes with a_knn');

# What each role may see and do; LABEL names the copy under test.
sub check_isolated
{
	my ($node, $db, $label) = @_;
	my $as = sub { return as_role($node, $db, @_) };
	my $alice_ids = $node->safe_psql($db,
		q{SELECT string_agg(model_id::text, ',') FROM mtdpp.models WHERE trained_by = 'alice'});
	like($alice_ids, qr/^\d+,\d+$/, "$label: alice's two models are there");
	is($as->('bob', "SELECT count(*) FROM mtdpp.models WHERE model_id IN ($alice_ids)"), '0',
		"$label: bob sees 0 of alice's model rows");
	is($as->('bob', "SELECT count(*) FROM mtdpp.items WHERE model_id IN ($alice_ids)"), '0',
		"$label: bob sees 0 of alice's item rows");
	like($as->('bob', $complete->('a_knn')), qr/ERROR.*42704.*model "a_knn" does not exist/s,
		"$label: alice's model does not exist for bob");
	my $rows = "SELECT md5(string_agg(i::text, ',' ORDER BY model_id, item_id)) FROM mtdpp.items i "
	  . "WHERE model_id IN ($alice_ids)";
	my $before = $node->safe_psql($db, $rows);
	like($as->('bob', "UPDATE mtdpp.items SET bias = bias + 1 WHERE model_id IN ($alice_ids)"), qr/^$/,
		"$label: bob's UPDATE of alice's items runs");
	is($node->safe_psql($db, $rows), $before, "$label: ... and changes none of them");
	like($as->('bob', q{SELECT version FROM mtdpp_train('a_knn', 'train_lines', kind => 'popularity')}),
		qr/ERROR.*42501.*model name "a_knn" is not available/s, "$label: bob cannot train into her name");
	is($as->('bob', $complete->('b_knn')), $answer{b_knn}, "$label: bob completes with his model as before");
	is($as->('bob', 'SELECT string_agg(name, \',\' ORDER BY name) FROM mtdpp_models'), 'b_knn',
		"$label: mtdpp_models lists bob's model only");
	is($as->('alice', 'SELECT string_agg(name, \',\' ORDER BY name) FROM mtdpp_models'), 'a_knn,a_pop',
		"$label: mtdpp_models lists alice's models");
	is($as->('alice', $complete->('a_pop')), $answer{a_pop}, "$label: alice completes with her model as before");
	is($as->('app', $complete->('a_knn')), $answer{a_knn}, "$label: app completes with the model shared with it");
	like($as->('app', $complete->('a_pop')), qr/ERROR.*42704.*model "a_pop" does not exist/s,
		"$label: app does not complete with alice's other model");
	like($as->('app', $complete->('b_knn')), qr/ERROR.*42704.*model "b_knn" does not exist/s,
		"$label: nor with bob's");
	like($as->('bob', q{DELETE FROM mtdpp.model_readers}), qr/^$/, "$label: bob cannot take back alice's share");
	is($node->safe_psql($db, 'SELECT count(*) FROM mtdpp.model_readers'), '1', "$label: ... it is still there");
	return;
}
check_isolated($old, 'shop', 'before the dump');

my $dir = PostgreSQL::Test::Utils::tempdir;
$old->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/shop.dump", '-d', $old->connstr('shop') ], 'pg_dump -Fc');

# a new database of the same cluster
$old->safe_psql('postgres', 'CREATE DATABASE restored');
$old->command_ok([ 'pg_restore', '--exit-on-error', '-d', $old->connstr('restored'), "$dir/shop.dump" ],
	'pg_restore into a new database');
check_isolated($old, 'restored', 'restored into a new database');

# The triggers that tell a subscriber's sessions of the changes it applies
# fire for replicas only; ALTER TABLE ... ENABLE TRIGGER ALL, which
# pg_restore -a --disable-triggers runs, would leave them for the origin.
my $replica_triggers = 'items_applied R,items_truncate_applied R,models_applied R,models_truncate_applied R';
sub check_trigger_modes
{
	my ($node, $db, $label) = @_;
	is($node->safe_psql($db, q{SELECT string_agg(tgname || ' ' || tgenabled::text, ',' ORDER BY tgname) FROM pg_trigger
                               WHERE tgrelid IN ('mtdpp.models'::regclass, 'mtdpp.items'::regclass)
                                 AND tgname LIKE '%applied'}),
		$replica_triggers, "$label: the triggers for replicas keep their mode");
	return;
}
check_trigger_modes($old, 'shop', 'the dumped database');

# Every other way a DBA restores it: isolation is a row of mtdpp.isolation
# that the extension's policies read, so it is on as soon as that row is
# back, whatever runs or skips triggers on the way.
my @restores = (
	[ 'pg_restore -j 2', [ 'pg_restore', '--exit-on-error', '-j', '2' ] ],
	[ 'pg_restore --single-transaction', [ 'pg_restore', '--exit-on-error', '--single-transaction' ] ],
	[ 'pg_restore -s, then -a', [ 'pg_restore', '--exit-on-error', '-s' ], [ 'pg_restore', '--exit-on-error', '-a' ] ],
	[ 'pg_restore -s, then -a --disable-triggers', [ 'pg_restore', '--exit-on-error', '-s' ],
		[ 'pg_restore', '--exit-on-error', '-a', '--disable-triggers' ] ],
	[ 'pg_restore -s, then -a -j 2', [ 'pg_restore', '--exit-on-error', '-s' ],
		[ 'pg_restore', '--exit-on-error', '-a', '-j', '2' ] ]);
my $n = 0;
for my $r (@restores)
{
	my ($label, @steps) = @$r;
	my $db = 'restored_' . ++$n;
	$old->safe_psql('postgres', "CREATE DATABASE $db");
	$old->command_ok([ @$_, '-d', $old->connstr($db), "$dir/shop.dump" ], "$label: " . join(' ', @$_))
	  for @steps;
	check_isolated($old, $db, $label);
	is($old->safe_psql($db, q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'mtdpp.isolation'::regclass}), '0',
		"$label: no trigger on mtdpp.isolation has to run");
	check_trigger_modes($old, $db, $label);
}
# a plain dump through psql, into a new database and into one that has the
# extension already (CREATE EXTENSION fails there, the rest goes on)
$old->command_ok([ 'pg_dump', '-f', "$dir/shop.sql", '-d', $old->connstr('shop') ], 'pg_dump (plain)');
$old->safe_psql('postgres', 'CREATE DATABASE restored_plain');
$old->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $old->connstr('restored_plain'), '-f', "$dir/shop.sql" ],
	'plain dump through psql into a new database');
check_isolated($old, 'restored_plain', 'plain dump through psql');
$old->command_ok([ 'pg_dump', '-a', '--disable-triggers', '-f', "$dir/shop_data.sql", '-d', $old->connstr('shop') ],
	'pg_dump -a --disable-triggers (plain)');
$old->safe_psql('postgres', 'CREATE DATABASE restored_plain_data');
$old->command_ok([ 'pg_restore', '--exit-on-error', '-s', '-d', $old->connstr('restored_plain_data'), "$dir/shop.dump" ],
	'the schema first');
$old->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $old->connstr('restored_plain_data'), '-f', "$dir/shop_data.sql" ],
	'then a plain data-only dump that disables the triggers, through psql');
check_isolated($old, 'restored_plain_data', 'plain data-only dump through psql, triggers disabled');
check_trigger_modes($old, 'restored_plain_data', 'plain data-only dump through psql, triggers disabled');
# and by hand, the same statements on a live database
$old->safe_psql('restored_plain_data', 'ALTER TABLE mtdpp.models DISABLE TRIGGER ALL; ALTER TABLE mtdpp.models ENABLE TRIGGER ALL; '
	  . 'ALTER TABLE mtdpp.items DISABLE TRIGGER ALL; ALTER TABLE mtdpp.items ENABLE TRIGGER ALL');
check_trigger_modes($old, 'restored_plain_data', 'DISABLE then ENABLE TRIGGER ALL by hand');
$old->safe_psql('postgres', 'CREATE DATABASE restored_over');
$old->safe_psql('restored_over', 'CREATE EXTENSION mtdpp');
run_log([ 'psql', '-X', '-q', '-d', $old->connstr('restored_over'), '-f', "$dir/shop.sql" ]);
check_isolated($old, 'restored_over', 'plain dump through psql into a database with the extension');

# a new cluster, with the same roles
my $other = PostgreSQL::Test::Cluster->new('other');
$other->init;
$other->start;
$other->safe_psql('postgres', $roles);
$other->safe_psql('postgres', 'CREATE DATABASE shop');
$other->command_ok([ 'pg_restore', '--exit-on-error', '-d', $other->connstr('shop'), "$dir/shop.dump" ],
	'pg_restore into a new cluster');
check_isolated($other, 'shop', 'restored into a new cluster');
is($other->safe_psql('shop', q{SELECT mtdpp_isolate('none')}), 'none', 'the owner lifts the isolation');
is(as_role($other, 'shop', 'bob', q{SELECT count(*) FROM mtdpp.models WHERE trained_by = 'alice'}), '2',
	'lifted: bob sees alice\'s models again');
is(as_role($other, 'shop', 'bob', $complete->('a_pop')), $answer{a_pop}, 'lifted: and completes with them');
$other->stop;

# pg_upgrade into a new cluster of the same installation
$old->stop;
my $bindir = $old->config_data('--bindir');
SKIP:
{
	# PostgreSQL 17 as scripts/install-deps assembles it has no pg_upgrade
	skip "no pg_upgrade in $bindir", 1 unless -x "$bindir/pg_upgrade";
	my $new = PostgreSQL::Test::Cluster->new('upgraded');
	$new->init;
	command_ok(
		[
			"$bindir/pg_upgrade", '--no-sync',
			'-d', $old->data_dir, '-D', $new->data_dir,
			'-b', $bindir, '-B', $bindir,
			'-s', $new->host, '-p', $old->port, '-P', $new->port
		],
		'pg_upgrade');
	$new->start;
	# pg_upgrade keeps the roles' OIDs but makes a new system identifier:
	# the rows read by their names, until mtdpp_isolate maps them
	is($new->safe_psql('shop', q{SELECT count(*) FROM mtdpp.models WHERE role_cluster = mtdpp.cluster_id()}),
		'0', 'after pg_upgrade: the models are of the former cluster');
	check_isolated($new, 'shop', 'after pg_upgrade');
	is($new->safe_psql('shop', q{SELECT mtdpp_isolate('role')}), 'role', 'after pg_upgrade: the owner isolates again');
	is($new->safe_psql('shop', q{SELECT count(*) FILTER (WHERE m.role_cluster = mtdpp.cluster_id()
	                                                   AND m.trained_by_oid = (SELECT oid FROM pg_roles WHERE rolname = m.trained_by))
	                               || '/' || count(*) FROM mtdpp.models m}),
		'3/3', '... which maps them to the OIDs of their roles');
	check_isolated($new, 'shop', 'after pg_upgrade, mapped');
	check_isolated($new, 'restored', 'the restored copy after pg_upgrade');
	$new->stop;
}

# A model, and a share, is its role's by OID: a renamed role keeps them, a
# new role of a dropped role's name gets none, and a dump restored into
# another cluster maps them to the roles of their names there, or leaves
# them waiting for a role of that name.
my $ids = mtdpp_node('role_ids');
$ids->safe_psql('postgres', q{
CREATE ROLE alice LOGIN;
CREATE ROLE bob LOGIN;
CREATE ROLE app LOGIN;
CREATE ROLE readers NOLOGIN;
CREATE ROLE viewer LOGIN IN ROLE readers;
CREATE DATABASE shop;
});
$ids->safe_psql('shop', 'CREATE EXTENSION mtdpp');
load_planted($ids, dbname => 'shop', baskets => 600);
my $ids_grants = $grants . q{GRANT USAGE ON SCHEMA mtdpp TO viewer;
GRANT SELECT ON mtdpp.models, mtdpp.items, mtdpp_models TO viewer, app;
};
$ids->safe_psql('shop', $ids_grants);
$ids->safe_psql('shop', $isolate);
my $ids_as = sub { return as_role($ids, 'shop', @_) };
like($ids_as->('alice', q{SELECT version FROM mtdpp_train('a_knn', 'train_lines', kind => 'itemknn')}),
	qr/^1$/, 'roles by OID: alice trains');
like($ids_as->('bob', q{SELECT version FROM mtdpp_train('b_pop', 'train_lines', kind => 'popularity')}),
	qr/^1$/, 'roles by OID: bob trains');
is($ids_as->('alice', q{SELECT mtdpp_share('a_knn', 'app')}), 't', 'roles by OID: alice shares with app');
is($ids_as->('alice', q{SELECT mtdpp_share('a_knn', 'readers')}), 't', '... and with the group readers');
is($ids_as->('bob', q{SELECT mtdpp_share('b_pop', 'app')}), 't', 'roles by OID: bob shares with app');
my %ids_answer = map { $_ => $ids->safe_psql('shop', $complete->($_)) } qw(a_knn b_pop);
like($ids_answer{a_knn}, qr/^\d+(,\d+){4}$/, 'roles by OID: the owner completes with a_knn');
is($ids->safe_psql('shop', q{SELECT count(*) FROM mtdpp.models m JOIN pg_roles r ON r.oid = m.trained_by_oid
                              WHERE r.rolname = m.trained_by AND m.role_cluster = mtdpp.cluster_id()}),
	'2', 'roles by OID: each model records the OID of its role and this cluster');

# alice renamed keeps her models and her shares
$ids->safe_psql('postgres', 'ALTER ROLE alice RENAME TO alice2');
is($ids_as->('alice2', $complete->('a_knn')), $ids_answer{a_knn}, 'renamed: alice2 completes with her model');
is($ids_as->('alice2', q{SELECT string_agg(name, ',' ORDER BY name) FROM mtdpp_models}), 'a_knn',
	'renamed: mtdpp_models lists it for her');
like($ids_as->('alice2', q{SELECT version FROM mtdpp_train('a_knn', 'train_lines', kind => 'itemknn', activate => false)}),
	qr/^2$/, 'renamed: she trains its next version');
like($ids_as->('alice2', q{SELECT mtdpp_activate('a_knn', 2)}), qr/^\S/, '... and activates it');
like($ids_as->('alice2', q{SELECT mtdpp_prune('a_knn', 0)}), qr/^1$/, '... and prunes the first');
is($ids->safe_psql('shop', q{SELECT string_agg(trained_by || ' ' || version, ',') FROM mtdpp.models WHERE name = 'a_knn'}),
	'alice2 2', 'renamed: her rows carry her new name');
is($ids_as->('app', $complete->('a_knn')), $ids_answer{a_knn}, 'renamed: her share still reaches app');
is($ids_as->('viewer', $complete->('a_knn')), $ids_answer{a_knn}, '... and the members of readers');
like($ids_as->('bob', $complete->('a_knn')), qr/ERROR.*42704.*model "a_knn" does not exist/s,
	'renamed: bob still does not see her model');
is($ids_as->('alice2', q{SELECT mtdpp_share('a_knn', 'app')}), 'f', 'renamed: her share with app is there already');

my $ids_dir = PostgreSQL::Test::Utils::tempdir;
$ids->command_ok([ 'pg_dump', '-Fc', '-f', "$ids_dir/shop.dump", '-d', $ids->connstr('shop') ], 'roles by OID: pg_dump -Fc');

# bob dropped, and a new role of his name
$ids->safe_psql('shop', 'DROP OWNED BY bob');
$ids->safe_psql('postgres', 'DROP OWNED BY bob; DROP ROLE bob; CREATE ROLE bob LOGIN');
my $bob_grants = q{
GRANT SELECT ON train_lines TO bob;
GRANT USAGE ON SCHEMA mtdpp TO bob;
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.models, mtdpp.items TO bob;
GRANT USAGE ON SEQUENCE mtdpp.models_model_id_seq TO bob;
GRANT SELECT ON mtdpp_models TO bob;
};
$ids->safe_psql('shop', $bob_grants);
is($ids_as->('bob', q{SELECT count(*) FROM mtdpp.models}), '0', 'a new bob sees none of the old bob\'s models');
is($ids_as->('bob', q{SELECT count(*) FROM mtdpp.items}), '0', '... nor their items');
like($ids_as->('bob', $complete->('b_pop')), qr/ERROR.*42704.*model "b_pop" does not exist/s,
	'... and cannot complete with them');
like($ids_as->('bob', q{SELECT version FROM mtdpp_train('b_pop', 'train_lines', kind => 'popularity')}),
	qr/ERROR.*42501.*model name "b_pop" is not available/s, '... nor train into their name');
like($ids_as->('bob', q{DELETE FROM mtdpp.models}), qr/^$/, 'his DELETE runs');
is($ids->safe_psql('shop', q{SELECT count(*) FROM mtdpp.models WHERE name = 'b_pop'}), '1', '... and removes none of them');
is($ids_as->('bob', q{SELECT mtdpp_share('b_pop', 'bob')}) =~ /42704.*role "bob" has no model "b_pop" to share/s ? 1 : 0, 1,
	'... nor shares them');
# once a DBA drops them, the name is free, and a share by the new bob takes the old one's place
$ids->safe_psql('shop', q{SELECT mtdpp_drop('b_pop')});
like($ids_as->('bob', q{SELECT version FROM mtdpp_train('b_pop', 'train_lines', kind => 'popularity')}),
	qr/^1$/, 'the new bob trains the name once it is free');
is($ids_as->('bob', q{SELECT mtdpp_share('b_pop', 'app')}), 't', '... and shares it with app');
is($ids_as->('app', $complete->('b_pop')), $ids_answer{b_pop}, '... which completes with it');
is($ids->safe_psql('shop', q{SELECT count(*) FROM mtdpp.model_readers WHERE name = 'b_pop'}), '1',
	'... through the one share of that name');

# restored into another cluster that has the roles: mapped to its OIDs
my $check_mapped = sub {
	my ($node, $db, $label) = @_;
	my $as = sub { return as_role($node, $db, @_) };
	is($node->safe_psql($db, q{SELECT count(*) FILTER (WHERE m.role_cluster = mtdpp.cluster_id()
	                                                 AND m.trained_by_oid = (SELECT oid FROM pg_roles WHERE rolname = m.trained_by))
	                             || '/' || count(*) FROM mtdpp.models m}),
		'2/2', "$label: every model is mapped to the OID of its role here");
	is($node->safe_psql($db, q{SELECT count(*) FILTER (WHERE s.role_cluster = mtdpp.cluster_id()
	                                                 AND s.reader_oid = (SELECT oid FROM pg_roles WHERE rolname = s.reader))
	                             || '/' || count(*) FROM mtdpp.model_readers s}),
		'3/3', "$label: every share too");
	is($as->('alice2', $complete->('a_knn')), $ids_answer{a_knn}, "$label: alice2 completes with her model as before");
	is($as->('app', $complete->('a_knn')), $ids_answer{a_knn}, "$label: app with the model she shared");
	is($as->('viewer', $complete->('a_knn')), $ids_answer{a_knn}, "$label: a member of readers too");
	like($as->('bob', $complete->('a_knn')), qr/ERROR.*42704.*model "a_knn" does not exist/s,
		"$label: bob does not see her model");
	is($as->('bob', q{SELECT count(*) FROM mtdpp.models WHERE trained_by = 'alice2'}), '0', "$label: nor its rows");
	is($as->('bob', $complete->('b_pop')), $ids_answer{b_pop}, "$label: bob completes with his");
	return;
};
my $ids_other = PostgreSQL::Test::Cluster->new('role_ids_other');
$ids_other->init;
$ids_other->start;
$ids_other->safe_psql('postgres', q{
CREATE ROLE readers NOLOGIN;
CREATE ROLE app LOGIN;
CREATE ROLE filler;
CREATE ROLE bob LOGIN;
CREATE ROLE alice2 LOGIN;
CREATE ROLE viewer LOGIN IN ROLE readers;
CREATE DATABASE shop;
CREATE DATABASE shop_data;
});
isnt($ids_other->safe_psql('postgres', q{SELECT oid FROM pg_roles WHERE rolname = 'alice2'}),
	$ids->safe_psql('postgres', q{SELECT oid FROM pg_roles WHERE rolname = 'alice2'}),
	'the other cluster gives alice2 another OID');
$ids_other->command_ok([ 'pg_restore', '--exit-on-error', '-d', $ids_other->connstr('shop'), "$ids_dir/shop.dump" ],
	'roles by OID: pg_restore into another cluster');
$check_mapped->($ids_other, 'shop', 'another cluster');
$ids_other->command_ok([ 'pg_restore', '--exit-on-error', '-s', '-d', $ids_other->connstr('shop_data'), "$ids_dir/shop.dump" ],
	'roles by OID: the schema first');
$ids_other->command_ok([ 'pg_restore', '--exit-on-error', '-a', '--disable-triggers', '-d', $ids_other->connstr('shop_data'),
	"$ids_dir/shop.dump" ], '... then the data, triggers disabled');
$check_mapped->($ids_other, 'shop_data', 'another cluster, -a --disable-triggers');

# restored into a cluster that lacks alice2: her models wait for her
$ids_other->safe_psql($_, 'DROP OWNED BY alice2') for qw(shop shop_data);
$ids_other->safe_psql('postgres', 'CREATE DATABASE lacking');
$ids_other->safe_psql('postgres', 'DROP ROLE alice2');
# (without the grants to alice2, which that cluster would refuse)
$ids_other->command_ok([ 'pg_restore', '--exit-on-error', '-x', '-d', $ids_other->connstr('lacking'), "$ids_dir/shop.dump" ],
	'roles by OID: pg_restore into a cluster without alice2');
$ids_other->safe_psql('lacking', $bob_grants . q{GRANT USAGE ON SCHEMA mtdpp TO app;
GRANT SELECT ON mtdpp.models, mtdpp.items TO app;});
is($ids_other->safe_psql('lacking', q{SELECT count(*) FROM mtdpp.models
                                       WHERE trained_by = 'alice2' AND role_cluster IS DISTINCT FROM mtdpp.cluster_id()}),
	'1', 'without alice2: her model stays hers by name');
is(as_role($ids_other, 'lacking', 'bob', q{SELECT count(*) FROM mtdpp.models WHERE trained_by = 'alice2'}), '0',
	'without alice2: bob does not see it');
like(as_role($ids_other, 'lacking', 'bob', $complete->('a_knn')), qr/ERROR.*42704.*model "a_knn" does not exist/s,
	'... nor completes with it');
like(as_role($ids_other, 'lacking', 'bob', q{SELECT version FROM mtdpp_train('a_knn', 'train_lines', kind => 'popularity')}),
	qr/ERROR.*42501.*model name "a_knn" is not available/s, '... nor trains into its name');
$ids_other->safe_psql('postgres', 'CREATE ROLE alice2 LOGIN');
$ids_other->safe_psql('lacking', 'GRANT USAGE ON SCHEMA mtdpp TO alice2; GRANT SELECT ON mtdpp.models, mtdpp.items TO alice2');
is(as_role($ids_other, 'lacking', 'alice2', $complete->('a_knn')), $ids_answer{a_knn},
	'a role of her name created later completes with it');
is($ids_other->safe_psql('lacking', q{SELECT mtdpp_isolate('role')}), 'role', 'the owner isolates again');
is($ids_other->safe_psql('lacking', q{SELECT count(*) FROM mtdpp.models WHERE role_cluster = mtdpp.cluster_id()
                                       AND trained_by_oid = 'alice2'::regrole}),
	'1', '... which maps her model to her OID');
$ids_other->safe_psql('postgres', 'ALTER ROLE alice2 RENAME TO alice3');
is(as_role($ids_other, 'lacking', 'alice3', $complete->('a_knn')), $ids_answer{a_knn},
	'... so that she keeps it through a rename');
$ids_other->stop;
$ids->stop;

# A database isolated by hand under 0.4.0 hears on its update that pg_dump
# does not keep hand-made policies.
my $hand = mtdpp_node('by_hand');
$hand->safe_psql('postgres', q{
CREATE DATABASE v040;
});
$hand->safe_psql('v040', q{
CREATE EXTENSION mtdpp VERSION '0.4.0';
ALTER TABLE mtdpp.models ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_models ON mtdpp.models USING (trained_by = current_user);
INSERT INTO mtdpp.models (name, version, kind, active, rank, n_items, n_baskets, n_examples, log_w,
                          hyperparams, trained_by, activated_at)
VALUES ('alice_model', 1, 'popularity', true, 0, 0, 0, 0, 0, '{}', 'alice', now() - interval '1 hour'),
       ('bob_secret_project', 1, 'popularity', true, 0, 0, 0, 0, 0, '{}', 'bob', now());
});
my ($ret, $out, $err) = $hand->psql('v040', 'ALTER EXTENSION mtdpp UPDATE TO \'0.5.0\'');
is($ret, 0, 'the update of a database isolated by hand succeeds');
like($err, qr/WARNING:  row-level security on mtdpp.models or mtdpp.items was enabled by hand: pg_dump does not keep it.*HINT:  SELECT mtdpp_isolate\('role'\)/s,
	'... and says that pg_dump does not keep hand-made isolation, and what does');
# several active models, one per role: no database-wide default names one
is($hand->safe_psql('v040', q{SELECT count(*) FROM pg_db_role_setting s, unnest(s.setconfig) c
                               WHERE c LIKE 'mtdpp.model=%'}),
	'0', '... and sets no model for the whole database, which every role would read');
like($err, qr/WARNING:  calls that name no model will fail while several models are active/,
	'... and says that calls naming no model fail');
unlike($err, qr/bob_secret_project|alice_model/, '... naming no role\'s model');
$hand->stop;

done_testing();
