/*
 * kinds/bayesian_lowrank/bayes_sgld.c
 *		The fit of the Bayesian low-rank DPP (bayesian_lowrank.c): its
 *		posterior over V sampled by preconditioned stochastic gradient
 *		Langevin dynamics, on the likelihood the lowrank kind maximises.
 *
 * The posterior.  With a Gaussian prior N(0, lambda^-1 I) on each row of V
 * (lambda = prior_precision) and the N training baskets B_n,
 *
 *		U(V) = sum_n [ln det(L + I) - ln det L[B_n]] + lambda/2 |V|^2
 *
 * is minus the log posterior; lambda, unless given, is 1 / the mean square
 * of the mode's factors (below).  A minibatch of M baskets estimates its
 * gradient as N g + lambda V, g the minibatch's mean gradient of the
 * lowrank loss, which the fit of the lowrank kind computes (fit_loss.c:
 * -ln det L_B through the numeric core, and the normaliser's 2 V (I +
 * V^T V)^-1 once per minibatch): this file adds no gradient of its own.
 *
 * The sampler.  Stochastic gradient Langevin dynamics (Welling and Teh
 * 2011, the sampler of Gartrell et al. 2016), preconditioned as in Li,
 * Chen, Carlson and Carin (AAAI 2016) by a running mean v of the squared
 * gradient, since the rows of popular and rare items differ in curvature
 * by orders of magnitude:
 *
 *		G = 1 / (lambda + sqrt(v)),
 *		V <- V - eps_t / 2 G (N g + lambda V) + sqrt(eps_t G) xi,	xi ~ N(0, I)
 *
 * (without the small correction term Gamma, as Li et al. advise; the floor
 * of G's denominator is the prior's precision, the least curvature of U,
 * not Li et al.'s 1e-5: a rare item's gradient is nearly zero, and a
 * preconditioner of 1e5 made its steps, and its noise, hundreds of times
 * what its prior allows, so that the rarest items topped every ranking),
 * with the
 * decreasing steps eps_t = step_size (1 + t / T)^-0.55 of Welling and Teh,
 * T an epoch's updates.
 *
 * Burn-in.  The chain starts at the posterior mode found the lowrank
 * kind's way (Adam on the same loss, stopped early on the validation slice
 * of the training baskets, whose epochs the slice thus chooses), then runs
 * burn_in epochs of Langevin steps; after that every `thinning`-th state is
 * a sample, until S = samples are kept.  Validation MPR of the mode and of
 * the posterior mean are stored in the hyperparams ("sampler").
 *
 * Every draw comes from the fit's seed, in a fixed order, and the products
 * run in the reproducible mode: a seed makes the same samples.  The working
 * set is checked against maintenance_work_mem before it is allocated; each
 * minibatch checks for interrupts.
 */
#include "postgres.h"

#include <math.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "fit/fit.h"
#include "fit/fit_int.h"
#include "fit/params.h"
#include "fit/progress.h"
#include "kinds/bayesian_lowrank/bayesian_lowrank.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"

#define SGLD_DECAY		0.55	/* eps_t = step_size (1 + t / T)^-SGLD_DECAY */
#define SGLD_BETA		0.99	/* the preconditioner's running mean */

/*
 * Items times rank above which a fit is refused: every Langevin step draws
 * noise for, and updates, every item's row (the normaliser's gradient
 * touches them all), which at this size takes minutes an epoch.
 */
#define SGLD_MAX_CELLS	((int64) 1 << 23)

/* the chain's state besides the trainer */
typedef struct Chain
{
	Trainer    *tr;
	const MtdppParams *p;
	double		n_train;		/* N, training baskets of two items or more */
	double	   *v;				/* preconditioner, n x r */
	int64		t;				/* Langevin steps taken */
	int64		per_epoch;		/* T */
	bool		have_spare;
	double		spare;			/* the second normal of Box-Muller */
} Chain;

static inline double
normal(Chain *c)
{
	double		u1,
				u2,
				rad;

	if (c->have_spare)
	{
		c->have_spare = false;
		return c->spare;
	}
	u1 = pg_prng_double(&c->tr->rng);
	u2 = pg_prng_double(&c->tr->rng);
	if (u1 < 1e-300)
		u1 = 1e-300;
	rad = sqrt(-2.0 * log(u1));
	c->spare = rad * sin(2.0 * M_PI * u2);
	c->have_spare = true;
	return rad * cos(2.0 * M_PI * u2);
}

