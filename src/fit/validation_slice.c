/*
 * fit/validation_slice.c
 *		A validation slice of the training baskets, and how well a model
 *		completes it.
 *
 * Whatever a fit chooses from the data (the epoch to stop at, a rank, a
 * regularisation weight, the weight of co-occurrence evidence) is chosen on
 * baskets carved out of the training baskets, never on the user's test
 * baskets.  Each validation basket hides one item (a random one, or its last
 * with target => 'last'); the rest of the basket is the context, as at query
 * time.  The held-out item is ranked among a fixed random sample of
 * validation_candidates items (or the whole catalog), the same sample for
 * every model compared, so comparisons are on equal terms.
 *
 * A fit that must not learn from the slice trains on mtdpp_baskets_without,
 * which drops its baskets.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"
#include "score/score.h"

/* the smallest slice a warm start measures on, however few new baskets */
#define WARM_MIN_VALIDATION 200

/*
 * Carves the slice out of DATA's baskets of two items or more: a random
 * validation_fraction of them, at most validation_baskets, and none when
 * fewer than 20 (too few to measure anything).  For a warm start, the newest
 * baskets (the last order ids), which the earlier model is the least likely
 * to have learnt from; and, unless validation_baskets is given, no more than
 * a quarter of the new ones (those beyond the count the earlier model was
 * trained on) and at least WARM_MIN_VALIDATION: the new baskets are what the
 * earlier model lacks, and a slice of 1000 would take most of a day's
 * orders away from training.  Draws from RNG.
 */
void
mtdpp_validation_carve(MtdppValidation *v, const MtdppBaskets *d,
					   const MtdppParams *p, pg_prng_state *rng)
{
	int32	   *order = palloc(sizeof(int32) * Max(d->n_baskets, 1));
	int			eligible = 0,
				want;

	memset(v, 0, sizeof(*v));
	v->data = d;
	v->target_last = p->target == MTDPP_TARGET_LAST;
	v->max_context = p->max_context;
	v->is_val = palloc0(sizeof(bool) * Max(d->n_baskets, 1));
	for (int b = 0; b < d->n_baskets; b++)
		if (d->start[b + 1] - d->start[b] >= 2)
			order[eligible++] = b;
	want = (int) floor(eligible * p->validation_fraction);
	want = Min(want, p->validation_baskets);
	if (p->warm != NULL && p->warm_slice)
	{
		int			n_new = 0;

		for (int k = eligible - 1; k >= 0 && order[k] >= p->warm->n_baskets; k--)
			n_new++;
		want = Min(want, Max(n_new / 4, WARM_MIN_VALIDATION));
	}
	if (want < 20)
		want = 0;

	v->baskets = palloc(sizeof(int32) * Max(want, 1));
	v->held = palloc(sizeof(int32) * Max(want, 1));
	for (int k = 0; k < want; k++)
	{
		int			j = p->warm ? eligible - 1 - k :
			k + (int) pg_prng_uint64_range(rng, 0, eligible - 1 - k);
		int32		tmp = order[k];
		int			len;

		order[k] = order[j];
		order[j] = tmp;
		v->baskets[k] = order[k];
		v->is_val[order[k]] = true;
		len = (int) (d->start[order[k] + 1] - d->start[order[k]]);
		v->held[k] = d->items[d->start[order[k]] +
							  (v->target_last ? len - 1 :
							   (int) pg_prng_uint64_range(rng, 0, len - 1))];
	}
	v->n = want;
	pfree(order);

	/* the candidates: every item, or a random sample */
	v->outside = palloc0(sizeof(bool) * Max(d->n_items, 1));
	v->n_candidates = d->n_items;
	if (p->validation_candidates > 0 && p->validation_candidates < d->n_items)
	{
		int32	   *perm = palloc(sizeof(int32) * d->n_items);

		for (int i = 0; i < d->n_items; i++)
		{
			int			j = (int) pg_prng_uint64_range(rng, 0, i);

			perm[i] = perm[j];
			perm[j] = i;
		}
		for (int k = p->validation_candidates; k < d->n_items; k++)
			v->outside[perm[k]] = true;
		v->n_candidates = p->validation_candidates;
		pfree(perm);
	}
	v->exclude = palloc(sizeof(bool) * Max(d->n_items, 1));
	memcpy(v->exclude, v->outside, sizeof(bool) * d->n_items);
	v->ctx = palloc(sizeof(int32) * Max(MTDPP_MAX_CONTEXT, 1));
}

/*
 * The context of validation basket K (its items but the held-out one, the
 * last LIMIT of them, as at query time) into v->ctx, its items marked
 * excluded; returns its length.  mtdpp_validation_release unmarks them.
 */
int
mtdpp_validation_context(MtdppValidation *v, int k, int limit)
{
	const MtdppBaskets *d = v->data;
	int			bk = v->baskets[k],
				held = v->held[k],
				b = 0;

	for (int64 i = d->start[bk]; i < d->start[bk + 1]; i++)
		if (d->items[i] != held)
		{
			v->exclude[d->items[i]] = true;
			if (limit == 0)
				continue;
			if (b == limit)
			{
				memmove(v->ctx, v->ctx + 1, sizeof(int32) * (limit - 1));
				b--;
			}
			v->ctx[b++] = d->items[i];
		}
	v->exclude[held] = false;
	return b;
}

