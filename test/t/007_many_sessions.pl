# Many sessions at once: eight sessions complete baskets in a loop (one
# transaction per call, so every call may see a new model) while another
# session retrains and re-activates the model twice.  No session fails;
# every answer has k rows, distinct, none of them a basket item; every
# answer is the answer of one of the three versions, and of the active one
# whenever the call started after that version's activation had committed;
# at the end every session agrees with a fresh session.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $n_sessions = 8;
my $min_calls = 200;    # per session, at least
my $k = 5;

my $node = mtdpp_node('sessions');
load_planted($node, baskets => 1000);
$node->safe_psql('postgres', q{
SELECT * FROM mtdpp_train('m', 'train_lines', epochs => 5, seed => 1, kind => 'multitask');
CREATE TABLE control (done boolean NOT NULL);
INSERT INTO control VALUES (false);
-- one row per call: when it started, what it asked, what it got
CREATE TABLE calls (session int, i int, model text, basket int[], answer text,
                    started timestamptz, finished timestamptz, PRIMARY KEY (session, i));
-- when each version became the active one (after its commit), and when the
-- next change began
CREATE TABLE windows (version int PRIMARY KEY, after_commit timestamptz, next_change timestamptz);
});

# Each session: calls in a loop, one transaction per call (COMMIT in DO; a
# transaction started inside a DO block gets its own now()),
# over baskets of 1 to 4 pseudo-random items (repeats allowed), with the
# model named or the default one; at least $min_calls calls, then until
# the trainer says it is done.
sub loop_sql
{
	my ($s) = @_;
	return sprintf(q{
DO $do$
DECLARE
  s constant int := %d;
  b int[];
  mdl text;
  t0 timestamptz;
  ans text;
  n int;
  n_distinct int;
  n_in_basket int;
  ranks text;
  i int := 0;
BEGIN
  LOOP
    i := i + 1;
    b := ARRAY(SELECT 1 + (hashint4(s * 1000003 + i * 7 + j) & 2147483647) %% 60
               FROM generate_series(1, 1 + i %% 4) AS j);
    mdl := CASE WHEN i %% 3 = 0 THEN NULL ELSE 'm' END;
    t0 := now();    -- this call's transaction began: it took the invalidations sent before
    SELECT string_agg(c.item_id || ':' || c.score, ',' ORDER BY c.rank), count(*),
           count(DISTINCT c.item_id), count(*) FILTER (WHERE c.item_id = ANY (b)),
           string_agg(c.rank::text, ',' ORDER BY c.rank)
      INTO ans, n, n_distinct, n_in_basket, ranks
      FROM mtdpp_complete(b, %d, mdl) AS c;
    IF n <> %d OR n_distinct <> n OR n_in_basket <> 0 OR ranks <> '%s' THEN
      RAISE EXCEPTION 'session %%, call %%: basket %% got %% (%% rows, %% distinct, %% in the basket, ranks %%)',
        s, i, b, ans, n, n_distinct, n_in_basket, ranks;
    END IF;
    INSERT INTO calls VALUES (s, i, mdl, b, ans, t0, clock_timestamp());
    COMMIT;
    EXIT WHEN i >= 20000
           OR (i >= %d AND (SELECT done FROM control));
  END LOOP;
END
$do$;
}, $s, $k, $k, join(',', 1 .. $k), $min_calls);
}

my @sessions;
for my $s (1 .. $n_sessions)
{
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	$bg->set_query_timer_restart;
	push @sessions, $bg;
}
my $trainer = $node->background_psql('postgres', on_error_stop => 0);
$trainer->set_query_timer_restart;

my $start = time;
for my $s (1 .. $n_sessions)
{
	my $bg = $sessions[ $s - 1 ];
	$bg->{stdin} .= loop_sql($s);
	$bg->{run}->pump_nb();
}

