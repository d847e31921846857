# ALTER EXTENSION mtdpp UPDATE on a database holding models of an earlier
# version keeps every model and its completions, and leaves the extension's
# objects defined exactly as a fresh install of the new version does.
#
# Each earlier release (test/releases.txt) is built from the repository's
# history by scripts/test into a copy of the PostgreSQL installation
# (MTDPP_RELEASES): a cluster run by it trains models with that release's
# library and scripts, then a copy of the cluster, run by the current
# installation, is upgraded.  Every earlier version's install script (which
# scripts/test installs from the history: releases do not ship them) is
# also upgraded in place with the current library.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->start;
my $new = $node->safe_psql('postgres',
	q{SELECT default_version FROM pg_available_extensions WHERE name = 'mtdpp'});
my @old = split /\n/, $node->safe_psql('postgres',
	qq{SELECT version FROM pg_available_extension_versions
	   WHERE name = 'mtdpp' AND version <> '$new' ORDER BY version});
ok(@old >= 1, "there are versions before $new to upgrade from");

# Everything that defines the extension's objects, comparable across databases.
my $definition = q{
SELECT pg_describe_object(classid, objid, objsubid) || ' ' ||
       coalesce(pg_get_functiondef(p.oid), '') || coalesce(pg_get_viewdef(c.oid), '') ||
       coalesce(obj_description(objid, classid::regclass::text), '')
FROM pg_depend d
LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid AND p.prokind <> 'a'
LEFT JOIN pg_class c ON d.classid = 'pg_class'::regclass AND c.oid = d.objid AND c.relkind = 'v'
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'mtdpp') AND d.deptype = 'e'
UNION ALL
SELECT c.oid::regclass || ' with ' || array_to_string(c.reloptions, ',')
FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'mtdpp') AND d.deptype = 'e'
  AND c.reloptions IS NOT NULL
UNION ALL
SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = 'mtdpp'::regnamespace
UNION ALL
SELECT attrelid::regclass || '.' || attname || ' ' || format_type(atttypid, atttypmod) || ' ' ||
       coalesce(pg_get_expr(adbin, adrelid), '') || ' storage ' || attstorage::text || ' statistics ' || attstattarget
FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
WHERE attrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'mtdpp'::regnamespace AND relkind = 'r')
  AND attnum > 0 AND NOT attisdropped
UNION ALL
SELECT tgrelid::regclass || ' ' || pg_get_triggerdef(oid) || ' enabled ' || tgenabled::text FROM pg_trigger
WHERE tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'mtdpp'::regnamespace) AND NOT tgisinternal
UNION ALL
SELECT polrelid::regclass || ' policy ' || polname || ' ' || polcmd::text || ' ' || coalesce(pg_get_expr(polqual, polrelid), '')
       || ' ' || coalesce(pg_get_expr(polwithcheck, polrelid), '')
FROM pg_policy WHERE polrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'mtdpp'::regnamespace)
UNION ALL
SELECT oid::regclass || ' row security ' || relrowsecurity FROM pg_class
WHERE relnamespace = 'mtdpp'::regnamespace AND relkind = 'r'
ORDER BY 1};

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION mtdpp');
my $fresh = $node->safe_psql('fresh', $definition);

my $answers = q{
SELECT string_agg(x.m || ':' || item_id || ':' || score, ',' ORDER BY x.m, rank)
FROM (SELECT m FROM unnest(ARRAY['dpp', 'knn', 'pop', 'poi']) m WHERE m IN (SELECT name FROM mtdpp.models)) x,
     mtdpp_complete('{1,2,3}', 10, x.m)};
