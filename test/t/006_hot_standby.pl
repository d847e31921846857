# A streaming hot standby replicates the model tables and answers from them:
# the same completions as the primary, a standby session that has cached a
# model answers from the new version in its very next statement once the
# primary's retraining or activation is replayed (the relcache invalidation
# travels in the commit record), and everything that writes a model fails
# cleanly on the standby with the read-only error (25006).  Both servers
# preload mtdpp: a standby's sessions share one copy of a model too, and a
# version replayed replaces it.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'mtdpp'");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION mtdpp');
load_planted($primary, baskets => 1000);

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');

# Trained once the standby streams: the model reaches it through the WAL.
$primary->safe_psql('postgres', "SELECT * FROM mtdpp_train('m', 'train_lines', epochs => 5, seed => 1, kind => 'multitask')");
$primary->wait_for_catchup($standby);

my %probe = (
	named => q{
SELECT string_agg(format('%s %s %s %s', b.order_id, c.rank, c.item_id, c.score), E'\n'
                  ORDER BY b.order_id, c.rank)
FROM (SELECT order_id, array_remove(basket, held_out) AS basket FROM test_baskets
      ORDER BY order_id LIMIT 20) b
CROSS JOIN LATERAL mtdpp_complete(b.basket, 5, 'm') AS c},
	# no model named: the one the session's mtdpp.model names
	default => q{SET mtdpp.model = 'm'; SELECT string_agg(item_id || ':' || score, ',' ORDER BY rank) FROM mtdpp_complete('{11,12}', 5)},
	score => q{SELECT string_agg(item_id || ':' || coalesce(score::text, 'null'), ',')
	           FROM mtdpp_score('{1,2,3}', '{4,5,14,25,999}', 'm')},
	models => q{SELECT string_agg(format('%s %s v%s %s active=%s', model_id, name, version, kind, active),
	                              '; ' ORDER BY model_id) FROM mtdpp.models},
	items => q{SELECT count(*) || ' ' || md5(string_agg(format('%s %s %s %s %s %s', model_id, item_id,
	                  popularity, bias, factors, task_factors), E'\n' ORDER BY model_id, item_id))
	           FROM mtdpp.items},
);

sub same_as_primary
{
	my ($when) = @_;
	for my $what (sort keys %probe)
	{
		is($standby->safe_psql('postgres', $probe{$what}), $primary->safe_psql('postgres', $probe{$what}),
			"$when: $what on the standby is the primary's");
	}
	return;
}

like($primary->safe_psql('postgres', $probe{models}), qr/^\d+ m v1 multitask active=t$/,
	'the primary holds version 1 of m');
same_as_primary('version 1');

# A standby session caches the model (its first completion reads the
# tables), then keeps answering as the primary retrains and re-activates.
my $S = $standby->background_psql('postgres', on_error_stop => 0);
$S->set_query_timer_restart;
$S->query_safe('\set VERBOSITY verbose');
my $v1 = $S->query_safe($probe{named});
like($v1, qr/^\d+ 1 \d+ /, 'a standby session completes baskets with version 1');
is($S->query_safe($probe{named}), $v1, 'and answers the same from its cache');
my $d1 = $S->query_safe($probe{default});
my $shared = q{SELECT string_agg(format('%s %s', model_id, backends), '; ' ORDER BY model_id)
               FROM mtdpp_shared_models()};
sub active_m { return $primary->safe_psql('postgres', "SELECT model_id FROM mtdpp.models WHERE name = 'm' AND active"); }
is($standby->safe_psql('postgres', $shared), active_m() . ' 1',
	"the standby session maps the standby's one shared copy of version 1");
my $S2 = $standby->background_psql('postgres', on_error_stop => 0);
is($S2->query_safe($probe{named}), $v1, 'a second standby session answers the same');
is($standby->safe_psql('postgres', $shared), active_m() . ' 2', 'from the same copy');

sub fresh { return $standby->safe_psql('postgres', $_[0]); }

# Version 2, another kind, activated by the training.
$primary->safe_psql('postgres', "SELECT * FROM mtdpp_train('m', 'train_lines', kind => 'popularity')");
$primary->wait_for_catchup($standby);
my $v2 = $S->query_safe($probe{named});
isnt($v2, $v1, "after replay, the standby session's next statement answers from version 2");
is($v2, fresh($probe{named}), 'as a fresh standby session does');
is($v2, $primary->safe_psql('postgres', $probe{named}), 'and as the primary does');
is($S->query_safe($probe{default}), fresh($probe{default}), 'the default model follows too');
is($S2->query_safe($probe{named}), $v2, 'the second standby session moves to version 2 too');
is($standby->safe_psql('postgres', $shared), active_m() . ' 2',
	'one shared copy of version 2 replaces that of version 1');
$S2->quit;

# Version 3 trained without activation: nothing changes for the session.
$primary->safe_psql('postgres',
	"SELECT * FROM mtdpp_train('m', 'train_lines', epochs => 5, seed => 3, activate => false, kind => 'multitask')");
$primary->wait_for_catchup($standby);
is($S->query_safe($probe{named}), $v2, 'an inactive version 3 does not change the answers');

