# One copy of a model per server: with mtdpp in shared_preload_libraries,
# many sessions that complete with one model map one copy of it in shared
# memory (mtdpp_shared_models() shows it, with the number of backends), and
# answer exactly as a copy per backend does; a new version replaces it and
# the old copy is freed once no session uses it, but not while a repeatable
# read transaction still completes with it; privileges hold on every call;
# row-level security and a budget too small keep a backend's own copy; a
# backend killed with SIGKILL takes the server through a crash restart that
# leaves no segment behind.  Segments are files in pg_dynshmem
# (dynamic_shared_memory_type = mmap), so the test can count this server's.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $n_sessions = 30;

my $node = mtdpp_node('shared', "shared_preload_libraries = 'mtdpp'",
	'max_connections = 60', 'dynamic_shared_memory_type = mmap', 'restart_after_crash = on');
load_planted($node, baskets => 1000);
$node->safe_psql('postgres', q{
SELECT * FROM mtdpp_train('m', 'train_lines', epochs => 5, seed => 1, kind => 'multitask');
CREATE ROLE app LOGIN;
GRANT USAGE ON SCHEMA mtdpp TO app;
GRANT SELECT ON mtdpp.models, mtdpp.items, test_baskets TO app;
});

my $probe = q{
SELECT string_agg(format('%s %s %s %s', b.order_id, c.rank, c.item_id, c.score), ','
                  ORDER BY b.order_id, c.rank)
FROM (SELECT order_id, array_remove(basket, held_out) AS basket FROM test_baskets
      ORDER BY order_id LIMIT 40) b
CROSS JOIN LATERAL mtdpp_complete(b.basket, 5, 'm') AS c};
my $shared = q{SELECT string_agg(format('%s %s %s', model_id, backends, state), '; ' ORDER BY model_id, backends DESC)
               FROM mtdpp_shared_models()};
sub model_id
{
	return $node->safe_psql('postgres',
		"SELECT model_id FROM mtdpp.models WHERE name = '$_[0]' AND active");
}

# The answers of a copy per backend, as a reference.
sub set_budget
{
	my ($size, @sessions) = @_;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET mtdpp.shared_cache_size = '$size'; SELECT pg_reload_conf()");
	my $want = $size eq '0' ? '0' : $size;
	$node->poll_query_until('postgres', 'SHOW mtdpp.shared_cache_size', $want)
	  or die "the server did not take mtdpp.shared_cache_size = $size";
	# a session takes the new setting before its next command
	for my $s (@sessions)
	{
		for (1 .. 100)
		{
			last if $s->query_safe('SHOW mtdpp.shared_cache_size') eq $want;
			select(undef, undef, undef, 0.05);
		}
	}
	return;
}
sub own_copy_answer_of
{
	set_budget(0);
	my $answer = $node->safe_psql('postgres', $_[0]);
	set_budget('1GB');
	return $answer;
}
sub own_copy_answer { return own_copy_answer_of($probe); }
my $ref1 = own_copy_answer();
is($node->safe_psql('postgres', $shared), '', 'no shared copy while every backend keeps its own');

# Many sessions complete with m: one copy, mapped by all of them.
my @s = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. $n_sessions;
my $m1 = model_id('m');
my $same = 0;
for my $s (@s)
{
	$same++ if $s->query_safe($probe) eq $ref1;
}
is($same, $n_sessions, "$n_sessions sessions answer exactly as a copy per backend does");
is($node->safe_psql('postgres', $shared), "$m1 $n_sessions ready",
	"one shared copy of m, mapped by the $n_sessions sessions");
is($node->safe_psql('postgres', q{SELECT count(*) FROM mtdpp_shared_models()
                                  WHERE database = 'postgres' AND items = 60 AND bytes > 0}),
	'1', 'with its database, items and bytes');
my $bytes = $node->safe_psql('postgres', 'SELECT bytes FROM mtdpp_shared_models()');
sub segments
{
	my $n = 0;
	opendir(my $d, $node->data_dir . '/pg_dynshmem') or return 0;
	for my $f (readdir($d))
	{
		$n++ if $f =~ /^mmap\./ && -s $node->data_dir . "/pg_dynshmem/$f" == $bytes;
	}
	closedir($d);
	return $n;
}
is(segments(), 1, 'one segment of its size in pg_dynshmem');
is($s[0]->query_safe($probe), $ref1, 'a session answers the same again from the shared copy');

