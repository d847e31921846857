# mtdpp: PGXS build.  BLAS/LAPACK come from the system (OpenBLAS when
# installed, through Debian's alternatives for libblas.so.3/liblapack.so.3).

EXTENSION = mtdpp
EXTVERSION = 0.6.0

MODULE_big = mtdpp
# every C file of src/, its folders and each kind's folder (a new kind's
# folder needs no line here), found beside this Makefile, built where make runs
top := $(dir $(firstword $(MAKEFILE_LIST)))
OBJS = $(patsubst $(top)%.c,%.o,$(sort $(wildcard $(top)src/*.c $(top)src/*/*.c $(top)src/kinds/*/*.c)))

# The install script of the current version and the update to it from the
# last release are assembled into sql/built/ from sql/mtdpp.sql and
# sql/mtdpp--$(EXTPREVIOUS)--$(EXTVERSION).sql, whose "\ir parts/x.sql" lines
# take in the definitions both need, each written once in sql/parts/
# (sql/README.md); the update scripts of earlier releases are found by name.
EXTPREVIOUS = 0.5.0
UPDATE = $(EXTENSION)--$(EXTPREVIOUS)--$(EXTVERSION).sql
DATA = $(filter-out sql/$(UPDATE),$(wildcard sql/$(EXTENSION)--*.sql))
DATA_built = sql/built/$(EXTENSION)--$(EXTVERSION).sql sql/built/$(UPDATE)
REGRESS = mtdpp_setup train complete diverse evaluate kinds ensemble hybrid rules poisson fm bayesian_lowrank gru bad_input models security validate limits negligible similar evaluate_at item_keys model_life conformance
REGRESS_OPTS = --inputdir=test --load-extension=$(EXTENSION)
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl
EXTRA_CLEAN = sql/built src/.built-for

# the version, for the module's magic block (PostgreSQL 18 shows it)
PG_CPPFLAGS = -DMTDPP_VERSION='"$(EXTVERSION)"' -I$(srcdir)/src

# warnings are errors in the test command (scripts/test passes COPT=-Werror),
# not for a user building with another compiler
PG_CFLAGS = -O3 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare
SHLIB_LINK = -llapacke -llapack -lblas -lm -lpthread

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# every object depends on the headers; the module's magic block on the version
$(OBJS): $(shell find $(srcdir)/src -name '*.h')
src/mtdpp.o: Makefile

# objects built for another PostgreSQL link but do not load: the installation
# they were built for, remembered, rebuilds them all when it changes
src/.built-for: FORCE
	@echo '$(PG_CONFIG) $(VERSION)' | cmp -s - $@ || echo '$(PG_CONFIG) $(VERSION)' >$@
$(OBJS) $(OBJS:.o=.bc): src/.built-for
.PHONY: FORCE

sql/built/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql $(wildcard sql/parts/*.sql)
	@mkdir -p sql/built
	$(srcdir)/scripts/sql-include $< >$@.tmp && mv $@.tmp $@
sql/built/$(UPDATE): sql/$(UPDATE) $(wildcard sql/parts/*.sql)
	@mkdir -p sql/built
	$(srcdir)/scripts/sql-include $< >$@.tmp && mv $@.tmp $@

# The PGXN release archive, mtdpp-<version>.zip: the files of the commit
# checked out (git archive), nothing generated.  test/pgxn/run builds and
# tests from it alone.
DIST = $(EXTENSION)-$(EXTVERSION)
dist:
	git archive --format=zip --prefix=$(DIST)/ -o $(DIST).zip HEAD
.PHONY: dist
