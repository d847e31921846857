/*
 * kinds/gru/gru_fit.c
 *		The fit of the kind gru (gru.c): GRU4Rec's training, basket by
 *		basket, with sampled negatives, backpropagation through time and
 *		Adagrad, stopped early on the validation slice.
 *
 * A training basket is a sequence in add-to-cart order (its last
 * max_context + 1 items).  With target => 'last' (the directed task, the
 * paper's Table 2) the unit reads it and every item from the second on is
 * predicted from the ones before it, the last one included, as GRU4Rec
 * trains on a session; with target => 'random' one item drawn at random is
 * held out and predicted from the rest, read in their order, as a
 * validation or test basket hides one.  Each prediction is a softmax of
 * the target against `negatives` items drawn by popularity^negative_power
 * from outside the basket (cross-entropy over sampled negatives, GRU4Rec's
 * loss).  Gradients flow back through every step of the sequence (the
 * baskets are short: no truncation); the input and output embeddings of
 * the items a basket touches and the shared weights take an Adagrad step
 * (GRU4Rec's optimiser) after each basket.  Every basket is one example,
 * drawn in a random order each epoch (a sample of about epoch_baskets when
 * there are more), all from the fit's own generator: the same data and
 * seed give the same model.
 *
 * The validation slice (validation_slice.c) measures MPR after each
 * epoch; training stops after `patience` epochs without gain and keeps the
 * best epoch's parameters.  When not given, the step and the hidden size
 * are chosen in a race: two epochs at step 0.05 and 0.2 at hidden size 32,
 * then at hidden size 64 at the better step, the best validation MPR wins
 * (a race favours what learns fast; a full fit of every setting would
 * cost three times as long).  The winner is then trained in full, on the
 * baskets outside the slice, early-stopped on it.  Without a slice (fewer
 * than 20 baskets of two items) the model trains for every epoch at hidden
 * size 32.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "portability/instr_time.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "fit/progress.h"
#include "kinds/gru/gru.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"
#include "numeric/linalg.h"

#define GRU_LOW_RANK	32
#define GRU_HIGH_RANK	64
#define GRU_EPS			1e-8
/* epochs each setting runs in the race that chooses them */
#define GRU_RACE_EPOCHS	2

static const double steps[] = {0.05, 0.2};

typedef struct Gru
{
	const MtdppBaskets *data;
	const MtdppParams *p;
	const bool *skip;			/* baskets of the validation slice */
	MtdppModel *m;
	int			d;
	int			L;				/* most steps of a sequence */
	double		lr;
	double	   *aV,				/* Adagrad's sums of squared gradients */
			   *aR,
			   *aD,
			   *aW;
	double	   *gW;				/* the basket's gradient of the weights */
	double	   *hs;				/* states h_0 .. h_L */
	double	   *gates;			/* z, r, n, Whn h of each step */
	double	   *dho;			/* gradient reaching each state from its prediction */
	double	   *dh,
			   *dprev,
			   *de,
			   *x;
	int32	   *seq;
	int32	   *cands;
	double	   *logit;
	double	   *cdf;			/* negatives' cumulative weights */
	bool	   *in;				/* items of the current basket */
	pg_prng_state rng;
} Gru;

/* one Adagrad step of the N parameters THETA along G */
static MTDPP_VECTORISED void
adagrad(double *theta, double *acc, const double *g, int n, double lr, double l2)
{
	for (int j = 0; j < n; j++)
	{
		double		gj = g[j] + l2 * theta[j];

		acc[j] += gj * gj;
		theta[j] -= lr * gj / (sqrt(acc[j]) + GRU_EPS);
	}
}

/* a negative: by popularity^negative_power, outside the basket if it can */
static int
draw_negative(Gru *g)
{
	int			n = g->data->n_items,
				c = 0;

	for (int tries = 0; tries < 8; tries++)
	{
		double		u = pg_prng_double(&g->rng) * g->cdf[n - 1];
		int			lo = 0,
					hi = n - 1;

		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (g->cdf[mid] > u)
				hi = mid;
			else
				lo = mid + 1;
		}
		c = lo;
		if (!g->in[c])
			break;
	}
	return c;
}

