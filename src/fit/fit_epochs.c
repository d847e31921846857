/*
 * fit/fit_epochs.c
 *		One fit of the DPP kinds at a given rank, by minibatch stochastic
 *		gradient: the trainer's set-up and the epoch loop.
 *
 * This is the fit of the DPP kinds and of the kinds whose bilinear scores
 * (a factorization machine's) replace the ln dets (fit_bilinear.c):
 * which parameters train (task factors R, bias D) and how examples are made
 * (targets of a basket, or whole baskets, by likelihood or not) are traits
 * of the kind (kinds.c), and every ln det comes from the numeric core that
 * scoring uses (kernel.c).  mtdpp_fit_dpp_rank sets a trainer up
 * (trainer_setup), runs the epochs (epoch_positives, run_epoch, then the
 * validation of train_epochs), and copies the best epoch's model out.
 * Its examples are fit_examples.c's, their loss and gradients fit_loss.c's,
 * the optimiser's steps fit_update.c's.
 *
 * Early stopping.  A validation slice of the training baskets (never the
 * user's test baskets, validation_slice.c) is held out; after each epoch
 * its mean percentile rank is measured with the scorer that serves queries,
 * and the best epoch's parameters are kept.  Training stops after
 * `patience` epochs without gain, or, in a race against a rival's
 * validation MPR (fit.c's capacity search), once the epochs left cannot
 * reach it even at the mean gain per epoch since the first, which a
 * learning curve that flattens as the rate decays does not exceed
 * (out_of_reach).
 *
 * Warm starts.  From an earlier model (warm_start), the items it knows keep
 * their parameters (initialise), and the run is built to cost a fraction of
 * a cold start: it resumes at the rate where that model's schedule left off
 * (params.c: a fresh optimiser at the initial rate first undoes what it had
 * learnt), for at most warm_epochs with warm_patience, an epoch counting as
 * a gain only if it gains WARM_MIN_GAIN; each epoch trains on every new
 * basket and a sample of the old ones (warm_budget), and measures on the
 * newest baskets (validation_slice.c).
 *
 * Memory.  The whole working set is sized and checked against
 * maintenance_work_mem before anything is allocated; everything lives in a
 * memory context of its own, so an error or a cancel frees it all.
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "fit/fit.h"
#include "fit/fit_int.h"
#include "fit/params.h"
#include "fit/progress.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"
#include "numeric/helper_thread.h"
#include "numeric/kernel.h"

double
gaussian(pg_prng_state *rng)
{
	double		u1 = pg_prng_double(rng),
				u2 = pg_prng_double(rng);

	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Working set in bytes: parameters, gradients, optimiser state, best copy. */
