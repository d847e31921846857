/*
 * score/diverse.c
 *		Diverse set completion: k items that complete a basket together,
 *		chosen by greedy MAP inference in a DPP over the best candidates.
 *
 * A ranking scores each candidate alone, so its top k can be five sizes of
 * the same diaper.  A DPP scores sets: with the quality/diversity
 * decomposition of Kulesza and Taskar (2012, section 3.1),
 *
 *		L = diag(q) S diag(q),		det L_Y = prod_{c in Y} q_c^2 * det S_Y,
 *
 * q_c is how well item c completes the basket alone and S_Y, a Gram matrix
 * of unit vectors, is the squared volume they span: near-duplicates span
 * almost none.  Here
 *
 *	 - the candidates are the M = max(10k, 100) best items by the model's
 *	   score (the pruned top k of topk.c, filters included), so the set costs
 *	   about what a top M costs;
 *	 - ln q_c = alpha * score_c, the model's conditional score ln(w det K_c);
 *	 - S_cd = cos(V_c, V_d), the item factors V (the rows that build every
 *	   kernel of the model, so items the model treats alike are alike here),
 *	   plus a jitter on the diagonal so that L stays positive definite when
 *	   M exceeds the rank; an item with zero factors is like no other.
 *
 * With diversity d in [0, 1] and alpha = (1 - d) / (2d), ln det L_Y is, up
 * to the factor 1/d, the trade-off of Chen, Zhang and Zhou (NeurIPS 2018,
 * section 4):
 *
 *		(1 - d) * sum_{c in Y} score_c  +  d * ln det S_Y
 *
 * d = 0 is today's ranking (answered by the top k itself, so exactly), d = 1
 * pure diversity among the candidates.  Greedy MAP adds at each step the item
 * of largest marginal gain, (1 - d) score_c + d ln r_c^2, where r_c^2 is what
 * is left of S_cc once the items chosen are projected out: the square of the
 * next diagonal entry of the Cholesky factor of S_{Y+c}.  Chen et al.'s fast
 * greedy MAP keeps, for every candidate, its row of that factor and updates
 * it by one entry per step (their Algorithm 1):
 *
 *		e_c = (S_jc - <f_j, f_c>) / r_j,	f_c += [e_c],	r_c^2 -= e_c^2
 *
 * after choosing j, so k items cost O(M k (k + rank)) beyond the top M: no
 * determinant is ever formed.  A set holds at most MTDPP_SET_MAX_K = 500
 * items (mtdpp_complete_set refuses more: the cost grows with the cube of
 * k, twice the items eight times the work), so M is at most 5,000, the
 * factor rows F take at most 20 MB and the unit rows U 40 MB, and a step
 * (between checks for interrupts) at most M (k + rank) multiply-adds.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "model/model.h"
#include "numeric/kernel.h"
#include "score/score.h"

/* added to S's diagonal, so that L stays positive definite */
#define DIVERSE_JITTER	1e-6

/* candidates for a set of k items */
int
mtdpp_diverse_pool(int k)
{
	return (int) Min((int64) PG_INT32_MAX / 2, Max((int64) k * 10, 100));
}

/*
 * Chooses up to K of the N candidates CANDS (best first, as mtdpp_top_k
 * gives them) by greedy MAP with diversity D in (0, 1]; writes the positions
 * in CANDS of the items chosen, in the order chosen, to CHOSEN and returns
 * how many.  Ties go to the better ranked candidate.
 */
int
mtdpp_diverse_select(const MtdppModel *m, const MtdppRanked *cands, int n,
					 int k, double d, int *chosen)
{
	int			r = m->rank;
	int32	   *idx;
	double	   *U,
			   *F,
			   *r2;
	bool	   *taken;
	int			nk;

	k = Min(k, n);
	if (k <= 0)
		return 0;
	idx = palloc(sizeof(int32) * n);
	U = palloc(sizeof(double) * (size_t) n * Max(r, 1));
	F = palloc(sizeof(double) * (size_t) n * k);
	r2 = palloc(sizeof(double) * n);
	taken = palloc0(sizeof(bool) * n);

	/* unit rows of V: S_cd = <U_c, U_d> off the diagonal, S_cc = 1 */
	for (int c = 0; c < n; c++)
		idx[c] = cands[c].index;
	if (r > 0)
		mtdpp_gather_V(m, idx, n, U);
	for (int c = 0; c < n; c++)
	{
		double	   *u = U + (size_t) c * r;
		double		norm2 = 0.0;

		for (int j = 0; j < r; j++)
			norm2 += u[j] * u[j];
		if (norm2 > 0.0)
		{
			double		inv = 1.0 / sqrt(norm2);

			for (int j = 0; j < r; j++)
				u[j] *= inv;
		}
		r2[c] = 1.0 + DIVERSE_JITTER;
	}

	for (nk = 0; nk < k; nk++)
	{
		int			best = -1;
		double		best_gain = -INFINITY;
		const double *uj,
				   *fj;
		double		rj;

		CHECK_FOR_INTERRUPTS();
		for (int c = 0; c < n; c++)
		{
			double		gain;

			if (taken[c])
				continue;
			gain = (1.0 - d) * cands[c].score + d * log(r2[c]);
			if (best < 0 || gain > best_gain)
			{
				best = c;
				best_gain = gain;
			}
		}
		chosen[nk] = best;
		taken[best] = true;
		if (nk + 1 == k)
		{
			nk++;
			break;
		}

		/* one more column of the Cholesky factor, for every candidate left */
		uj = U + (size_t) best * r;
		fj = F + (size_t) best * k;
		rj = sqrt(r2[best]);
		for (int c = 0; c < n; c++)
		{
			const double *uc = U + (size_t) c * r;
			double	   *fc = F + (size_t) c * k;
			double		s = 0.0,
						e;

			if (taken[c])
				continue;
			for (int j = 0; j < r; j++)
				s += uj[j] * uc[j];
			for (int t = 0; t < nk; t++)
				s -= fj[t] * fc[t];
			e = s / rj;
			fc[nk] = e;
			/* rounding must not take it below the jitter S's diagonal has */
			r2[c] = Max(r2[c] - e * e, DIVERSE_JITTER);
		}
	}

	pfree(idx);
	pfree(U);
	pfree(F);
	pfree(r2);
	pfree(taken);
	return nk;
}