# ... until the primary activates it.
$primary->safe_psql('postgres', "SELECT mtdpp_activate('m', 3)");
$primary->wait_for_catchup($standby);
my $v3 = $S->query_safe($probe{named});
isnt($v3, $v1, 'version 3 answers differently from version 1');
isnt($v3, $v2, 'and from version 2');
is($v3, fresh($probe{named}), "mtdpp_activate on the primary shows in the session's next statement");

# Rolled back to version 1 by hand on the primary (plain UPDATEs).
$primary->safe_psql('postgres', q{
BEGIN;
UPDATE mtdpp.models SET active = false WHERE name = 'm';
UPDATE mtdpp.models SET active = true, activated_at = clock_timestamp() WHERE name = 'm' AND version = 1;
COMMIT;
});
$primary->wait_for_catchup($standby);
is($S->query_safe($probe{named}), $v1, 'a hand-made activation on the primary shows too');
is($S->query_safe($probe{default}), $d1, 'and the default model is version 1 again');

# A new model on the primary changes nothing for a standby session whose
# mtdpp.model names m; one that names the new model answers with it.
$primary->safe_psql('postgres', "SELECT * FROM mtdpp_train('b', 'train_lines', epochs => 5, seed => 7, kind => 'multitask')");
$primary->wait_for_catchup($standby);
is($S->query_safe($probe{default}), $d1, "the standby session's default model is still m, its setting's");
my $default_b = $probe{default} =~ s/'m'/'b'/r;
my $d2 = $S->query_safe($default_b);
isnt($d2, $d1, "named by the session's setting, the primary's new model answers");
is($d2, fresh($default_b), 'as a fresh standby session sees it');
same_as_primary('after four trainings and two activations');

# Dropped on the primary: the standby session no longer finds it.
$primary->safe_psql('postgres', "SELECT mtdpp_drop('b')");
$primary->wait_for_catchup($standby);
my ($out, $failed) = $S->query(q{SELECT * FROM mtdpp_complete('{1,2}', 5, 'b')});
ok($failed, 'a model dropped on the primary is gone for the standby session');
like($S->{stderr}, qr/ERROR:\s+42704:.*"b"/, 'with the unknown-model error (42704)');
$S->{stderr} = '';
is($S->query_safe($probe{default}), $d1, 'the default model is m version 1 again');

# Writing on the standby: every writer fails with the read-only error, the
# session goes on, and the standby still answers as the primary.
my @writers = (
	[ 'mtdpp_train', q{SELECT * FROM mtdpp_train('s', 'train_lines', epochs => 2, seed => 1, kind => 'multitask')} ],
	[ 'mtdpp_train of an existing name', q{SELECT * FROM mtdpp_train('m', 'train_lines', kind => 'popularity')} ],
	[ 'mtdpp_save', q{SELECT mtdpp_save('s', mtdpp_fit(order_id, item_id, position, '{"kind": "multitask", "epochs": 2}')) FROM train_lines} ],
	[ 'mtdpp_evaluate (stores metrics)', q{SELECT * FROM mtdpp_evaluate('m', 'test_baskets')} ],
	[ 'mtdpp_activate', q{SELECT mtdpp_activate('m', 2)} ],
	[ 'mtdpp_rename', q{SELECT mtdpp_rename('m', 'm2')} ],
	[ 'mtdpp_drop', q{SELECT mtdpp_drop('m', 3)} ],
	[ 'UPDATE by hand', q{UPDATE mtdpp.models SET active = false} ],
);
for my $w (@writers)
{
	my ($what, $sql) = @$w;
	($out, $failed) = $S->query($sql);
	ok($failed, "$what fails on the standby");
	like($S->{stderr}, qr/ERROR:\s+25006:/, "$what: read-only transaction error (25006)")
	  or diag($S->{stderr});
	unlike($S->{stderr}, qr/XX000|FATAL|PANIC|server closed the connection/, "$what: no internal error, no crash");
	$S->{stderr} = '';
	is($S->query_safe('SELECT 1'), '1', "$what: the session goes on");
	my ($ret, $fout, $ferr) = $standby->psql('postgres', $sql, extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($ferr, qr/ERROR:\s+25006:/, "$what: a fresh standby session gets 25006 too");
}
is($S->query_safe($probe{named}), $v1, 'the standby session still answers from version 1');
same_as_primary('after the failed writes on the standby');

# Reading through the aggregate is allowed on a standby: it only reads.
like($standby->safe_psql('postgres',
		q{SELECT length(mtdpp_fit(order_id, item_id, position, '{"kind": "multitask", "epochs": 2}')) FROM train_lines}),
	qr/^\d{4,}$/, 'mtdpp_fit trains on the standby (without storing)');

# And the primary goes on: a new version reaches the standby session.
$primary->safe_psql('postgres', "SELECT * FROM mtdpp_train('m', 'train_lines', kind => 'popularity')");
$primary->wait_for_catchup($standby);
is($S->query_safe($probe{named}), $primary->safe_psql('postgres', $probe{named}),
	'a fourth version on the primary reaches the standby session');

$S->quit;
my $log = slurp_file($standby->logfile);
unlike($log, qr/terminated by signal|PANIC|TRAP:/, 'no backend of the standby crashed');
done_testing();
