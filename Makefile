# mtdpp: PGXS build.  BLAS/LAPACK come from the system (OpenBLAS when
# installed, through Debian's alternatives for libblas.so.3/liblapack.so.3).

EXTENSION = mtdpp
EXTVERSION = 0.5.0

MODULE_big = mtdpp
OBJS = \
	src/aggregate.o \
	src/cache.o \
	src/complete.o \
	src/cooccurrence.o \
	src/diverse.o \
	src/ease_exact.o \
	src/ease_neighborhood.o \
	src/evaluate.o \
	src/fit.o \
	src/fit_check.o \
	src/fit_ensemble.o \
	src/fit_epochs.o \
	src/fit_examples.o \
	src/fit_fm.o \
	src/fit_loss.o \
	src/fit_update.o \
	src/gru_fit.o \
	src/gru_unit.o \
	src/helper_thread.o \
	src/item_args.o \
	src/item_keys.o \
	src/hybrid_weights.o \
	src/kernel.o \
	src/kind_ease.o \
	src/kind_fm.o \
	src/kind_gru.o \
	src/kind_hybrid.o \
	src/kind_itemknn.o \
	src/kind_list.o \
	src/kind_multitask.o \
	src/kind_popularity.o \
	src/kind_rules.o \
	src/kind_bayesian_lowrank.o \
	src/bayes_sgld.o \
	src/kind_poisson.o \
	src/kind_single.o \
	src/kinds.o \
	src/linalg.o \
	src/linalg_fixed.o \
	src/lines.o \
	src/lines_baskets.o \
	src/lines_run.o \
	src/model.o \
	src/model_check.o \
	src/model_read.o \
	src/mtdpp.o \
	src/params.o \
	src/params_capacity.o \
	src/params_warm.o \
	src/poisson_vi.o \
	src/rules_mine.o \
	src/rules_sql.o \
	src/progress.o \
	src/shared_models.o \
	src/shown.o \
	src/similar.o \
	src/similarity.o \
	src/store.o \
	src/topk.o \
	src/train_sql.o \
	src/validation_slice.o

# the install script of the current version is built from sql/mtdpp.sql;
# the scripts of earlier releases and every upgrade script are found by name
DATA = $(filter-out $(DATA_built),$(wildcard sql/$(EXTENSION)--*.sql))
DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
REGRESS = mtdpp_setup train complete diverse evaluate kinds ensemble hybrid rules poisson fm bayesian_lowrank gru bad_input models security validate limits negligible similar evaluate_at item_keys
REGRESS_OPTS = --inputdir=test --load-extension=$(EXTENSION)
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl
EXTRA_CLEAN = sql/$(EXTENSION)--$(EXTVERSION).sql src/.built-for

# the version, for the module's magic block (PostgreSQL 18 shows it)
PG_CPPFLAGS = -DMTDPP_VERSION='"$(EXTVERSION)"'

# warnings are errors in the test command (scripts/test passes COPT=-Werror),
# not for a user building with another compiler
PG_CFLAGS = -O3 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare
SHLIB_LINK = -llapacke -llapack -lblas -lm -lpthread

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# every object depends on the shared header; the order lines on theirs;
# the module's magic block on the version
$(OBJS): src/*.h
src/mtdpp.o: Makefile
src/aggregate.o src/lines.o src/lines_run.o src/lines_baskets.o: src/lines.h src/lines_int.h src/radix_sort.h

# objects built for another PostgreSQL link but do not load: the installation
# they were built for, remembered, rebuilds them all when it changes
src/.built-for: FORCE
	@echo '$(PG_CONFIG) $(VERSION)' | cmp -s - $@ || echo '$(PG_CONFIG) $(VERSION)' >$@
$(OBJS) $(OBJS:.o=.bc): src/.built-for
.PHONY: FORCE

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql
	cp $< $@

# The PGXN release archive, mtdpp-<version>.zip: the files of the commit
# checked out (git archive), nothing generated.  test/pgxn/run builds and
# tests from it alone.
DIST = $(EXTENSION)-$(EXTVERSION)
dist:
	git archive --format=zip --prefix=$(DIST)/ -o $(DIST).zip HEAD
.PHONY: dist