# Every session has made 20 calls since TIME (a timestamptz expression).
sub all_sessions_called_since
{
	my ($since) = @_;
	my $ok = $node->poll_query_until('postgres', qq{
SELECT count(*) = $n_sessions FROM (
  SELECT session FROM calls WHERE started > $since GROUP BY session HAVING count(*) >= 20) AS s});
	return $ok;
}

ok(all_sessions_called_since("'-infinity'"), 'the eight sessions are completing baskets');
$trainer->query_safe(q{INSERT INTO windows VALUES (1, '-infinity', NULL)});

# Version 2: trained without activation, then activated.
$trainer->query_safe(q{UPDATE windows SET next_change = clock_timestamp() WHERE version = 1});
$trainer->query_safe(
	q{SELECT * FROM mtdpp_train('m', 'train_lines', epochs => 5, seed => 2, activate => false, kind => 'multitask')});
is($trainer->query_safe(q{SELECT version FROM mtdpp_models WHERE active}), '1',
	'version 2 is trained, version 1 still active');
$trainer->query_safe(q{SELECT mtdpp_activate('m', 2)});
$trainer->query_safe(q{INSERT INTO windows VALUES (2, clock_timestamp(), NULL)});
ok(all_sessions_called_since(q{(SELECT after_commit FROM windows WHERE version = 2)}),
	'every session calls after version 2 is activated');

# Version 3: another kind, activated by its training.
$trainer->query_safe(q{UPDATE windows SET next_change = clock_timestamp() WHERE version = 2});
$trainer->query_safe(q{SELECT * FROM mtdpp_train('m', 'train_lines', kind => 'itemknn')});
$trainer->query_safe(q{INSERT INTO windows VALUES (3, clock_timestamp(), 'infinity')});
ok(all_sessions_called_since(q{(SELECT after_commit FROM windows WHERE version = 3)}),
	'every session calls after version 3 is activated');
$trainer->query_safe(q{UPDATE control SET done = true});

# Each session's loop ends; query() waits for it.
for my $s (1 .. $n_sessions)
{
	my $bg = $sessions[ $s - 1 ];
	my ($one) = $bg->query('SELECT 1');
	is($bg->{stderr}, '', "session $s: no error in its loop");
	is($one, '1', "session $s: still connected");
	$bg->{stderr} = '';
}
my $elapsed = time - $start;

my ($total, $least, $most) = split /\|/, $node->safe_psql('postgres',
	q{SELECT sum(n), min(n), max(n) FROM (SELECT session, count(*) AS n FROM calls GROUP BY session) AS s});
note sprintf('%d calls in %.1f s (%d to %d per session)', $total, $elapsed, $least, $most);
cmp_ok($least, '>=', $min_calls, "every session made at least $min_calls calls");
is($node->safe_psql('postgres', 'SELECT count(DISTINCT session) FROM calls'), $n_sessions,
	'calls from all eight sessions');

# Answers of each version, for every basket asked (the default model is m:
# it is the only model).
$node->safe_psql('postgres', q{
CREATE TABLE reference (version int, basket int[], answer text);
CREATE FUNCTION answers_of(v int) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM mtdpp_activate('m', v);
  INSERT INTO reference
  SELECT v, b.basket, (SELECT string_agg(c.item_id || ':' || c.score, ',' ORDER BY c.rank)
                       FROM mtdpp_complete(b.basket, 5, 'm') AS c)
  FROM (SELECT DISTINCT basket FROM calls) AS b;
END $f$;
});
# one statement per version: each sees the activation before it
$node->safe_psql('postgres', "SELECT answers_of($_)") for 1 .. 3;
$node->safe_psql('postgres', q{SELECT mtdpp_activate('m', 3)});