/*
 * One Langevin step on the minibatch FIRST..LAST-1 of this epoch's
 * positives; returns the minibatch's mean loss.
 */
static double
langevin_step(Chain *c, int64 first, int64 last)
{
	Trainer    *tr = c->tr;
	MtdppModel *m = tr->m;
	Shard	   *sh;
	int			r = m->rank;
	double		eps = mtdpp_bayes_params(c->p)->step_size * pow(1.0 + (double) c->t / Max(c->per_epoch, 1), -SGLD_DECAY);
	double		lambda = mtdpp_bayes_params(c->p)->prior_precision;
	double		loss = 0.0;
	int64		n_ex = 0;

	run_minibatch(tr, first, last, 1.0 / (last - first));
	for (int k = 0; k < TRAIN_SHARDS; k++)
	{
		loss += tr->shards[k]->loss;
		n_ex += tr->shards[k]->n_ex;
		tr->shards[k]->n_singular = 0;
	}
	loss = n_ex > 0 ? loss / n_ex : 0.0;
	loss += lowrank_normaliser(tr, 1.0);
	merge_shards(tr);
	sh = tr->shards[0];
	for (int i = 0; i < m->n_items; i++)
	{
		double	   *Vi = m->V + (size_t) i * r;
		double	   *gi = sh->gV + (size_t) i * r;
		double	   *vi = c->v + (size_t) i * r;
		double		norm2 = 0.0;

		for (int j = 0; j < r; j++)
		{
			double		g = c->n_train * gi[j] + lambda * Vi[j];
			double		G;

			vi[j] = SGLD_BETA * vi[j] + (1.0 - SGLD_BETA) * g * g;
			G = 1.0 / (lambda + sqrt(vi[j]));
			Vi[j] -= 0.5 * eps * G * g - sqrt(eps * G) * normal(c);
			if (fabs(Vi[j]) < MTDPP_NEGLIGIBLE)
				Vi[j] = 0.0;
			norm2 += Vi[j] * Vi[j];
			gi[j] = 0.0;
		}
		m->Vnorm2[i] = norm2;
		sh->gD[i] = 0.0;
	}
	for (int k = 0; k < sh->nV; k++)
		sh->touchedV[sh->listV[k]] = false;
	sh->nV = sh->nR = 0;
	c->t++;
	return loss;
}

static void
check_chain(const MtdppModel *m, const MtdppParams *p, int epoch, double loss)
{
	const MtdppBayesParams *bp = mtdpp_bayes_params(p);
	Size		cells = (Size) m->n_items * m->rank;
	bool		finite = isfinite(loss);

	for (Size k = 0; k < cells && finite; k++)
		finite = isfinite(m->V[k]);
	if (!finite)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("sampling diverged at epoch %d of the Langevin chain: the loss is %g", epoch + 1, loss),
				 errhint("Lower step_size (now %g) or raise prior_precision (now %g).",
						 bp->step_size, bp->prior_precision)));
}

/*
 * The working set of the fit at SAMPLES: the chain's trainer, the mode and
 * the preconditioner, the samples of the chain and of two models (V and R),
 * and the value the model becomes, held twice on its way to storage (16
 * bytes per item and rank unit of every sample).
 */
static Size
sgld_memory(const MtdppBaskets *d, const MtdppParams *q, int samples)
{
	Size		cells = mul_size(d->n_items, q->rank);

	return add_size(add_size(training_memory(d, q),
							 mul_size(cells, sizeof(double) * (5 * samples + 3))),
					mul_size(cells, 2 * 2 * sizeof(double) * samples));
}

/*
 * The samples the fit keeps: P's, or, where they would not fit in
 * maintenance_work_mem and samples was not given, the most that fit, said
 * in a NOTICE; samples that do not fit are refused with the figure.  Q is
 * P for one sample (the mode's fit).
 */
