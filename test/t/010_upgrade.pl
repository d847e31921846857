# ALTER EXTENSION mtdpp UPDATE on a database holding models of the previous
# version keeps every model and its completions, and leaves the extension's
# objects defined exactly as a fresh install of the new version does.
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
SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = 'mtdpp'::regnamespace
UNION ALL
SELECT attrelid::regclass || '.' || attname || ' ' || format_type(atttypid, atttypmod) || ' ' ||
       coalesce(pg_get_expr(adbin, adrelid), '')
FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
WHERE attrelid IN ('mtdpp.models'::regclass, 'mtdpp.items'::regclass) AND attnum > 0 AND NOT attisdropped
UNION ALL
SELECT tgrelid::regclass || ' ' || pg_get_triggerdef(oid) FROM pg_trigger
WHERE tgrelid IN ('mtdpp.models'::regclass, 'mtdpp.items'::regclass) AND NOT tgisinternal
ORDER BY 1};

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION mtdpp');
my $fresh = $node->safe_psql('fresh', $definition);

for my $old (@old)
{
	my $db = "from_" . ($old =~ tr/./_/r);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION mtdpp VERSION '$old'");
	load_planted($node, dbname => $db, baskets => 600);
	$node->safe_psql($db, q{
SELECT * FROM mtdpp_train('dpp', 'train_lines', epochs => 3, seed => 1);
SELECT * FROM mtdpp_train('knn', 'train_lines', kind => 'itemknn');
SELECT * FROM mtdpp_evaluate('dpp', 'test_baskets');
});
	my $answers = q{
SELECT string_agg(m || ':' || item_id || ':' || score, ',' ORDER BY m, rank)
FROM unnest(ARRAY['dpp', 'knn']) m, mtdpp_complete('{1,2,3}', 10, m)};
	my $models = q{SELECT md5(string_agg(m::text, ',' ORDER BY model_id)) FROM mtdpp.models m};
	my $items = q{SELECT md5(string_agg(i::text, ',' ORDER BY model_id, item_id)) FROM mtdpp.items i};
	my @before = map { $node->safe_psql($db, $_) } ($answers, $models, $items);

	$node->safe_psql($db, 'ALTER EXTENSION mtdpp UPDATE');
	is($node->safe_psql($db, q{SELECT extversion FROM pg_extension WHERE extname = 'mtdpp'}),
		$new, "$old is updated to $new");
	my @after = map { $node->safe_psql($db, $_) } ($answers, $models, $items);
	is($after[0], $before[0], "$old -> $new: the same completions");
	is($after[1], $before[1], "$old -> $new: mtdpp.models unchanged");
	is($after[2], $before[2], "$old -> $new: mtdpp.items unchanged");
	is($node->safe_psql($db, $definition), $fresh,
		"$old -> $new: the extension's objects are defined as by a fresh install");
	is($node->safe_psql($db, q{SELECT count(*) FROM mtdpp_models WHERE mpr IS NOT NULL}), '1',
		"$old -> $new: the view reads the stored metrics");
	# the model tables are still dumped
	is($node->safe_psql($db, q{SELECT array_length(extconfig, 1) FROM pg_extension WHERE extname = 'mtdpp'}),
		'3', "$old -> $new: the model tables are still registered for pg_dump");
}

done_testing();
