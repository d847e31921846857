/*
 * fit/fit.c
 *		The fit of the DPP kinds: its entry, and the choice of the rank and
 *		L2 of the multi-task kinds on the validation slice of the training
 *		baskets when the call gives neither.
 *
 * The fit is a family of files (fit_int.h): this one chooses the capacity
 * and calls, for each candidate, one fit at a given rank (fit_epochs.c:
 * the trainer's set-up and the epoch loop), which samples examples
 * (fit_examples.c), takes their loss and gradients (fit_loss.c) and updates
 * the parameters (fit_update.c).
 *
 * One rank cannot serve every catalog: rank 128 with L2 1e-6 completes some
 * catalogs better than rank 32 with L2 1e-5 and others worse, and neither
 * the number of items nor of baskets tells them apart, so the data
 * decides: the fit trains the
 * small candidate (rank 32, L2 1e-5: the former defaults), then the large one
 * (rank 128, L2 1e-6) on the same validation slice, and keeps the one with
 * the better validation MPR (the small one on a tie, or when there is no
 * slice to measure on).
 *
 * The search costs at most 3 times the former default.  Every term of an
 * epoch's cost grows at most linearly with the rank (the c x c kernels of a
 * context cost 2 c^2 r to build, their Cholesky factor does not depend on
 * it), so an epoch at rank 128 costs at most 4 times one at rank 32, and
 * the large candidate may run
 * half the epochs the small one ran: at most twice its cost.  Where epochs
 * are samples of the baskets (epoch_baskets), the large candidate's are a
 * quarter the size, so that on a long order history the search costs at
 * most 1.5 times one fit.  There it races the small one: it stops once its
 * epochs left cannot reach the small one's validation MPR, even at its mean
 * gain per epoch so far (fit_epochs.c); where epochs are whole passes, it
 * runs its epochs.  Counted in epochs and baskets, not seconds, so that a
 * seed still makes the same model on a loaded machine.

 * What was tried and what each reached is written into the model's
 * hyperparams ("capacity"), beside the rank and L2 kept; verbose
 * reports it.  A rank or an L2 given (or a warm start, which keeps its
 * model's) makes one fit, the other taking its former default.
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "fit/fit.h"
#include "fit/fit_int.h"
#include "fit/params.h"
#include "fit/progress.h"
#include "model/baskets.h"
#include "model/model.h"

#define CAPACITY_HIGH_L2		1e-6
#define CAPACITY_BUDGET			2.0 /* the large candidate's cost, at most, in small fits */

/* one candidate, as the capacity JSON lists it, with what it reached on V */
static void
append_candidate(StringInfo s, const MtdppParams *p, MtdppModel *m,
				 int max_epochs, MtdppValidation *v)
{
	double		mpr = mtdpp_best_mpr(m);
	MtdppMetrics mm = {0};

	appendStringInfo(s, "{\"rank\": %d, \"l2\": %g, \"patience\": %d, \"max_epochs\": %d, \"epoch_baskets\": %d, \"epochs\": %d, \"best_epoch\": %d, \"validation_mpr\": ",
					 p->rank, p->l2, p->patience, max_epochs, p->epoch_baskets, m->epochs_run, m->best_epoch);
	if (isnan(mpr))
		appendStringInfo(s, "null");
	else
		appendStringInfo(s, "%.4f", mpr);
	if (v->n > 0)
	{
		mtdpp_model_prepare(m);
		mtdpp_validation_measure(v, m, &mm);
		/* no validation basket could be measured: JSON has no NaN */
		if (isnan(mm.p20))
			appendStringInfo(s, ", \"validation_p20\": null");
		else
			appendStringInfo(s, ", \"validation_p20\": %.4f", mm.p20);
	}
	appendStringInfo(s, "}");
}

/*
 * The hyperparams of the model kept: its candidate's, with the epochs and
 * epoch_baskets the call allowed, and the search (CAND of N candidates, KEPT
 * kept, chosen HOW).
 */
static char *
capacity_json(const MtdppParams *given, MtdppParams *cand, MtdppModel **fit,
			  const int *max_epochs, int n, int kept, MtdppValidation *v,
			  const char *how)
{
	MtdppParams p = cand[kept];
	StringInfoData s;

	p.epochs = given->epochs;
	p.epoch_baskets = given->epoch_baskets;
	initStringInfo(&s);
	appendStringInfo(&s, "%s", mtdpp_params_to_json(&p));
	s.len--;					/* the closing brace */
	s.data[s.len] = '\0';
	appendStringInfo(&s, ", \"capacity\": {\"chosen\": \"%s\", \"baskets\": %d, \"candidates\": [",
					 how, v->n);
	for (int c = 0; c < n; c++)
	{
		if (c > 0)
			appendStringInfo(&s, ", ");
		append_candidate(&s, &cand[c], fit[c], max_epochs[c], v);
	}
	appendStringInfo(&s, "]}}");
	return s.data;
}

