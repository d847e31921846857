# A bounded cost for every kind, whatever the baskets: on a hostile corpus
# (one basket of 5,000 items, 50 of the same 1,500, one item repeated 1,000
# times, every item once more) with maintenance_work_mem at its default
# 64MB, each kind's training answers pg_cancel_backend within a second of
# its processor time (what it does past the cancel: the wall time grows
# with the machine's load, which CI's varies), and
# the backend's own memory (RssAnon) stays within maintenance_work_mem plus
# the constant doc/training.md documents.  Rules, whose counts grow as the
# cube of a basket's length, keeps its whole resident peak (VmHWM) within
# that bound too, also on the demo data with two copies of one 500-item
# basket added.  On a Zipf catalog of 300,000 items, item-kNN and rules
# stay within the bound too, and keys of 100 kB are refused within it.  On
# a dense corpus (1,000-item baskets), a cancel ends item-kNN, EASE and
# the default kind within a second of processor time beside a busy loop.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

# what a training may hold beside maintenance_work_mem (doc/training.md)
my $constant_mb = 32;
my $cancel_after = 2.0;

my $node = mtdpp_node('bounded_cost');
is($node->safe_psql('postgres', 'SHOW maintenance_work_mem'), '64MB',
	'maintenance_work_mem is at its default');

my $data = "$FindBin::Bin/../../data";
$node->safe_psql('postgres', slurp_file("$data/load.sql"),
	extra_params => [ '-v', "dir=$data/amazon_diaper" ]);
$node->safe_psql('postgres', q{
-- the demo data and two orders of the same 500 items, of ids no order has
CREATE TABLE basket500 AS
SELECT order_id, item_id, position FROM orders
UNION ALL
SELECT o, 1000000 + i, i FROM generate_series(-1, 0) o, generate_series(1, 500) i;

CREATE TABLE hostile AS
SELECT order_id, item_id, (row_number() OVER (PARTITION BY order_id))::int AS position
FROM (
    SELECT 1::bigint AS order_id, i AS item_id FROM generate_series(1, 5000) i
    UNION ALL
    SELECT b, 3000 + i FROM generate_series(2, 51) b, generate_series(1, 1500) i
    UNION ALL
    SELECT 52, 1 FROM generate_series(1, 1000)
    UNION ALL
    SELECT 53 + (i - 1) / 2, i FROM generate_series(1, 5000) i
) lines;
ANALYZE basket500;
ANALYZE hostile;
});
is($node->safe_psql('postgres',
	q{SELECT count(*) || ' ' || max(n) FROM (SELECT count(*) AS n FROM hostile GROUP BY order_id) b}),
	'2552 5000', 'the hostile corpus: 2,552 baskets, the longest of 5,000 lines');

# a field of /proc/PID/status, in kB (-1 if it cannot be read)
sub status_kb
{
	my ($pid, $field) = @_;
	open(my $fh, '<', "/proc/$pid/status") or return -1;
	while (my $line = <$fh>)
	{
		return $1 if $line =~ /^$field:\s+(\d+)\s+kB/;
	}
	return -1;
}

