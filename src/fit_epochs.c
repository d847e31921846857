/*
 * train.c
 *		Fits the DPP kinds to baskets by minibatch stochastic gradient.
 *
 * This is the fit of the four DPP kinds (kind_multitask.c, kind_single.c):
 * which parameters train (task factors R, bias D) and how examples are made
 * (targets of a basket, or whole baskets, by likelihood or not) are traits
 * of the kind (kinds.c), and every ln det comes from the numeric core that
 * scoring uses (kernel.c).  mtdpp_train_dpp sets a trainer up
 * (trainer_setup), runs the epochs (epoch_positives, run_epoch, then the
 * validation of train_epochs), and copies the best epoch's model out.
 *
 * Examples (the paper's Algorithm 1 and appendix).  Every training basket
 * yields positive examples: a target item t and the rest of the basket as
 * context C (target => 'random': `positives` targets drawn per basket and
 * epoch, or every item; target => 'last': the last item given the items added
 * before it, and as many earlier prefixes).  Each positive brings `negatives`
 * negative targets, items drawn from outside the basket (uniformly, or by
 * popularity^negative_power), with the same context.  Contexts beyond
 * `max_context` items are subsampled.
 *
 * Loss.  With s_t = ln det K_t[C], K_t = V diag(R_t^2) V^T + D^2:
 *	softmax (default): -s_pos + ln sum_t exp(s_t) over the positive and its
 *		negatives; d/ds_t = softmax_t - [t = pos].  Invariant to the scale of
 *		the determinant, which grows with the basket, so one w does not have
 *		to fit baskets of 2 and of 30 items at once.
 *	logistic (the paper's): z = w det K, y = 1: -ln(1 - exp(-z)), y = 0: z;
 *		d/ds = -z / expm1(z) or z.
 * From d ln det K = tr(K^-1 dK) (paper, appendix), with M = K^-1 V_C:
 *		d/dV_C = 2 M diag(R_t^2)
 *		d/dR_tj = 2 R_tj sum_s V_sj M_sj
 *		d/dD_s = 2 [K^-1]_ss D_s
 * checked against finite differences by mtdpp.gradient_check.  The other
 * kinds reuse this machinery: the logistic DPP with R = 1 on whole baskets
 * against baskets with one item swapped; the low-rank DPP with R = 1, D = 0,
 * loss -ln det L_B plus the normaliser ln det(I + V^T V) per minibatch.
 *
 * Optimiser.  Adam (default) or the paper's momentum, on the rows a minibatch
 * touches only, so an epoch costs the examples and not the catalog.  Rows
 * touched receive the popularity-weighted L2 term l2 * alpha_i * theta_i with
 * alpha_i = mean popularity / popularity_i: rare items, seen in few
 * examples, are held closer to zero (Gartrell et al. 2017).  That decay
 * drives many task factors towards zero, and Adam follows them down
 * geometrically, through the subnormal numbers: so a parameter that falls
 * below what can carry signal (MTDPP_NEGLIGIBLE) is made zero there, and
 * with it, where its gradient is proportional to it (task factors, biases),
 * its moments, so that it stays zero.
 *
 * Early stopping.  A validation slice of the training baskets (never the
 * user's test baskets, validation_slice.c) is held out; after each epoch its mean percentile rank
 * is measured with the scorer that serves queries, and the best epoch's
 * parameters are kept.  Training stops after `patience` epochs without gain.
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

#include "fit_int.h"

static double
gaussian(pg_prng_state *rng)
{
	double		u1 = pg_prng_double(rng),
				u2 = pg_prng_double(rng);

	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static inline bool
basket_contains(const MtdppBaskets *d, int b, int item)
{
	for (int64 k = d->start[b]; k < d->start[b + 1]; k++)
		if (d->items[k] == item)
			return true;
	return false;
}

/*
 * The share of the N_TRAIN training baskets an epoch trains on: all of them,
 * or a fresh random sample of about epoch_baskets, so that an epoch's cost
 * stops growing with the order history (each epoch sees other baskets, and
 * over the epochs most of them).
 */
static double
epoch_share(const MtdppParams *p, int64 n_train)
{
	if (p->epoch_baskets <= 0 || n_train <= p->epoch_baskets)
		return 1.0;
	return (double) p->epoch_baskets / n_train;
}

/*
 * Room for the positives of an epoch that samples SHARE of baskets holding
 * LINES lines: the expected count and a margin (an epoch that draws more
 * leaves the excess baskets out).
 */
static int64
sampled_pool(int64 lines, double share, int max_len)
{
	double		expected = lines * share;

	return Min(lines, (int64) (expected + 6.0 * sqrt(expected * max_len) + max_len));
}

/* Working set in bytes: parameters, gradients, optimiser state, best copy. */
static Size
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
		 * Validation ranks with the scorer (topk.c), whose bounds gather
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
				 errhint("Raise maintenance_work_mem for this session, or train with a lower rank.")));
}

