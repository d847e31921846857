/*
 * score/topk_scan.c
 *		The k best completions of a basket in a large catalog, exactly,
 *		without bounding every item: the items by decreasing size of their
 *		task factors, a chunk at a time, until no later one can enter.
 *
 * topk_bounded.c bounds every candidate c of a basket by a product over the
 * basket's columns s of 1 + sum_j R_cj^2 W_js, with W >= 0 (r x b) the
 * basket's weights.  Each sum is at most t_c max_j W_js, with
 * t_c = sum_j R_cj^2, so that
 *
 *		bound(c) <= G(t_c) = prod_s (1 + t_c max_j W_js),
 *
 * which grows with t_c.  A cached model keeps its items in decreasing t_c
 * (model.c, scan_order).  The scan bounds a chunk of them, scores exactly
 * those whose bound reaches the k-th best score so far (as topk_bounded.c
 * does the whole catalog), and stops before the first chunk whose largest t_c gives
 * a G below that threshold: no item after it can enter the top k.  The
 * items a kind's co-occurrence evidence raises (the neighbours of the
 * basket's items) go first, whatever their t_c, since their bound is G's
 * times exp(evidence).  Within a chunk, groups of MTDPP_SCAN_GROUP items
 * in scan order keep an envelope, the largest R_cj^2 of their items for
 * each j, whose bound (as an item's) bounds theirs: only the groups whose
 * envelope reaches the threshold are bounded item by item, their panels
 * packed side by side.  The answer is the full pass's, ties included; the
 * scan pays where few items have large task factors, as where popularity
 * is skewed, and costs a chunk more than the full pass where it is not.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "model/model.h"
#include "score/score.h"
#include "score/topk_int.h"

/* items bounded at a time; the scan's least useful work is one chunk */
#define SCAN_CHUNK 4096
/* candidates scored exactly at a time, as topk_bounded.c */
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

/* each basket column's largest weight in W (r x b): what G multiplies t by */
static void
column_maxima(const float *W, int r, int b, double *colmax)
{
	for (int s = 0; s < b; s++)
	{
		colmax[s] = 0.0;
		for (int j = 0; j < r; j++)
			colmax[s] = Max(colmax[s], (double) W[(size_t) j * b + s]);
	}
}

/*
 * Moves the K first of the N candidates C by cmp_bounded to C[0..K), in no
 * particular order (a quickselect, as mtdpp_kth_largest does on plain
 * floats): what a full sort would put there, at a cost linear in N.
 */
static void
select_first(Bounded *c, int n, int k)
{
	int			lo = 0,
				hi = n - 1;

	while (lo < hi)
	{
		Bounded		pivot = c[lo + (hi - lo) / 2];
		int			i = lo,
					j = hi;

		while (i <= j)
		{
			while (cmp_bounded(&c[i], &pivot) < 0)
				i++;
			while (cmp_bounded(&c[j], &pivot) > 0)
				j--;
			if (i <= j)
			{
				Bounded		t = c[i];

				c[i++] = c[j];
				c[j--] = t;
			}
		}
		/* c[lo..j] come before c[i..hi] */
		if (k - 1 <= j)
			hi = j;
		else if (k - 1 >= i)
			lo = i;
		else
			break;
	}
}

/*
 * Scores exactly, by decreasing bound, the N candidates C (their bounds
 * raised by their evidence) that may enter TOP, whose bounds have the
 * offset OFFSET: a block of the best bounds at a time, selected rather than
 * sorted, since after the first block most of a chunk falls below the
 * threshold and is dropped unsorted.
 */
