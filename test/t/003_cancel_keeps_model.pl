# Cancelling a training, by pg_cancel_backend or statement_timeout, leaves
# the model tables exactly as they were: the first version of the model,
# active, answering as before.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = mtdpp_node('cancel');
load_planted($node, baskets => 1000);

$node->safe_psql('postgres',
	"SELECT * FROM mtdpp_train('m', 'train_lines', epochs => 3, seed => 1, kind => 'multitask')");

my %probe = (
	models => q{SELECT string_agg(format('%s %s v%s %s active=%s', model_id, name, version, kind, active),
	                              '; ' ORDER BY model_id) FROM mtdpp.models},
	items => q{SELECT count(*) || ' ' || md5(string_agg(format('%s %s %s %s %s %s', model_id, item_id,
	                  popularity, bias, factors, task_factors), E'\n' ORDER BY model_id, item_id))
	           FROM mtdpp.items},
	complete => q{SELECT string_agg(item_id || ':' || score, ',' ORDER BY rank)
	              FROM mtdpp_complete('{1,2,3}', 5, 'm')},
	complete_default => q{SELECT string_agg(item_id || ':' || score, ',' ORDER BY rank)
	                      FROM mtdpp_complete('{11,12}', 5)},
);
my %before = map { ($_ => $node->safe_psql('postgres', $probe{$_})) } keys %probe;
like($before{models}, qr/^\d+ m v1 multitask active=t$/, 'one model, version 1, active');
like($before{complete}, qr/^(\d+:[-0-9.e]+,){4}\d+:[-0-9.e]+$/, 'the model completes a basket');

sub unchanged
{
	my ($how) = @_;
	for my $what (sort keys %probe)
	{
		is($node->safe_psql('postgres', $probe{$what}), $before{$what},
			"after $how: $what unchanged");
	}
	return;
}

# Long enough to be cancelled in its epochs: early stopping disabled; a
# rank high enough for the trainer to use its second thread.
my $long = q{SELECT * FROM mtdpp_train('m', 'train_lines', rank => 256, epochs => 100000, seed => 2, verbose => true,
                                       params => '{"patience": 100000}', kind => 'multitask')};

# the threads of a backend, from /proc (the tests run on the server's machine)
sub threads_of
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/status") or return -1;
	while (my $line = <$fh>)
	{
		return $1 if $line =~ /^Threads:\s+(\d+)/;
	}
	return -1;
}

# 1. pg_cancel_backend from another session, while the epochs run.
my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->set_query_timer_restart;
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
# The same session has used the model: it is cached there.
is($bg->query_safe($probe{complete}), $before{complete}, 'the training session answers first');
# (a threaded BLAS may keep threads of its own in every backend)
my $idle_threads = threads_of($pid);
$bg->{stdin} .= "$long;\n";
ok(pump_until($bg->{run}, $bg->{timeout}, \$bg->{stderr}, qr/NOTICE:.*epoch 2\b/),
	'the training reports its epochs');
like($bg->{stderr}, qr/NOTICE:\s+training \d+ items on 2 threads/, 'the training runs on two threads');
is(threads_of($pid), $idle_threads + 1, 'the training backend has its helper thread');
is($node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)"), 't', 'cancel sent');
# query() waits for everything sent before it, so it returns once the
# training has ended.
my ($one) = $bg->query('SELECT 1');
like($bg->{stderr}, qr/ERROR:\s+canceling statement due to user request/,
	'the training ends with the cancel error');
unlike($bg->{stderr}, qr/FATAL|PANIC|server closed the connection/, 'the backend survives');
is($one, '1', 'the session still works');
is(threads_of($pid), $idle_threads, 'the cancel stopped the helper thread');
$bg->{stderr} = '';
is($bg->query_safe($probe{complete}), $before{complete},
	'the cancelled session still answers from the first version');
unchanged('pg_cancel_backend');

# 2. statement_timeout.
my ($ret, $stdout, $stderr) = $node->psql('postgres', "SET statement_timeout = '3s'; $long");
isnt($ret, 0, 'the training fails');
like($stderr, qr/ERROR:\s+canceling statement due to statement timeout/,
	'the training ends with the statement timeout error');
unchanged('statement_timeout');

# 3. The same through the aggregate and mtdpp_save in one statement.
($ret, $stdout, $stderr) = $node->psql('postgres', q{
SET statement_timeout = '3s';
SELECT mtdpp_save('m', mtdpp_fit(order_id, item_id, position, '{"kind": "multitask", "epochs": 100000, "patience": 100000}'))
FROM train_lines});
like($stderr, qr/ERROR:\s+canceling statement due to statement timeout/,
	'mtdpp_fit is cancelled by statement_timeout');
unchanged('a cancelled mtdpp_fit');

# And a training that is let to finish does add version 2.
$node->safe_psql('postgres', "SELECT * FROM mtdpp_train('m', 'train_lines', epochs => 2, seed => 3, kind => 'multitask')");
like($node->safe_psql('postgres', $probe{models}),
	qr/^\d+ m v1 multitask active=f; \d+ m v2 multitask active=t$/,
	'a completed training adds version 2 and activates it');
is($bg->query_safe('SELECT count(*) FROM mtdpp.models'), '2', 'the first session sees it');

$bg->quit;
done_testing();