# A session that ends lets go of it.
$s[-1]->quit;
pop @s;
$node->poll_query_until('postgres', $shared, "$m1 " . ($n_sessions - 1) . ' ready')
  or fail('a session that quits is no longer counted');
pass('a session that quits is no longer counted');

# Privileges hold on every call: REVOKE refuses the next call of a session
# whose backend maps the shared copy.
my $app = $node->background_psql('postgres', on_error_stop => 0);
$app->query_safe('SET ROLE app');
is($app->query_safe($probe), $ref1, 'a role granted SELECT completes from the shared copy');
is($node->safe_psql('postgres', $shared), "$m1 $n_sessions ready", 'its backend maps it too');
$node->safe_psql('postgres', 'REVOKE SELECT ON mtdpp.items FROM app');
my ($out, $failed) = $app->query($probe);
ok($failed, 'after REVOKE, its next completion fails');
like($app->{stderr}, qr/permission denied for table items/, 'with the privilege error');
$app->{stderr} = '';
$node->safe_psql('postgres', 'GRANT SELECT ON mtdpp.items TO app');
is($app->query_safe($probe), $ref1, 'GRANT again: it completes again');

# Row-level security on the model tables: the role's backend keeps its own
# copy, read under its policies.
$node->safe_psql('postgres', q{
ALTER TABLE mtdpp.models ENABLE ROW LEVEL SECURITY;
CREATE POLICY app_m ON mtdpp.models TO app USING (name = 'm');
});
my $rls = $node->background_psql('postgres', on_error_stop => 0);
$rls->query_safe('SET ROLE app');
is($rls->query_safe($probe), $ref1, 'under row-level security the role completes with m');
is($node->safe_psql('postgres', $shared), "$m1 $n_sessions ready",
	'from a copy of its own: the shared copy has no more backends');
$rls->quit;
$node->safe_psql('postgres', q{
DROP POLICY app_m ON mtdpp.models;
ALTER TABLE mtdpp.models DISABLE ROW LEVEL SECURITY;
});

# A repeatable read transaction that completed with version 1 keeps it.
my $rr = $s[0];
$rr->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($rr->query_safe($probe), $ref1, 'a repeatable read transaction completes with version 1');