static void
touch_row(bool *flags, int32 *list, int *n, int row)
{
	if (!flags[row])
	{
		flags[row] = true;
		list[(*n)++] = row;
	}
}

/*
 * Forward pass: every target's kernel, factorised, and its ln det, by the
 * numeric core that scoring uses (kernel.c); the Cholesky factors stay in
 * sh->K for the backward pass.  A numerically singular kernel carries no
 * signal (its ln det is -inf) and is counted.
 */
static pg_attribute_always_inline void
context_logdets(Shard *sh, int b, int nt)
{
	MtdppModel *m = sh->tr->m;

	mtdpp_gather_R2(m, sh->targets, nt, sh->R2rows);
	mtdpp_gather_V(m, sh->ctx, b, sh->VC);
	mtdpp_context_pairs(sh->VC, b, m->rank, sh->P);
	sh->n_singular += mtdpp_kernels_logdet(m, sh->ctx, b, sh->P, sh->R2rows, nt,
										   sh->packed, sh->K, true, sh->logdet);
}

/*
 * The loss of one context's NT targets, added to *LOSS, and its derivative
 * g_t with respect to each ln det into sh->g (see the essay); false when the
 * example carries no gradient (a positive whose kernel is singular).
 */
static pg_attribute_always_inline bool
context_loss(Shard *sh, int nt, double *loss)
{
	Trainer    *tr = sh->tr;
	MtdppModel *m = tr->m;

	if (tr->likelihood)
	{
		/* low-rank DPP: the basket's ln det, normaliser added per batch */
		*loss -= sh->logdet[0];
		sh->g[0] = -1.0;
	}
	else if (tr->p->loss == MTDPP_LOSS_SOFTMAX)
	{
		/* cross-entropy of the positive among its negatives */
		double		top,
					sum = 0.0;

		/*
		 * Negatives drawn with probability q (popularity^power) compete with
		 * the logit ln det K - ln(n q), which keeps the softmax an estimate of
		 * the one over the whole catalog (a sampled softmax).
		 */
		if (tr->neg_logq != NULL)
			for (int t = 1; t < nt; t++)
				sh->logdet[t] -= tr->neg_logq[sh->targets[t]];
		top = sh->logdet[0];
		for (int t = 1; t < nt; t++)
			top = Max(top, sh->logdet[t]);
		for (int t = 0; t < nt; t++)
			sum += exp(sh->logdet[t] - top);
		*loss += top + log(sum) - sh->logdet[0];
		for (int t = 0; t < nt; t++)
			sh->g[t] = exp(sh->logdet[t] - top) / sum - (t == 0 ? 1.0 : 0.0);
		if (isinf(sh->logdet[0]))
		{
			*loss = 0.0;
			return false;
		}
	}
	else
	{
		for (int t = 0; t < nt; t++)
		{
			double		log_z = m->log_w + sh->logdet[t];

			if (sh->labels[t] > 0.5)
			{
				*loss -= mtdpp_log_p_one(log_z);
				if (log_z < -30.0)
					sh->g[t] = -1.0;
				else
				{
					double		z = exp(Min(log_z, 700.0));

					sh->g[t] = -z / expm1(z);
				}
			}
			else
			{
				*loss -= mtdpp_log_p_zero(log_z);
				sh->g[t] = exp(Min(log_z, 700.0));
			}
		}
	}
	return true;
}

/*
 * Backward pass: the gradients of one context's NT targets, weighted by
 * sh->g and scaled by SCALE, into the shard's gradients.
 */