/*
 * The prediction of TARGET from state h_{T+1}: softmax cross-entropy of the
 * target against sampled negatives; the output embeddings and biases take
 * their step, the state's gradient goes to dho[T].  Returns the loss.
 */
static double
predict(Gru *g, int t, int target)
{
	MtdppModel *m = g->m;
	int			d = g->d,
				k = g->p->negatives + 1;
	const double *h = g->hs + (size_t) (t + 1) * d;
	double	   *dh = g->dho + (size_t) t * d;
	double		most = -INFINITY,
				sum = 0.0;

	g->cands[0] = target;
	for (int j = 1; j < k; j++)
		g->cands[j] = draw_negative(g);
	for (int j = 0; j < k; j++)
	{
		const double *o = m->R + (size_t) g->cands[j] * d;
		double		s = m->D[g->cands[j]];

		for (int q = 0; q < d; q++)
			s += o[q] * h[q];
		g->logit[j] = s;
		most = Max(most, s);
	}
	for (int j = 0; j < k; j++)
	{
		g->logit[j] = exp(g->logit[j] - most);
		sum += g->logit[j];
	}
	for (int j = 0; j < k; j++)
	{
		double	   *o = m->R + (size_t) g->cands[j] * d;
		double		ds = g->logit[j] / sum - (j == 0 ? 1.0 : 0.0);

		for (int q = 0; q < d; q++)
		{
			dh[q] += ds * o[q];
			g->x[q] = ds * h[q];
		}
		adagrad(o, g->aR + (size_t) g->cands[j] * d, g->x, d, g->lr, g->p->l2);
		adagrad(&m->D[g->cands[j]], &g->aD[g->cands[j]], &ds, 1, g->lr, 0.0);
	}
	return -log(Max(g->logit[0] / sum, 1e-300));
}

/* backpropagation of dh through step T: gradients into gW, the input's step, dprev */
static MTDPP_VECTORISED void
backward_step(Gru *g, int t)
{
	MtdppModel *m = g->m;
	int			d = g->d;
	const double *Wx = m->weights,
			   *Wh = m->weights + 3 * d * d;
	double	   *gWx = g->gW,
			   *gWh = g->gW + 3 * d * d,
			   *gb = g->gW + 6 * d * d;
	const double *hprev = g->hs + (size_t) t * d,
			   *gates = g->gates + (size_t) t * 4 * d,
			   *x = m->V + (size_t) g->seq[t] * d;

	memset(g->de, 0, sizeof(double) * d);
	for (int j = 0; j < d; j++)
	{
		double		z = gates[j],
					r = gates[d + j],
					n = gates[2 * d + j],
					un = gates[3 * d + j],
					dn = g->dh[j] * (1.0 - z),
					dz = g->dh[j] * (hprev[j] - n),
					dnp = dn * (1.0 - n * n),
					da[3],
					du[3];

		g->dprev[j] += g->dh[j] * z;
		da[0] = du[0] = dz * z * (1.0 - z);
		da[1] = du[1] = dnp * un * r * (1.0 - r);
		da[2] = dnp;
		du[2] = dnp * r;
		for (int q = 0; q < 3; q++)
		{
			size_t		row = (size_t) (q * d + j) * d;

			gb[q * d + j] += da[q];
			for (int k = 0; k < d; k++)
			{
				gWx[row + k] += da[q] * x[k];
				gWh[row + k] += du[q] * hprev[k];
				g->de[k] += Wx[row + k] * da[q];
				g->dprev[k] += Wh[row + k] * du[q];
			}
		}
	}
	adagrad(m->V + (size_t) g->seq[t] * d, g->aV + (size_t) g->seq[t] * d, g->de, d,
			g->lr, g->p->l2);
}