/*
 * Whether the large candidate trains within maintenance_work_mem beside what
 * the search holds by then, the small one's model: decided before either
 * runs, so that a search that cannot try it keeps the small one at once
 * rather than failing after its fit.  If not, a NOTICE says what it would
 * take.  The small candidate's own fit checks its memory as any fit does.
 */
static bool
large_candidate_fits(const MtdppBaskets *data, const MtdppParams *small,
					 const MtdppParams *large)
{
	/* the small model kept: V, R and R squared per item and factor */
	Size		kept = mul_size(mul_size(data->n_items, small->rank), 3 * sizeof(double));
	Size		need = add_size(training_memory(data, large), kept);
	Size		limit = (Size) maintenance_work_mem * 1024;

	if (need <= limit || training_memory(data, small) > limit)
		return true;			/* or the small one's fit refuses first */
	ereport(NOTICE,
			(errmsg("the rank is not chosen between %d and %d: rank %d of %d items needs %zu kB, more than maintenance_work_mem (%d kB); rank %d is trained",
					small->rank, large->rank, large->rank, data->n_items,
					(need + 1023) / 1024, maintenance_work_mem, small->rank),
			 errhint("SET maintenance_work_mem = '%zuMB' lets the choice try rank %d too.",
					 (need >> 20) + 1, large->rank)));
	return false;
}

/*
 * Whether the large candidate's model, of kind P's, can be stored: within
 * mtdpp_model_budget() (half of maintenance_work_mem, and a bytea's 1 GB
 * for a model returned as a value).  Decided before either runs, from the
 * items the gathering counted; if not, a NOTICE names the figure and the
 * small candidate is trained alone.
 */
static bool
large_candidate_stored(const MtdppBaskets *data, const MtdppParams *p,
					   const MtdppParams *small, const MtdppParams *large)
{
	Size		value;

	/* where the small one does not fit either, its fit refuses with no NOTICE */
	if (mtdpp_capacity_large_fits(p, data->n_items) ||
		training_memory(data, small) > (Size) maintenance_work_mem * 1024)
		return true;
	value = mtdpp_model_value_size(p->kind, data->n_items, mtdpp_capacity_max_rank(p), p->epochs);
	ereport(NOTICE,
			(errmsg("the rank is not chosen between %d and %d: a model of %d items at rank %d takes %zu bytes, more than the %zu a model may take; rank %d is trained",
					small->rank, large->rank, data->n_items, mtdpp_capacity_max_rank(p),
					value, mtdpp_model_budget(), small->rank),
			 errdetail("A model holds 16 bytes per item and rank unit, and may take half of maintenance_work_mem (%d kB), storing it the other half; returned by mtdpp_fit as a value, at most 1 GB.",
					   maintenance_work_mem),
			 mtdpp_model_budget_settable() && 2 * value < (Size) MAX_KILOBYTES * 1024 ?
			 errhint("SET maintenance_work_mem = '%zuMB' lets the choice try rank %d too.",
					 (2 * value >> 20) + 1, mtdpp_capacity_max_rank(p)) :
			 errhint("Give rank => %d to train it without the choice, or train on fewer items.",
					 small->rank)));
	return false;
}

/*
 * Where the smaller candidate SMALL does not train within
 * maintenance_work_mem (a catalog of tens of thousands of items at the
 * default settings), the largest rank half of it, a quarter, ... down to
 * MTDPP_CAPACITY_FLOOR_RANK that does is trained alone, with a NOTICE naming
 * the figure that lets the choice run: a smaller model rather than none.
 * Returns whether SMALL's rank was lowered.  Where none fits, SMALL is left
 * as it was and its own fit refuses with its figure.
 */
static bool
lower_small_candidate(const MtdppBaskets *data, MtdppParams *small)
{
	Size		limit = (Size) maintenance_work_mem * 1024;
	Size		need = training_memory(data, small);
	MtdppParams lower = *small;

	if (need <= limit)
		return false;
	while (lower.rank > MTDPP_CAPACITY_FLOOR_RANK)
	{
		lower.rank /= 2;
		if (training_memory(data, &lower) <= limit)
		{
			ereport(NOTICE,
					(errmsg("the rank is not chosen: rank %d of %d items needs %zu kB, more than maintenance_work_mem (%d kB); rank %d is trained",
							small->rank, data->n_items, (need + 1023) / 1024,
							maintenance_work_mem, lower.rank),
					 errhint("SET maintenance_work_mem = '%zuMB' lets the choice start from rank %d.",
							 (need >> 20) + 1, small->rank)));
			small->rank = lower.rank;
			return true;
		}
	}
	return false;
}

/*
 * The fit of the multi-task kinds: at the rank given, or at the better of
 * the two candidates on the validation slice (see the top of the file).
 * The slice is copied into SLICE (if not NULL), as mtdpp_fit_dpp_rank does;
 * the hyperparameters of the fit kept into CHOSEN (if not NULL), so that
 * an ensemble's other fits train as it did (fit_ensemble.c).
 */
