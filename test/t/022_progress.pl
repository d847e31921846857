# mtdpp_progress: a second session watches a training's epochs go by; the
# view is empty once the training ends, whether it completes, is cancelled,
# fails inside a subtransaction or its backend is killed (kill -9: the
# postmaster's crash restart starts shared memory afresh).  Details are for
# the roles that may see the session, as in pg_stat_activity.  Every kind
# that trains by epochs or passes reports them.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = mtdpp_node('progress', "shared_preload_libraries = 'mtdpp'", 'restart_after_crash = on');
load_planted($node, baskets => 8000);
is($node->safe_psql('postgres', 'SELECT mtdpp_progress_available()'), 't', 'the server reports trainings');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mtdpp_progress'), '0', 'no training, no row');

# A training of about ten seconds: epochs of most of a second (rank 128 on
# the training baskets of 8,000), early stopping disabled.
my $watched = q{SELECT * FROM mtdpp_train('watched', 'train_lines', kind => 'multitask', rank => 128, epochs => 12, seed => 2,
                                          params => '{"patience": 100}')};
# Runs for as long as it is let.
my $long = q{SELECT * FROM mtdpp_train('long', 'train_lines', kind => 'multitask', rank => 64, epochs => 100000, seed => 2,
                                       params => '{"patience": 100000}')};

# One session watches, so that a poll costs a query, not a new psql (made
# again after the crash restart below).
my $watcher;

# Polls the view every 0.1 s while it shows PID's training, until it has
# seen EPOCHS distinct epochs (or 120 s pass); returns the epochs seen, in
# the order seen, and the last row shown (NULL shown as nothing).
sub watch_epochs
{
	my ($pid, $epochs) = @_;
	my (@seen, $row, $last);
	my $deadline = time() + 120;
	my $started = 0;
	$watcher //= $node->background_psql('postgres');
	while (time() < $deadline && @seen < $epochs)
	{
		$row = $watcher->query_safe(
			"SELECT format('%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s', model, kind, phase, rank, epoch, max_epochs, validation_mpr IS NOT NULL, baskets, items, seconds > 0, seconds_left >= 0) FROM mtdpp_progress WHERE pid = $pid");
		last if $row eq '' && $started;
		if ($row ne '')
		{
			$started = 1;
			$last = $row;
			my @f = split /\|/, $row;
			push @seen, $f[4] if @f > 4 && $f[4] ne '' && $f[4] > 0 && (!@seen || $seen[-1] != $f[4]);
		}
		usleep(100_000);
	}
	return (\@seen, $last);
}