static pg_attribute_always_inline void
context_gradients(Shard *sh, int b, int nt, double scale)
{
	Trainer    *tr = sh->tr;
	MtdppModel *m = tr->m;
	int			r = m->rank;

	/*
	 * A target whose weight is below 2^-60 (exp() of a ln det far below the
	 * others') adds nothing to the minibatch's gradient that a double could
	 * hold beside the weights, up to 1, of the examples that carry signal:
	 * it is skipped, so that no subnormal weight enters the loops below.
	 */
	for (int t = 0; t < nt; t++)
		if (fabs(sh->g[t]) < 0x1p-60)
			sh->g[t] = 0.0;

	/*
	 * pass 2: gradients through d ln det K = tr(K^-1 dK).  M = K^-1 V_C by
	 * two triangular solves with the factor of pass 1 (no inverse formed);
	 * the context's rows take 2 g M diag(R_t^2), summed over its targets in
	 * GVC and scattered once; the target's row takes 2 g R_t o colsum(V_C o
	 * M).  The bias needs only the diagonal of K^-1, which K^-1 K = I gives
	 * from M: [K^-1]_ss D2_s = 1 - sum_j M_sj R_tj^2 V_sj.
	 */
	memset(sh->GVC, 0, sizeof(double) * (size_t) b * r);
	for (int t = 0; t < nt; t++)
	{
		int			target = sh->targets[t];
		double		g2 = 2.0 * sh->g[t] * scale;
		const double *L = sh->K + (size_t) t * b * b;
		const double *R2t = m->R2 + (size_t) target * r;
		double	   *Mt = sh->M + (size_t) t * b * r;

		if (g2 == 0.0 || isinf(sh->logdet[t]))
			continue;

		memcpy(Mt, sh->VC, sizeof(double) * (size_t) b * r);
		mtdpp_cholesky_solve(L, b, Mt, r);
		for (int s = 0; s < b; s++)
		{
			const double *Ms = Mt + (size_t) s * r;
			double	   *Gs = sh->GVC + (size_t) s * r;

			for (int j = 0; j < r; j++)
				Gs[j] += g2 * Ms[j] * R2t[j];
			if (tr->bias)
			{
				const double *vs = sh->VC + (size_t) s * r;
				int			item = sh->ctx[s];
				double		x = 0.0;

				for (int j = 0; j < r; j++)
					x += Ms[j] * R2t[j] * vs[j];
				sh->gD[item] += g2 * (1.0 - x) / m->D2[item] * m->D[item];
			}
		}
		if (tr->task_factors)
		{
			const double *Rt = m->R + (size_t) target * r;
			double	   *gRt = sh->gR + (size_t) target * r;

			touch_row(sh->touchedR, sh->listR, &sh->nR, target);
			for (int s = 0; s < b; s++)
			{
				const double *Ms = Mt + (size_t) s * r;
				const double *vs = sh->VC + (size_t) s * r;

				for (int j = 0; j < r; j++)
					gRt[j] += g2 * Rt[j] * vs[j] * Ms[j];
			}
		}
	}
	for (int s = 0; s < b; s++)
	{
		double	   *gVs = sh->gV + (size_t) sh->ctx[s] * r;
		const double *Gs = sh->GVC + (size_t) s * r;

		touch_row(sh->touchedV, sh->listV, &sh->nV, sh->ctx[s]);
		for (int j = 0; j < r; j++)
			gVs[j] += Gs[j];
	}
}

/*
 * Forward and backward pass for one context (sh->ctx, B items) and its NT
 * targets (sh->targets); adds the gradients (scaled by SCALE) and returns
 * the summed loss.
 */
MTDPP_VECTORISED
static double
context_step(Shard *sh, int b, int nt, double scale)
{
	double		loss = 0.0;

	context_logdets(sh, b, nt);
	if (!context_loss(sh, nt, &loss))
		return loss;
	context_gradients(sh, b, nt, scale);
	return loss;
}

/*
 * Optimiser moments too small to move any parameter are zero, so that a
 * moment whose gradients stopped does not decay into subnormal numbers: a
 * first moment below 2^-120 moves a parameter by less than 2^-85 (Adam's
 * step is at most learning_rate (<= 10) x its bias correction (< 32) x
 * m1 / 1e-8), below MTDPP_NEGLIGIBLE; a second moment below 2^-200 adds
 * less than 2^-100 to the 1e-8 of Adam's denominator, which a double cannot
 * hold.
 */
#define NEGLIGIBLE_MOMENT	0x1p-120
#define NEGLIGIBLE_MOMENT2	0x1p-200

/*
 * Adam or momentum on one row of parameters; clears its gradient.  A
 * parameter below LEAST is zero (see MTDPP_NEGLIGIBLE).  With ABSORBING, its
 * gradient is proportional to it (task factors, biases): a parameter that
 * reached zero would stay there but for its momentum, so its moments are
 * cleared with it, and zero is where it stays.
 */
MTDPP_VECTORISED
static void
update_row(Trainer *tr, double *theta, double *grad, double *m1, double *m2,
		   int len, double l2, double lr, double least, bool absorbing)
{
	const MtdppParams *p = tr->p;

	if (p->optimizer == MTDPP_OPT_ADAM)
	{
		double		b1 = p->momentum,
					b2 = 0.999;
		double		step = lr * tr->adam_correction;

		for (int j = 0; j < len; j++)
		{
			double		gj = grad[j] + l2 * theta[j];

			m1[j] = b1 * m1[j] + (1.0 - b1) * gj;
			m2[j] = b2 * m2[j] + (1.0 - b2) * gj * gj;
			theta[j] -= step * m1[j] / (sqrt(m2[j]) + 1e-8);
			grad[j] = 0.0;
		}
	}
	else
	{
		/* Nesterov momentum, in the form that needs no look-ahead point */
		double		mu = p->momentum;

		for (int j = 0; j < len; j++)
		{
			double		gj = grad[j] + l2 * theta[j];

			m1[j] = mu * m1[j] - lr * gj;
			theta[j] += mu * m1[j] - lr * gj;
			grad[j] = 0.0;
		}
	}

	/* what carries no signal is zero (m2 is not used by momentum: zero) */
	for (int j = 0; j < len; j++)
	{
		bool		off = fabs(theta[j]) < least;

		theta[j] = off ? 0.0 : theta[j];
		m1[j] = (fabs(m1[j]) < NEGLIGIBLE_MOMENT || (off && absorbing)) ? 0.0 : m1[j];
		m2[j] = (m2[j] < NEGLIGIBLE_MOMENT2 || (off && absorbing)) ? 0.0 : m2[j];
	}
}