Size
training_memory(const MtdppBaskets *d, const MtdppParams *p)
{
	Size		cells = mul_size(d->n_items, p->rank);
	/* V R R2, gV gR per shard, mV vV mR vR, bestV bestR */
	Size		per_cell = sizeof(double) * (9 + 2 * TRAIN_SHARDS);
	Size		total = mul_size(cells, per_cell + sizeof(double) * 2);

	total = add_size(total, mul_size(d->n_items, sizeof(double) * 8 + sizeof(bool) * 2 + 8));
	{
		/* the training baskets: those of two items or more, but validation's */
		int			max_len = 0;
		int64		eligible = 0,
					val;

		for (int b = 0; b < d->n_baskets; b++)
		{
			int			len = (int) (d->start[b + 1] - d->start[b]);

			max_len = Max(max_len, len);
			eligible += len >= 2;
		}
		/* a warm start's slice may be smaller (validation_slice.c): none, at most */
		val = p->warm ? 0 : Min((int64) floor(eligible * p->validation_fraction), p->validation_baskets);
		total = add_size(total, mul_size(sampled_pool(d->start[d->n_baskets],
													  epoch_share(p, eligible - (val < 20 ? 0 : val)),
													  max_len), sizeof(Positive)));
	}

	/*
	 * What the same statement already holds (the baskets), and each shard's
	 * per-item lists and scratch for one context (shard_new): the budget is
	 * the statement's, not the factors' alone.
	 */
	{
		Size		nt = 1 + p->negatives,
					mc = p->max_context,
					r = p->rank,
					pairs = mc * (mc + 1) / 2;
		int64		max_len = 0;
		Size		shard;

		for (int b = 0; b < d->n_baskets; b++)
			max_len = Max(max_len, d->start[b + 1] - d->start[b]);
		total = add_size(total, mul_size(d->n_lines, sizeof(int32)));
		total = add_size(total, mul_size(d->n_baskets + 1, sizeof(int64)));
		total = add_size(total, mul_size(d->n_items, 2 * sizeof(int32)));
		shard = mul_size(d->n_items, sizeof(double) + 2 * sizeof(bool) + 2 * sizeof(int32));
		shard = add_size(shard, mul_size(sizeof(double),
										 r * pairs + nt * r + nt * pairs + nt * mc * mc +
										 nt * mc * r + 2 * mc * r + 2 * nt));
		shard = add_size(shard, mul_size(max_len + 1, 2 * sizeof(int32)));
		total = add_size(total, mul_size(shard, TRAIN_SHARDS));

		/*
		 * Validation ranks with the scorer (topk_bounded.c), whose bounds gather
		 * up to every candidate's R^2 row and 2^20 diagonal terms at a
		 * time, then score blocks of up to 1024 candidates exactly; and a
		 * score, bound, index and flag per item.
		 */
		total = add_size(total, mul_size(sizeof(double),
										 Min((Size) d->n_items, (Size) 1 << 20) * r +
										 Min((Size) d->n_items * mc, (Size) 1 << 20) +
										 Min((Size) d->n_items, 1024) * (r + pairs) + mc * mc));
		total = add_size(total, mul_size(d->n_items, 2 * sizeof(double) + sizeof(int32) + sizeof(bool)));
	}
	return total;
}

static void
check_memory(const MtdppBaskets *d, const MtdppParams *p)
{
	Size		need = training_memory(d, p);
	Size		limit = (Size) maintenance_work_mem * 1024;

	if (need > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training a rank %d model of %d items needs %zu kB, more than maintenance_work_mem (%d kB)",
						p->rank, d->n_items, (need + 1023) / 1024, maintenance_work_mem),
				 errhint("SET maintenance_work_mem = '%zuMB' for this session, or train with a lower rank.",
						 (need >> 20) + 1)));
}

/*
 * Random initial factors.  With a warm start, the items the earlier model
 * knows take its parameters (R from its R squared: R enters every kernel
 * squared, so its sign is immaterial), and the new items start as that
 * model's typical item: task factors and bias at its root mean squares,
 * random item factors.  (Started as a cold start's, at R = D = 1, they would
 * outscore every trained item, whose task factors the L2 decay has shrunk.)
 * Returns how many items kept their parameters.
 */
static int
initialise(Trainer *tr)
{
	MtdppModel *m = tr->m;
	const MtdppParams *p = tr->p;
	const MtdppModel *warm = p->warm;
	Size		cells = (Size) m->n_items * m->rank;
	int			kept = 0;
	double	   *typical_R = NULL;
	double		typical_D = 1.0;

	if (warm != NULL && warm->n_items > 0)
	{
		double	   *row = palloc(sizeof(double) * m->rank);
		double		d2 = 0.0;

		typical_R = palloc0(sizeof(double) * m->rank);
		for (int32 j = 0; j < warm->n_items; j++)
		{
			mtdpp_gather_R2(warm, &j, 1, row);
			for (int c = 0; c < m->rank; c++)
				typical_R[c] += row[c] / warm->n_items;
			d2 += warm->D[j] * warm->D[j] / warm->n_items;
		}
		for (int c = 0; c < m->rank; c++)
			typical_R[c] = sqrt(typical_R[c]);
		typical_D = sqrt(d2);
		pfree(row);
	}
	for (Size c = 0; c < cells; c++)
		m->V[c] = p->init_scale * gaussian(&tr->rng);
	for (Size c = 0; c < cells; c++)
		m->R[c] = !tr->task_factors ? 1.0 :
			(typical_R ? typical_R[c % m->rank] : 1.0) * (1.0 + p->init_scale * gaussian(&tr->rng));
	for (int i = 0; i < m->n_items; i++)
		m->D[i] = tr->bias && !tr->bilinear ? typical_D * (1.0 + p->init_scale * gaussian(&tr->rng)) : 0.0;
	for (int i = 0; warm != NULL && i < m->n_items; i++)
	{
		int32		j = mtdpp_model_index(warm, m->item_ids[i]);
		double	   *V = m->V + (size_t) i * m->rank,
				   *R = m->R + (size_t) i * m->rank;

		if (j < 0)
			continue;
		mtdpp_gather_V(warm, &j, 1, V);
		if (tr->task_factors)
		{
			mtdpp_gather_R2(warm, &j, 1, R);
			for (int c = 0; c < m->rank; c++)
				R[c] = sqrt(R[c]);
		}
		if (tr->bias)
			m->D[i] = warm->D[j];
		kept++;
	}
	mtdpp_model_prepare(m);
	return kept;
}