my $differ = $node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE a.answer <> b.answer), count(*) FILTER (WHERE b.answer <> c.answer), count(*)
FROM reference a JOIN reference b USING (basket) JOIN reference c USING (basket)
WHERE a.version = 1 AND b.version = 2 AND c.version = 3});
my ($d12, $d23, $nb) = split /\|/, $differ;
note "$nb distinct baskets; versions 1 and 2 differ on $d12, versions 2 and 3 on $d23";
cmp_ok($d12, '>', $nb / 2, 'versions 1 and 2 answer differently for most baskets');
cmp_ok($d23, '>', $nb / 2, 'versions 2 and 3 answer differently for most baskets');

is($node->safe_psql('postgres', q{
SELECT count(*) FROM calls c
WHERE NOT EXISTS (SELECT 1 FROM reference r WHERE r.basket = c.basket AND r.answer = c.answer)}),
	'0', 'every answer is the answer of one of the versions (no torn or mixed model)')
  or diag($node->safe_psql('postgres', q{
SELECT c.session, c.i, c.model, c.basket, c.answer, (SELECT string_agg(r.version || ' ' || r.answer, ' | ') FROM reference r WHERE r.basket = c.basket)
FROM calls c
WHERE NOT EXISTS (SELECT 1 FROM reference r WHERE r.basket = c.basket AND r.answer = c.answer)
ORDER BY c.session, c.i LIMIT 5}));

# A call that started after a version's activation had committed, and ended
# before the next change began, answers from that version.  (A call's
# statement takes its snapshot after its transaction began: one that began
# before the next change but was held up until that change had committed
# rightly answers from the next version.)
my $by_window = $node->safe_psql('postgres', q{
SELECT w.version, count(*), count(*) FILTER (WHERE r.answer = c.answer), count(DISTINCT c.session)
FROM windows w
JOIN calls c ON c.started > w.after_commit AND c.finished < w.next_change
JOIN reference r ON r.version = w.version AND r.basket = c.basket
GROUP BY w.version ORDER BY w.version});
for my $row (split /\n/, $by_window)
{
	my ($v, $calls, $right, $sessions) = split /\|/, $row;
	is($right, $calls, "the $calls calls made while version $v was active answer from version $v")
	  or diag($node->safe_psql('postgres', qq{
SELECT c.session, c.i, c.started, c.finished, (SELECT string_agg(r.version::text, ',') FROM reference r
                                                WHERE r.basket = c.basket AND r.answer = c.answer)
FROM windows w JOIN calls c ON c.started > w.after_commit AND c.finished < w.next_change
JOIN reference r ON r.version = w.version AND r.basket = c.basket
WHERE w.version = $v AND r.answer <> c.answer LIMIT 5}));
	is($sessions, $n_sessions, "all sessions called while version $v was active");
}
is(scalar(split /\n/, $by_window), 3, 'calls in each of the three windows');

# At the end, every session agrees with a fresh one, named model and default.
my $probe = q{
SELECT string_agg(format('%s %s %s', b.n, c.rank, c.item_id || ':' || c.score), ',' ORDER BY b.n, c.rank)
FROM (VALUES (1, '{1,2}'::int[], 'm'), (2, '{11,12,13}', 'm'), (3, '{21}', NULL), (4, '{31,45}', NULL),
             (5, '{}', 'm'), (6, '{59,60,1000}', NULL)) AS b(n, basket, model)
CROSS JOIN LATERAL mtdpp_complete(b.basket, 5, b.model) AS c};
my $fresh = $node->safe_psql('postgres', $probe);
like($fresh, qr/^1 1 \d+:/, 'a fresh session completes the probe baskets');
for my $s (1 .. $n_sessions)
{
	# (query, not query_safe: item 1000, unknown to the model, draws a NOTICE)
	is(scalar($sessions[ $s - 1 ]->query($probe)), $fresh, "session $s agrees with a fresh session");
}

$_->quit for @sessions;
$trainer->quit;
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP:/, 'no backend crashed');
cmp_ok($elapsed, '<', 60, sprintf('the sessions were done in %.1f s', $elapsed));
done_testing();
