# doc/hyperparameters.md's table lists every hyperparameter key that
# mtdpp_hyperparameters() knows, once each, in its order, and no other.
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
# every kind lists every key, with its own defaults
for my $kind ('hybrid', 'multitask', 'itemknn')
{
	my $keys = $node->safe_psql('postgres',
		qq{SELECT string_agg(key, ' ') FROM mtdpp_hyperparameters('$kind')});
	is(join(' ', @documented), $keys,
		"the table's keys are those of mtdpp_hyperparameters('$kind'), in its order");
}
$node->stop;
done_testing();
