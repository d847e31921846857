/*
 * score/similarity.c
 *		How alike two items are, by the measures several kinds share: the
 *		cosine of their item factors, the weights of their neighbour lists
 *		(each kind's routine similar, kinds.h; mtdpp_similar, similar.c,
 *		ranks by them).
 */
#include "postgres.h"

#include <math.h>

#include "model/kinds.h"
#include "model/model.h"
#include "numeric/kernel.h"
#include "score/score.h"

/* item factors gathered at a time by mtdpp_similar_cosine */
#define SIMILAR_BLOCK	1024

/*
 * mtdpp_similar of the kinds with item factors: the cosine of the rows V_i
 * and V_j, the entry (i, j) of the kernel L = V V^T normalised by its
 * diagonal, L_ij / sqrt(L_ii L_jj); 0 for an item with zero factors, which
 * is like no other.  Of an ensemble or of posterior samples (their columns
 * side by side) it is the normalised entry of the sum of their kernels.
 * Every item ranks in the one tier.
 */
void
mtdpp_similar_cosine(const MtdppModel *m, int item, double *sim, int8 *tier)
{
	int			r = m->rank;
	double	   *vi = palloc(sizeof(double) * Max(r, 1));
	double	   *rows = palloc(sizeof(double) * (size_t) SIMILAR_BLOCK * Max(r, 1));
	int32	   *idx = palloc(sizeof(int32) * SIMILAR_BLOCK);
	double		norm_i = 0.0;
	int32		self = item;

	if (r > 0)
		mtdpp_gather_V(m, &self, 1, vi);
	for (int j = 0; j < r; j++)
		norm_i += vi[j] * vi[j];
	norm_i = sqrt(norm_i);
	for (int start = 0; start < m->n_items; start += SIMILAR_BLOCK)
	{
		int			n = Min(SIMILAR_BLOCK, m->n_items - start);

		for (int t = 0; t < n; t++)
			idx[t] = start + t;
		if (r > 0)
			mtdpp_gather_V(m, idx, n, rows);
		for (int t = 0; t < n; t++)
		{
			const double *vj = rows + (size_t) t * r;
			double		dot = 0.0,
						norm_j = 0.0;

			for (int j = 0; j < r; j++)
			{
				dot += vi[j] * vj[j];
				norm_j += vj[j] * vj[j];
			}
			sim[start + t] = (norm_i > 0.0 && norm_j > 0.0) ? dot / (norm_i * sqrt(norm_j)) : 0.0;
			tier[start + t] = 0;
		}
	}
	pfree(vi);
	pfree(rows);
	pfree(idx);
}

/*
 * mtdpp_similar of the kinds that keep neighbour lists of weights (cosines
 * of co-occurrence, item-item regression weights B_ij): the weight of
 * j in ITEM's list, the evidence ITEM alone gives j as a completion (the
 * weights of an item listed twice add up).  The items of the list rank in
 * one tier; the others have no measure.
 */
void
mtdpp_similar_lists(const MtdppModel *m, int item, double *sim, int8 *tier)
{
	int32		self = item;

	mtdpp_evidence(m, &self, 1, sim);
	for (int i = 0; i < m->n_items; i++)
		tier[i] = MTDPP_SIMILAR_NONE;
	if (m->nbr_start == NULL)
		return;
	for (int64 q = m->nbr_start[item]; q < m->nbr_start[item + 1]; q++)
		tier[m->nbr_index[q]] = 1;
}

/* an item proposed: its tier and measure, its dense index */
