/*
 * score/topk_int.h
 *		What the top k (topk.c), its pruning by bounds (topk_bounded.c),
 *		its scan of large catalogs (topk_scan.c) and its candidates there
 *		(topk_candidates.c) share: the heap of the best k, the bounds and
 *		the exact scores.
 */
#ifndef MTDPP_TOPK_INT_H
#define MTDPP_TOPK_INT_H

#include "model/model.h"
#include "score/score.h"

/* min-heap of the best K so far, the worst at the root */
typedef struct TopK
{
	MtdppRanked *h;
	int			n;
	int			k;
} TopK;

/* better: higher score, then lower item id (dense order is item id order) */
static inline bool
better(double sa, int32 ia, double sb, int32 ib)
{
	return sa > sb || (sa == sb && ia < ib);
}

extern void mtdpp_topk_offer_slow(TopK *t, double score, int32 index);
extern void mtdpp_sort_ranked(MtdppRanked *out, int n);

/* SCORE for INDEX: most candidates lose to the root, checked inline */
static inline void
offer(TopK *t, double score, int32 index)
{
	if (t->n == t->k && !better(score, index, t->h[0].score, t->h[0].index))
		return;
	mtdpp_topk_offer_slow(t, score, index);
}

/* topk_bounded.c */
extern void mtdpp_exact_logdets(const MtdppModel *m, const int32 *ctx, int b, const double *P,
								const int32 *cands, int n, double *logdet);
extern double mtdpp_fit_bounds(const MtdppModel *m, const int32 *ctx, int b, const int32 *cands,
							   int nc, int col, int r, double *bound, float *weights,
							   const float *ordered);
extern double mtdpp_bound_threshold(const MtdppModel *m, double score, double offset);

/* topk_scan.c */
extern bool mtdpp_top_k_scan(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
							 const double *P, const double *ev, TopK *top);

/* topk_candidates.c */
extern bool mtdpp_top_k_candidates(const MtdppModel *m, const int32 *ctx, int b,
								   const bool *exclude, const double *P, const double *ev,
								   TopK *top);

#endif							/* MTDPP_TOPK_INT_H */
