/*
 * fit/fit_ensemble.c
 *		An ensemble of the multi-task kinds ("fits" above 1): independent
 *		fits from seeds seed, seed + 1, ..., kept side by side in one model
 *		(the kinds that keep them say how they are stored and scored).
 *
 * Why.  One fit of the multi-task DPP lands in one of many local optima of
 * a nonconvex loss; fits from other seeds make errors of their own, and the
 * mean of their scores ranks better than any one of them, and better than
 * one fit given the same time.
 *
 * The fits.  The first is the fit "fits" 1 would make: at the rank given,
 * or at the rank and L2 it chooses on its validation slice (fit.c).  The
 * others reuse that choice (rank, L2, epochs and epoch_baskets of the
 * candidate kept) rather than choosing again, so the cost is about the
 * search plus N - 1 fits of the kept candidate.  Each fit carves its own
 * validation slice from its own seed, as a fit of that seed alone would:
 * with a rank given, fit k is exactly the model "fits" 1 and seed
 * seed + k trains.  Their training record (epochs, best epoch, validation
 * MPR, seconds) is kept in the hyperparameters ("ensemble"); the model's
 * own record (loss and validation history) is the first fit's.  No
 * validation MPR of the mean is measured: each fit's slice is training
 * data of the others.
 *
 * The fits share one bias, the geometric mean of theirs (with the jitter),
 * their factors rescaled so that each fit's ln det is kept up to a term of
 * the context alone, which sums to 0 over the fits.
 */
#include "postgres.h"

#include <math.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "fit/progress.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"

/*
 * The fits kept while the others train: their parameters in double, and
 * the ensemble's, checked against maintenance_work_mem before the first
 * fit (each fit checks its own working set as it starts).
 */
static void
check_memory(const MtdppBaskets *d, const MtdppParams *p)
{
	int			r = p->rank == MTDPP_RANK_CHOSEN ? MTDPP_CAPACITY_MAX_RANK : p->rank;
	/* per fit V, R, R2; the ensemble's V and R */
	Size		need = mul_size(mul_size(mul_size(d->n_items, r), p->fits),
								sizeof(double) * 5);
	Size		limit = (Size) maintenance_work_mem * 1024;

	if (need > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("keeping %d fits of rank %d of %d items needs %zu kB, more than maintenance_work_mem (%d kB)",
						p->fits, r, d->n_items, (need + 1023) / 1024, maintenance_work_mem),
				 errhint("SET maintenance_work_mem = '%zuMB' for this session, or train with fewer fits or a lower rank.",
						 (need >> 20) + 1)));
}

/*
 * The fits FIT (N of them, each of rank r) as one model of rank N r in
 * the caller's memory context: item i's bias D_i with D_i^2 + J the
 * geometric mean of the fits' D_fi^2 + J, and fit f's factors of item i
 * scaled by sqrt((D_i^2 + J) / (D_fi^2 + J)) (see the top of the file).
 */
static MtdppModel *
combine(const MtdppBaskets *data, const MtdppParams *p, MtdppModel **fit, int n)
{
	int			r = fit[0]->rank;
	int			R = n * r;
	bool		bias = mtdpp_kind(p->kind)->bias;
	MtdppModel *m = mtdpp_model_alloc(p->kind, data->n_items, R);

	memcpy(m->item_ids, data->item_ids, sizeof(int32) * data->n_items);
	memcpy(m->popularity, data->popularity, sizeof(int32) * data->n_items);
	for (int i = 0; i < data->n_items; i++)
	{
		double		log_mean = 0.0,
					d2;

		for (int f = 0; f < n; f++)
			log_mean += log((bias ? fit[f]->D[i] * fit[f]->D[i] : 0.0) + MTDPP_JITTER) / n;
		m->D[i] = bias ? sqrt(Max(exp(log_mean) - MTDPP_JITTER, 0.0)) : 0.0;
		if (m->D[i] < MTDPP_NEGLIGIBLE_ROOT)
			m->D[i] = 0.0;
		d2 = (bias ? m->D[i] * m->D[i] : 0.0) + MTDPP_JITTER;
		for (int f = 0; f < n; f++)
		{
			double		scale = sqrt(d2 / ((bias ? fit[f]->D[i] * fit[f]->D[i] : 0.0) + MTDPP_JITTER));
			const double *v = fit[f]->V + (size_t) i * r;
			const double *t = fit[f]->R + (size_t) i * r;
			double	   *V = m->V + (size_t) i * R + (size_t) f * r;

			for (int j = 0; j < r; j++)
			{
				V[j] = v[j] * scale;
				if (fabs(V[j]) < MTDPP_NEGLIGIBLE)
					V[j] = 0.0;
			}
			memcpy(m->R + (size_t) i * R + (size_t) f * r, t, sizeof(double) * r);
		}
	}
	return m;
}

