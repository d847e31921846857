# Row-level security, all the way.  The isolation recipe of doc/models.md
# (mtdpp_isolate), applied as it is printed, keeps two analysts apart in
# both model tables: neither reads, updates, deletes or adds rows of the
# other's models, each still trains and completes with its own,
# mtdpp_models shows each its own, and training, saving or renaming to the
# other's name fails with a clear error that says nothing about the other's
# models, also through the versions alice's pruning left free and by his
# own INSERT or UPDATE, without learning which versions exist, and in a
# repeatable read transaction whose snapshot predates the other's commit.  Then
# policies of the DBA's own that depend on more than the role
# name (a setting, a table of grants, a role membership, a policy hiding
# some item rows) decide every statement of a session that keeps its cached
# model, as a SELECT in the same statement would, also when several
# statements come in one query string.  All of it on a server with a model
# cache per backend and on one that preloads mtdpp and shares the models it
# reads (held open meanwhile by the owner's session).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The recipe: the SQL block of doc/models.md that isolates the models by role.
my $readme = slurp_file("$FindBin::Bin/../../doc/models.md");
my ($recipe) = grep { /mtdpp_isolate\('role'\)/ } ($readme =~ /```sql\n(.*?)```/sg);
ok(defined $recipe, "doc/models.md has an isolation recipe");

my $basket = q{'{1,2,3}'};
sub completes
{
	my ($model) = @_;
	my $m = defined $model ? ", '$model'" : '';
	return "SELECT string_agg(item_id::text, ',' ORDER BY rank) FROM mtdpp_complete($basket, 5$m)";
}