my $default_answers = q{SELECT string_agg(item_id || ':' || score, ',' ORDER BY rank) FROM mtdpp_complete('{1,2,3}', 10)};
# the rows of mtdpp.models but for the columns an update adds (0.4.0: weights, NULL but for gru)
# the rows as they were: the columns an update adds (item keys, 0.5.0; what a training read, its
# held-out test, the baskets it kept and its promotion, 0.6.0) are left out
my $models = q{SELECT md5(string_agg((to_jsonb(m) - 'weights' - 'item_type' - 'lines_read' - 'baskets_read' - 'test' - 'promotion' - 'test_baskets' - 'trained_by_oid' - 'role_cluster')::text, ',' ORDER BY model_id)) FROM mtdpp.models m};
my $items = q{SELECT md5(string_agg((to_jsonb(i) - 'item_key')::text, ',' ORDER BY model_id, item_id)) FROM mtdpp.items i};
sub train_models
{
	my ($n, $db) = @_;
	load_planted($n, dbname => $db, baskets => 600);
	$n->safe_psql($db, q{
SELECT * FROM mtdpp_train('dpp', 'train_lines', epochs => 3, seed => 1, kind => 'multitask');
SELECT * FROM mtdpp_train('knn', 'train_lines', kind => 'itemknn');
SELECT * FROM mtdpp_train('pop', 'train_lines', kind => 'popularity');
-- a poisson model where the version has the kind: 0.5.0 kept its prior as ln w
DO $$BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'models_kind_check'
                 AND pg_get_constraintdef(oid) NOT LIKE '%poisson%') THEN
    PERFORM mtdpp_train('poi', 'train_lines', kind => 'poisson', epochs => 20);
  END IF;
END$$;
SELECT * FROM mtdpp_evaluate('dpp', 'test_baskets');
});
	return map { $n->safe_psql($db, $_) } ($answers, $models, $items);
}

# Upgrades database DB of node N from OLD; BEFORE: its answers and tables.
sub check_upgrade
{
	my ($n, $db, $old, $what, @before) = @_;
	# the default model before 0.5.0: the most recently activated; from
	# 0.5.0 on, none while several models are active and mtdpp.model is empty
	my $default = $n->safe_psql($db, q{SELECT name FROM mtdpp_models WHERE is_default});
	my $default_answer = $default eq '' ? undef : $n->safe_psql($db, $default_answers);
	$n->safe_psql($db, 'ALTER EXTENSION mtdpp UPDATE');
	is($n->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'mtdpp'}),
		$new, "$what: $old is updated to $new");
	my @after = map { $n->safe_psql($db, $_) } ($answers, $models, $items);
	is($after[0], $before[0], "$what: the same completions, to the last digit");
	is($after[1], $before[1], "$what: mtdpp.models unchanged");
	is($after[2], $before[2], "$what: mtdpp.items unchanged");
	is($n->safe_psql($db, q{SELECT count(*) FROM mtdpp.models WHERE item_type IS NOT NULL}), '0',
		"$what: the models updated keep integer items");
	is($n->safe_psql($db, q{SELECT count(*) FILTER (WHERE m.role_cluster = mtdpp.cluster_id()
	                                               AND m.trained_by_oid = (SELECT oid FROM pg_roles WHERE rolname = m.trained_by))
	                           || '/' || count(*) FROM mtdpp.models m}),
		$n->safe_psql($db, q{SELECT count(*) || '/' || count(*) FROM mtdpp.models}),
		"$what: the models updated are their roles' by OID");
	is($n->safe_psql($db, $definition), $fresh,
		"$what: the extension's objects are defined as by a fresh install");
	# several models were active: the database's mtdpp.model keeps the default
	is($n->safe_psql($db, q{SELECT coalesce(current_setting('mtdpp.model', true), '')}), $default,
		"$what: mtdpp.model names the model that was the default (" . ($default || 'none') . ")");
	is($n->safe_psql($db, $default_answers), $default_answer,
		"$what: a call that names no model answers as before")
	  if defined $default_answer;
	is($n->safe_psql($db, q{SELECT count(*) FROM mtdpp_models WHERE mpr IS NOT NULL}), '1',
		"$what: the view reads the stored metrics");
	is($n->safe_psql($db, q{SELECT array_length(extconfig, 1) FROM pg_extension WHERE extname = 'mtdpp'}),
		'5', "$what: the model tables and the isolation's are registered for pg_dump");
	# and the upgraded database trains and completes with the new version
	# without a kind: the default of the new version, the hybrid
	is($n->safe_psql($db, q{SELECT kind FROM mtdpp_train('dpp', 'train_lines', epochs => 2, seed => 3)}),
		'hybrid', "$what: a training without a kind trains the hybrid after the update");
	is($n->safe_psql($db, q{SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'dpp')}), '5',
		"$what: a new version trains and completes after the update");
	return;
}