/*
 * The hyperparameters of the ensemble: the first fit's (its capacity
 * search, if any, included) with "fits", and each fit's record.
 */
static char *
ensemble_json(const MtdppParams *p, MtdppModel **fit, const int64 *seeds, int n)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoString(&s, fit[0]->hyperparams);
	s.len--;					/* the closing brace */
	s.data[s.len] = '\0';
	appendStringInfo(&s, ", \"fits\": %d, \"ensemble\": {\"members\": [", n);
	for (int f = 0; f < n; f++)
	{
		double		mpr = mtdpp_best_mpr(fit[f]);

		appendStringInfo(&s, "%s{\"seed\": " INT64_FORMAT ", \"rank\": %d, \"epochs\": %d, \"best_epoch\": %d, \"validation_mpr\": ",
						 f > 0 ? ", " : "", seeds[f], fit[f]->rank, fit[f]->epochs_run,
						 fit[f]->best_epoch);
		if (isnan(mpr))
			appendStringInfoString(&s, "null");
		else
			appendStringInfo(&s, "%.4f", mpr);
		appendStringInfo(&s, ", \"seconds\": %.3f}", fit[f]->seconds);
	}
	appendStringInfoString(&s, "]}}");
	return s.data;
}

/*
 * The fit of a multi-task kind with p->fits above 1 (see the top of the
 * file), allocated in the caller's memory context.
 */
static MtdppModel *
train_ensemble(MtdppBaskets *data, const MtdppParams *p)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	int			n = p->fits;
	MtdppModel **fit;
	int64	   *seeds;
	MtdppParams one = *p;
	MtdppParams chosen;
	MtdppModel *m;
	double		seconds = 0.0;
	int64		examples = 0;

	check_memory(data, p);
	work = AllocSetContextCreate(CurrentMemoryContext, "mtdpp ensemble",
								 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(work);
	fit = palloc(sizeof(MtdppModel *) * n);
	seeds = palloc(sizeof(int64) * n);

	/* each fit is a model of one fit, as "fits" 1 would train it */
	one.fits = 1;
	for (int f = 0; f < n; f++)
	{
		/* seeds wrap around at the end of int64, as any seed may be given */
		seeds[f] = (int64) ((uint64) p->seed + (uint64) f);
		mtdpp_progress_ensemble(f + 1, n);
		if (f == 0)
			fit[0] = mtdpp_fit_dpp_chosen(data, &one, NULL, &chosen);
		else
		{
			MtdppParams q = chosen;

			q.seed = seeds[f];
			mtdpp_progress_phase(MTDPP_PHASE_EPOCHS);
			fit[f] = mtdpp_fit_dpp_rank(data, &q, NULL, NULL, NAN);
		}
		seconds += fit[f]->seconds;
		examples += fit[f]->n_examples;
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("fit %d of %d (seed " INT64_FORMAT "): rank %d, %d epochs (best %d), validation MPR %.2f, %.1f s",
							f + 1, n, seeds[f], fit[f]->rank, fit[f]->epochs_run,
							fit[f]->best_epoch, mtdpp_best_mpr(fit[f]), fit[f]->seconds)));
	}

	MemoryContextSwitchTo(caller);
	m = combine(data, p, fit, n);
	m->hyperparams = ensemble_json(p, fit, seeds, n);
	m->blocks = n;
	m->log_w = fit[0]->log_w;
	m->n_baskets = data->n_baskets;
	m->n_examples = examples;
	m->epochs_run = fit[0]->epochs_run;
	m->best_epoch = fit[0]->best_epoch;
	m->final_loss = fit[0]->final_loss;
	m->loss_history = palloc(sizeof(double) * Max(m->epochs_run, 1));
	m->val_history = palloc(sizeof(double) * Max(m->epochs_run, 1));
	memcpy(m->loss_history, fit[0]->loss_history, sizeof(double) * m->epochs_run);
	memcpy(m->val_history, fit[0]->val_history, sizeof(double) * m->epochs_run);
	m->seconds = seconds;
	MemoryContextDelete(work);
	mtdpp_progress_ensemble(0, 0);
	return m;
}

/*
 * The fit of a kind that keeps an ensemble: one fit (fit.c), or
 * p->fits of them side by side.
 */
MtdppModel *
mtdpp_fit_ensemble(MtdppBaskets *data, const MtdppParams *p)
{
	if (p->fits > 1)
		return train_ensemble(data, p);
	return mtdpp_fit_dpp(data, p);
}
