/*
 * score/topk_candidates.c
 *		The k best completions of a basket for a kind that adds
 *		co-occurrence evidence to a DPP's score, in a large catalog, from
 *		candidates: the DPP's own top M and the basket's neighbours.
 *
 * The score of a candidate c of such a kind is its DPP's, d(c) =
 * ln det K_c, plus the evidence e(c) of the basket's neighbour lists
 * (evidence.c), which is zero on every item no list of the basket holds.  Let T be the DPP's top M
 * (by d, then item id), found by the exact scan of task factors
 * (topk_scan.c) without the evidence, and (d_M, i_M) its last.  Every item
 * outside T has d(c) <= d_M, so
 *
 *	 - an item outside T with no evidence scores d(c), after (d_M, i_M) in
 *	   the order of the answer: it cannot enter once the k-th best found
 *	   comes at or before (d_M, i_M);
 *	 - a neighbour c outside T scores at most d_M + e(c): the neighbours are
 *	   taken by decreasing evidence and scored exactly until that ceiling
 *	   falls below the k-th best found, where every later one's does too.
 *
 * The items of T score d(c) + e(c) from the scan's exact d(c).  So the
 * candidates are T and the neighbours whose ceiling reaches the k-th best,
 * and the answer is the full pass's (ties by item id).  Where the k-th best
 * does not reach (d_M, i_M) (evidence below zero, as EASE's can be, pulled
 * T's items down), M is quadrupled and the stage runs again; past
 * CANDIDATES_LIMIT times the setting, the full pass (topk_scan.c) answers.
 *
 * The full pass bounds every neighbour and scores those whose Hadamard bound
 * times exp(e(c)) reaches the k-th best, and only then scans the catalog:
 * with strong evidence the bounds of a basket's ~2,500 neighbours all pass,
 * and a k-th best found among them alone lets the scan stop late.  Here the
 * DPP's top M, found first, bounds each neighbour by d_M, far tighter than
 * its Hadamard bound.  mtdpp.candidates is M; 0 is the full pass.
 */
#include "postgres.h"

#include <math.h>

#include "utils/guc.h"

#include "model/model.h"
#include "score/score.h"
#include "score/topk_int.h"

/* the DPP's top M at most this many times the setting before the full pass */
#define CANDIDATES_LIMIT 64
/* neighbours scored exactly at a time: the first few often settle the answer */
#define CANDIDATES_BLOCK 16

/* mtdpp.candidates: M, the DPP's top M the stage starts from; 0: the full pass */
int			mtdpp_candidates = 64;

void
mtdpp_candidates_init(void)
{
	DefineCustomIntVariable("mtdpp.candidates",
							"The DPP's top M that a completion with co-occurrence evidence starts from in a large catalog.",
							"0 scans the catalog with every neighbour's bound instead; either way the answer is exact.",
							&mtdpp_candidates, 64, 0, 1000000, PGC_USERSET, 0, NULL, NULL, NULL);
}

/*
 * The ceiling of a neighbour outside T, D_M + E, reaches the k-th best of
 * TOP (always while TOP is not full).  A relative sliver of slack: the d of
 * one candidate, scored in another batch of the numeric core, may differ in
 * its last bits, and a neighbour too many scored costs only its score.
 */
static inline bool
ceiling_reaches(const TopK *top, double d_m, double e)
{
	double		tau;

	if (top->n < top->k)
		return true;
	tau = top->h[0].score;
	return d_m + e >= tau - 1e-9 * (1.0 + fabs(tau));
}

/*
 * One round of the stage with the DPP's top M into TOP (empty on entry);
 * false, with TOP holding what it found, where its k-th best does not
 * reach (d_M, i_M).
 */