# the install scripts of earlier versions, with the current library
for my $old (@old)
{
	my $db = "from_" . ($old =~ tr/./_/r);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION mtdpp VERSION '$old'");
	check_upgrade($node, $db, $old, "$old scripts", train_models($node, $db));
}

# A DBA's grants and revokes of EXECUTE on the functions the update to 0.6.0
# makes again carry over to their new forms (mtdpp_train's table form to
# both of its forms).
$node->safe_psql('postgres', 'CREATE DATABASE granted; CREATE ROLE upgrade_grantee');
$node->safe_psql('granted', q{
CREATE EXTENSION mtdpp VERSION '0.5.0';
REVOKE EXECUTE ON FUNCTION mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean) TO upgrade_grantee;
REVOKE EXECUTE ON FUNCTION mtdpp_activate(text, integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mtdpp_activate(text, integer, text) TO upgrade_grantee;
REVOKE EXECUTE ON FUNCTION mtdpp_score(text, text, text) FROM PUBLIC;
ALTER EXTENSION mtdpp UPDATE TO '0.6.0';
});
is($node->safe_psql('granted', q{
SELECT string_agg(p.proname || ' ' || has_function_privilege('upgrade_grantee', p.oid, 'EXECUTE')
                  || ' ' || has_function_privilege('public', p.oid, 'EXECUTE'), ', ' ORDER BY p.oid::regprocedure::text)
FROM pg_proc p
WHERE p.oid IN ('mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean, float8, text, integer[], text)'::regprocedure,
                'mtdpp_train(text, text, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean, float8, text, integer[], text)'::regprocedure,
                'mtdpp_activate(text, integer, text, text)'::regprocedure,
                'mtdpp_score(text, text, text)'::regprocedure)}),
	'mtdpp_activate true false, mtdpp_score false false, mtdpp_train true false, mtdpp_train true false',
	"0.5.0's update: a DBA's grants and revokes of EXECUTE carry over to the functions it makes again");

# 0.5.0's integer[] forms of the query functions go, so that an array of a
# domain over integer takes the array form as other arrays do; a form that
# a view of the database uses, or whose EXECUTE grants differ from the
# array form's, stays, with a WARNING, and the view answers as before.
$node->safe_psql('postgres', 'CREATE DATABASE kept');
$node->safe_psql('kept', "CREATE EXTENSION mtdpp VERSION '0.5.0'");
load_planted($node, dbname => 'kept', baskets => 300);
$node->safe_psql('kept', q{
SELECT * FROM mtdpp_train('knn', 'train_lines', kind => 'itemknn');
CREATE VIEW knn_of_1_2 AS SELECT item_id, rank FROM mtdpp_complete(ARRAY[1, 2], 5, 'knn');
REVOKE EXECUTE ON FUNCTION mtdpp_score(integer[], integer[], text) FROM PUBLIC;
CREATE DOMAIN positive_id AS integer CHECK (VALUE > 0);
});
my $view_before = $node->safe_psql('kept', 'SELECT string_agg(item_id::text, \',\' ORDER BY rank) FROM knn_of_1_2');
my ($rc, $out, $err) = $node->psql('kept', 'ALTER EXTENSION mtdpp UPDATE', on_error_stop => 1);
is($rc, 0, '0.5.0 with a view over an integer[] form: the update succeeds');
like($err, qr/WARNING:  mtdpp_complete\(integer\[\],integer,text,integer\[\],integer\[\]\) is kept: view knn_of_1_2 use\(s\) it/,
	'the update names the integer[] form it keeps for a view, and the view');
like($err, qr/WARNING:  mtdpp_score\(integer\[\],integer\[\],text\) is kept: its EXECUTE grants differ/,
	'the update names the integer[] form it keeps for its grants');
my $int_forms = q{SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc
                  WHERE proname LIKE 'mtdpp%' AND proargtypes[0] = 'integer[]'::regtype};
