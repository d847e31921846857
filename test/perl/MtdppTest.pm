# Helpers shared by the TAP tests of test/t/.
package MtdppTest;

use strict;
use warnings;
use Exporter 'import';
use File::Basename qw(dirname);
use File::Spec;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(mtdpp_node load_planted backend_cpu_seconds);

my $fixtures = File::Spec->catdir(dirname(__FILE__), '..', 'fixtures');

# On PostgreSQL 17 the tests run with PostgreSQL 18's TAP modules (17's
# package has none: scripts/test), whose init writes a setting new in 18,
# autovacuum_worker_slots, for nodes that allow streaming; an older server
# refuses to start with it.
{
	no warnings 'redefine';
	my $init = \&PostgreSQL::Test::Cluster::init;
	*PostgreSQL::Test::Cluster::init = sub {
		my ($node) = @_;
		$init->(@_);
		$node->adjust_conf('postgresql.conf', 'autovacuum_worker_slots', undef)
		  if $node->pg_version < 18;
		return;
	};
}

# A started node with the extension created in database postgres.  Extra
# arguments are lines appended to postgresql.conf.  With MTDPP_TEST_PRELOAD
# set, the node preloads mtdpp (its backends share one copy of each model)
# unless a line sets shared_preload_libraries itself.
sub mtdpp_node
{
	my ($name, @conf) = @_;
	unshift @conf, "shared_preload_libraries = 'mtdpp'" if $ENV{MTDPP_TEST_PRELOAD};
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', join("\n", @conf)) if @conf;
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION mtdpp');
	return $node;
}

# Loads test/fixtures/planted.sql; named arguments are its psql variables
# (baskets, seed), plus dbname (default postgres).
sub load_planted
{
	my ($node, %vars) = @_;
	my $dbname = delete $vars{dbname} // 'postgres';
	my $sql = slurp_file(File::Spec->catfile($fixtures, 'planted.sql'));
	$node->safe_psql($dbname, $sql,
		extra_params => [ map { ('-v', "$_=$vars{$_}") } sort keys %vars ]);
	return;
}

# The processor seconds a backend has used, all its threads (-1 if they
# cannot be read).  What a statement costs is counted by the processor time
# the backend spends on it, which does not grow with the machine's load as
# its wall time does.
sub backend_cpu_seconds
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/stat") or return -1;
	my $stat = <$fh>;
	close($fh);
	# the fields after the command's name, which ends at the last ')'
	my @f = split ' ', substr($stat, rindex($stat, ')') + 2);
	return ($f[11] + $f[12]) / POSIX::sysconf(POSIX::_SC_CLK_TCK);
}

1;