/* validation MPR points an epoch of a warm start must gain to count as a gain */
#define WARM_MIN_GAIN 0.05

static void
snapshot(Trainer *tr, bool save)
{
	MtdppModel *m = tr->m;
	Size		bytes = sizeof(double) * (Size) m->n_items * m->rank;

	if (save)
	{
		memcpy(tr->bestV, m->V, bytes);
		memcpy(tr->bestR, m->R, bytes);
		memcpy(tr->bestD, m->D, sizeof(double) * m->n_items);
	}
	else
	{
		memcpy(m->V, tr->bestV, bytes);
		memcpy(m->R, tr->bestR, bytes);
		memcpy(m->D, tr->bestD, sizeof(double) * m->n_items);
		mtdpp_model_prepare(m);
	}
}

static bool
parameters_finite(const MtdppModel *m)
{
	Size		cells = (Size) m->n_items * m->rank;

	for (Size c = 0; c < cells; c++)
		if (!isfinite(m->V[c]) || !isfinite(m->R[c]))
			return false;
	for (int i = 0; i < m->n_items; i++)
		if (!isfinite(m->D[i]))
			return false;
	return true;
}

/*
 * A shard: gradients (zero) and scratch for contexts of MAX_CTX items, in a
 * memory context of its own, so that no cache line is shared with another
 * shard, which another thread writes.
 */
