/*
 * mtdpp_stubs.c
 *		The parts of the extension that the harnesses replace, and the
 *		checks of what the aggregate hands the trainer.
 *
 * - The hyperparameter parser (src/fit/params.c) reads jsonb through the
 *   server's jsonb code: it is fuzzed through a real server instead
 *   (test/t/009_fuzz.pl).  Here hyperparameters are the defaults; the
 *   jsonb a state carries is only read through (every byte VARSIZE says it
 *   has), so that a length that lies is caught.
 * - The stochastic-gradient trainer (src/fit/, the fit of the DPP kinds,
 *   and src/kinds/bayesian_lowrank/bayes_sgld.c, the Bayesian low-rank DPP's sampler)
 *   is replaced by the exact baselines (src/kinds/itemknn/itemknn.c for small
 *   inputs, src/kinds/popularity/popularity.c otherwise), after the baskets it receives
 *   have been checked (fuzz_check_baskets) and handed to fuzz_baskets_hook,
 *   if set.  Hyperparameters name the multitask kind, so every fit comes
 *   here.
 * - mtdpp_train's handoff of the model (src/train/handoff.c): a harness
 *   runs the aggregate's final function as mtdpp_fit does, never under
 *   mtdpp_train, so the value is always built.
 * - Progress reporting (src/fit/progress.c) writes to a table in the server's
 *   shared memory, which exists only when mtdpp is preloaded; the
 *   harnesses have none, as a server without preload, and report nothing.
 */
#include "postgres.h"

#include "pg_runtime.h"
#include "mtdpp_stubs.h"
#include "../src/fit/progress.h"
#include "../src/train/train.h"

void		(*fuzz_baskets_hook) (const MtdppBaskets *data) = NULL;

void
mtdpp_params_defaults(MtdppParams *p, MtdppKind kind)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->rank = 0;
	p->epochs = 1;
}

void
mtdpp_params_resolve(MtdppParams *p, Jsonb *json)
{
	mtdpp_params_defaults(p, MTDPP_MULTITASK);
	if (json != NULL)
	{
		volatile uint8 sum = 0;

		for (Size i = 0; i < VARSIZE(json); i++)
			sum += ((const uint8 *) json)[i];
		(void) sum;
	}
}

void
mtdpp_params_for_data(MtdppParams *p, int n_items)
{
}

bool
mtdpp_param_given(const MtdppParams *p, const char *name)
{
	return false;
}

bool
mtdpp_kind_takes(MtdppKind kind, const char *name)
{
	return false;
}

int
mtdpp_param_int(const MtdppParams *p, const char *name)
{
	return 1;
}

char *
mtdpp_params_to_json(const MtdppParams *p)
{
	return pstrdup("{\"kind\": \"popularity\"}");
}

char *
mtdpp_params_json_beyond(const MtdppParams *p, MtdppKind beside)
{
	return pstrdup("");
}

/* shown.c's (which needs the server's encodings), for kinds.c's errors: the text, whole */
const char *
mtdpp_shown(const char *s)
{
	return s;
}

/*
 * What lines.c promises of the baskets: CSR offsets from 0 to n_lines, no
 * empty basket, dense indices in range, item ids ascending, no item twice in
 * a basket, popularity = the number of baskets holding each item, and every
 * item in some basket.
 */
void
fuzz_check_baskets(const MtdppBaskets *d)
{
	int32	   *seen;
	int32	   *count;

	if (d->n_baskets < 0 || d->n_items < 0 || d->n_lines < 0)
		fuzz_fail("baskets with negative sizes: %d baskets, %d items, " INT64_FORMAT " lines",
				  d->n_baskets, d->n_items, d->n_lines);
	if (d->start[0] != 0 || d->start[d->n_baskets] != d->n_lines)
		fuzz_fail("basket offsets run from " INT64_FORMAT " to " INT64_FORMAT ", not 0 to " INT64_FORMAT,
				  d->start[0], d->start[d->n_baskets], d->n_lines);
	for (int i = 1; i < d->n_items; i++)
		if (d->item_ids[i] <= d->item_ids[i - 1])
			fuzz_fail("item ids not ascending at index %d", i);
	seen = palloc(sizeof(int32) * Max(d->n_items, 1));
	count = palloc0(sizeof(int32) * Max(d->n_items, 1));
	for (int i = 0; i < d->n_items; i++)
		seen[i] = -1;
	for (int b = 0; b < d->n_baskets; b++)
	{
		if (d->start[b + 1] <= d->start[b])
			fuzz_fail("basket %d is empty or its offsets decrease", b);
		for (int64 k = d->start[b]; k < d->start[b + 1]; k++)
		{
			int32		x = d->items[k];

			if (x < 0 || x >= d->n_items)
				fuzz_fail("basket %d holds index %d of %d items", b, x, d->n_items);
			if (seen[x] == b)
				fuzz_fail("basket %d holds item %d twice", b, d->item_ids[x]);
			seen[x] = b;
			count[x]++;
		}
	}
	for (int i = 0; i < d->n_items; i++)
		if (count[i] != d->popularity[i] || count[i] == 0)
			fuzz_fail("item %d is in %d baskets, its popularity says %d",
					  d->item_ids[i], count[i], d->popularity[i]);
	pfree(seen);
	pfree(count);
}