# Runs SQL in a session of its own, cancels it after AFTER seconds if it
# still runs (never if AFTER is undefined); returns whether it was
# cancelled, the processor seconds the backend spent from the cancel to its
# end, the wall seconds from the cancel to its end, the backend's peak
# resident kB (VmHWM, reset before SQL: its code, the shared buffers it
# touched, reading the source and writing the model, and its own memory),
# the peak of its own memory (RssAnon, read every 10 ms) and its messages.
sub cancelled_run
{
	my ($sql, $after) = @_;
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $bg->query_safe('SELECT pg_backend_pid()');
	my $probe = "SELECT state = 'active' FROM pg_stat_activity WHERE pid = $pid";
	my ($cancelled, $cpu_after, $wall, $own) = (0, 0, 0, 0);
	my $poll = sub {
		my ($until) = @_;
		my $next_probe = 0;
		while (time < $until)
		{
			my $anon = status_kb($pid, 'RssAnon');
			$own = $anon if $anon > $own;
			if (time >= $next_probe)
			{
				return 1 if $node->safe_psql('postgres', $probe) ne 't';
				$next_probe = time + 0.2;
			}
			sleep(0.01);
		}
		return 0;
	};

	# the peak of this training, not of the session so far
	if (open(my $clear, '>', "/proc/$pid/clear_refs")) { print $clear "5\n"; close($clear); }
	$bg->{stderr} = '';
	$bg->{stdin} .= "$sql;\n";
	$bg->{run}->pump_nb;
	my $start = time;
	my $ended = $poll->(defined $after ? $start + $after : $start + 600);
	if (!$ended && defined $after)
	{
		my $sent = time;
		my $cpu = backend_cpu_seconds($pid);
		$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
		$poll->($sent + 10);
		# query() waits for what was sent before it: the training's end
		$bg->query('SELECT 1');
		$wall = time - $sent;
		$cpu_after = backend_cpu_seconds($pid) - $cpu;
		$cancelled = 1;
	}
	else
	{
		$bg->query('SELECT 1');
	}
	my $peak = status_kb($pid, 'VmHWM');
	my $messages = $bg->{stderr};
	$bg->quit;
	return ($cancelled, $cpu_after, $peak, $own, $messages, $wall);
}

# A cancel ends a training within a second of the backend's processor time
# (its own work past the cancel, which a loaded machine does not lengthen),
# and within 10 s of wall time however loaded the machine is.
sub cancel_ends_it
{
	my ($label, $cpu_after, $wall) = @_;
	cmp_ok($cpu_after, '<', 1.0, "$label: a cancel after ${cancel_after} s ends it within 1 s of its processor time");
	cmp_ok($wall, '<', 10, "$label: and within 10 s of wall time");
}

# Each kind of the registry with its defaults (with positions where it
# learns from the order items were added), and a choice of kinds that train
# by epochs also kept running past the cancel (a small rank, epochs without
# early stopping).
my $long = q{rank => 16, epochs => 100000, params => '{"patience": 100000}'};
my $gru = q{position_col => 'position'};
my @runs = map { my ($kind, $ordered) = split /\|/; [ $kind, '', $ordered eq 't' ? $gru : '' ] }
  split /\n/, $node->safe_psql('postgres', q{SELECT name, 'add_order' = ANY (traits) FROM mtdpp_kinds() ORDER BY number});
push @runs,
  [ 'fm', ' (long)', $long ],
  [ 'bayesian_lowrank', ' (long)', $long ],
  [ 'gru', ' (long)', "$gru, rank => 16, epochs => 300, params => '{\"patience\": 300}'" ],
  [ 'multitask', ' (long)', $long ],
  [ 'hybrid', ' (long)', $long ];