static int
fitting_samples(const MtdppBaskets *d, const MtdppParams *p, const MtdppParams *q)
{
	int			wanted = mtdpp_bayes_params(p)->samples;
	Size		limit = (Size) maintenance_work_mem * 1024;
	Size		need = sgld_memory(d, q, wanted);
	int			fewer = wanted;

	if (need <= limit)
		return wanted;
	while (fewer > 1 && sgld_memory(d, q, fewer) > limit)
		fewer--;
	if (!mtdpp_param_given(p, "samples") && sgld_memory(d, q, fewer) <= limit)
	{
		ereport(NOTICE,
				(errmsg("%d samples are kept, not %d: %d rank %d factorisations of %d items need %zu kB, more than maintenance_work_mem (%d kB)",
						fewer, wanted, wanted, q->rank, d->n_items, (need + 1023) / 1024,
						maintenance_work_mem),
				 errhint("SET maintenance_work_mem = '%zuMB' lets the fit keep %d.", (need >> 20) + 1,
						 wanted)));
		return fewer;
	}
	/* samples not given: even one does not fit, so fewer would not help */
	if (!mtdpp_param_given(p, "samples"))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("sampling even 1 rank %d factorisation of %d items needs %zu kB, more than maintenance_work_mem (%d kB)",
						q->rank, d->n_items, (sgld_memory(d, q, 1) + 1023) / 1024, maintenance_work_mem),
				 errdetail("The fit keeps as many of its %d samples as fit; all %d need %zu kB.",
						   wanted, wanted, (need + 1023) / 1024),
				 errhint("SET maintenance_work_mem = '%zuMB' for this session, or train with a lower rank.",
						 (sgld_memory(d, q, 1) >> 20) + 1)));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("sampling %d rank %d factorisations of %d items needs %zu kB, more than maintenance_work_mem (%d kB)",
					wanted, q->rank, d->n_items, (need + 1023) / 1024, maintenance_work_mem),
			 errhint("SET maintenance_work_mem = '%zuMB' for this session, or train with fewer samples or a lower rank.",
					 (need >> 20) + 1)));
	return 0;					/* not reached */
}

/* The number of training baskets: two items or more, not in the slice. */
static double
training_baskets(const Trainer *tr)
{
	const MtdppBaskets *d = tr->data;
	double		n = 0;

	for (int b = 0; b < d->n_baskets; b++)
		n += !tr->val.is_val[b] && d->start[b + 1] - d->start[b] >= 2;
	return n;
}

/*
 * The chain from the mode MODE: burn_in epochs, then a sample every
 * `thinning` steps into SAMPLES (n x S r), until S are kept (Q, the
 * trainer's hyperparameters, are those of one sample).  Returns the
 * epochs it ran; *THINNING takes the thinning used, *STEPS the steps.
 */
static int
run_chain(MtdppBaskets *data, const MtdppParams *q, const MtdppModel *mode,
		  MtdppValidation *slice, int S, double *samples, int *thinning,
		  int64 *steps, instr_time start)
{
	const MtdppBayesParams *bp = mtdpp_bayes_params(q);
	const MtdppParams *p = q;
	Trainer		tr;
	Chain		c;
	int			r = q->rank;
	int			kept = 0;
	int64		since = 0;
	int			epoch;

	trainer_setup(&tr, data, q, slice);
	memcpy(tr.m->V, mode->V, sizeof(double) * (size_t) data->n_items * r);
	mtdpp_model_prepare(tr.m);
	memset(&c, 0, sizeof(c));
	c.tr = &tr;
	c.p = q;
	c.n_train = training_baskets(&tr);
	c.v = mtdpp_alloc_huge(sizeof(double) * (size_t) data->n_items * r);
	/* the preconditioner starts from the squared gradient at the mode */
	for (epoch = 0; kept < S; epoch++)
	{
		int64		n_pos = epoch_positives(&tr);
		double		loss = 0.0;
		int			batches = 0;

		tr.positives = tr.pool;
		tr.epoch_seed = pg_prng_uint64(&tr.rng);
		if (epoch == 0)
		{
			c.per_epoch = (n_pos + p->batch_size - 1) / p->batch_size;
			*thinning = bp->thinning > 0 ? bp->thinning : (int) Max(1, c.per_epoch / 4);
			/* the chain's epochs: burn-in, then enough steps for S samples */
			mtdpp_progress_fit(r, bp->burn_in +
							   (int) Min(((int64) S * *thinning + c.per_epoch - 1) / Max(c.per_epoch, 1), 100000));
		}
		for (int64 first = 0; first < n_pos && kept < S; first += p->batch_size)
		{
			CHECK_FOR_INTERRUPTS();
			loss += langevin_step(&c, first, Min(first + p->batch_size, n_pos));
			batches++;
			if (epoch >= bp->burn_in && ++since % *thinning == 0)
			{
				for (int i = 0; i < data->n_items; i++)
					memcpy(samples + ((size_t) i * S + kept) * r,
						   tr.m->V + (size_t) i * r, sizeof(double) * r);
				kept++;
			}
		}
		loss /= Max(batches, 1);
		check_chain(tr.m, p, epoch, loss);
		mtdpp_progress_epoch(epoch + 1, NAN);
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("Langevin epoch %d: loss %.5f, step %.3g, validation MPR of this state %.2f, %d of %d samples kept, %.1f s",
							epoch + 1, loss, bp->step_size * pow(1.0 + (double) c.t / Max(c.per_epoch, 1), -SGLD_DECAY),
							mtdpp_validation_mpr(&tr.val, tr.m), kept, S, mtdpp_seconds_since(start))));
		/* a chain on a tiny catalog may need more epochs than it has steps */
		if (epoch > bp->burn_in + 100000)
			break;
	}
	*steps = c.t;
	return epoch;
}