/* FN(A) here and FN(B) on the helper thread, if any; returns when both are done */
static void
run_pair(Trainer *tr, void (*fn) (void *), void *a, void *b)
{
	mtdpp_helper_run_pair(tr->helper, fn, a, b);
}

/* The other shards' gradients into shard 0's, in shard order. */
static void
merge_shards(Trainer *tr)
{
	int			r = tr->m->rank;
	Shard	   *sh = tr->shards[0];

	for (int k = 1; k < TRAIN_SHARDS; k++)
	{
		Shard	   *o = tr->shards[k];

		for (int q = 0; q < o->nV; q++)
		{
			int			i = o->listV[q];
			double	   *to = sh->gV + (size_t) i * r,
					   *from = o->gV + (size_t) i * r;

			touch_row(sh->touchedV, sh->listV, &sh->nV, i);
			for (int j = 0; j < r; j++)
				to[j] += from[j];
			memset(from, 0, sizeof(double) * r);
			sh->gD[i] += o->gD[i];
			o->gD[i] = 0.0;
			o->touchedV[i] = false;
		}
		for (int q = 0; q < o->nR; q++)
		{
			int			i = o->listR[q];
			double	   *to = sh->gR + (size_t) i * r,
					   *from = o->gR + (size_t) i * r;

			touch_row(sh->touchedR, sh->listR, &sh->nR, i);
			for (int j = 0; j < r; j++)
				to[j] += from[j];
			memset(from, 0, sizeof(double) * r);
			o->touchedR[i] = false;
		}
		o->nV = o->nR = 0;
	}
}

/* half of a minibatch's update: the rows of one half of each touched list */
typedef struct UpdateHalf
{
	Trainer    *tr;
	double		lr;
	int			part;			/* 0 or 1 */
} UpdateHalf;

static void
update_half(void *arg)
{
	UpdateHalf *u = (UpdateHalf *) arg;
	Trainer    *tr = u->tr;
	MtdppModel *m = tr->m;
	const MtdppParams *p = tr->p;
	int			r = m->rank;
	Shard	   *sh = tr->shards[0];

	for (int k = (int) ((int64) sh->nV * u->part / 2); k < (int) ((int64) sh->nV * (u->part + 1) / 2); k++)
	{
		int			i = sh->listV[k];
		double		alpha = tr->mean_pop / Max(m->popularity[i], 1);

		double	   *Vi = m->V + (size_t) i * r;
		double		norm2 = 0.0;

		update_row(tr, Vi, sh->gV + (size_t) i * r,
				   tr->mV + (size_t) i * r, tr->vV + (size_t) i * r, r,
				   p->l2 * alpha, u->lr, MTDPP_NEGLIGIBLE, false);
		for (int j = 0; j < r; j++)
			norm2 += Vi[j] * Vi[j];
		m->Vnorm2[i] = norm2;
		if (tr->bias)
		{
			update_row(tr, m->D + i, sh->gD + i, tr->mD + i, tr->vD + i, 1,
					   p->l2_bias * alpha, u->lr, MTDPP_NEGLIGIBLE_ROOT, true);
			m->D2[i] = m->D[i] * m->D[i] + MTDPP_JITTER;
		}
		sh->touchedV[i] = false;
	}
	for (int k = (int) ((int64) sh->nR * u->part / 2); k < (int) ((int64) sh->nR * (u->part + 1) / 2); k++)
	{
		int			i = sh->listR[k];
		double		alpha = tr->mean_pop / Max(m->popularity[i], 1);
		double	   *Ri = m->R + (size_t) i * r;
		double	   *R2i = m->R2 + (size_t) i * r;

		update_row(tr, Ri, sh->gR + (size_t) i * r,
				   tr->mR + (size_t) i * r, tr->vR + (size_t) i * r, r,
				   p->l2 * alpha, u->lr, MTDPP_NEGLIGIBLE_ROOT, true);
		for (int j = 0; j < r; j++)
			R2i[j] = Ri[j] * Ri[j];
		sh->touchedR[i] = false;
	}
}

/* Adam (or momentum) on every touched row, the rows split between threads. */
static void
apply_updates(Trainer *tr, double lr)
{
	const MtdppParams *p = tr->p;
	UpdateHalf	half[2] = {{tr, lr, 0}, {tr, lr, 1}};

	merge_shards(tr);
	tr->step++;
	/* Adam's bias correction, once per minibatch */
	tr->adam_correction = sqrt(1.0 - pow(0.999, (double) tr->step)) /
		(1.0 - pow(p->momentum, (double) tr->step));
	run_pair(tr, update_half, &half[0], &half[1]);
	tr->shards[0]->nV = tr->shards[0]->nR = 0;
}

