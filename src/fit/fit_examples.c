/*
 * fit/fit_examples.c
 *		The DPP fit's examples: the positives of an epoch, their contexts and
 *		their negative targets.
 *
 * Examples (the paper's Algorithm 1 and appendix).  Every training basket
 * yields positive examples: a target item t and the rest of the basket as
 * context C (target => 'random': `positives` targets drawn per basket and
 * epoch, or every item; target => 'last': the last item given the items added
 * before it, and as many earlier prefixes).  Each positive brings `negatives`
 * negative targets, items drawn from outside the basket (uniformly, or by
 * popularity^negative_power), with the same context.  Contexts beyond
 * `max_context` items are subsampled.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "fit/fit_int.h"
#include "fit/params.h"
#include "model/baskets.h"

static inline bool
basket_contains(const MtdppBaskets *d, int b, int item)
{
	for (int64 k = d->start[b]; k < d->start[b + 1]; k++)
		if (d->items[k] == item)
			return true;
	return false;
}

/*
 * Builds the context of positive POS (basket minus target, or the items
 * before it for target => 'last', or the whole basket when pos.pos is -1
 * for the single-kernel kinds) into tr->ctx; returns its size.
 */
int
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

/*
 * Multi-task kinds and the factorization machine: a target and the rest as
 * context, plus negative targets.
 */
double
targeted_examples(Shard *sh, Positive pos, double scale, int64 *n_ex)
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
	/* the factorization machine's scores, or the DPP's ln dets */
	if (tr->bilinear)
		return bilinear_context_step(sh, b, nt, scale);
	return context_step(sh, b, nt, scale);
}

/*
 * Single-kernel kinds: the whole basket.  The logistic DPP also learns from
 * negatives, the basket with one item swapped for one not in it; the low-rank
 * DPP from the basket alone (its normaliser is added per minibatch).  Task
 * factors are all 1, so context_step computes L = V V^T + D^2.
 */
double
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
 * The share of the N_TRAIN training baskets an epoch trains on: all of them,
 * or a fresh random sample of about epoch_baskets, so that an epoch's cost
 * stops growing with the order history (each epoch sees other baskets, and
 * over the epochs most of them).
 */
double
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
int64
sampled_pool(int64 lines, double share, int max_len)
{
	double		expected = lines * share;

	return Min(lines, (int64) (expected + 6.0 * sqrt(expected * max_len) + max_len));
}

/*
 * A warm start's epochs train on every new basket (in order id order, those
 * beyond the count its model was trained on: order lines that keep arriving)
 * and a fresh sample of warm_old_baskets old ones per new one, at least per
 * tenth of the N_TRAIN training baskets: what the old model lacks is in the
 * new ones, and the sample keeps it from forgetting the rest.  Sets
 * tr->first_new and tr->old_share; the old baskets' lines into *OLD_LINES.
 */
void
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
 * This epoch's positives, shuffled, into tr->pool; returns how many.  The
 * multi-task kinds take targets of each training basket (see the essay);
 * the single-kernel kinds, the whole basket.
 */
int64
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
		if (!tr->targeted)
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