static void
score_bounded(const MtdppModel *m, const int32 *ctx, int b, const double *P, Bounded *c,
			  int n, const double *ev, double offset, TopK *top, int *scored)
{
	int32		block[SCAN_SCORE_BLOCK];
	double		scores[SCAN_SCORE_BLOCK];
	double		least = least_bound(m, top, offset);

	for (;;)
	{
		int			kept = 0,
					nt;

		for (int j = 0; j < n; j++)
			if (c[j].bound >= least)
				c[kept++] = c[j];
		n = kept;
		if (n == 0)
			break;
		nt = Min(SCAN_SCORE_BLOCK, n);
		if (n > nt)
			select_first(c, n, nt);
		qsort(c, nt, sizeof(Bounded), cmp_bounded);
		for (int j = 0; j < nt; j++)
			block[j] = c[j].item;
		mtdpp_exact_logdets(m, ctx, b, P, block, nt, scores);
		for (int j = 0; j < nt; j++)
			offer(top, scores[j] + (ev ? ev[block[j]] : 0.0), block[j]);
		*scored += nt;
		c += nt;
		n -= nt;
		least = least_bound(m, top, offset);
	}
}

/*
 * The items whose evidence EV for CTX is not 0 (none EXCLUDE flags), bounded
 * with their evidence and scored into TOP first: flagged in the array
 * returned (NULL for a kind without evidence, EV NULL).
 */
static bool *
scan_evidence(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
			  const double *P, const double *ev, float *W, TopK *top, int *bounded,
			  int *scored)
{
	int			nl;
	int32	   *list;
	bool	   *listed;

	if (ev == NULL)
		return NULL;
	listed = palloc0(sizeof(bool) * Max(m->n_items, 1));
	list = palloc(sizeof(int32) * Max(m->n_items, 1));
	nl = mtdpp_evidence_items(m, ctx, b, ev, exclude, list, listed);
	if (nl > 0)
	{
		double	   *bound = palloc(sizeof(double) * nl);
		Bounded    *c = palloc(sizeof(Bounded) * nl);
		double		offset = mtdpp_fit_bounds(m, ctx, b, list, nl, 0, m->rank, bound, W, NULL);

		for (int j = 0; j < nl; j++)
		{
			c[j].bound = bound[j] * exp(ev[list[j]]);
			c[j].item = list[j];
		}
		score_bounded(m, ctx, b, P, c, nl, ev, offset, top, scored);
		*bounded += nl;
		pfree(bound);
		pfree(c);
	}
	pfree(list);
	return listed;
}

/*
 * What a scan holds beside the model: the basket's weights, the bounds of
 * the envelopes, and a chunk's packed groups
 */
typedef struct Scan
{
	const MtdppModel *m;
	const int32 *ctx;
	int			b;
	const double *P;
	const bool *exclude;
	const bool *listed;			/* scored already (NULL: none) */
	double		offset;
	double	   *bound;			/* a chunk's */
	Bounded    *cands;
	float	   *pack;
	int			group[SCAN_CHUNK / MTDPP_SCAN_GROUP];
	int			bounded;
	int			scored;
} Scan;

/* bounds the NG groups packed, and scores those of their items that may enter TOP */
static void
scan_packed(Scan *sc, int ng, TopK *top)
{
	const MtdppModel *m = sc->m;
	int			nc = 0;
	double		least;

	sc->offset = mtdpp_fit_bounds(m, sc->ctx, sc->b, NULL, ng * MTDPP_SCAN_GROUP, 0, m->rank,
								  sc->bound, NULL, sc->pack);
	least = least_bound(m, top, sc->offset);
	for (int t = 0; t < ng * MTDPP_SCAN_GROUP; t++)
	{
		int			at = sc->group[t / MTDPP_SCAN_GROUP] + t % MTDPP_SCAN_GROUP;
		int32		c;

		if (at >= m->n_items || sc->bound[t] < least)
			continue;
		c = m->scan_order[at];
		if (!sc->exclude[c] && !(sc->listed && sc->listed[c]))
		{
			sc->cands[nc].bound = sc->bound[t];
			sc->cands[nc++].item = c;
		}
	}
	score_bounded(m, sc->ctx, sc->b, sc->P, sc->cands, nc, NULL, sc->offset, top, &sc->scored);
	sc->bounded += ng * MTDPP_SCAN_GROUP;
}