/* the step sizes tried on the validation slice when step_size is not given */
static const double step_candidates[] = {1e-3, 1e-4, 1e-5};

/*
 * The chain from MODE at the step size of P, its samples into a model of
 * the caller's memory context (its hyperparams P's, with the thinning
 * used); *MPR takes its validation MPR on SLICE, *EPOCHS and *STEPS its
 * chain's length.
 */
static MtdppModel *
sampled_model(MtdppBaskets *data, const MtdppParams *p, const MtdppModel *mode,
			  MtdppValidation *slice, double *mpr, int *epochs, int64 *steps,
			  instr_time start)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work = AllocSetContextCreate(caller, "mtdpp Langevin chain",
											   ALLOCSET_DEFAULT_SIZES);
	MtdppParams q = *p;
	MtdppParams stored = *p;
	int			S = mtdpp_bayes_params(p)->samples;
	int			r = p->rank;
	double	   *samples;
	MtdppModel *m;

	mtdpp_bayes_params(&q)->samples = 1;
	MemoryContextSwitchTo(work);
	samples = mtdpp_alloc_huge(sizeof(double) * (size_t) data->n_items * r * S);
	*epochs = run_chain(data, &q, mode, slice, S, samples, &mtdpp_bayes_params(&stored)->thinning, steps, start);

	MemoryContextSwitchTo(caller);
	m = mtdpp_model_alloc(MTDPP_BAYESIAN_LOWRANK, data->n_items, r * S);
	memcpy(m->item_ids, data->item_ids, sizeof(int32) * data->n_items);
	memcpy(m->popularity, data->popularity, sizeof(int32) * data->n_items);
	memcpy(m->V, samples, sizeof(double) * (size_t) data->n_items * r * S);
	m->hyperparams = mtdpp_params_to_json(&stored);
	m->blocks = S;
	mtdpp_model_prepare(m);
	MemoryContextDelete(work);
	*mpr = mtdpp_validation_mpr(slice, m);
	return m;
}

/*
 * The prior's precision when not given: empirical Bayes at the mode MODE,
 * the precision under which its factors are a typical draw (what a Gamma
 * hyperprior on it, as in Gartrell et al., gives there).
 */
static double
mode_precision(const MtdppModel *mode)
{
	double		sum = 0.0;
	Size		cells = (Size) mode->n_items * mode->rank;

	for (Size k = 0; k < cells; k++)
		sum += mode->V[k] * mode->V[k];
	return Min(1e6, Max(1e-6, sum > 0.0 ? cells / sum : 1.0));
}

/* a JSON number, or null for NaN */
static void
append_number(StringInfo s, double x)
{
	if (isnan(x))
		appendStringInfoString(s, "null");
	else
		appendStringInfo(s, "%.4f", x);
}

/*
 * The fit of kind bayesian_lowrank: the mode (the lowrank fit, early stopped
 * on the validation slice), then the Langevin chain from it, at the step
 * size given or at the better of step_candidates on the validation slice;
 * the samples side by side in one model (bayesian_lowrank.c).
 */