/*
 * One basket B: its sequence read forward, its predictions (every step
 * from the first with target => 'last', the held-out item at the end with
 * 'random'), gradients back through time, the steps taken.  Returns the
 * loss, *PREDS the predictions made.
 */
static double
train_basket(Gru *g, int b, int *preds)
{
	const MtdppBaskets *data = g->data;
	MtdppModel *m = g->m;
	int			d = g->d,
				len = (int) (data->start[b + 1] - data->start[b]),
				nw = mtdpp_gru_n_weights(d),
				T = 0,
				held = -1;
	const int32 *items = data->items + data->start[b];
	bool		last = g->p->target == MTDPP_TARGET_LAST;
	double		loss = 0.0;

	if (!last)
		held = (int) pg_prng_uint64_range(&g->rng, 0, len - 1);
	for (int s = 0; s < len; s++)
	{
		g->in[items[s]] = true;
		if (s != held)
			g->seq[T++] = items[s];
	}
	/* the last L items (the last L - 1 before a held-out one) */
	if (T > g->L - (last ? 0 : 1))
	{
		int			drop = T - (g->L - (last ? 0 : 1));

		memmove(g->seq, g->seq + drop, sizeof(int32) * (T - drop));
		T -= drop;
	}
	memset(g->hs, 0, sizeof(double) * d);
	for (int t = 0; t < T; t++)
		mtdpp_gru_step(m->weights, d, m->V + (size_t) g->seq[t] * d,
					   g->hs + (size_t) t * d, g->hs + (size_t) (t + 1) * d,
					   g->gates + (size_t) t * 4 * d);
	memset(g->dho, 0, sizeof(double) * T * d);
	*preds = 0;
	if (last)
		for (int t = 0; t + 1 < T; t++, (*preds)++)
			loss += predict(g, t, g->seq[t + 1]);
	else
	{
		loss += predict(g, T - 1, items[held]);
		*preds = 1;
	}
	memset(g->dprev, 0, sizeof(double) * d);
	memset(g->gW, 0, sizeof(double) * nw);
	for (int t = (last ? T - 2 : T - 1); t >= 0; t--)
	{
		for (int j = 0; j < d; j++)
			g->dh[j] = g->dprev[j] + g->dho[(size_t) t * d + j];
		memset(g->dprev, 0, sizeof(double) * d);
		backward_step(g, t);
	}
	adagrad(m->weights, g->aW, g->gW, nw, g->lr, g->p->l2);
	for (int s = 0; s < len; s++)
		g->in[items[s]] = false;
	return loss;
}

/* the initial parameters of G's model, drawn from its generator */
static void
init_model(Gru *g)
{
	MtdppModel *m = g->m;
	int			d = g->d,
				nw = mtdpp_gru_n_weights(d);
	double		s = g->p->init_scale,
				sw = sqrt(6.0 / (4.0 * d));

	for (size_t c = 0; c < (size_t) m->n_items * d; c++)
	{
		m->V[c] = s * (2.0 * pg_prng_double(&g->rng) - 1.0);
		m->R[c] = s * (2.0 * pg_prng_double(&g->rng) - 1.0);
	}
	for (int k = 0; k < 6 * d * d; k++)
		m->weights[k] = sw * (2.0 * pg_prng_double(&g->rng) - 1.0);
	for (int k = 6 * d * d; k < nw; k++)
		m->weights[k] = 0.0;
}

/* What a fit at hidden size D holds: its parameters, sums and best copy. */
static Size
memory_need(const MtdppBaskets *data, int d)
{
	Size		per = add_size(mul_size(mul_size(data->n_items, d), 2 * sizeof(double)),
							   add_size(mul_size(data->n_items, sizeof(double)),
										mul_size(mtdpp_gru_n_weights(d), sizeof(double))));

	return add_size(mul_size(per, 4), mul_size(data->n_items, sizeof(double) + 1));
}