Shard *
shard_new(Trainer *tr, int max_len, int nt_max, int max_ctx)
{
	MemoryContext own = AllocSetContextCreate(CurrentMemoryContext, "mtdpp training shard",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext caller = MemoryContextSwitchTo(own);
	int			n = Max(tr->m->n_items, 1);
	int			r = tr->m->rank;
	Size		cells = (Size) n * r;
	Shard	   *sh = palloc0(sizeof(Shard));

	sh->tr = tr;
	sh->gV = mtdpp_alloc_huge(cells * sizeof(double));
	sh->gR = mtdpp_alloc_huge(cells * sizeof(double));
	sh->gD = palloc0(sizeof(double) * n);
	sh->touchedV = palloc0(sizeof(bool) * n);
	sh->touchedR = palloc0(sizeof(bool) * n);
	sh->listV = palloc(sizeof(int32) * n);
	sh->listR = palloc(sizeof(int32) * n);
	sh->ctx = palloc(sizeof(int32) * (max_len + 1));
	sh->set = palloc(sizeof(int32) * (max_len + 1));
	sh->targets = palloc(sizeof(int32) * nt_max);
	sh->labels = palloc(sizeof(double) * nt_max);
	sh->P = palloc(sizeof(double) * (size_t) r * max_ctx * (max_ctx + 1) / 2);
	sh->R2rows = palloc(sizeof(double) * (size_t) nt_max * r);
	sh->packed = palloc(sizeof(double) * (size_t) nt_max * max_ctx * (max_ctx + 1) / 2);
	sh->K = palloc(sizeof(double) * (size_t) nt_max * max_ctx * max_ctx);
	sh->logdet = palloc(sizeof(double) * nt_max);
	sh->g = palloc(sizeof(double) * nt_max);
	sh->M = palloc(sizeof(double) * (size_t) nt_max * max_ctx * r);
	sh->VC = palloc(sizeof(double) * (size_t) max_ctx * r);
	sh->GVC = palloc(sizeof(double) * (size_t) max_ctx * r);
	MemoryContextSwitchTo(caller);
	return sh;
}

/*
 * A shard's examples: gradients, loss and counts.  Runs on a thread of its
 * own, so it must not allocate, raise errors or look at interrupts: it only
 * computes, over memory set up beforehand.  Example k draws its negatives
 * and context from epoch_seed + k, whichever shard or thread runs it.
 */
static void
run_shard(void *arg)
{
	Shard	   *sh = (Shard *) arg;
	Trainer    *tr = sh->tr;

	double		loss = 0.0;
	int64		n_ex = 0;

	for (int64 k = sh->first; k < sh->last; k++)
	{
		pg_prng_seed(&sh->rng, tr->epoch_seed + (uint64) k);
		if (tr->targeted)
			loss += targeted_examples(sh, tr->positives[k], sh->scale, &n_ex);
		else
			loss += single_kernel_examples(sh, tr->positives[k], sh->scale, &n_ex);
	}
	sh->loss = loss;
	sh->n_ex = n_ex;
}

/*
 * The positives FIRST..LAST-1 of this epoch, split into the shards, run
 * side by side.
 */
void
run_minibatch(Trainer *tr, int64 first, int64 last, double scale)
{
	int64		per = (last - first + TRAIN_SHARDS - 1) / TRAIN_SHARDS;

	for (int k = 0; k < TRAIN_SHARDS; k++)
	{
		Shard	   *sh = tr->shards[k];

		sh->first = Min(first + k * per, last);
		sh->last = Min(sh->first + per, last);
		sh->scale = scale;
	}
	run_pair(tr, run_shard, tr->shards[0], tr->shards[1]);
}

/*
 * The flops of a minibatch, roughly: its positives' mean context b (capped at
 * max_context), each with NT_MAX targets of about 2 b^2 rank (kernel and
 * solves) plus b^3 / 3 (Cholesky), three times over for the gradient.
 */
static double
minibatch_flops(Trainer *tr, const bool *is_val, int nt_max)
{
	const MtdppBaskets *d = tr->data;
	const MtdppParams *p = tr->p;
	double		work = 0.0,
				weight = 0.0;

	for (int b = 0; b < d->n_baskets; b++)
	{
		int			len = (int) (d->start[b + 1] - d->start[b]);
		double		c = Min(len - 1, p->max_context),
					w = (p->positives == 0) ? len : Min(len, p->positives);

		if (is_val[b] || len < 2)
			continue;
		work += w * (2.0 * c * c * p->rank + c * c * c / 3.0);
		weight += w;
	}
	return weight > 0 ? 3.0 * p->batch_size * nt_max * work / weight : 0.0;
}

/*
 * Sets TR up to train on DATA with P, in the current memory context: the
 * model with its initial parameters, the shards, the optimiser state, the
 * validation slice, the helper thread and the pool of positives.
 */
void
trainer_setup(Trainer *tr, MtdppBaskets *data, const MtdppParams *p,
			  const MtdppValidation *given)
{
	const MtdppKindRoutine *kind = mtdpp_kind(p->kind);
	MtdppModel *m;
	int			nt_max = 1 + p->negatives;
	Size		cells = (Size) data->n_items * p->rank;
	int			max_len = 0;

	for (int b = 0; b < data->n_baskets; b++)
		max_len = Max(max_len, (int) (data->start[b + 1] - data->start[b]));

	memset(tr, 0, sizeof(*tr));
	tr->p = p;
	tr->data = data;
	tr->bias = kind->bias;
	tr->task_factors = kind->task_factors;
	tr->likelihood = kind->likelihood;
	tr->bilinear = kind->bilinear;
	tr->targeted = kind->task_factors || kind->bilinear;
	pg_prng_seed(&tr->rng, (uint64) p->seed);

	m = mtdpp_model_alloc(p->kind, data->n_items, p->rank);
	memcpy(m->item_ids, data->item_ids, sizeof(int32) * data->n_items);
	memcpy(m->popularity, data->popularity, sizeof(int32) * data->n_items);
	m->n_baskets = data->n_baskets;
	m->log_w = p->log_w;
	tr->m = m;
	{
		double		s = 0.0;

		for (int i = 0; i < data->n_items; i++)
			s += data->popularity[i];
		tr->mean_pop = data->n_items > 0 ? s / data->n_items : 1.0;
	}

	/* build_context never exceeds max_context */
	for (int k = 0; k < TRAIN_SHARDS; k++)
		tr->shards[k] = shard_new(tr, max_len, nt_max, p->max_context);
	tr->mV = mtdpp_alloc_huge(cells * sizeof(double));
	tr->vV = mtdpp_alloc_huge(cells * sizeof(double));
	tr->mR = mtdpp_alloc_huge(cells * sizeof(double));
	tr->vR = mtdpp_alloc_huge(cells * sizeof(double));
	tr->bestV = mtdpp_alloc_huge(cells * sizeof(double));
	tr->bestR = mtdpp_alloc_huge(cells * sizeof(double));
	tr->mD = palloc0(sizeof(double) * data->n_items);
	tr->vD = palloc0(sizeof(double) * data->n_items);
	tr->bestD = palloc0(sizeof(double) * data->n_items);
	if (tr->likelihood)
	{
		tr->G = palloc(sizeof(double) * (size_t) p->rank * p->rank);
		tr->VG = mtdpp_alloc_huge(cells * sizeof(double));
	}

	if (p->negative_power != 0.0)
	{
		double		total = 0.0;

		tr->neg_cdf = palloc(sizeof(double) * data->n_items);
		tr->neg_logq = palloc(sizeof(double) * data->n_items);
		for (int i = 0; i < data->n_items; i++)
		{
			total += pow(Max(data->popularity[i], 1), p->negative_power);
			tr->neg_cdf[i] = total;
		}
		for (int i = 0; i < data->n_items; i++)
			tr->neg_logq[i] = log(data->n_items * pow(Max(data->popularity[i], 1), p->negative_power) / total);
	}
	tr->warm_items = initialise(tr);
	/* a slice given is another fit's, so that both are measured alike */
	if (given != NULL)
		mtdpp_validation_copy(&tr->val, given);
	else
		mtdpp_validation_carve(&tr->val, data, p, &tr->rng);

	/*
	 * A second thread when allowed and when a minibatch is worth it: below a
	 * few million flops, handing half of it over costs more than it saves.
	 */
	if (max_parallel_maintenance_workers > 0 &&
		minibatch_flops(tr, tr->val.is_val, nt_max) >= 3e6)
		tr->helper = mtdpp_helper_start();
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("training %d items on %d thread%s", data->n_items,
						tr->helper ? 2 : 1, tr->helper ? "s" : "")));

	/* room for every positive example of an epoch: basket, position of the target */
	{
		int64		n_train = 0,
					old_lines = 0;

		for (int b = 0; b < data->n_baskets; b++)
			if (!tr->val.is_val[b] && data->start[b + 1] - data->start[b] >= 2)
			{
				tr->n_pool += data->start[b + 1] - data->start[b];
				n_train++;
			}
		tr->basket_share = epoch_share(p, n_train);
		warm_budget(tr, n_train, &old_lines);
		if (tr->basket_share < 1.0 || tr->old_share < 1.0)
			tr->n_pool = sampled_pool(tr->n_pool, tr->basket_share *
									  (1.0 - (1.0 - tr->old_share) * old_lines / tr->n_pool),
									  max_len);
	}
	if (tr->n_pool == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no basket of the training data has two or more items"),
				 errdetail("%d baskets were read, over %d distinct items.",
						   data->n_baskets, data->n_items),
				 errhint("A basket-completion model learns from baskets of at least two items: check order_col and item_col.")));
	tr->pool = mtdpp_alloc_huge(sizeof(Positive) * tr->n_pool);
}

