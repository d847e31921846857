# mtdpp: PGXS build.  BLAS/LAPACK come from the system (OpenBLAS when
# installed, through Debian's alternatives for libblas.so.3/liblapack.so.3).

EXTENSION = mtdpp
EXTVERSION = 0.5.0

MODULE_big = mtdpp
OBJS = \
	src/fit/fit.o \
	src/fit/fit_bilinear.o \
	src/fit/params_capacity.o \
	src/fit/fit_ensemble.o \
	src/fit/fit_epochs.o \
	src/fit/fit_examples.o \
	src/fit/fit_loss.o \
	src/fit/fit_update.o \
	src/fit/validation_slice.o \
	src/kinds/bayesian_lowrank/bayes_sgld.o \
	src/kinds/bayesian_lowrank/bayesian_lowrank.o \
	src/kinds/cooccurrence.o \
	src/kinds/ease/ease.o \
	src/kinds/ease/ease_exact.o \
	src/kinds/ease/ease_neighborhood.o \
	src/kinds/fm/fm.o \
	src/kinds/gru/gru.o \
	src/kinds/gru/gru_fit.o \
	src/kinds/gru/gru_unit.o \
	src/kinds/hybrid/hybrid.o \
	src/kinds/hybrid/hybrid_weights.o \
	src/kinds/itemknn/itemknn.o \
	src/model/kinds.o \
	src/kinds/list.o \
	src/kinds/logistic/logistic.o \
	src/kinds/lowrank/lowrank.o \
	src/kinds/multitask/gradient_check.o \
	src/kinds/multitask/multitask.o \
	src/kinds/multitask_nobias/multitask_nobias.o \
	src/kinds/poisson/poisson.o \
	src/kinds/poisson/poisson_vi.o \
	src/kinds/popularity/popularity.o \
	src/kinds/rules/rules.o \
	src/kinds/rules/rules_mine.o \
	src/kinds/rules/rules_sql.o \
	src/model/model.o \
	src/model/model_validate.o \
	src/mtdpp.o \
	src/numeric/helper_thread.o \
	src/numeric/kernel.o \
	src/numeric/linalg.o \
	src/numeric/linalg_fixed.o \
	src/query/complete.o \
	src/score/diverse.o \
	src/query/evaluate.o \
	src/query/item_args.o \
	src/query/similar.o \
	src/score/similarity.o \
	src/score/topk.o \
	src/shown.o \
	src/storage/cache.o \
	src/storage/item_keys.o \
	src/storage/model_read.o \
	src/storage/shared_models.o \
	src/storage/store.o \
	src/train/aggregate.o \
	src/train/lines.o \
	src/train/lines_baskets.o \
	src/train/lines_run.o \
	src/fit/params.o \
	src/train/warm_start.o \
	src/fit/progress.o \
	src/train/train_sql.o

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

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql
	cp $< $@

# The PGXN release archive, mtdpp-<version>.zip: the files of the commit
# checked out (git archive), nothing generated.  test/pgxn/run builds and
# tests from it alone.
DIST = $(EXTENSION)-$(EXTVERSION)
dist:
	git archive --format=zip --prefix=$(DIST)/ -o $(DIST).zip HEAD
.PHONY: dist