/* Refuses a fit whose parameters, sums and best copy would exceed maintenance_work_mem. */
static void
check_memory(const MtdppBaskets *data, int d)
{
	Size		need = memory_need(data, d);
	Size		limit = (Size) maintenance_work_mem * 1024;

	if (need > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training a gru model of hidden size %d on %d items needs %zu kB, more than maintenance_work_mem (%d kB)",
						d, data->n_items, (need + 1023) / 1024, maintenance_work_mem),
				 errhint("SET maintenance_work_mem = '%zuMB' for this session, or train with a lower rank.",
						 (need >> 20) + 1)));
}

/*
 * The work of a fit of EPOCHS epochs at hidden size D, in multiply-adds:
 * each epoch steps the unit through the baskets it trains on (the last
 * max_context + 1 items of each, a sample of about epoch_baskets), forward
 * and back (about 18 d^2 a step), and scores a target and its negatives
 * (3 (negatives + 1) d).  One core does about GRU_WORK_PER_SECOND of them.
 * A fit whose every epoch would run past GRU_MAX_WORK (about 45 minutes;
 * early stopping usually ends it in half its epochs) is refused before
 * anything is trained.
 */
#define GRU_WORK_PER_SECOND 1e9
#define GRU_MAX_WORK (45 * 60 * GRU_WORK_PER_SECOND)

static double
gru_work(const MtdppBaskets *data, const MtdppParams *p, int d, int epochs)
{
	double		steps = 0.0;
	int			n_train = 0;
	double		share;

	for (int b = 0; b < data->n_baskets; b++)
	{
		int64		len = data->start[b + 1] - data->start[b];

		if (len < 2)
			continue;
		steps += Min(len, p->max_context + 1);
		n_train++;
	}
	share = p->epoch_baskets > 0 && n_train > p->epoch_baskets ?
		(double) p->epoch_baskets / n_train : 1.0;
	return epochs * share * steps * (18.0 * d * d + 3.0 * (p->negatives + 1) * d);
}

/*
 * Refuses a fit beyond GRU_MAX_WORK: the race (when the hidden size or the
 * step is chosen: each step at hidden size 32 or the rank given, then 64 if
 * the size is chosen), then the full fit at the largest size it may pick.
 */
static void
check_work(const MtdppBaskets *data, const MtdppParams *p, bool rank_chosen, bool step_chosen)
{
	int			d = rank_chosen ? GRU_HIGH_RANK : p->rank;
	int			race = Min(p->epochs, GRU_RACE_EPOCHS);
	double		work = gru_work(data, p, d, p->epochs);

	if (rank_chosen || step_chosen)
		work += gru_work(data, p, rank_chosen ? GRU_LOW_RANK : p->rank,
						 race * (step_chosen ? lengthof(steps) : 1)) +
			(rank_chosen ? gru_work(data, p, GRU_HIGH_RANK, race) : 0.0);
	if (work > GRU_MAX_WORK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a gru fit of " INT64_FORMAT " lines in %d baskets at hidden size %d by %d epochs is too long",
						data->n_lines, data->n_baskets, d, p->epochs),
				 errdetail("An epoch steps the unit forward and back through the last %d items of up to %d baskets: up to about %.0f minutes on one core here if every epoch runs, the race that chooses the hidden size and step included.",
						   p->max_context + 1,
						   p->epoch_baskets > 0 ? Min(p->epoch_baskets, data->n_baskets) : data->n_baskets,
						   work / GRU_WORK_PER_SECOND / 60.0),
				 errhint("Give a smaller epoch_baskets (each epoch then reads a sample of that many baskets), fewer epochs, or %s.",
						 rank_chosen ? "rank => 32 (the race may pick 64)" : "a lower rank")));
}

/* a model's parameters, to keep the best epoch's */
typedef struct Snapshot
{
	double	   *V,
			   *R,
			   *D,
			   *W;
} Snapshot;