/*
 * Builds the context of positive POS (basket minus target, or the items
 * before it for target => 'last', or the whole basket when pos.pos is -1
 * for the single-kernel kinds) into tr->ctx; returns its size.
 */
static int
build_context(Shard *sh, Positive pos)
{
	Trainer    *tr = sh->tr;
	const MtdppBaskets *d = tr->data;
	int64		s = d->start[pos.basket],
				e = d->start[pos.basket + 1];
	int			b = 0;
	int			limit = tr->p->max_context;

	if (tr->p->target == MTDPP_TARGET_LAST && pos.pos >= 0)
		e = s + pos.pos;
	for (int64 k = s; k < e; k++)
		if (k - s != pos.pos)
			sh->ctx[b++] = d->items[k];

	/*
	 * Very large baskets: a random subset keeps kernels small.  The low-rank
	 * DPP sees at most `rank` items at once, since det L = 0 beyond.
	 */
	if (tr->likelihood)
		limit = Min(limit, tr->p->rank);
	if (b > limit)
	{
		for (int k = 0; k < limit; k++)
		{
			int			j = k + (int) pg_prng_uint64_range(&sh->rng, 0, b - 1 - k);
			int32		tmp = sh->ctx[k];

			sh->ctx[k] = sh->ctx[j];
			sh->ctx[j] = tmp;
		}
		b = limit;
	}
	return b;
}

/* a random item not in BASKET, or -1 if the basket holds nearly everything */
static int
negative_item(Shard *sh, int basket)
{
	Trainer    *tr = sh->tr;
	for (int tries = 0; tries < 50; tries++)
	{
		int			neg;

		if (tr->neg_cdf == NULL)
			neg = (int) pg_prng_uint64_range(&sh->rng, 0, tr->data->n_items - 1);
		else
		{
			/* inverse of the cumulative distribution, by bisection */
			double		u = pg_prng_double(&sh->rng) * tr->neg_cdf[tr->data->n_items - 1];
			int			lo = 0,
						hi = tr->data->n_items - 1;

			while (lo < hi)
			{
				int			mid = (lo + hi) / 2;

				if (tr->neg_cdf[mid] > u)
					hi = mid;
				else
					lo = mid + 1;
			}
			neg = lo;
		}

		if (!basket_contains(tr->data, basket, neg))
			return neg;
	}
	return -1;
}

/* Multi-task kinds: a target and the rest as context, plus negative targets. */
static double
multitask_examples(Shard *sh, Positive pos, double scale, int64 *n_ex)
{
	Trainer    *tr = sh->tr;
	const MtdppBaskets *d = tr->data;
	int			b = build_context(sh, pos);
	int			nt = 0;

	if (b == 0)
		return 0.0;
	sh->targets[nt] = d->items[d->start[pos.basket] + pos.pos];
	sh->labels[nt++] = 1.0;
	for (int q = 0; q < tr->p->negatives; q++)
	{
		int			neg = negative_item(sh, pos.basket);

		if (neg < 0)
			break;
		sh->targets[nt] = neg;
		sh->labels[nt++] = 0.0;
	}
	*n_ex += nt;
	return context_step(sh, b, nt, scale);
}

/*
 * Single-kernel kinds: the whole basket.  The logistic DPP also learns from
 * negatives, the basket with one item swapped for one not in it; the low-rank
 * DPP from the basket alone (its normaliser is added per minibatch).  Task
 * factors are all 1, so context_step computes L = V V^T + D^2.
 */
static double
single_kernel_examples(Shard *sh, Positive pos, double scale, int64 *n_ex)
{
	Trainer    *tr = sh->tr;
	int			b = build_context(sh, pos);
	double		loss;

	if (b == 0)
		return 0.0;
	sh->targets[0] = 0;
	sh->labels[0] = 1.0;
	loss = context_step(sh, b, 1, scale);
	(*n_ex)++;
	if (tr->likelihood)
		return loss;

	memcpy(sh->set, sh->ctx, sizeof(int32) * b);
	for (int q = 0; q < tr->p->negatives; q++)
	{
		int			neg = negative_item(sh, pos.basket);

		if (neg < 0)
			break;
		memcpy(sh->ctx, sh->set, sizeof(int32) * b);
		sh->ctx[pg_prng_uint64_range(&sh->rng, 0, b - 1)] = neg;
		sh->labels[0] = 0.0;
		loss += context_step(sh, b, 1, scale);
		(*n_ex)++;
	}
	return loss;
}

/*
 * The low-rank DPP's normaliser ln det(L + I) = ln det(I_r + V^T V), whose
 * gradient 2 V (I_r + V^T V)^-1 touches every item; WEIGHT scales it.
 * Returns the normaliser.
 */