void
mtdpp_validation_release(MtdppValidation *v, int k)
{
	const MtdppBaskets *d = v->data;
	int			bk = v->baskets[k];

	for (int64 i = d->start[bk]; i < d->start[bk + 1]; i++)
		v->exclude[d->items[i]] = v->outside[d->items[i]];
}

/*
 * How well model M completes the slice, into OUT: mean percentile rank and
 * precision at 5, 10 and 20 among the candidates (NAN without a slice).
 * Contexts keep their last max_context items (or fewer, as the model
 * conditions on), as in training.
 */
void
mtdpp_validation_measure(MtdppValidation *v, const MtdppModel *m,
						 MtdppMetrics *out)
{
	int			limit = Min(Min(mtdpp_context_limit(m), v->max_context),
							MTDPP_MAX_CONTEXT);
	double		sum = 0.0;
	int			counted = 0,
				top5 = 0,
				top10 = 0,
				top20 = 0;

	for (int k = 0; k < v->n; k++)
	{
		int			b = mtdpp_validation_context(v, k, limit),
					above,
					ties,
					n;

		CHECK_FOR_INTERRUPTS();
		mtdpp_rank_of(m, v->ctx, b, v->exclude, v->held[k], 0.0,
					  &above, &ties, &n);
		mtdpp_validation_release(v, k);
		if (n > 1)
		{
			double		rank = 1.0 + above + 0.5 * ties;

			sum += 100.0 * (n - rank) / (n - 1);
			top5 += rank <= 5.0;
			top10 += rank <= 10.0;
			top20 += rank <= 20.0;
			counted++;
		}
	}
	out->n = counted;
	out->mpr = counted > 0 ? sum / counted : NAN;
	out->p5 = counted > 0 ? 100.0 * top5 / counted : NAN;
	out->p10 = counted > 0 ? 100.0 * top10 / counted : NAN;
	out->p20 = counted > 0 ? 100.0 * top20 / counted : NAN;
}

/* The validation MPR of M alone: the trainer's early stopping. */
double
mtdpp_validation_mpr(MtdppValidation *v, const MtdppModel *m)
{
	MtdppMetrics metrics;

	mtdpp_validation_measure(v, m, &metrics);
	return metrics.mpr;
}

/*
 * A copy of the slice FROM into TO, in the current memory context (FROM's
 * may be about to go); the baskets are still FROM's data.
 */
void
mtdpp_validation_copy(MtdppValidation *to, const MtdppValidation *from)
{
	const MtdppBaskets *d = from->data;

	*to = *from;
	to->baskets = palloc(sizeof(int32) * Max(from->n, 1));
	to->held = palloc(sizeof(int32) * Max(from->n, 1));
	memcpy(to->baskets, from->baskets, sizeof(int32) * from->n);
	memcpy(to->held, from->held, sizeof(int32) * from->n);
	to->is_val = palloc(sizeof(bool) * Max(d->n_baskets, 1));
	memcpy(to->is_val, from->is_val, sizeof(bool) * d->n_baskets);
	to->outside = palloc(sizeof(bool) * Max(d->n_items, 1));
	memcpy(to->outside, from->outside, sizeof(bool) * d->n_items);
	to->exclude = palloc(sizeof(bool) * Max(d->n_items, 1));
	memcpy(to->exclude, from->outside, sizeof(bool) * d->n_items);
	to->ctx = palloc(sizeof(int32) * MTDPP_MAX_CONTEXT);
}

/*
 * DATA without the baskets flagged in DROP: the same items and dense
 * indices, popularity counted again over the baskets kept.  Shares nothing
 * with DATA.
 */
MtdppBaskets *
mtdpp_baskets_without(const MtdppBaskets *d, const bool *drop)
{
	MtdppBaskets *r = palloc0(sizeof(MtdppBaskets));
	int64		lines = 0;
	int			kept = 0;

	for (int b = 0; b < d->n_baskets; b++)
		if (!drop[b])
		{
			lines += d->start[b + 1] - d->start[b];
			kept++;
		}
	r->n_items = d->n_items;
	r->positions = d->positions;
	r->ordered = d->ordered;
	r->n_baskets = kept;
	r->n_lines = lines;
	r->item_ids = palloc(sizeof(int32) * Max(d->n_items, 1));
	memcpy(r->item_ids, d->item_ids, sizeof(int32) * d->n_items);
	r->popularity = palloc0(sizeof(int32) * Max(d->n_items, 1));
	r->start = mtdpp_alloc_huge(sizeof(int64) * (kept + 1));
	r->items = mtdpp_alloc_huge(sizeof(int32) * Max(lines, 1));
	kept = 0;
	lines = 0;
	for (int b = 0; b < d->n_baskets; b++)
	{
		if (drop[b])
			continue;
		r->start[kept++] = lines;
		for (int64 i = d->start[b]; i < d->start[b + 1]; i++)
		{
			r->items[lines++] = d->items[i];
			r->popularity[d->items[i]]++;
		}
	}
	r->start[kept] = lines;
	return r;
}