MtdppModel *
mtdpp_fit_dpp_chosen(MtdppBaskets *data, const MtdppParams *p,
					   MtdppValidation *slice, MtdppParams *chosen)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext search;
	MtdppParams cand[2];
	MtdppModel *fit[2] = {NULL, NULL};
	int			max_epochs[2];
	MtdppValidation val;
	MtdppModel *m;
	char	   *json;
	int			n = 1,
				kept = 0;
	double		seconds;
	bool		large_fits;

	if (p->rank != MTDPP_RANK_CHOSEN)
	{
		if (chosen != NULL)
			*chosen = *p;
		mtdpp_progress_phase(MTDPP_PHASE_EPOCHS);
		return mtdpp_fit_dpp_rank(data, p, NULL, slice, NAN);
	}
	mtdpp_progress_phase(MTDPP_PHASE_CHOOSING_RANK);

	search = AllocSetContextCreate(CurrentMemoryContext, "mtdpp capacity search",
								   ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(search);
	cand[0] = *p;
	cand[0].rank = MTDPP_CAPACITY_LOW_RANK;
	cand[0].l2 = MTDPP_CAPACITY_LOW_L2;
	max_epochs[0] = cand[0].epochs;
	cand[1] = *p;
	cand[1].rank = MTDPP_CAPACITY_MAX_RANK;
	cand[1].l2 = CAPACITY_HIGH_L2;
	if (p->epoch_baskets > 0)
		cand[1].epoch_baskets = Max(1, (int) ((int64) p->epoch_baskets *
											  MTDPP_CAPACITY_LOW_RANK / MTDPP_CAPACITY_MAX_RANK));
	large_fits = !lower_small_candidate(data, &cand[0]) &&
		large_candidate_fits(data, &cand[0], &cand[1]) &&
		large_candidate_stored(data, p, &cand[0], &cand[1]);

	fit[0] = mtdpp_fit_dpp_rank(data, &cand[0], NULL, &val, NAN);
	seconds = fit[0]->seconds;
	cand[1].epochs = Min(p->epochs,
						 Max(1, (int) floor(CAPACITY_BUDGET * fit[0]->epochs_run *
											MTDPP_CAPACITY_LOW_RANK / MTDPP_CAPACITY_MAX_RANK)));
	max_epochs[1] = cand[1].epochs;
	if (large_fits && val.n > 0 && !isnan(mtdpp_best_mpr(fit[0])))
	{
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("capacity: rank %d (l2 %g) reached validation MPR %.2f in %d epochs; rank %d (l2 %g) may run %d",
							cand[0].rank, cand[0].l2, mtdpp_best_mpr(fit[0]), fit[0]->epochs_run,
							cand[1].rank, cand[1].l2, cand[1].epochs)));
		fit[1] = mtdpp_fit_dpp_rank(data, &cand[1], &val, NULL,
									  epoch_share(p, data->n_baskets - val.n) < 1.0 ?
									  mtdpp_best_mpr(fit[0]) : NAN);
		seconds += fit[1]->seconds;
		n = 2;
		if (mtdpp_best_mpr(fit[1]) > mtdpp_best_mpr(fit[0]))
			kept = 1;
	}
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("capacity: rank %d, l2 %g chosen on %d validation baskets (MPR %.2f%s)",
						cand[kept].rank, cand[kept].l2, val.n, mtdpp_best_mpr(fit[kept]),
						n == 2 ? psprintf(" against %.2f at rank %d in %d epochs",
										  mtdpp_best_mpr(fit[1 - kept]), cand[1 - kept].rank,
										  fit[1 - kept]->epochs_run) :
						!large_fits ? ", no larger rank tried within maintenance_work_mem" :
						", no larger rank tried without a slice")));

	json = capacity_json(p, cand, fit, max_epochs, n, kept, &val,
						 n > 1 ? "on validation" :
						 !large_fits ? "larger rank over maintenance_work_mem" :
						 "no validation slice");

	/* the model kept, and the slice, into the caller's memory */
	MemoryContextSwitchTo(caller);
	m = mtdpp_model_copy(fit[kept]);
	m->hyperparams = pstrdup(json);
	m->seconds = seconds;
	if (slice != NULL)
		mtdpp_validation_copy(slice, &val);
	if (chosen != NULL)
		*chosen = cand[kept];
	MemoryContextDelete(search);
	return m;
}

/* The fit of the multi-task kinds, its slice copied into SLICE (if not NULL). */
MtdppModel *
mtdpp_fit_dpp_slice(MtdppBaskets *data, const MtdppParams *p,
					  MtdppValidation *slice)
{
	return mtdpp_fit_dpp_chosen(data, p, slice, NULL);
}

/*
 * Trains a DPP model of kind p->kind on DATA: the fit of the DPP kinds
 * with factors, its rank chosen below when not given.  The result is allocated in the caller's memory context.
 */
MtdppModel *
mtdpp_fit_dpp(MtdppBaskets *data, const MtdppParams *p)
{
	return mtdpp_fit_dpp_slice(data, p, NULL);
}