static bool
candidates_round(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
				 const double *P, const double *ev, int M, TopK *top, int *listed_scored)
{
	MtdppRanked *dh = palloc(sizeof(MtdppRanked) * M);
	TopK		dpp = {dh, 0, M};
	bool	   *in_t = palloc0(sizeof(bool) * Max(m->n_items, 1));
	bool	   *listed = palloc0(sizeof(bool) * Max(m->n_items, 1));
	int32	   *list = palloc(sizeof(int32) * Max(m->n_items, 1));
	int32		block[CANDIDATES_BLOCK];
	double		scores[CANDIDATES_BLOCK];
	double		d_m;
	int32		i_m;
	int			nl,
				n = 0;
	bool		settled;

	if (!mtdpp_top_k_scan(m, ctx, b, exclude, P, NULL, &dpp))
		elog(ERROR, "mtdpp: a model with a scan order could not be scanned");
	/* the heap's root is its last, (d_M, i_M); a heap not full holds every candidate */
	d_m = dpp.n == M ? dh[0].score : -INFINITY;
	i_m = dpp.n == M ? dh[0].index : PG_INT32_MAX;
	for (int j = 0; j < dpp.n; j++)
	{
		in_t[dh[j].index] = true;
		offer(top, dh[j].score + ev[dh[j].index], dh[j].index);
	}

	/*
	 * the neighbours outside T whose ceiling reaches the k-th best of T's
	 * (thousands of a basket's, few of them), by decreasing evidence, while
	 * their ceiling reaches the k-th best so far
	 */
	nl = mtdpp_evidence_items(m, ctx, b, ev, exclude, list, listed);
	for (int j = 0; j < nl; j++)
		if (!in_t[list[j]] && ceiling_reaches(top, d_m, ev[list[j]]))
			list[n++] = list[j];
	qsort_arg(list, n, sizeof(int32), mtdpp_cmp_by_key_desc, (void *) ev);
	for (int start = 0; start < n && ceiling_reaches(top, d_m, ev[list[start]]);
		 start += CANDIDATES_BLOCK)
	{
		int			nt = 0;

		while (nt < CANDIDATES_BLOCK && start + nt < n &&
			   ceiling_reaches(top, d_m, ev[list[start + nt]]))
		{
			block[nt] = list[start + nt];
			nt++;
		}
		mtdpp_exact_logdets(m, ctx, b, P, block, nt, scores);
		for (int j = 0; j < nt; j++)
			offer(top, scores[j] + ev[block[j]], block[j]);
		*listed_scored += nt;
	}

	/* an item outside T without evidence comes after (d_M, i_M) */
	settled = dpp.n < M ||
		(top->n == top->k && !better(d_m, i_m, top->h[0].score, top->h[0].index));
	pfree(dh);
	pfree(in_t);
	pfree(listed);
	pfree(list);
	return settled;
}

/*
 * The top k of CTX (B items, P its pairs, EV the evidence the kind adds)
 * into TOP (empty), as the full pass (mtdpp_top_k_scan with EV) would find
 * it; false, with TOP empty, where the setting is 0 or the stage gave up
 * (then the caller takes the full pass).  TOP's scores lack ln w.
 */
bool
mtdpp_top_k_candidates(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
					   const double *P, const double *ev, TopK *top)
{
	int			listed_scored = 0,
				rounds = 0;

	/* a model the scan takes (topk_scan.c: cached, of one fit) */
	if (mtdpp_candidates <= 0 || ev == NULL || m->scan_order == NULL || m->scan_R2f == NULL ||
		m->R2f == NULL || Max(m->blocks, 1) > 1)
		return false;
	for (int64 M = Max(mtdpp_candidates, top->k);
		 M <= (int64) CANDIDATES_LIMIT * Max(mtdpp_candidates, top->k);
		 M *= 4)
	{
		rounds++;
		top->n = 0;
		if (candidates_round(m, ctx, b, exclude, P, ev, (int) Min(M, m->n_items), top,
							 &listed_scored))
		{
			elog(DEBUG1, "mtdpp top %d of %d items: candidates from the DPP's top " INT64_FORMAT " (%d rounds), %d neighbours scored exactly",
				 top->k, m->n_items, Min(M, m->n_items), rounds, listed_scored);
			return true;
		}
		if (M >= m->n_items)
			break;
	}
	elog(DEBUG1, "mtdpp top %d of %d items: the candidates did not settle in %d rounds, the full pass answers",
		 top->k, m->n_items, rounds);
	top->n = 0;
	return false;
}