static void
snapshot(const MtdppModel *m, Snapshot *s, bool save)
{
	size_t		cells = (size_t) m->n_items * m->rank;

#define COPY(a, b, n) (save ? memcpy((a), (b), sizeof(double) * (n)) : memcpy((b), (a), sizeof(double) * (n)))
	COPY(s->V, m->V, cells);
	COPY(s->R, m->R, cells);
	COPY(s->D, m->D, m->n_items);
	COPY(s->W, m->weights, m->n_weights);
#undef COPY
}

/* the baskets of an epoch, shuffled: all of two items or more outside the slice, or a sample */
static int
epoch_baskets(Gru *g, int32 *order)
{
	const MtdppBaskets *data = g->data;
	int			n = 0,
				n_train = 0;
	double		share;

	for (int b = 0; b < data->n_baskets; b++)
		if (!g->skip[b] && data->start[b + 1] - data->start[b] >= 2)
			n_train++;
	share = g->p->epoch_baskets > 0 && n_train > g->p->epoch_baskets ?
		(double) g->p->epoch_baskets / n_train : 1.0;
	for (int b = 0; b < data->n_baskets; b++)
		if (!g->skip[b] && data->start[b + 1] - data->start[b] >= 2 &&
			(share >= 1.0 || pg_prng_double(&g->rng) < share))
			order[n++] = b;
	for (int k = n - 1; k > 0; k--)
	{
		int			j = (int) pg_prng_uint64_range(&g->rng, 0, k);
		int32		tmp = order[k];

		order[k] = order[j];
		order[j] = tmp;
	}
	return n;
}

/*
 * One fit at hidden size D and step LR on the baskets outside V's slice (V
 * NULL: every basket, every epoch), early-stopped on V's MPR.
 */