static double
lowrank_normaliser(Trainer *tr, double weight)
{
	MtdppModel *m = tr->m;
	Shard	   *sh = tr->shards[0];
	int			r = m->rank;
	int			n = m->n_items;
	double		logdet;

	mtdpp_gemm_tn(r, r, n, m->V, r, m->V, r, tr->G, r);
	for (int j = 0; j < r; j++)
		tr->G[(size_t) j * r + j] += 1.0;
	if (!mtdpp_cholesky(tr->G, r))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("training diverged: the low-rank normaliser I + V^T V is not positive definite"),
				 errdetail("The factors of the %d items are no longer finite or have grown too large.", n),
				 errhint("Lower learning_rate (now %g) or raise l2 (now %g).",
						 tr->p->learning_rate, tr->p->l2)));
	logdet = mtdpp_cholesky_logdet(tr->G, r);
	mtdpp_cholesky_inverse(tr->G, r);
	mtdpp_gemm_nn(n, r, r, m->V, r, tr->G, r, tr->VG, r);
	for (int i = 0; i < n; i++)
	{
		double	   *gv = sh->gV + (size_t) i * r;
		const double *vg = tr->VG + (size_t) i * r;

		touch_row(sh->touchedV, sh->listV, &sh->nV, i);
		for (int j = 0; j < r; j++)
			gv[j] += 2.0 * weight * vg[j];
	}
	return logdet;
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
		m->D[i] = tr->bias ? typical_D * (1.0 + p->init_scale * gaussian(&tr->rng)) : 0.0;
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

static double
elapsed_seconds(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_DOUBLE(now);
}

/*
 * A shard: gradients (zero) and scratch for contexts of MAX_CTX items, in a
 * memory context of its own, so that no cache line is shared with another
 * shard, which another thread writes.
 */
static Shard *
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
		if (tr->task_factors)
			loss += multitask_examples(sh, tr->positives[k], sh->scale, &n_ex);
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
static void
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
 * A warm start's epochs train on every new basket (in order id order, those
 * beyond the count its model was trained on: order lines that keep arriving)
 * and a fresh sample of warm_old_baskets old ones per new one, at least per
 * tenth of the N_TRAIN training baskets: what the old model lacks is in the
 * new ones, and the sample keeps it from forgetting the rest.  Sets
 * tr->first_new and tr->old_share; the old baskets' lines into *OLD_LINES.
 */
static void
warm_budget(Trainer *tr, int64 n_train, int64 *old_lines)
{
	const MtdppBaskets *data = tr->data;
	const MtdppParams *p = tr->p;
	int64		n_old = 0;

	tr->first_new = 0;
	tr->old_share = 1.0;
	*old_lines = 0;
	if (p->warm == NULL || p->warm_old_baskets <= 0.0)
		return;
	tr->first_new = Min(p->warm->n_baskets, data->n_baskets);
	for (int b = 0; b < tr->first_new; b++)
		if (!tr->val.is_val[b] && data->start[b + 1] - data->start[b] >= 2)
		{
			*old_lines += data->start[b + 1] - data->start[b];
			n_old++;
		}
	if (n_old > 0)
		tr->old_share = Min(1.0, p->warm_old_baskets *
							Max(n_train - n_old, n_train / 10) / n_old);
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("warm start: an epoch trains on " INT64_FORMAT " new baskets and %.0f%% of " INT64_FORMAT " old ones",
						n_train - n_old, 100.0 * tr->old_share, n_old)));
}

/*
 * Sets TR up to train on DATA with P, in the current memory context: the
 * model with its initial parameters, the shards, the optimiser state, the
 * validation slice, the helper thread and the pool of positives.
 */
static void
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
 * This epoch's positives, shuffled, into tr->pool; returns how many.  The
 * multi-task kinds take targets of each training basket (see the essay);
 * the single-kernel kinds, the whole basket.
 */
