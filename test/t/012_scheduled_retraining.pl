# Scheduled retraining with pg_cron (Debian's postgresql-15-cron): a job
# retrains the model every minute (the first run comes within a minute)
# and prunes old versions; a new version
# becomes active while another session keeps completing baskets, none of
# its calls failing.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
plan skip_all => 'pg_cron is not installed for this PostgreSQL (Debian 12 packages it, postgresql-15-cron, for 15 only)'
  unless -e "$pkglibdir/pg_cron.so";

my $node = mtdpp_node('cron',
	"shared_preload_libraries = 'pg_cron'",
	"cron.database_name = 'postgres'",
	'cron.use_background_workers = on',
	'max_worker_processes = 16');
load_planted($node, baskets => 600);
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_cron;
SELECT * FROM mtdpp_train('shop', 'train_lines', epochs => 2, seed => 1, kind => 'multitask');
CREATE TABLE answers (at timestamptz, version int, n int);
});

# a session completing baskets throughout, recording which version answered
my $client = $node->background_psql('postgres', on_error_stop => 0);
$client->query_until(qr/looping/, q{\echo looping
DO $$
BEGIN
  FOR i IN 1..100000 LOOP
    INSERT INTO answers
    SELECT clock_timestamp(), (SELECT version FROM mtdpp.models WHERE name = 'shop' AND active),
           (SELECT count(*) FROM mtdpp_complete(ARRAY[1 + i % 60], 5, 'shop'));
    COMMIT;
    EXIT WHEN (SELECT max(version) FROM mtdpp.models WHERE name = 'shop' AND active) >= 2
          AND i > 20;
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
});

# every minute: a new version from the current order lines, then keep two
$node->safe_psql('postgres', q{
SELECT cron.schedule('retrain shop', '* * * * *',
  $job$SELECT version FROM mtdpp_train('shop', 'train_lines', epochs => 2, seed => 7, kind => 'multitask');
       SELECT mtdpp_prune('shop', keep => 1)$job$)});

ok($node->poll_query_until('postgres',
		q{SELECT max(version) >= 2 FROM mtdpp.models WHERE name = 'shop' AND active}, 't'),
	'the scheduled job trained and activated a new version');
my ($one) = $client->query('SELECT 1');
is($client->{stderr}, '', 'the completing session saw no error');
is($one, '1', 'and is still connected');
my ($calls, $full, $versions) = split /\|/, $node->safe_psql('postgres',
	q{SELECT count(*), count(*) FILTER (WHERE n = 5), count(DISTINCT version) FROM answers});
cmp_ok($calls, '>', 10, "the session completed baskets throughout ($calls calls)");
is($full, $calls, 'every completion had its 5 rows');
cmp_ok($versions, '>=', 2, 'while different versions were active');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM cron.job_run_details WHERE status <> 'succeeded' AND status <> 'running'}),
	'0', 'no run of the job failed');
$node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM cron.job_run_details WHERE status = 'running'}, 't');
is($node->safe_psql('postgres', q{SELECT string_agg(version::text, ',') FROM mtdpp.models WHERE name = 'shop'}),
	'2', 'the old version was pruned');
$node->safe_psql('postgres', q{SELECT cron.unschedule('retrain shop')});
$client->quit;
done_testing();