MtdppModel *
mtdpp_fit_dpp(MtdppBaskets *data, const MtdppParams *p)
{
	MtdppParams q = *p;

	fuzz_check_baskets(data);
	if (fuzz_baskets_hook)
		fuzz_baskets_hook(data);
	q.kind = data->n_lines <= 4096 ? MTDPP_ITEMKNN : MTDPP_POPULARITY;
	q.rank = 0;
	return mtdpp_kind(q.kind)->fit(data, &q);
}

/* the same, without a validation slice (fit_epochs.c's fit at a given rank) */
MtdppModel *
mtdpp_fit_dpp_rank(MtdppBaskets *data, const MtdppParams *p,
					 const MtdppValidation *given, MtdppValidation *slice,
					 double to_beat)
{
	if (slice != NULL)
		memset(slice, 0, sizeof(*slice));
	return mtdpp_fit_dpp(data, p);
}

/* and the Bayesian low-rank DPP's sampler (bayes_sgld.c), likewise */
MtdppModel *
mtdpp_fit_bayesian_lowrank(MtdppBaskets *data, const MtdppParams *p)
{
	return mtdpp_fit_dpp(data, p);
}

/* and fit.c's choice of rank (the hybrid kind's fit): the harness's rank is 0 */
MtdppModel *
mtdpp_fit_dpp_slice(MtdppBaskets *data, const MtdppParams *p, MtdppValidation *slice)
{
	return mtdpp_fit_dpp_rank(data, p, NULL, slice, NAN);
}

/* and fit.c's fit at a chosen capacity (an ensemble's other fits) */
MtdppModel *
mtdpp_fit_dpp_chosen(MtdppBaskets *data, const MtdppParams *p, MtdppValidation *slice,
					   MtdppParams *chosen)
{
	if (chosen != NULL)
		*chosen = *p;
	return mtdpp_fit_dpp_rank(data, p, NULL, slice, NAN);
}

/* the table of model kinds, filled as _PG_init fills it */
static void fuzz_kinds_init(void) __attribute__((constructor));

static void
fuzz_kinds_init(void)
{
	mtdpp_kinds_init();
}

/* a warm start reads the model tables: not in the harness, whose
 * hyperparameters are the defaults */
const MtdppModel *
mtdpp_warm_start(MtdppParams *p)
{
	elog(ERROR, "no model tables in the fuzzing harness");
	return NULL;
}

/* no shared memory, so no report (see the top of the file) */
bool
mtdpp_progress_begin(const char *model)
{
	return false;
}

void
mtdpp_progress_end(void)
{
}

void
mtdpp_progress_end_fit(void)
{
}

void
mtdpp_progress_kind(const char *kind)
{
}

void
mtdpp_progress_phase(MtdppPhase phase)
{
}

void
mtdpp_progress_data(int64 lines, int baskets, int items)
{
}

void
mtdpp_progress_fit(int rank, int max_epochs)
{
}

void
mtdpp_progress_epoch(int epoch, double validation)
{
}

void
mtdpp_progress_ensemble(int fit, int fits)
{
}

bool
mtdpp_handoff_wanted(FunctionCallInfo fcinfo)
{
	return false;
}

bytea *
mtdpp_handoff_give(MtdppModel *m, MemoryContext holder)
{
	fuzz_fail("mtdpp_handoff_give called");
}