# Version 2: the sessions move to it; version 1 stays while in use.
$node->safe_psql('postgres', "SELECT * FROM mtdpp_train('m', 'train_lines', epochs => 5, seed => 2, kind => 'multitask')");
my $m2 = model_id('m');
my $ref2 = own_copy_answer();
isnt($ref2, $ref1, 'version 2 answers differently');
$same = 0;
for my $s (@s[1 .. $#s], $app)
{
	$same++ if $s->query_safe($probe) eq $ref2;
}
is($same, $n_sessions - 1, 'every other session answers from version 2 at its next statement');
is($node->safe_psql('postgres', $shared), "$m1 1 ready; $m2 " . ($n_sessions - 1) . ' ready',
	'version 2 is shared; version 1 is kept for the transaction that uses it');
is($rr->query_safe($probe), $ref1, 'which still completes with version 1');
$rr->query_safe('COMMIT');
is($rr->query_safe($probe), $ref2, 'after COMMIT it completes with version 2');
is($node->safe_psql('postgres', $shared), "$m2 $n_sessions ready",
	'and the copy of version 1 is freed');
is(segments(), 1, 'its segment is gone: one of that size is left, version 2\'s');

# A change by hand of one item's row: a new key, a new copy.
$node->safe_psql('postgres', "UPDATE mtdpp.items SET bias = bias * 2 WHERE model_id = $m2 AND item_id = 3");
my $ref3 = own_copy_answer();
isnt($ref3, $ref2, 'an item changed by hand changes the answers');
is($s[1]->query_safe($probe), $ref3, 'a session answers from the changed rows');
is($node->safe_psql('postgres', $shared), "$m2 " . ($n_sessions - 1) . " ready; $m2 1 ready",
	'from a new copy, beside the copy of the old rows that the other sessions still map');
$_->query_safe($probe) for @s[2 .. $#s], $s[0], $app;
is($node->safe_psql('postgres', $shared), "$m2 $n_sessions ready", 'which goes once they move on');

# A budget too small: a model that does not fit is every backend's own.
$node->safe_psql('postgres', q{
CREATE TABLE big_lines AS SELECT g / 2 AS order_id, 1000 + g AS item_id FROM generate_series(1, 80000) g;
SELECT * FROM mtdpp_train('big', 'big_lines', kind => 'popularity');
});
set_budget('1MB', $s[1], $s[2]);
is($s[1]->query_safe(q{SELECT count(*) FROM mtdpp_complete('{1002}', 5, 'big')}), '5',
	'a model larger than mtdpp.shared_cache_size completes');
is($node->safe_psql('postgres', q{SELECT count(*) FROM mtdpp_shared_models() WHERE items > 1000}), '0',
	'from a copy of its own');
set_budget('1GB', $s[1], $s[2]);
is($s[2]->query_safe(q{SELECT count(*) FROM mtdpp_complete('{1002}', 5, 'big')}), '5',
	'with room, it completes');
is($node->safe_psql('postgres', q{SELECT backends FROM mtdpp_shared_models() WHERE items > 1000}), '1',
	'from a shared copy');

# SIGKILL: the postmaster restarts the server, and no segment survives.
my $victim = $s[3]->query_safe('SELECT pg_backend_pid()');
ok(segments() >= 1, 'before the crash, the segment of m is there');
kill 'KILL', $victim;
# While the server restarts, psql may exit before it reads its query, and
# the harness then dies writing it (EPIPE): ask again until it answers.
my $back;
for (1 .. 600)
{
	$back = eval { $node->safe_psql('postgres', 'SELECT 1') };
	last if defined $back && $back eq '1';
	usleep(100_000);
}
defined $back && $back eq '1' or fail('the server comes back');
for my $s (@s, $app) { eval { $s->quit }; }
is($node->safe_psql('postgres', $shared), '', 'after the crash restart, nothing is shared');
is(segments(), 0, 'and no segment of the old copy is left');
is($node->safe_psql('postgres', $probe), $ref3, 'a new session completes as before');
my @t = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. 5;
$_->query_safe($probe) for @t;
is($node->safe_psql('postgres', $shared), "$m2 5 ready", 'and shares one copy again');
is(segments(), 1, 'in one segment');
$_->quit for @t;
$node->poll_query_until('postgres', $shared, '') or fail('the last session frees it');
is(segments(), 0, 'when the last session ends, the segment is freed');

# Every kind of the registry answers from a shared copy exactly as from a
# backend's own, those that keep more than factors and biases included
# (recurrent weights, samples side by side, a prior shape, lists beside
# factors), and an ensemble's fits side by side (multitask with fits 2,
# whose scoring reads its count of fits).  The kinds without factors ignore
# epochs.
my @kinds = split /\n/, $node->safe_psql('postgres', 'SELECT name FROM mtdpp_kinds() ORDER BY number');
for my $kind (@kinds, 'ensemble')
{
	my $epochs = ', epochs => 3';
	my $args = $kind eq 'ensemble'
	  ? q{kind => 'multitask', rank => 8, params => '{"fits": 2}'}
	  : "kind => '$kind'";
	$node->safe_psql('postgres',
		"SELECT * FROM mtdpp_train('k_$kind', 'train_lines', position_col => 'position', $args, seed => 1$epochs)");
	(my $probe_kind = $probe) =~ s/'m'\)/'k_$kind')/;
	my $own = own_copy_answer_of($probe_kind);
	my $session = $node->background_psql('postgres');
	is($session->query_safe($probe_kind), $own, "$kind: a shared copy answers as a backend's own");
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM mtdpp_shared_models() s JOIN mtdpp.models m USING (model_id) WHERE m.name = 'k_$kind'"),
		'1', "$kind: from one shared copy");
	$session->quit;
}

my $log = slurp_file($node->logfile);
my @crashes = $log =~ /terminated by signal (\d+)/g;
is_deeply(\@crashes, [9], 'the only backend that died is the one killed');
unlike($log, qr/PANIC|TRAP:/, 'no PANIC, no assertion');
done_testing();