MtdppModel *
mtdpp_fit_bayesian_lowrank(MtdppBaskets *data, const MtdppParams *given)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	MtdppParams chosen = *given;
	const MtdppParams *p = &chosen;
	MtdppParams q = *given;
	MtdppValidation slice;
	MtdppModel *mode;
	MtdppModel *m = NULL;
	int			r = p->rank;
	int			n_tried = 0;
	double		tried[lengthof(step_candidates)],
				mprs[lengthof(step_candidates)];
	int			chain_epochs = 0;
	int64		steps = 0;
	double		mpr_mode,
				mpr_mean = NAN;
	bool		choose;
	instr_time	start;
	StringInfoData json;

	INSTR_TIME_SET_CURRENT(start);
	if ((int64) data->n_items * r > SGLD_MAX_CELLS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kind bayesian_lowrank samples at most %lld item factors (items x rank), and %d items at rank %d make %lld",
						(long long) SGLD_MAX_CELLS, data->n_items, r, (long long) data->n_items * r),
				 errdetail("Every Langevin step draws noise for every item's factors: above this an epoch takes minutes."),
				 errhint("Train with a lower rank, or train kind lowrank (its mode) instead.")));
	mtdpp_bayes_params(&q)->samples = 1;
	mtdpp_bayes_params(&chosen)->samples = fitting_samples(data, given, &q);
	work = AllocSetContextCreate(CurrentMemoryContext, "mtdpp Bayesian low-rank fit",
								 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(work);

	mtdpp_progress_phase(MTDPP_PHASE_EPOCHS);
	mode = mtdpp_fit_dpp_rank(data, &q, NULL, &slice, NAN);
	mode->hyperparams = NULL;	/* one sample */
	mtdpp_model_prepare(mode);
	mpr_mode = mtdpp_validation_mpr(&slice, mode);
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("mode: %d epochs (best %d), validation MPR %.2f; Langevin chain from it",
						mode->epochs_run, mode->best_epoch, mpr_mode)));

	mtdpp_bayes_params(&q)->prior_precision = mtdpp_param_given(p, "prior_precision") ? mtdpp_bayes_params(p)->prior_precision :
		mode_precision(mode);

	choose = !mtdpp_param_given(p, "step_size") && slice.n > 0;
	for (int k = 0; k < (choose ? lengthof(step_candidates) : 1); k++)
	{
		MtdppParams c = *p;
		MtdppModel *fit;
		double		mpr;
		int			epochs;
		int64		n_steps;

		if (!mtdpp_param_given(p, "step_size"))
			mtdpp_bayes_params(&c)->step_size = step_candidates[k];
		mtdpp_bayes_params(&c)->prior_precision = mtdpp_bayes_params(&q)->prior_precision;
		fit = sampled_model(data, &c, mode, &slice, &mpr, &epochs, &n_steps, start);
		tried[n_tried] = mtdpp_bayes_params(&c)->step_size;
		mprs[n_tried++] = mpr;
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("step size %g: %d samples, validation MPR %.2f (mode %.2f)",
							mtdpp_bayes_params(&c)->step_size, mtdpp_bayes_params(p)->samples, mpr, mpr_mode)));
		if (m == NULL || mpr > mpr_mean)
		{
			m = fit;
			mpr_mean = mpr;
			chain_epochs = epochs;
			steps = n_steps;
		}
	}

	/* the model kept, its training record the mode's, into the caller's memory */
	m->n_baskets = data->n_baskets;
	m->log_w = p->log_w;
	m->n_examples = mode->n_examples;
	m->epochs_run = mode->epochs_run;
	m->best_epoch = mode->best_epoch;
	m->loss_history = mode->loss_history;
	m->val_history = mode->val_history;
	MemoryContextSwitchTo(caller);
	m = mtdpp_model_copy(m);

	initStringInfo(&json);
	appendStringInfoString(&json, m->hyperparams);
	json.len--;					/* the closing brace */
	json.data[json.len] = '\0';
	appendStringInfo(&json, ", \"sampler\": {\"method\": \"preconditioned SGLD\", \"step_size\": \"%s\", \"chain_epochs\": %d, \"steps\": " INT64_FORMAT ", \"validation_baskets\": %d, \"validation_mpr_mode\": ",
					 choose ? "chosen on validation" : mtdpp_param_given(p, "step_size") ? "given" : "no validation slice", chain_epochs, steps, slice.n);
	append_number(&json, mpr_mode);
	appendStringInfoString(&json, ", \"candidates\": [");
	for (int k = 0; k < n_tried; k++)
	{
		appendStringInfo(&json, "%s{\"step_size\": %g, \"validation_mpr\": ", k ? ", " : "", tried[k]);
		append_number(&json, mprs[k]);
		appendStringInfoChar(&json, '}');
	}
	appendStringInfoString(&json, "]}}");
	m->hyperparams = json.data;
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("%d samples kept: validation MPR of their mean %.2f, against %.2f at the mode",
						mtdpp_bayes_params(p)->samples, mpr_mean, mpr_mode)));
	MemoryContextDelete(work);
	m->seconds = mtdpp_seconds_since(start);
	return m;
}