/*
 * One pass over this epoch's N_POS positives, a minibatch at a time, at
 * learning rate LR; returns the mean loss per example and adds the examples
 * to *EXAMPLES.  A fit whose loss or parameters stop being finite, or most
 * of whose kernels are singular, has diverged: an error.
 */
static double
run_epoch(Trainer *tr, int epoch, int64 n_pos, double lr, int64 *examples)
{
	const MtdppParams *p = tr->p;
	int			nt_max = 1 + p->negatives;
	double		loss = 0.0;
	int64		n_ex = 0;
	int64		n_singular = 0;

	tr->positives = tr->pool;
	tr->epoch_seed = pg_prng_uint64(&tr->rng);
	for (int64 first = 0; first < n_pos; first += p->batch_size)
	{
		int64		last = Min(first + p->batch_size, n_pos);
		double		scale = 1.0 / ((last - first) * (tr->likelihood ? 1 : nt_max));

		CHECK_FOR_INTERRUPTS();
		run_minibatch(tr, first, last, scale);
		for (int k = 0; k < TRAIN_SHARDS; k++)
		{
			loss += tr->shards[k]->loss;
			n_ex += tr->shards[k]->n_ex;
			n_singular += tr->shards[k]->n_singular;
			tr->shards[k]->n_singular = 0;
		}
		if (tr->likelihood)
			loss += (last - first) * lowrank_normaliser(tr, 1.0);
		apply_updates(tr, lr);
	}
	*examples += n_ex;
	loss = n_ex > 0 ? loss / n_ex : 0.0;
	if (isnan(loss) || isinf(loss) || n_singular * 2 > n_ex || !parameters_finite(tr->m))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("training diverged at epoch %d: the loss is %g and " INT64_FORMAT " of " INT64_FORMAT " kernels were singular",
						epoch + 1, loss, n_singular, n_ex),
				 errhint("Lower learning_rate (now %g) or raise l2 (now %g).",
						 p->learning_rate, p->l2)));
	return loss;
}