for my $run (@runs)
{
	my ($kind, $long_run, $args) = @$run;
	my $label = $kind . $long_run;
	my $sql = "SELECT * FROM mtdpp_train('bounded', 'hostile', kind => '$kind'"
	  . ($args eq '' ? '' : ", $args") . ')';
	my ($cancelled, $cpu_after, $peak, $own, $messages, $wall) = cancelled_run($sql, $cancel_after);
	my ($first) = $messages =~ /((?:ERROR|NOTICE):[^\n]*)/;
	note(sprintf('%-24s %s, peak %d MB, its own memory %d MB; %s', $label,
		$cancelled ? sprintf('cancelled, ended %.2f s later after %.2f s of processor', $wall, $cpu_after) : 'ended before the cancel',
		$peak / 1024, $own / 1024, $first // 'trained'));
	cmp_ok($own, '<', (64 + $constant_mb) * 1024,
		"$label on the hostile corpus: the backend's own memory stays within maintenance_work_mem + $constant_mb MB");
	if (!$cancelled)
	{
		pass("$label on the hostile corpus: trained or refused within ${cancel_after} s, before the cancel");
		next;
	}
	# (a training that ends as the cancel is sent, a kind that fits in
	# about 2 s or refuses what cannot fit, ends without the cancel's
	# error: what the cancel cost still counts)
	like($messages, qr/canceling statement due to user request|more than maintenance_work_mem|^(?![\s\S]*ERROR)/,
		"$label: the cancel ends it, or it had ended (trained, or refused naming maintenance_work_mem)");
	cancel_ends_it("$label on the hostile corpus", $cpu_after, $wall);
	if ($kind eq 'rules')
	{
		cmp_ok($peak, '<', (64 + $constant_mb) * 1024,
			"rules on the hostile corpus: peak resident memory within maintenance_work_mem + $constant_mb MB");
	}
}

# rules on the demo data with the 500-item basket twice (cancelled after
# 2 s if it runs that long), and on the hostile corpus to its end: within
# the memory bound, and the search says where it had to start.
for my $table ('basket500', 'hostile')
{
	my $after = $table eq 'basket500' ? $cancel_after : undef;
	my ($cancelled, $cpu_after, $peak, $own, $messages, $wall) = cancelled_run(
		"SELECT * FROM mtdpp_train('bounded', '$table', kind => 'rules')", $after);
	my ($first) = $messages =~ /((?:ERROR|NOTICE):[^\n]*)/;
	note(sprintf('rules on %s: %s, peak %d MB, its own memory %d MB; %s', $table,
		$cancelled ? sprintf('cancelled, ended %.2f s later after %.2f s of processor', $wall, $cpu_after) : 'ended',
		$peak / 1024, $own / 1024, $first // 'trained'));
	ok(!$cancelled || ($cpu_after < 1.0 && $wall < 10),
		"rules on $table: trained within ${cancel_after} s, or a cancel ends it within 1 s of its processor time");
	# (cancelled, as on a loaded machine: what the cancel costs is what is checked above)
	like($messages, qr/ERROR:\s+association rules at a support of \d+ baskets need more than \d+ kB|^(?!.*ERROR)|canceling statement due to user request/s,
		"rules on $table: trains, or refuses with the memory it would need");
	cmp_ok($peak, '<', (64 + $constant_mb) * 1024,
		"rules on $table: peak resident memory within maintenance_work_mem + $constant_mb MB");
	like($messages, qr/NOTICE:\s+association rules: the search starts from min_support \S+ and max_antecedent \d|ERROR:\s+association rules|canceling statement due to user request/,
		"rules on $table: a NOTICE says where the search had to start, or an error what it would need");
}

# A Zipf catalog of 300,000 items: 2,000,000 lines drawn with the
# popularity of an item falling as one over its rank (207,000 of them
# drawn), and every item once more in baskets of two.  item-kNN keeps
# 300,000 lists and rules counts their pairs: the baskets, the counting's
# scratch and the lists, held twice at the end, stay within the bound.
# Rules' search would go on for minutes; its first 20 s hold its pair pass
# and its first minings, where its memory peaks.
$node->safe_psql('postgres', q{
SELECT setseed(0.5);
CREATE TABLE zipf AS
SELECT (g / 5)::bigint AS order_id, least(300000, floor(300000 ^ random()))::int AS item_id
FROM generate_series(0, 1999999) g
UNION ALL
SELECT 1000000 + (i - 1) / 2, i FROM generate_series(1, 300000) i;
ANALYZE zipf;
});
is($node->safe_psql('postgres', 'SELECT count(DISTINCT item_id) FROM zipf'), '300000',
	'the Zipf catalog: 300,000 items');
for my $run ([ 'itemknn', 120 ], [ 'rules', 20 ])
{
	my ($kind, $after) = @$run;
	my ($cancelled, $cpu_after, $peak, $own, $messages, $wall) = cancelled_run(
		"SELECT * FROM mtdpp_train('bounded', 'zipf', kind => '$kind')", $after);
	my ($first) = $messages =~ /((?:ERROR|NOTICE):[^\n]*)/;
	note(sprintf('%s on the Zipf catalog: %s, peak %d MB, its own memory %d MB; %s', $kind,
		$cancelled ? sprintf('cancelled after %d s, ended %.2f s later after %.2f s of processor', $after, $wall, $cpu_after) : 'ended',
		$peak / 1024, $own / 1024, $first // 'trained'));
	cmp_ok($own, '<', (64 + $constant_mb) * 1024,
		"$kind on the Zipf catalog: the backend's own memory stays within maintenance_work_mem + $constant_mb MB");
	unlike($messages, qr/ERROR:(?!\s+canceling statement)/, "$kind on the Zipf catalog: trains, or runs until the cancel");
}

# Keys of 100 kB: 1,000 of them (100 MB) are refused before they are all
# held, naming their size, and the backend's memory stays within the bound.
$node->safe_psql('postgres', q{
CREATE TABLE long_keys AS
SELECT (i % 500)::bigint AS order_id, repeat(md5(i::text), 3125) AS sku FROM generate_series(1, 1000) i;
});
{
	my ($cancelled, $cpu_after, $peak, $own, $messages, $wall) = cancelled_run(
		"SELECT * FROM mtdpp_train('bounded_keys', 'long_keys', item_col => 'sku', kind => 'popularity')", 60);
	my ($first) = $messages =~ /((?:ERROR|NOTICE):[^\n]*)/;
	note(sprintf('1,000 keys of 100 kB: %s, peak %d MB, its own memory %d MB; %s',
		$cancelled ? 'cancelled' : 'ended', $peak / 1024, $own / 1024, $first // 'trained'));
	like($messages, qr/ERROR:\s+the distinct keys of item column "sku" take \d+ kB, held twice while training: more than maintenance_work_mem \(65536 kB\)/,
		'keys of 100 kB: refused, naming their size');
	cmp_ok($own, '<', (64 + $constant_mb) * 1024,
		"keys of 100 kB: the backend's own memory stays within maintenance_work_mem + $constant_mb MB");
}

# A dense corpus: 1,000 baskets of 1,000 of 2,000 items, a million pairs
# counted per item.  Counting is split into rounds bounded by the pairs
# they count, with an interrupt check between two, and EASE's Gram matrix
# is checked by the lines it counts, so that a cancel ends item-kNN, EASE
# and the default kind within a second of its processor time even while a busy process beside
# the server takes a core, as CI's load does.
$node->safe_psql('postgres', q{
CREATE TABLE dense AS
SELECT b::bigint AS order_id, 1 + (i * 37 + b * 101) % 2000 AS item_id
FROM generate_series(1, 1000) b, generate_series(1, 1000) i;
ANALYZE dense;
});
my $busy = fork();
die "fork: $!" unless defined $busy;
if ($busy == 0)
{
	# a busy loop, at most a minute
	my $until = time + 60;
	while (time < $until) { }
	exit 0;
}
# a choice of kinds: those whose counting the dense corpus makes long
for my $kind ('itemknn', 'hybrid', 'ease')
{
	my ($cancelled, $cpu_after, $peak, $own, $messages, $wall) = cancelled_run(
		"SELECT * FROM mtdpp_train('bounded', 'dense', kind => '$kind')", $cancel_after);
	note(sprintf('%s on the dense corpus beside a busy loop: %s, its own memory %d MB', $kind,
		$cancelled ? sprintf('cancelled, ended %.2f s later after %.2f s of processor', $wall, $cpu_after) : 'ended before the cancel',
		$own / 1024));
	cancel_ends_it("$kind on the dense corpus beside a busy loop", $cpu_after, $wall);
}
kill 'KILL', $busy;
waitpid($busy, 0);

$node->stop;
done_testing();