static int64
epoch_positives(Trainer *tr)
{
	const MtdppBaskets *data = tr->data;
	const MtdppParams *p = tr->p;
	Positive   *positives = tr->pool;
	int64		n_pos = 0;

	for (int b = 0; b < data->n_baskets; b++)
	{
		int			len = (int) (data->start[b + 1] - data->start[b]);

		if (tr->val.is_val[b] || len < 2)
			continue;
		if ((tr->basket_share < 1.0 || tr->old_share < 1.0) &&
			(pg_prng_double(&tr->rng) >= tr->basket_share * (b < tr->first_new ? tr->old_share : 1.0) ||
			 n_pos + len > tr->n_pool))
			continue;
		if (!tr->task_factors)
			positives[n_pos++] = (Positive) {b, -1};
		else if (p->target == MTDPP_TARGET_LAST)
		{
			/* the last item, and items added earlier given what came before */
			positives[n_pos++] = (Positive) {b, len - 1};
			if (p->positives == 0 || p->positives >= len - 1)
				for (int k = 1; k < len - 1; k++)
					positives[n_pos++] = (Positive) {b, k};
			else
				for (int k = 1; k < p->positives; k++)
					positives[n_pos++] = (Positive) {b, (int32) pg_prng_uint64_range(&tr->rng, 1, len - 2)};
		}
		else if (p->positives == 0 || p->positives >= len)
		{
			for (int k = 0; k < len; k++)
				positives[n_pos++] = (Positive) {b, k};
		}
		else
		{
			for (int k = 0; k < p->positives; k++)
				positives[n_pos++] = (Positive) {b, (int32) pg_prng_uint64_range(&tr->rng, 0, len - 1)};
		}
	}
	for (int64 k = n_pos - 1; k > 0; k--)
	{
		int64		j = (int64) pg_prng_uint64_range(&tr->rng, 0, k);
		Positive	tmp = positives[k];

		positives[k] = positives[j];
		positives[j] = tmp;
	}
	return n_pos;
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
 * The epochs: each a pass over the positives, then the validation MPR;
 * the best epoch's parameters are kept in tr->best*, and training stops
 * after `patience` epochs without gain.  START is when training began.
 */
static void
train_epochs(Trainer *tr, instr_time start)
{
	const MtdppParams *p = tr->p;
	MtdppModel *m = tr->m;
	double		best = -1.0,
				mark = -1.0;	/* the validation MPR of the last gain */
	int			since_best = 0;
	double		lr = p->warm && p->warm_learning_rate > 0.0 ? p->warm_learning_rate : p->learning_rate;
	instr_time	val_start;
	double		val_seconds = 0.0;
	int64		examples = 0;

	m->loss_history = palloc0(sizeof(double) * p->epochs);
	m->val_history = palloc0(sizeof(double) * p->epochs);
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
		val_seconds += elapsed_seconds(val_start);
		m->loss_history[epoch] = loss;
		m->val_history[epoch] = val;
		m->epochs_run = epoch + 1;
		m->final_loss = loss;
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("epoch %d/%d: loss %.5f, validation MPR %.2f, %.1f s (validation %.1f s)",
							epoch + 1, p->epochs, loss, val, elapsed_seconds(start), val_seconds)));

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
		lr *= p->lr_decay;
	}
	m->n_examples = examples;
}

/* A copy of the trained model M, its record included, in the current memory context. */
MtdppModel *
mtdpp_model_copy(const MtdppModel *m)
{
	Size		cells = (Size) m->n_items * m->rank;
	MtdppModel *result = mtdpp_model_alloc(m->kind, m->n_items, m->rank);

	result->log_w = m->log_w;
	result->n_baskets = m->n_baskets;
	result->n_examples = m->n_examples;
	result->epochs_run = m->epochs_run;
	result->best_epoch = m->best_epoch;
	result->final_loss = m->loss_history[Max(m->best_epoch, 1) - 1];
	result->seconds = m->seconds;
	result->hyperparams = pstrdup(m->hyperparams);
	result->loss_history = palloc0(sizeof(double) * Max(m->epochs_run, 1));
	result->val_history = palloc0(sizeof(double) * Max(m->epochs_run, 1));
	memcpy(result->loss_history, m->loss_history, sizeof(double) * m->epochs_run);
	memcpy(result->val_history, m->val_history, sizeof(double) * m->epochs_run);
	memcpy(result->item_ids, m->item_ids, sizeof(int32) * m->n_items);
	memcpy(result->popularity, m->popularity, sizeof(int32) * m->n_items);
	memcpy(result->D, m->D, sizeof(double) * m->n_items);
	memcpy(result->V, m->V, sizeof(double) * cells);
	memcpy(result->R, m->R, sizeof(double) * cells);
	return result;
}

/*
 * Trains a DPP model of kind p->kind on DATA: the fit of the DPP kinds
 * (kind_multitask.c, kind_single.c), its rank chosen by capacity.c when not
 * given.  The result is allocated in the caller's memory context.
 */
MtdppModel *
mtdpp_train_dpp(MtdppBaskets *data, const MtdppParams *p)
{
	return mtdpp_train_dpp_slice(data, p, NULL);
}

/*
 * One fit at p->rank: on the validation slice GIVEN (another fit's) if not
 * NULL, else on one it carves; that slice is copied into SLICE (if not NULL,
 * in the caller's memory context), so that a fit that chooses more on it
 * (capacity.c, kind_hybrid.c) measures on baskets the model never learnt
 * from.  The working set lives in a context deleted on return.
 */
MtdppModel *
mtdpp_train_dpp_rank(MtdppBaskets *data, const MtdppParams *p,
					 const MtdppValidation *given, MtdppValidation *slice)
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
	train_epochs(&tr, start);
	snapshot(&tr, false);
	{
		/* a warm start's slice is its own choice (validation_slice.c): recorded */
		MtdppParams stored = *p;

		if (p->warm != NULL && p->warm_slice)
			stored.validation_baskets = tr.val.n;
		tr.m->hyperparams = mtdpp_params_to_json(&stored);
	}
	tr.m->seconds = elapsed_seconds(start);

	/* copy the result out of the working context, which then goes */
	MemoryContextSwitchTo(caller);
	result = mtdpp_model_copy(tr.m);
	if (slice != NULL)
		mtdpp_validation_copy(slice, &tr.val);
	MemoryContextDelete(work);
	return result;
}