is($node->safe_psql('kept', $int_forms), 'mtdpp_complete,mtdpp_score',
	'the integer[] forms nothing holds are dropped, the others kept');
is($node->safe_psql('kept', 'SELECT string_agg(item_id::text, \',\' ORDER BY rank) FROM knn_of_1_2'), $view_before,
	'the view over the kept form answers as before the update');
is($node->safe_psql('kept', q{SELECT pg_typeof(item_id) || ':' || count(*)
                              FROM mtdpp_explain(ARRAY[1, 2]::positive_id[], ARRAY[3]::positive_id[], 'knn')
                              GROUP BY pg_typeof(item_id)}),
	'positive_id:2', 'an array of a domain over integer takes the array form where the integer[] form went');
# what reference.md says to do to remove a kept form
$node->safe_psql('kept', q{
DROP VIEW knn_of_1_2;
ALTER EXTENSION mtdpp DROP FUNCTION mtdpp_complete(integer[], integer, text, integer[], integer[]);
DROP FUNCTION mtdpp_complete(integer[], integer, text, integer[], integer[]);
CREATE VIEW knn_of_1_2 AS SELECT item_id, rank FROM mtdpp_complete(ARRAY[1, 2], 5, 'knn');
});
is($node->safe_psql('kept', 'SELECT string_agg(item_id::text, \',\' ORDER BY rank) FROM knn_of_1_2'), $view_before,
	'the view made again over the array form answers the same items');
is($node->safe_psql('kept', q{SELECT string_agg(item_id::text, ',' ORDER BY rank)
                              FROM mtdpp_complete(ARRAY[1, 2]::positive_id[], 5, 'knn')}), $view_before,
	'then an array of a domain over integer completes without a cast');

# A view over a form taking an untyped basket, which answers text from
# 0.6.0 on, stops the update, named; without it the update goes through.
$node->safe_psql('postgres', 'CREATE DATABASE untyped_view');
$node->safe_psql('untyped_view', q{
CREATE EXTENSION mtdpp VERSION '0.5.0';
CREATE VIEW untyped_answers AS SELECT item_id FROM mtdpp_complete('{1,2}', 5, 'knn');
});
($rc, $out, $err) = $node->psql('untyped_view', 'ALTER EXTENSION mtdpp UPDATE');
like($err, qr/taking an untyped basket answer text in 0\.6\.0, and view untyped_answers use\(s\) them/,
	'a view over an untyped form stops the update, named');
$node->safe_psql('untyped_view', 'DROP VIEW untyped_answers; ALTER EXTENSION mtdpp UPDATE');
is($node->safe_psql('untyped_view', q{SELECT extversion FROM pg_extension WHERE extname = 'mtdpp'}), $new,
	'... and goes through once the view is dropped');

# each earlier release, library and scripts, built from the history
my %releases = map { split /=/, $_, 2 } grep { length } split ' ', ($ENV{MTDPP_RELEASES} // '');
SKIP:
{
	skip 'no earlier release was built (run through scripts/test, from a git clone)', 1
	  unless %releases;
	for my $old (sort keys %releases)
	{
		my $tag = $old =~ tr/./_/r;
		my $old_node = PostgreSQL::Test::Cluster->new("release_$tag", install_path => $releases{$old});
		$old_node->init(allows_streaming => 1);
		$old_node->start;
		$old_node->safe_psql('postgres', "CREATE EXTENSION mtdpp");
		is($old_node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'mtdpp'}),
			$old, "release $old installs its own version");
		my @before = train_models($old_node, 'postgres');
		$old_node->backup('trained');
		$old_node->stop;
		my $upgraded = PostgreSQL::Test::Cluster->new("upgraded_$tag");
		$upgraded->init_from_backup($old_node, 'trained');
		$upgraded->start;
		is($upgraded->safe_psql('postgres', $answers), $before[0],
			"release $old: the current library answers as $old did, before the update");
		check_upgrade($upgraded, 'postgres', $old, "release $old", @before);
		$upgraded->stop;
	}
}

done_testing();