sub check_server
{
	my ($label, @conf) = @_;
	my $node = mtdpp_node("rls_$label", @conf);
	my $super = sub { return $node->safe_psql('postgres', $_[0]); };
	load_planted($node, baskets => 600);
	$super->(q{
CREATE ROLE alice LOGIN;
CREATE ROLE bob LOGIN;
CREATE ROLE app LOGIN;
CREATE ROLE readers NOLOGIN;
CREATE ROLE viewer LOGIN;
GRANT SELECT ON train_lines TO alice, bob;
GRANT USAGE ON SCHEMA mtdpp TO alice, bob, app;
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.models, mtdpp.items TO alice, bob;
GRANT USAGE ON SEQUENCE mtdpp.models_model_id_seq TO alice, bob;
GRANT SELECT ON mtdpp.models, mtdpp.items TO app;
GRANT SELECT ON mtdpp_models TO alice, bob, viewer;
});
	$super->($recipe);
	my $as = sub {
		my ($role, $sql) = @_;
		my ($ret, $out, $err) = $node->psql('postgres', $sql,
			extra_params => ['-U', $role, '-v', 'VERBOSITY=verbose']);
		return $ret == 0 ? $out : "ERROR $err";
	};

	# --- the recipe: two analysts apart in both tables
	like($as->('alice', "SELECT version FROM mtdpp_train('a_model', 'train_lines', kind => 'itemknn')"),
		qr/^1$/, "$label: alice trains under the recipe");
	like($as->('bob', "SELECT version FROM mtdpp_train('b_model', 'train_lines', kind => 'popularity')"),
		qr/^1$/, "$label: bob trains under the recipe");
	my $a_id = $super->("SELECT model_id FROM mtdpp.models WHERE name = 'a_model'");
	my $rows = qq{SELECT md5(string_agg(m::text, ',')) || md5(string_agg(i::text, ',' ORDER BY i.item_id))
	              FROM mtdpp.models m JOIN mtdpp.items i USING (model_id) WHERE model_id = $a_id};
	my $a_rows = $super->($rows);
	my $a_answer = $as->('alice', completes('a_model'));
	like($a_answer, qr/^\d+(,\d+){4}$/, "$label: alice completes with her model");
	# rules live in mtdpp.items like every kind's lists: the same policies cover them
	like($as->('alice', "SELECT version FROM mtdpp_train('a_rules', 'train_lines', kind => 'rules', "
			. "params => '{\"min_support\": 0.01, \"min_confidence\": 0, \"max_antecedent\": 2}')"),
		qr/^1$/, "$label: alice trains rules under the recipe");
	like($as->('alice', "SELECT count(*) > 0 FROM mtdpp_rules('a_rules')"), qr/^t$/,
		"$label: alice lists her rules");
	like($as->('bob', "SELECT count(*) FROM mtdpp_rules('a_rules')"),
		qr/ERROR.*42704.*model "a_rules" does not exist/s, "$label: alice's rules are not listed to bob");
	# and the item factors of poisson
	like($as->('alice', "SELECT version FROM mtdpp_train('a_poisson', 'train_lines', kind => 'poisson', rank => 4, epochs => 5)"),
		qr/^1$/, "$label: alice trains poisson under the recipe");
	like($as->('bob', "SELECT count(*) FROM mtdpp_complete(ARRAY[1], 3, 'a_poisson')"),
		qr/ERROR.*42704.*model "a_poisson" does not exist/s, "$label: alice's poisson model does not complete for bob");
	# gru's shared weights are a column of mtdpp.models: the same policies cover them
	like($as->('alice', "SELECT version FROM mtdpp_train('a_gru', 'train_lines', position_col => 'position', "
			. "kind => 'gru', rank => 4, epochs => 2, params => '{\"learning_rate\": 0.1}')"),
		qr/^1$/, "$label: alice trains a gru under the recipe");
	like($as->('alice', completes('a_gru')), qr/^\d+(,\d+){4}$/, "$label: alice completes with her gru");
	like($as->('bob', completes('a_gru')), qr/ERROR.*42704.*model "a_gru" does not exist/s,
		"$label: alice's gru does not answer bob");
	# a Bayesian low-rank model reads its count of samples from mtdpp.models under the same policies
	like($as->('alice', "SELECT version FROM mtdpp_train('a_bayes', 'train_lines', kind => 'bayesian_lowrank', "
			. "rank => 4, epochs => 2, params => '{\"samples\": 2}')"),
		qr/^1$/, "$label: alice trains a Bayesian low-rank model under the recipe");
	like($as->('alice', completes('a_bayes')), qr/^\d+(,\d+){4}$/, "$label: alice completes with her samples");
	like($as->('bob', completes('a_bayes')), qr/ERROR.*42704.*model "a_bayes" does not exist/s,
		"$label: alice's Bayesian low-rank model does not complete for bob");
	is($as->('bob', "SELECT count(*) FROM mtdpp.models WHERE model_id = $a_id"), '0',
		"$label: bob does not see alice's row of mtdpp.models");
	is($as->('bob', "SELECT count(*) FROM mtdpp.items WHERE model_id = $a_id"), '0',
		"$label: bob reads none of alice's factors and neighbours in mtdpp.items");
	is($as->('bob', "SELECT string_agg(name, ',') FROM mtdpp_models"), 'b_model',
		"$label: mtdpp_models shows bob his models only");
	for my $change (
		"UPDATE mtdpp.items SET neighbor_weights = array_fill(0::real, ARRAY[cardinality(neighbor_weights)]) WHERE model_id = $a_id",
		"DELETE FROM mtdpp.items WHERE model_id = $a_id",
		"UPDATE mtdpp.models SET active = false WHERE model_id = $a_id",
		"DELETE FROM mtdpp.models WHERE model_id = $a_id")
	{
		my $verb = join ' ', $change =~ /^(\w+)\s+(?:FROM\s+)?(mtdpp\.\w+)/;
		like($as->('bob', $change), qr/^$/, "$label: bob's $verb changes no row of alice's");
	}
	like($as->('bob', "INSERT INTO mtdpp.items (model_id, item_id, popularity, bias, factors) "
			. "VALUES ($a_id, 424242, 1, 0, '{}')"),
		qr/ERROR.*42501.*row-level security/s, "$label: bob cannot add an item to alice's model");
	like($as->('bob', "INSERT INTO mtdpp.models (name, version, kind, rank, n_items, n_baskets, n_examples, "
			. "log_w, hyperparams, trained_by) VALUES ('a_model', 9, 'popularity', 0, 0, 0, 0, 0, '{}', 'alice')"),
		qr/ERROR.*42501.*row-level security/s, "$label: bob cannot add a model in alice's name");
	like($as->('bob', completes('a_model')), qr/ERROR.*42704.*model "a_model" does not exist/s,
		"$label: alice's model does not answer bob");
	like($as->('bob', "SELECT mtdpp_drop('a_model')"), qr/ERROR.*42704/s, "$label: bob cannot drop it");
	like($as->('bob', completes('b_model')), qr/^\d+(,\d+){4}$/, "$label: bob completes with his own");

	# --- a name held by models the caller cannot see
	for my $take (
		"SELECT version FROM mtdpp_train('a_model', 'train_lines', kind => 'popularity')",
		"SELECT mtdpp_train('a_model', 'train_lines', kind => 'popularity', activate => false)",
		"SELECT mtdpp_save('a_model', mtdpp_fit(order_id, item_id, NULL::integer, '{\"kind\": \"popularity\"}')) FROM train_lines",
		"SELECT mtdpp_rename('b_model', 'a_model')")
	{
		my $out = $as->('bob', $take);
		like($out, qr/ERROR:  42501: model name "a_model" is not available\nHINT:  Another role may use this name; choose another one\./,
			"$label: bob taking alice's name fails clearly: " . substr($take, 7, 24));
		unlike($out, qr/models_name_version_key|alice|\(name, version\)/, "$label: ... and says nothing more");
	}
	is($super->($rows), $a_rows, "$label: alice's rows are as she left them");
	is($as->('alice', completes('a_model')), $a_answer, "$label: alice completes as before");
	like($as->('bob', "SELECT mtdpp_rename('b_model', 'b_renamed')"), qr/^1$/, "$label: bob renames to a free name");

	# --- a name held by versions the caller cannot see, with gaps between
	# them: whether a name is free, and its next version, are not decided
	# by what the caller's policies show
	$as->('alice', "SELECT version FROM mtdpp_train('reco', 'train_lines', kind => 'popularity')") for 1 .. 3;
	is($as->('alice', "SELECT mtdpp_prune('reco', keep => 1)"), '2', "$label: alice prunes reco to its version 3");
	is($as->('alice', "SELECT mtdpp_share('reco', 'app')"), 't', "$label: alice shares reco with app");
	my $reco = $as->('app', completes('reco'));
	like($reco, qr/^\d+(,\d+){4}$/, "$label: app completes with alice's reco");
	like($as->('bob', "SELECT version FROM mtdpp_train('b_spare', 'train_lines', kind => 'itemknn', activate => false)"),
		qr/^1$/, "$label: bob trains an inactive model");
	my $models = "INSERT INTO mtdpp.models (name, version, kind, rank, n_items, n_baskets, n_examples, log_w, hyperparams) VALUES ";
	for my $take (
		"SELECT version FROM mtdpp_train('reco', 'train_lines', kind => 'itemknn', activate => false)",
		"SELECT mtdpp_rename('b_spare', 'reco')",
		"$models ('reco', 1, 'popularity', 0, 0, 0, 0, 0, '{}')",
		"$models ('reco', 3, 'popularity', 0, 0, 0, 0, 0, '{}')",
		"UPDATE mtdpp.models SET name = 'reco' WHERE name = 'b_spare'")
	{
		my $out = $as->('bob', $take);
		like($out, qr/ERROR:  42501: model name "reco" is not available\nHINT:  Another role may use this name; choose another one\./,
			"$label: bob cannot take reco through a gap: " . substr($take, 0, 44));
		unlike($out, qr/duplicate|already exists|models_name_version_key|\(name, version\)/,
			"$label: ... and learns nothing of its versions");
	}
	is($super->("SELECT string_agg(trained_by || ' ' || version, ',' ORDER BY version) FROM mtdpp.models WHERE name = 'reco'"),
		'alice 3', "$label: reco is alice's version 3 alone");
	like($as->('alice', "SELECT version FROM mtdpp_train('reco', 'train_lines', kind => 'popularity')"), qr/^4$/,
		"$label: alice's next training of reco is version 4");
	is($as->('app', completes('reco')), $reco, "$label: app completes with alice's reco as before");
	like($as->('bob', "SELECT mtdpp_activate('reco')"), qr/ERROR.*42704.*model "reco" does not exist/s,
		"$label: bob has no reco to activate");
	like($as->('bob', "$models ('b_direct', 1, 'popularity', 0, 0, 0, 0, 0, '{}')"), qr/^$/,
		"$label: bob adds a row of a free name by hand");
	is($as->('alice', "SELECT mtdpp_unshare('reco', 'app')"), 't', "$label: alice takes back her share with app");
	like($as->('app', completes('reco')), qr/ERROR.*42704.*model "reco" does not exist/s, "$label: reco answers app no more");

	# --- two repeatable read transactions, alice's and bob's, train one new
	# name: bob's waits for the name's lock, and what alice committed
	# meanwhile, which his snapshot predates, still holds the name
	my %s = map {
		$_ => $node->background_psql('postgres', on_error_stop => 0,
			extra_params => [ '-U', $_, '-v', 'VERBOSITY=verbose' ])
	} qw(alice bob);
	my $bob_pid = $s{bob}->query_safe('SELECT pg_backend_pid()');
	for my $r (qw(alice bob))
	{
		$s{$r}->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
		$s{$r}->query_safe('SELECT count(*) FROM mtdpp_models');	# the snapshot, before either trains
	}
	is($s{alice}->query_safe("SELECT version FROM mtdpp_train('race', 'train_lines', kind => 'popularity')"), '1',
		"$label: alice trains race in her repeatable read transaction");
	$s{bob}->{stderr} = '';
	$s{bob}->{stdin} .= "SELECT version FROM mtdpp_train('race', 'train_lines', kind => 'itemknn');\n";
	$s{bob}->{run}->pump_nb;
	ok($node->poll_query_until('postgres', "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $bob_pid"),
		"$label: bob's training of race waits for the name's lock");
	$s{alice}->query_safe('COMMIT');
	$s{bob}->query('ROLLBACK');
	like($s{bob}->{stderr}, qr/ERROR:  42501: model name "race" is not available/,
		"$label: then is refused the name alice committed, which his snapshot does not show");
	unlike($s{bob}->{stderr}, qr/duplicate|models_name_version_key/, "$label: ... and learns nothing of its versions");
	is($super->("SELECT string_agg(trained_by || ' ' || version, ',') FROM mtdpp.models WHERE name = 'race'"),
		'alice 1', "$label: race is alice's alone");
	$as->('alice', "SELECT mtdpp_drop('race')");
	# the same through a rename, whose versions no unique index sets against
	# hers: bob's inactive version 2 renamed while alice trains version 1
	$as->('bob', "SELECT version FROM mtdpp_train('b_race', 'train_lines', kind => 'popularity', activate => false)")
	  for 1 .. 2;
	$as->('bob', "SELECT mtdpp_prune('b_race', keep => 1)");
	$s{bob}->{stderr} = '';
	for my $r (qw(alice bob))
	{
		$s{$r}->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
		$s{$r}->query_safe('SELECT count(*) FROM mtdpp_models');
	}
	$s{alice}->query_safe("SELECT version FROM mtdpp_train('race', 'train_lines', kind => 'popularity')");
	$s{bob}->{stderr} = '';
	$s{bob}->{stdin} .= "SELECT mtdpp_rename('b_race', 'race');\n";
	$s{bob}->{run}->pump_nb;
	ok($node->poll_query_until('postgres', "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $bob_pid"),
		"$label: bob's rename into race waits for the name's lock");
	$s{alice}->query_safe('COMMIT');
	$s{bob}->query('COMMIT');
	like($s{bob}->{stderr}, qr/ERROR:  42501: model name "race" is not available/,
		"$label: then is refused the name alice committed meanwhile");
	$s{$_}->quit for qw(alice bob);
	is($super->("SELECT string_agg(name || ' ' || trained_by || ' ' || version, ',' ORDER BY name, version) FROM mtdpp.models "
			. "WHERE name IN ('race', 'b_race')"),
		'b_race bob 2,race alice 1', "$label: race is alice's alone, bob's model keeps its name");
	$as->('alice', "SELECT mtdpp_drop('race')");
	$as->('bob', "SELECT mtdpp_drop('b_race')");

	# --- a share with a group role reaches its members, as GRANT does; a
	# role named "Public" is a role, not every role
	$super->(q{CREATE ROLE team NOLOGIN; CREATE ROLE "Public" NOLOGIN; GRANT team TO app;});
	is($as->('alice', "SELECT mtdpp_share('reco', 'team')"), 't', "$label: alice shares reco with group team");
	is($as->('app', completes('reco')), $reco, "$label: app, a member of team, completes with reco");
	$super->('REVOKE team FROM app');
	like($as->('app', completes('reco')), qr/ERROR.*42704.*model "reco" does not exist/s,
		"$label: out of team, app does not");
	is($as->('alice', "SELECT mtdpp_share('reco', 'Public')"), 't', "$label: alice shares reco with role \"Public\"");
	like($as->('app', completes('reco')), qr/ERROR.*42704.*model "reco" does not exist/s,
		"$label: ... which is not every role");
	like($as->('alice', "SELECT mtdpp_share('reco', 'PUBLIC')"), qr/ERROR.*42704.*role "PUBLIC" does not exist/s,
		"$label: 'public' alone names every role");
	$as->('alice', "SELECT mtdpp_unshare('reco', 'team'), mtdpp_unshare('reco', 'Public')");

	# --- the view answers as its caller
	like($as->('viewer', 'SELECT count(*) FROM mtdpp_models'), qr/ERROR.*42501.*permission denied for (table|schema)/s,
		"$label: mtdpp_models gives a role no more than mtdpp.models does");

	# --- policies that depend on more than the role name, for role app
	$super->(q{
CREATE TABLE grants (grantee name, model text);
GRANT SELECT ON grants TO app;
SELECT version FROM mtdpp_train('m_set', 'train_lines', kind => 'popularity');
SELECT version FROM mtdpp_train('m_set2', 'train_lines', kind => 'itemknn');
SELECT version FROM mtdpp_train('m_grant', 'train_lines', kind => 'popularity');
SELECT version FROM mtdpp_train('m_role', 'train_lines', kind => 'itemknn');
CREATE POLICY by_setting ON mtdpp.models FOR SELECT TO app
    USING (name = current_setting('app.model', true));
CREATE POLICY by_grant ON mtdpp.models FOR SELECT TO app
    USING (EXISTS (SELECT FROM public.grants g WHERE g.grantee = current_user AND g.model = name));
CREATE POLICY by_role ON mtdpp.models FOR SELECT TO app
    USING (name = 'm_role' AND pg_has_role(current_user, 'readers', 'MEMBER'));
CREATE POLICY some_items ON mtdpp.items AS RESTRICTIVE FOR SELECT TO app
    USING (coalesce(current_setting('app.hide_odd', true), '') <> 'on' OR item_id % 2 = 0);
});
	my %want = map { $_ => $super->(completes($_)) } qw(m_set m_set2 m_grant m_role);
	isnt($want{m_set}, $want{m_set2}, "$label: the two models a setting picks answer differently");

	# the owner's session holds every model (the shared copies, when preloaded)
	my $owner = $node->background_psql('postgres', on_error_stop => 0);
	$owner->query_safe(completes($_)) for keys %want;
	if ($label eq 'shared')
	{
		is($owner->query_safe('SELECT count(*) FROM mtdpp_shared_models()'), '4',
			"$label: the owner's session shares the four models");
	}

	my $A = $node->background_psql('postgres', on_error_stop => 0, extra_params => ['-U', 'app']);
	$A->query_safe('\set VERBOSITY verbose');
	my $a = sub {
		my ($sql) = @_;
		my ($out, $ret) = $A->query($sql);
		my $err = $A->{stderr};
		$A->{stderr} = '';
		return $ret == 0 ? $out : "ERROR $err";
	};
	my $gone = qr/ERROR.*42704.*model "(\w+)" does not exist/s;

	# a session setting
	$a->("SET app.model = 'm_set'");
	is($a->(completes('m_set')), $want{m_set}, "$label: setting: app completes with m_set");
	is($a->(completes('m_set')), $want{m_set}, "$label: setting: twice (cached)");
	is($a->(completes(undef)), $want{m_set}, "$label: setting: m_set is app's default model");
	$a->("SET app.model = 'm_set2'");
	like($a->(completes('m_set')), $gone, "$label: setting changed: m_set answers app no more");
	is($a->(completes(undef)), $want{m_set2}, "$label: setting changed: the default model follows it");
	$a->("SET app.model = 'm_set'");
	is($a->(completes('m_set')), $want{m_set}, "$label: setting back: m_set answers again");
	$a->("BEGIN");
	is($a->(completes('m_set')), $want{m_set}, "$label: setting, in a transaction block: m_set answers");
	$a->("SET LOCAL app.model = 'none'");
	like($a->(completes('m_set')), $gone, "$label: setting, in a transaction block: the next statement sees the change");
	$a->("ROLLBACK");
	is($a->(completes('m_set')), $want{m_set}, "$label: setting restored by ROLLBACK: m_set answers");
	# several statements in one query string: one transaction, one statement timestamp
	my ($ret, $out, $err) = $node->psql('postgres', '',
		extra_params => ['-U', 'app', '-c', "SET app.model = 'm_set'; " . completes('m_set')
			. "; SET app.model = 'none'; " . completes('m_set')]);
	like("$out $err", qr/^\Q$want{m_set}\E\b.*model "m_set" does not exist/s,
		"$label: setting: checked for each statement of one query string");

	# some item rows hidden by a policy on mtdpp.items
	$a->("SET app.hide_odd = 'on'");
	like($a->(completes('m_set')),
		qr/ERROR.*42501.*row-level security hides \d+ of the \d+ items of model "m_set" from role "app"/s,
		"$label: items: a model some of whose items a policy hides does not answer");
	$a->("SET app.hide_odd = 'off'");
	is($a->(completes('m_set')), $want{m_set}, "$label: items: all shown again, it answers again");
	$a->("RESET app.model");

	# a table of grants
	$super->("INSERT INTO grants VALUES ('app', 'm_grant')");
	is($a->(completes('m_grant')), $want{m_grant}, "$label: grants: app completes with m_grant");
	is($a->(completes('m_grant')), $want{m_grant}, "$label: grants: twice (cached)");
	$super->("DELETE FROM grants");
	like($a->(completes('m_grant')), $gone, "$label: grant deleted: m_grant answers app no more");
	$super->("INSERT INTO grants VALUES ('app', 'm_grant')");
	is($a->(completes('m_grant')), $want{m_grant}, "$label: grant back: m_grant answers again");
	$a->("BEGIN ISOLATION LEVEL REPEATABLE READ");
	is($a->(completes('m_grant')), $want{m_grant}, "$label: grants, repeatable read: m_grant answers");
	$super->("DELETE FROM grants");
	is($a->(completes('m_grant')), $want{m_grant},
		"$label: grants, repeatable read: as its snapshot sees the grants, m_grant still answers");
	is($a->("SELECT count(*) FROM mtdpp.models WHERE name = 'm_grant'"), '1', "$label: ... as a SELECT does");
	$a->("COMMIT");
	like($a->(completes('m_grant')), $gone, "$label: grants, after the transaction: m_grant answers no more");

	# a role membership
	$super->("GRANT readers TO app");
	is($a->(completes('m_role')), $want{m_role}, "$label: membership: app completes with m_role");
	is($a->(completes('m_role')), $want{m_role}, "$label: membership: twice (cached)");
	$super->("REVOKE readers FROM app");
	like($a->(completes('m_role')), $gone, "$label: membership revoked: m_role answers app no more");
	$super->("GRANT readers TO app");
	is($a->(completes('m_role')), $want{m_role}, "$label: membership back: m_role answers again");

	# one statement completing many baskets checks once and answers each
	my $n_role = scalar(split /,/, $want{m_role});
	is($a->("SELECT count(*) FROM generate_series(1, 200) g, LATERAL mtdpp_complete($basket, 5, 'm_role')"),
		200 * $n_role, "$label: a statement completing 200 baskets");

	is($owner->query_safe(completes('m_set')), $want{m_set}, "$label: the owner still completes");
	$A->quit;
	$owner->quit;
	$node->stop;
	return;
}

check_server('own');
check_server('shared', "shared_preload_libraries = 'mtdpp'");

done_testing();