/*
 * The top k of CTX (B items, P its pairs, EV the evidence the kind adds,
 * NULL: none) into TOP, as the pass over every item (topk_bounded.c) would
 * find them, skipping the items EXCLUDE flags; false, with nothing done,
 * for a model that keeps no scan order (small, not cached, or of several
 * fits).  TOP's scores lack ln w, as the pass's.
 */
bool
mtdpp_top_k_scan(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
				 const double *P, const double *ev, TopK *top)
{
	int			n = m->n_items;
	int			r = m->rank;
	double	   *colmax = palloc(sizeof(double) * Max(b, 1));
	float	   *W = palloc(sizeof(float) * (size_t) r * Max(b, 1));
	Scan		sc = {m, ctx, b, P, exclude};
	double	   *env_bound;
	/* G's margin over the float sums of the bounds (topk_bounded.c's widening, twice) */
	double		margin = 1.0 + (2 * r + 16) * (double) FLT_EPSILON;
	/*
	 * the float sums of an item's and of its envelope's bounds are each
	 * within (r + 2) roundings of their exact values: this margin on every
	 * column keeps the envelope's above its items'
	 */
	double		env_margin = pow(1.0 + (2 * r + 8) * (double) FLT_EPSILON, b);

	if (m->scan_order == NULL || m->scan_R2f == NULL || Max(m->blocks, 1) > 1 || m->R2f == NULL)
		return false;
	/* every group's envelope bounded at once, as items are (a group a lane) */
	env_bound = palloc(sizeof(double) * mtdpp_scan_groups(n) * MTDPP_PANEL);
	sc.offset = mtdpp_fit_bounds(m, ctx, b, NULL, (int) (mtdpp_scan_groups(n) * MTDPP_PANEL), 0, r,
								 env_bound, W, m->scan_env);
	column_maxima(W, r, b, colmax);
	sc.listed = scan_evidence(m, ctx, b, exclude, P, ev, W, top, &sc.bounded, &sc.scored);
	sc.bound = palloc(sizeof(double) * SCAN_CHUNK);
	sc.cands = palloc(sizeof(Bounded) * SCAN_CHUNK);
	sc.pack = palloc(sizeof(float) * (size_t) SCAN_CHUNK * r);

	/*
	 * Then the catalog in scan order, a chunk at a time: of a chunk, the
	 * groups whose envelope's bound reaches the threshold, their panels
	 * packed side by side and bounded in one pass.
	 */
	for (int pos = 0; pos < n; pos += SCAN_CHUNK)
	{
		int			ng = 0;
		double		least = least_bound(m, top, sc.offset);

		if (top->n == top->k)
		{
			double		t = m->scan_key[pos] * margin;
			double		g = 1.0;

			for (int s = 0; s < b; s++)
				g *= 1.0 + t * colmax[s];
			if (g < least)
				break;
		}
		for (int g0 = pos; g0 < Min(pos + SCAN_CHUNK, n); g0 += MTDPP_SCAN_GROUP)
		{
			if (top->n == top->k && env_bound[g0 / MTDPP_SCAN_GROUP] * env_margin < least)
				continue;
			memcpy(sc.pack + (size_t) ng * MTDPP_SCAN_GROUP * r, m->scan_R2f + (size_t) g0 * r,
				   sizeof(float) * MTDPP_SCAN_GROUP * r);
			sc.group[ng++] = g0;
		}
		if (ng > 0)
			scan_packed(&sc, ng, top);
	}
	elog(DEBUG1, "mtdpp top %d of %d items: scan bounded %d, scored %d exactly",
		 top->k, n, sc.bounded, sc.scored);
	pfree(colmax);
	pfree(W);
	pfree(env_bound);
	pfree(sc.bound);
	pfree(sc.cands);
	pfree(sc.pack);
	if (sc.listed)
		pfree((void *) sc.listed);
	return true;
}