static MtdppModel *
fit_one(const MtdppBaskets *data, const MtdppParams *p, MtdppValidation *v, int d, double lr)
{
	Gru			g = {0};
	MtdppModel *m;
	int			n = data->n_items,
				nw = mtdpp_gru_n_weights(d),
				stale = 0;
	int32	   *order = palloc(sizeof(int32) * Max(data->n_baskets, 1));
	double		best = -1.0;
	Snapshot	keep;
	double	   *counts = palloc0(sizeof(double) * Max(n, 1));
	int64		longest = 1;

	/* before the model is allocated: a model too large is refused, not held */
	check_memory(data, d);
	m = mtdpp_model_alloc(MTDPP_GRU, data->n_items, d);
	g.data = data;
	g.p = p;
	g.skip = v && v->n > 0 ? v->is_val : palloc0(sizeof(bool) * Max(data->n_baskets, 1));
	g.m = m;
	g.d = d;
	g.L = p->max_context + 1;
	g.lr = lr;
	pg_prng_seed(&g.rng, (uint64) p->seed ^ UINT64CONST(0x6772750000000000) ^ (uint64) d);
	m->n_weights = nw;
	m->weights = palloc0(sizeof(double) * nw);
	g.aV = mtdpp_alloc_huge(sizeof(double) * n * (size_t) d);
	g.aR = mtdpp_alloc_huge(sizeof(double) * n * (size_t) d);
	g.aD = palloc0(sizeof(double) * Max(n, 1));
	g.aW = palloc0(sizeof(double) * nw);
	g.gW = palloc0(sizeof(double) * nw);
	g.hs = palloc0(sizeof(double) * (g.L + 1) * d);
	g.gates = palloc0(sizeof(double) * g.L * 4 * d);
	g.dho = palloc0(sizeof(double) * g.L * d);
	g.dh = palloc0(sizeof(double) * d);
	g.dprev = palloc0(sizeof(double) * d);
	g.de = palloc0(sizeof(double) * d);
	g.x = palloc0(sizeof(double) * d);
	/* a basket's items before its last L are read, then dropped: room for the longest */
	for (int b = 0; b < data->n_baskets; b++)
		longest = Max(longest, data->start[b + 1] - data->start[b]);
	g.seq = palloc(sizeof(int32) * longest);
	g.cands = palloc(sizeof(int32) * (p->negatives + 1));
	g.logit = palloc(sizeof(double) * (p->negatives + 1));
	g.cdf = palloc(sizeof(double) * Max(n, 1));
	g.in = palloc0(sizeof(bool) * Max(n, 1));
	keep.V = mtdpp_alloc_huge(sizeof(double) * n * (size_t) d);
	keep.R = mtdpp_alloc_huge(sizeof(double) * n * (size_t) d);
	keep.D = palloc0(sizeof(double) * Max(n, 1));
	keep.W = palloc0(sizeof(double) * nw);

	/* negatives by popularity among the training baskets, to the power given */
	for (int b = 0; b < data->n_baskets; b++)
		if (!g.skip[b])
			for (int64 k = data->start[b]; k < data->start[b + 1]; k++)
				counts[data->items[k]] += 1.0;
	for (int i = 0; i < n; i++)
		g.cdf[i] = (i > 0 ? g.cdf[i - 1] : 0.0) + pow(counts[i] + 1.0, p->negative_power);
	init_model(&g);

	m->loss_history = palloc0(sizeof(double) * p->epochs);
	m->val_history = palloc0(sizeof(double) * p->epochs);
	mtdpp_progress_fit(d, p->epochs);
	for (int e = 0; e < p->epochs; e++)
	{
		int			nb = epoch_baskets(&g, order);
		double		loss = 0.0,
					mpr = 0.0;
		int64		preds = 0;
		bool		finite;

		for (int k = 0; k < nb; k++)
		{
			int			np;

			if ((k & 255) == 0)
				CHECK_FOR_INTERRUPTS();
			loss += train_basket(&g, order[k], &np);
			preds += np;
		}
		m->n_examples = Max(m->n_examples, preds);
		m->loss_history[e] = loss / Max(preds, 1);
		m->epochs_run = e + 1;
		finite = isfinite(m->loss_history[e]);
		if (finite && v && v->n > 0)
			mpr = mtdpp_validation_mpr(v, m);
		m->val_history[e] = mpr;
		mtdpp_progress_epoch(e + 1, mpr);
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("gru hidden size %d, step %g, epoch %d: loss %.4f over " INT64_FORMAT " predictions, validation MPR %.2f",
							d, lr, e + 1, m->loss_history[e], preds, mpr)));
		if (!finite)
			break;
		if (mpr > best || !(v && v->n > 0))
		{
			best = mpr;
			m->best_epoch = e + 1;
			stale = 0;
			snapshot(m, &keep, true);
		}
		else if (++stale >= p->patience)
			break;
	}
	if (m->best_epoch == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("gru training diverged at hidden size %d, step %g", d, lr),
				 errhint("Give a smaller learning_rate.")));
	snapshot(m, &keep, false);
	m->final_loss = m->loss_history[m->best_epoch - 1];
	pfree(keep.V);
	pfree(keep.R);
	pfree(g.aV);
	pfree(g.aR);
	return m;
}

/* validation MPR of the best epoch of M */
static double
best_mpr(const MtdppModel *m)
{
	return m->val_history[m->best_epoch - 1];
}

/* the large arrays of a model no longer wanted */
static void
free_model(MtdppModel *m)
{
	pfree(m->V);
	pfree(m->R);
	pfree(m->weights);
}

/* of A and B, the better on validation (A on a tie), the other freed; B's SETTING into *AT if B */
static MtdppModel *
better(MtdppModel *a, MtdppModel *b, double *at, double setting)
{
	MtdppModel *worse = b;

	if (best_mpr(b) > best_mpr(a))
	{
		worse = a;
		a = b;
		*at = setting;
	}
	free_model(worse);
	return a;
}

