/*
 * score/topk_scan.c
 *		The k best completions of a basket in a large catalog, exactly,
 *		without bounding every item: the items by decreasing size of their
 *		task factors, a chunk at a time, until no later one can enter.
 *
 * topk.c bounds every candidate c of a basket by a product over the
 * basket's columns s of 1 + sum_j R_cj^2 W_js, with W >= 0 (r x b) the
 * basket's weights.  Each sum is at most t_c max_j W_js, with
 * t_c = sum_j R_cj^2, so that
 *
 *		bound(c) <= G(t_c) = prod_s (1 + t_c max_j W_js),
 *
 * which grows with t_c.  A cached model keeps its items in decreasing t_c
 * (model.c, scan_order).  The scan bounds a chunk of them, scores exactly
 * those whose bound reaches the k-th best score so far (as topk.c does the
 * whole catalog), and stops before the first chunk whose largest t_c gives
 * a G below that threshold: no item after it can enter the top k.  The
 * items a kind's co-occurrence evidence raises (the neighbours of the
 * basket's items) go first, whatever their t_c, since their bound is G's
 * times exp(evidence).  The answer is the full pass's, ties included; the
 * scan pays where few items have large task factors, as where popularity
 * is skewed, and costs a chunk more than the full pass where it is not.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "model/kinds.h"
#include "model/model.h"
#include "score/score.h"
#include "score/topk_int.h"

/* items bounded at a time; the scan's least useful work is one chunk */
#define SCAN_CHUNK 4096
/* candidates scored exactly at a time, as topk.c */
#define SCAN_SCORE_BLOCK 64

typedef struct Bounded
{
	double		bound;
	int32		item;
} Bounded;

/* by decreasing bound, then item, so that the order is defined */
static int
cmp_bounded(const void *a, const void *b)
{
	const Bounded *x = a,
			   *y = b;

	if (x->bound != y->bound)
		return x->bound > y->bound ? -1 : 1;
	return (x->item > y->item) - (x->item < y->item);
}

/* the least bound that may still enter TOP (0 while it is not full) */
static inline double
least_bound(const MtdppModel *m, const TopK *top, double offset)
{
	return top->n == top->k ? mtdpp_bound_threshold(m, top->h[0].score, offset) : 0.0;
}

/*
 * Bounds the N items ITEMS, raised by their evidence EV (if not NULL), and
 * scores exactly, by decreasing bound, those that may enter TOP; returns
 * the offset of the bounds, and the basket's column maxima into COLMAX.
 */
static double
bound_and_score(const MtdppModel *m, const int32 *ctx, int b, const double *P,
				const int32 *items, int n, const double *ev, double *colmax, TopK *top,
				int *scored)
{
	double	   *bound = palloc(sizeof(double) * Max(n, 1));
	Bounded    *c = palloc(sizeof(Bounded) * Max(n, 1));
	int32		block[SCAN_SCORE_BLOCK];
	double		scores[SCAN_SCORE_BLOCK];
	double		offset = mtdpp_fit_bounds(m, ctx, b, items, n, 0, m->rank, bound, colmax);
	double		least;

	for (int j = 0; j < n; j++)
	{
		c[j].bound = ev && ev[items[j]] != 0.0 ? bound[j] * exp(ev[items[j]]) : bound[j];
		c[j].item = items[j];
	}
	qsort(c, n, sizeof(Bounded), cmp_bounded);
	least = least_bound(m, top, offset);
	for (int start = 0; start < n && c[start].bound >= least; start += SCAN_SCORE_BLOCK)
	{
		int			nt = Min(SCAN_SCORE_BLOCK, n - start);

		while (nt > 0 && c[start + nt - 1].bound < least)
			nt--;
		for (int j = 0; j < nt; j++)
			block[j] = c[start + j].item;
		mtdpp_exact_logdets(m, ctx, b, P, block, nt, scores);
		for (int j = 0; j < nt; j++)
			offer(top, scores[j] + (ev ? ev[block[j]] : 0.0), block[j]);
		*scored += nt;
		least = least_bound(m, top, offset);
	}
	pfree(bound);
	pfree(c);
	return offset;
}

/*
 * The top k of CTX (B items, P its pairs) into TOP, as mtdpp_top_k's pass
 * over every item would find them, skipping the items EXCLUDE flags; false,
 * with nothing done, for a model that keeps no scan order (small, not
 * cached, or of several fits).  TOP's scores lack ln w, as mtdpp_top_k's.
 */
bool
mtdpp_top_k_scan(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
				 const double *P, TopK *top)
{
	int			n = m->n_items;
	double	   *colmax = palloc(sizeof(double) * Max(b, 1));
	int32	   *chunk = palloc(sizeof(int32) * SCAN_CHUNK);
	bool	   *listed = NULL;
	double	   *ev = NULL;
	double		offset = 0.0;
	/* G's margin over the float sums of the bounds (topk.c's widening, twice) */
	double		margin = 1.0 + (2 * m->rank + 16) * (double) FLT_EPSILON;
	bool		have_colmax = false;
	int			pos = 0,
				bounded = 0,
				scored = 0;

	if (m->scan_order == NULL || Max(m->blocks, 1) > 1 || m->R2f == NULL)
		return false;
	if (mtdpp_kind(m->kind)->neighbors && m->nbr_start != NULL)
	{
		int			nl = 0;
		int32	   *list;
		int64		pairs = 0;

		/* the evidence's items, bounded and scored first */
		ev = palloc(sizeof(double) * Max(n, 1));
		mtdpp_evidence(m, ctx, b, ev);
		listed = palloc0(sizeof(bool) * Max(n, 1));
		for (int s = 0; s < b; s++)
			pairs += m->nbr_start[ctx[s] + 1] - m->nbr_start[ctx[s]];
		list = palloc(sizeof(int32) * Max(Min(pairs, (int64) n), 1));
		for (int s = 0; s < b; s++)
			for (int64 q = m->nbr_start[ctx[s]]; q < m->nbr_start[ctx[s] + 1]; q++)
			{
				int32		c = m->nbr_index[q];

				if (!listed[c] && !exclude[c] && ev[c] != 0.0)
				{
					listed[c] = true;
					list[nl++] = c;
				}
			}
		if (nl > 0)
		{
			offset = bound_and_score(m, ctx, b, P, list, nl, ev, colmax, top, &scored);
			have_colmax = true;
			bounded += nl;
		}
		pfree(list);
	}
	while (pos < n)
	{
		int			nt = 0;

		if (have_colmax && top->n == top->k)
		{
			double		t = m->scan_key[pos] * margin;
			double		g = 1.0;

			for (int s = 0; s < b; s++)
				g *= 1.0 + t * colmax[s];
			if (g < least_bound(m, top, offset))
				break;
		}
		for (; pos < n && nt < SCAN_CHUNK; pos++)
		{
			int32		c = m->scan_order[pos];

			if (!exclude[c] && !(listed && listed[c]))
				chunk[nt++] = c;
		}
		if (nt == 0)
			continue;
		offset = bound_and_score(m, ctx, b, P, chunk, nt, NULL, colmax, top, &scored);
		have_colmax = true;
		bounded += nt;
	}
	elog(DEBUG1, "mtdpp top %d of %d items: scan bounded %d, scored %d exactly",
		 top->k, n, bounded, scored);
	pfree(colmax);
	pfree(chunk);
	if (ev)
		pfree(ev);
	if (listed)
		pfree(listed);
	return true;
}
