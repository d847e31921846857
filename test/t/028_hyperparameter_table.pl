# doc/hyperparameters.md's table lists every hyperparameter key that
# mtdpp_hyperparameters(kind) lists for some kind, once each, in its order,
# and no other.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl";
use MtdppTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $doc = slurp_file("$FindBin::Bin/../../doc/hyperparameters.md");
my @documented = $doc =~ /^\| `([a-z_0-9]+)` \|/mg;
ok(@documented > 10, scalar(@documented) . ' keys in the table of doc/hyperparameters.md');

my $node = mtdpp_node('hyperparameters');
# each kind of the registry lists its keys in the table's order, and every
# key of the table is some kind's
my %listed;
for my $kind (split /\n/, $node->safe_psql('postgres', 'SELECT name FROM mtdpp_kinds() ORDER BY number'))
{
	my @keys = split / /, $node->safe_psql('postgres',
		qq{SELECT string_agg(key, ' ') FROM mtdpp_hyperparameters('$kind')});
	my %of_kind = map { $_ => 1 } @keys;
	$listed{$_} = 1 for @keys;
	is(join(' ', @keys), join(' ', grep { $of_kind{$_} } @documented),
		"the keys of mtdpp_hyperparameters('$kind') are in the table, in its order");
}
is(join(' ', grep { !$listed{$_} } @documented), '', 'every key of the table is the key of a kind');
$node->stop;
done_testing();