/*
 * Whether a fit that has run EPOCHS of MAX epochs, from validation MPR
 * FIRST after its first to BEST, cannot reach TO_BEAT in the epochs left:
 * at the mean gain per epoch since the first, kept up to the last epoch.
 */
static bool
out_of_reach(double to_beat, double first, double best, int epochs, int max)
{
	double		gain;

	if (isnan(to_beat) || epochs < 2 || epochs >= max || best >= to_beat)
		return false;
	gain = Max(best - first, 0.0) / (epochs - 1);
	return best + gain * (max - epochs) < to_beat;
}

/*
 * The epochs: each a pass over the positives, then the validation MPR;
 * the best epoch's parameters are kept in tr->best*, and training stops
 * after `patience` epochs without gain, or when tr->to_beat is out of
 * reach.  START is when training began.
 */
static void
train_epochs(Trainer *tr, instr_time start)
{
	const MtdppParams *p = tr->p;
	MtdppModel *m = tr->m;
	double		best = -1.0,
				mark = -1.0,	/* the validation MPR of the last gain */
				first = NAN;	/* after the first epoch */
	int			since_best = 0;
	double		lr = p->warm && p->warm_learning_rate > 0.0 ? p->warm_learning_rate : p->learning_rate;
	instr_time	val_start;
	double		val_seconds = 0.0;
	int64		examples = 0;

	m->loss_history = palloc0(sizeof(double) * p->epochs);
	m->val_history = palloc0(sizeof(double) * p->epochs);
	mtdpp_progress_fit(p->rank, p->epochs);
	if (p->warm != NULL)
	{
		/* a warm start is the best so far until an epoch beats it (epoch 0) */
		double		val = mtdpp_validation_mpr(&tr->val, tr->m);

		if (!isnan(val))
			best = mark = val;
		snapshot(tr, true);
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("warm start from model \"%s\": %d of %d items kept their parameters, validation MPR %.2f; learning rate %g, at most %d epochs, patience %d",
							p->warm_start, tr->warm_items, m->n_items, val, lr, p->epochs, p->patience)));
	}
	for (int epoch = 0; epoch < p->epochs; epoch++)
	{
		int64		n_pos = epoch_positives(tr);
		double		loss = run_epoch(tr, epoch, n_pos, lr, &examples);
		double		val;

		INSTR_TIME_SET_CURRENT(val_start);
		val = mtdpp_validation_mpr(&tr->val, tr->m);
		val_seconds += mtdpp_seconds_since(val_start);
		m->loss_history[epoch] = loss;
		m->val_history[epoch] = val;
		m->epochs_run = epoch + 1;
		m->final_loss = loss;
		mtdpp_progress_epoch(epoch + 1, val);
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("epoch %d/%d: loss %.5f, validation MPR %.2f, %.1f s (validation %.1f s)",
							epoch + 1, p->epochs, loss, val, mtdpp_seconds_since(start), val_seconds)));

		if (isnan(val) || val > best)
		{
			best = isnan(val) ? best : val;
			m->best_epoch = epoch + 1;
			snapshot(tr, true);
		}
		/*
		 * Patience runs out after epochs without gain; for a warm start,
		 * without a gain of WARM_MIN_GAIN, since it starts near the optimum
		 * and then creeps up by hundredths an epoch.
		 */
		if (isnan(val) || val > mark + (p->warm ? WARM_MIN_GAIN : 0.0))
		{
			mark = isnan(val) ? mark : val;
			since_best = 0;
		}
		else if (++since_best >= p->patience)
			break;
		if (epoch == 0)
			first = val;
		if (out_of_reach(tr->to_beat, first, best, epoch + 1, p->epochs))
		{
			if (p->verbose)
				ereport(NOTICE,
						(errmsg("stopped after %d of %d epochs: at %.2f per epoch, validation MPR %.2f cannot reach %.2f",
								epoch + 1, p->epochs, Max(best - first, 0.0) / epoch, best, tr->to_beat)));
			break;
		}
		lr *= p->lr_decay;
	}
	m->n_examples = examples;
}