/*
 * mtdpp.gradient_check(rank, context_size, seed, softmax): the largest relative
 * difference between the analytic gradient of context_step and central
 * finite differences of its loss, over every parameter one context with a
 * positive and two negative targets touches.  A test of the appendix's
 * formulas as implemented, on a random model of 12 items.
 */
PG_FUNCTION_INFO_V1(mtdpp_gradient_check);

static double
loss_only(Shard *sh, int b, int nt)
{
	Trainer    *tr = sh->tr;
	MtdppModel *m = tr->m;
	Size		cells = (Size) m->n_items * m->rank;
	double		loss;

	mtdpp_model_prepare(m);
	loss = context_step(sh, b, nt, 1.0);
	/* discard the gradient it accumulated */
	memset(sh->gV, 0, sizeof(double) * cells);
	memset(sh->gR, 0, sizeof(double) * cells);
	memset(sh->gD, 0, sizeof(double) * m->n_items);
	for (int i = 0; i < m->n_items; i++)
		sh->touchedV[i] = sh->touchedR[i] = false;
	sh->nV = sh->nR = 0;
	return loss;
}

Datum
mtdpp_gradient_check(PG_FUNCTION_ARGS)
{
	int			r = PG_GETARG_INT32(0);
	int			b = PG_GETARG_INT32(1);
	int			n = 12;
	int			nt = 3;
	Trainer		tr;
	Shard	   *sh;
	MtdppParams p;
	MtdppModel *m;
	Size		cells;
	double	   *aV,
			   *aR,
			   *aD;
	double		worst = 0.0;
	const double h = 1e-6;

	if (r < 1 || r > 64 || b < 1 || b > n - nt)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gradient_check takes a rank from 1 to 64 and a context of 1 to %d items", n - nt)));
	mtdpp_params_defaults(&p, MTDPP_MULTITASK);
	p.rank = r;
	p.loss = PG_GETARG_BOOL(3) ? MTDPP_LOSS_SOFTMAX : MTDPP_LOSS_LOGISTIC;
	memset(&tr, 0, sizeof(tr));
	tr.p = &p;
	tr.bias = mtdpp_kind(MTDPP_MULTITASK)->bias;
	tr.task_factors = mtdpp_kind(MTDPP_MULTITASK)->task_factors;
	pg_prng_seed(&tr.rng, (uint64) PG_GETARG_INT64(2));
	m = tr.m = mtdpp_model_alloc(MTDPP_MULTITASK, n, r);
	m->log_w = log(0.5);
	cells = (Size) n * r;
	for (Size c = 0; c < cells; c++)
	{
		m->V[c] = 0.5 * gaussian(&tr.rng);
		m->R[c] = 1.0 + 0.3 * gaussian(&tr.rng);
	}
	for (int i = 0; i < n; i++)
		m->D[i] = 1.0 + 0.2 * gaussian(&tr.rng);
	sh = tr.shards[0] = shard_new(&tr, n, nt, n);
	for (int s = 0; s < b; s++)
		sh->ctx[s] = s;
	for (int t = 0; t < nt; t++)
	{
		sh->targets[t] = b + t;
		sh->labels[t] = (t == 0) ? 1.0 : 0.0;
	}

	/* analytic */
	mtdpp_model_prepare(m);
	(void) context_step(sh, b, nt, 1.0);
	aV = palloc(sizeof(double) * cells);
	aR = palloc(sizeof(double) * cells);
	aD = palloc(sizeof(double) * n);
	memcpy(aV, sh->gV, sizeof(double) * cells);
	memcpy(aR, sh->gR, sizeof(double) * cells);
	memcpy(aD, sh->gD, sizeof(double) * n);
	(void) loss_only(sh, b, nt);

	/* numerical, parameter by parameter */
	for (int kind = 0; kind < 3; kind++)
	{
		double	   *theta = kind == 0 ? m->V : kind == 1 ? m->R : m->D;
		double	   *analytic = kind == 0 ? aV : kind == 1 ? aR : aD;
		Size		len = kind == 2 ? (Size) n : cells;

		for (Size c = 0; c < len; c++)
		{
			double		keep = theta[c],
						up,
						down,
						num,
						err;

			theta[c] = keep + h;
			up = loss_only(sh, b, nt);
			theta[c] = keep - h;
			down = loss_only(sh, b, nt);
			theta[c] = keep;
			num = (up - down) / (2.0 * h);
			err = fabs(num - analytic[c]) / Max(1e-3, fabs(num) + fabs(analytic[c]));
			worst = Max(worst, err);
		}
	}
	PG_RETURN_FLOAT8(worst);
}