MtdppModel *
mtdpp_gru_fit(MtdppBaskets *data, const MtdppParams *given)
{
	MtdppParams p = *given;
	MtdppValidation v;
	pg_prng_state rng;
	MtdppModel *m;
	instr_time	start;
	bool		rank_chosen = p.rank == MTDPP_RANK_CHOSEN,
				step_chosen = !mtdpp_param_given(&p, "learning_rate");

	INSTR_TIME_SET_CURRENT(start);
	if (!data->positions)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind gru needs the order in which each basket's items were added"),
				 errdetail("No order line of the %d baskets has a position other than 0.", data->n_baskets),
				 errhint("Name the column that orders the items of a basket with position_col => '...' (or pass it as mtdpp_fit's third argument).")));
	if (!data->ordered)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind gru needs the order in which each basket's items were added, and the position column is constant within every basket"),
				 errdetail("Every line of each of the %d baskets has the same position: no basket has an order to learn.", data->n_baskets),
				 errhint("Give a position column that orders the lines of a basket (an add-to-cart rank or time), or train another kind, which needs no order.")));
	check_work(data, &p, rank_chosen, step_chosen);
	/* the smallest hidden size it trains, refused before any fit if it cannot fit */
	check_memory(data, rank_chosen ? GRU_LOW_RANK : p.rank);
	pg_prng_seed(&rng, (uint64) p.seed);
	mtdpp_validation_carve(&v, data, &p, &rng);
	if (v.n > 0 && (rank_chosen || step_chosen))
	{
		/* the race: a few epochs of each setting, the winner then trained in full */
		MtdppParams race = p;
		double		d = rank_chosen ? GRU_LOW_RANK : p.rank,
					lr = step_chosen ? steps[0] : p.learning_rate;

		race.epochs = Min(p.epochs, GRU_RACE_EPOCHS);
		mtdpp_progress_phase(MTDPP_PHASE_CHOOSING_RANK);
		m = fit_one(data, &race, &v, (int) d, lr);
		for (int k = 1; step_chosen && k < lengthof(steps); k++)
			m = better(m, fit_one(data, &race, &v, (int) d, steps[k]), &lr, steps[k]);
		/* the larger hidden size raced only where it fits, as the rank search does */
		if (rank_chosen && memory_need(data, GRU_HIGH_RANK) <= (Size) maintenance_work_mem * 1024)
			m = better(m, fit_one(data, &race, &v, GRU_HIGH_RANK, lr), &d, GRU_HIGH_RANK);
		else if (rank_chosen)
			ereport(NOTICE,
					(errmsg("the hidden size is not chosen between %d and %d: %d on %d items needs %zu kB, more than maintenance_work_mem (%d kB); %d is trained",
							GRU_LOW_RANK, GRU_HIGH_RANK, GRU_HIGH_RANK, data->n_items,
							(memory_need(data, GRU_HIGH_RANK) + 1023) / 1024, maintenance_work_mem,
							GRU_LOW_RANK),
					 errhint("SET maintenance_work_mem = '%zuMB' lets the choice try %d too.",
							 (memory_need(data, GRU_HIGH_RANK) >> 20) + 1, GRU_HIGH_RANK)));
		if (p.verbose)
			ereport(NOTICE,
					(errmsg("chose hidden size %d and step %g on %d validation baskets (MPR %.2f after %d epochs)",
							(int) d, lr, v.n, best_mpr(m), m->epochs_run)));
		free_model(m);
		p.rank = (int) d;
		p.learning_rate = lr;
	}
	else if (rank_chosen)
		p.rank = GRU_LOW_RANK;
	mtdpp_progress_phase(MTDPP_PHASE_EPOCHS);
	m = fit_one(data, &p, v.n > 0 ? &v : NULL, p.rank, p.learning_rate);
	memcpy(m->item_ids, data->item_ids, sizeof(int32) * data->n_items);
	memcpy(m->popularity, data->popularity, sizeof(int32) * data->n_items);
	m->n_baskets = data->n_baskets;
	m->log_w = 0.0;
	m->hyperparams = mtdpp_params_to_json(&p);
	m->seconds = mtdpp_seconds_since(start);
	return m;
}