/*
 * One fit at p->rank: on the validation slice GIVEN (another fit's) if not
 * NULL, else on one it carves; that slice is copied into SLICE (if not NULL,
 * in the caller's memory context), so that a fit that chooses more on it
 * (fit.c, and the kinds that weigh evidence) measures on baskets the model never learnt
 * from.  TO_BEAT: NAN, or the validation MPR on GIVEN of a rival fit,
 * which this one stops racing once it cannot reach it.  The working set
 * lives in a context deleted on return.
 */
MtdppModel *
mtdpp_fit_dpp_rank(MtdppBaskets *data, const MtdppParams *p,
					 const MtdppValidation *given, MtdppValidation *slice,
					 double to_beat)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	Trainer		tr;
	MtdppModel *result;
	instr_time	start;

	Assert(p->rank >= 0);
	INSTR_TIME_SET_CURRENT(start);
	check_memory(data, p);
	work = AllocSetContextCreate(CurrentMemoryContext, "mtdpp training",
								 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(work);

	trainer_setup(&tr, data, p, given);
	tr.to_beat = to_beat;
	train_epochs(&tr, start);
	snapshot(&tr, false);
	{
		/* a warm start's slice is its own choice (validation_slice.c): recorded */
		MtdppParams stored = *p;

		if (p->warm != NULL && p->warm_slice)
			stored.validation_baskets = tr.val.n;
		tr.m->hyperparams = mtdpp_params_to_json(&stored);
	}
	tr.m->seconds = mtdpp_seconds_since(start);

	/* copy the result out of the working context, which then goes */
	MemoryContextSwitchTo(caller);
	result = mtdpp_model_copy(tr.m);
	if (slice != NULL)
		mtdpp_validation_copy(slice, &tr.val);
	MemoryContextDelete(work);
	return result;
}