# three epochs or more seen, each later than the one before (a loaded
# machine may run an epoch between two polls)
sub three_advancing
{
	my @s = @_;
	return 0 if @s < 3;
	for my $i (1 .. $#s)
	{
		return 0 if $s[$i] <= $s[$i - 1];
	}
	return 1;
}

# 1. A training watched from another session until it ends.
my $bg = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->{stdin} .= "$watched;\n";
$bg->{run}->pump_nb;
my ($seen, $row) = watch_epochs($pid, 1000);
note("epochs seen: @$seen");
ok(three_advancing(@$seen), 'a second session sees three epochs or more go by, in order');
is_deeply($seen, [ sort { $a <=> $b } @$seen ], 'the epoch count rises');
like($row, qr/^watched\|multitask\|(training epochs\|128\|\d+\|12\|t\|\d+\|60\|t\|t|saving\|\|\|\|f\|\d+\|60\|t\|)$/,
	'the row names the model, kind, phase, rank, epochs, validation, baskets, items and times');
my ($result) = $bg->query('SELECT 1');
is($bg->{stderr}, '', 'the training completed');
is($node->safe_psql('postgres', 'SELECT count(*) FROM mtdpp_progress'), '0', 'no row after a completed training');

# 2. A training cancelled from another session; who sees what meanwhile.
$bg->{stdin} .= "$long;\n";
$bg->{run}->pump_nb;
($seen) = watch_epochs($pid, 3);
cmp_ok(scalar(@$seen), '>=', 3, 'the long training is seen');
is($node->safe_psql('postgres', "SELECT count(*) FROM mtdpp_progress p JOIN pg_stat_activity a USING (pid) WHERE a.query LIKE '%''long''%'"),
	'1', 'the row joins pg_stat_activity');

# a role that may not see the session sees the training, not its details;
# pg_read_all_stats sees them
$node->safe_psql('postgres', 'CREATE ROLE progress_nobody LOGIN; CREATE ROLE progress_monitor LOGIN IN ROLE pg_read_all_stats');
is($node->safe_psql('postgres', "SELECT concat_ws('|', pid = $pid, datname, model IS NULL, phase IS NULL) FROM mtdpp_progress",
		extra_params => [ '-U', 'progress_nobody' ]),
	't|postgres|t|t', 'another role sees the pid and database only');
is($node->safe_psql('postgres', "SELECT model FROM mtdpp_progress", extra_params => [ '-U', 'progress_monitor' ]),
	'long', 'pg_read_all_stats sees the details');

is($node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)"), 't', 'cancel sent');
my ($one) = $bg->query('SELECT 1');
like($bg->{stderr}, qr/canceling statement due to user request/, 'the training is cancelled');
$bg->{stderr} = '';
is($node->safe_psql('postgres', 'SELECT count(*) FROM mtdpp_progress'), '0', 'no row after the cancel');

# 3. An error caught in a subtransaction: the row goes with it, while the
# session goes on.
is($bg->query(q{DO $$
BEGIN
  BEGIN
    SET LOCAL maintenance_work_mem = '1MB';
    PERFORM mtdpp_train('too_big', 'train_lines', kind => 'multitask', rank => 1000, epochs => 1);
  EXCEPTION WHEN program_limit_exceeded THEN
    RAISE NOTICE 'caught: %', SQLERRM;
  END;
  IF (SELECT count(*) FROM mtdpp_progress WHERE pid = pg_backend_pid()) > 0 THEN
    RAISE EXCEPTION 'a row is left after the error';
  END IF;
END $$;
SELECT 'ok'}), 'ok', 'no row left by a training that failed in a subtransaction');
like($bg->{stderr}, qr/NOTICE:\s+caught:/, 'the training failed');
$bg->{stderr} = '';

# 4. The aggregate called directly reports too, without a model name, and
# leaves no row.
$bg->{stdin} .= q{SELECT mtdpp_save('direct', mtdpp_fit(order_id, item_id, position, '{"kind": "multitask", "epochs": 100000, "patience": 100000, "rank": 64}')) FROM train_lines;} . "\n";
$bg->{run}->pump_nb;
($seen, $row) = watch_epochs($pid, 2);
like($row, qr/^\|multitask\|training epochs\|64\|/, 'mtdpp_fit called directly: no model name, its kind and phase');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($one) = $bg->query('SELECT 1');
$bg->{stderr} = '';
is($node->safe_psql('postgres', 'SELECT count(*) FROM mtdpp_progress'), '0', 'no row after the aggregate is cancelled');
$bg->quit;

# 5. kill -9 of the training backend: the server restarts, the view is empty.
$bg = $node->background_psql('postgres', on_error_stop => 0);
$pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->{stdin} .= "$long;\n";
$bg->{run}->pump_nb;
($seen) = watch_epochs($pid, 1);
cmp_ok(scalar(@$seen), '>=', 1, 'the second training is seen');
kill 'KILL', $pid;
eval { $bg->quit };
eval { $watcher->quit };
undef $watcher;
my $back = 0;
for (1 .. 600)
{
	my ($ret, $out) = $node->psql('postgres', 'SELECT count(*) FROM mtdpp_progress');
	if ($ret == 0 && $out eq '0') { $back = 1; last; }
	usleep(100_000);
}
ok($back, 'after the crash restart the view is empty');
ok($node->log_contains('terminated by signal 9'), 'the backend was killed');

# 6. The other kinds' fits report their epochs too: poisson's passes, the
# Bayesian low-rank DPP's Langevin epochs after its mode's, the GRU's and
# the factorization machine's epochs.  Each is watched, then cancelled.
my %runs = (
	poisson => q{kind => 'poisson', rank => 8, epochs => 5000, params => '{"c": 1}'},
	bayesian_lowrank => q{kind => 'bayesian_lowrank', rank => 8, epochs => 2,
	                      params => '{"burn_in": 1000, "step_size": 0.0001}'},
	gru => q{kind => 'gru', position_col => 'position', rank => 16, epochs => 1000,
	         params => '{"patience": 100000, "learning_rate": 0.05}'},
	fm => q{kind => 'fm', rank => 16, epochs => 100000, params => '{"patience": 100000}'});
for my $kind (sort keys %runs)
{
	$bg = $node->background_psql('postgres', on_error_stop => 0);
	$pid = $bg->query_safe('SELECT pg_backend_pid()');
	$bg->{stdin} .= "SELECT * FROM mtdpp_train('$kind', 'train_lines', seed => 2, $runs{$kind});\n";
	$bg->{run}->pump_nb;
	($seen, $row) = watch_epochs($pid, 3);
	note("$kind: epochs seen: @$seen; last row $row");
	cmp_ok(scalar(@$seen), '>=', 3, "$kind: a second session sees its epochs go by");
	is_deeply($seen, [ sort { $a <=> $b } @$seen ], "$kind: the epoch count rises");
	my @f = split /\|/, $row;
	ok($f[0] eq $kind && $f[1] eq $kind && $f[2] eq 'training epochs' && $f[4] <= $f[5],
		"$kind: the row names the model, its kind, the phase and epoch of max_epochs");
	cmp_ok($f[5], '>', 1000, 'the Langevin chain\'s epochs are reported (burn-in 1000)')
	  if $kind eq 'bayesian_lowrank';
	is($node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)"), 't', "$kind: cancel sent");
	($one) = $bg->query('SELECT 1');
	$bg->quit;
	is($node->safe_psql('postgres', 'SELECT count(*) FROM mtdpp_progress'), '0', "$kind: no row after the cancel");
}

$watcher->quit if $watcher;
done_testing();
