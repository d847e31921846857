/*
 * kinds/bayesian_lowrank/bayesian_lowrank.c
 *		The Bayesian low-rank DPP (Gartrell, Paquet, Koenigstein, RecSys
 *		2016): L = V V^T with a Gaussian prior on the rows of V, its
 *		posterior sampled by stochastic gradient Langevin dynamics
 *		(bayes_sgld.c), a candidate scored by its completion averaged over
 *		the samples.
 *
 * Storage.  A model keeps S samples of V (each n_items x r) side by side: an
 * item's row of factors holds S x r values, sample s in columns s r .. s r
 * + r - 1, so the model's rank is S r and the tables, the value, the cache
 * and shared copies carry it as any model with factors.  S is the
 * "samples" of the stored hyperparameters (and r their "rank"), which
 * model_validate.c requires to divide the stored rank.
 *
 * Score.  The posterior mean over the samples of the conditional
 * log-density of the candidate c given the basket B,
 *
 *		score(c) = 1/S sum_s [ln det L_s[B + c] - ln det L_s[B]]
 *
 * each term a Schur complement as for the lowrank kind (kernel.c).  The
 * log, not the probability, is averaged: the next-item probability of
 * sample s is its conditional density over the catalog's sum, a constant
 * of s per basket, so the mean of the log-densities ranks candidates
 * exactly as the posterior mean of ln P(c | B) does, whatever the
 * normalisers; the mean of the unnormalised densities would weigh each
 * sample by its scale instead, and the mean of the normalised ones would
 * need a pass over the catalog per sample first.  Every item is scored,
 * exactly, at S times the cost of a lowrank model of rank r.  A sample of
 * rank r conditions on at most r - 1 items (det L_s = 0 beyond), so the
 * kind conditions on the last r - 1 items of a basket.
 */
#include "postgres.h"

#include <math.h>
#include <stdlib.h>

#include "fit/fit.h"
#include "kinds/kinds.h"
#include "model/model.h"
#include "numeric/kernel.h"
#include "numeric/linalg.h"
#include "train/params.h"

/*
 * The samples a model holds: the stored hyperparameters' "samples", 1 when
 * there is none (a fit's burn-in, not yet stored) or when it does not divide
 * the rank (model_validate.c refuses such a model before it is scored).
 */
int
mtdpp_bayes_samples(const MtdppModel *m)
{
	const char *at;
	long		s;

	if (m->hyperparams == NULL || (at = strstr(m->hyperparams, "\"samples\"")) == NULL)
		return 1;
	at += strlen("\"samples\"");
	while (*at == ' ' || *at == ':')
		at++;
	s = strtol(at, NULL, 10);
	if (s < 1 || s > MTDPP_MAX_RANK || m->rank % s != 0)
		return 1;
	return (int) s;
}

/*
 * Scores every item: the mean over the samples of ln det L_s[B + c] -
 * ln det L_s[B] (see the top of the file).  A sample whose L_s[B] is
 * singular makes every score -inf, as for the lowrank kind.
 */
static void
bayes_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	int			S = mtdpp_bayes_samples(m);
	int			R = m->rank;
	int			r = R / S;
	int			block = mtdpp_score_block_rows(m, b);
	int			bb = Max(b, 1);
	double	   *VBall = palloc(sizeof(double) * (size_t) bb * Max(R, 1));
	double	   *VB = palloc(sizeof(double) * (size_t) S * bb * Max(r, 1));
	double	   *L = palloc(sizeof(double) * (size_t) S * bb * bb);
	double	   *Y = palloc(sizeof(double) * (size_t) block * bb);
	double	   *rows = palloc(sizeof(double) * (size_t) block * Max(R, 1));
	int32	   *idx = palloc(sizeof(int32) * block);

	mtdpp_gather_V(m, ctx, b, VBall);
	for (int s = 0; s < S && b > 0; s++)
	{
		double	   *VBs = VB + (size_t) s * b * r;
		double	   *Ls = L + (size_t) s * b * b;

		for (int u = 0; u < b; u++)
			memcpy(VBs + (size_t) u * r, VBall + (size_t) u * R + (size_t) s * r,
				   sizeof(double) * r);
		mtdpp_gemm_nt(b, b, r, VBs, r, VBs, r, Ls, b);
		for (int u = 0; u < b; u++)
			Ls[(size_t) u * b + u] += m->D2[ctx[u]];
		if (!mtdpp_cholesky(Ls, b))
		{
			for (int i = 0; i < m->n_items; i++)
				scores[i] = -INFINITY;
			return;
		}
	}
	for (int start = 0; start < m->n_items; start += block)
	{
		int			nt = Min(block, m->n_items - start);

		for (int t = 0; t < nt; t++)
		{
			idx[t] = start + t;
			scores[start + t] = 0.0;
		}
		mtdpp_gather_V(m, idx, nt, rows);
		for (int s = 0; s < S; s++)
		{
			if (b > 0)
			{
				mtdpp_gemm_nt(nt, b, r, rows + (size_t) s * r, R,
							  VB + (size_t) s * b * r, r, Y, b);
				mtdpp_trsm_right_lt(nt, b, L + (size_t) s * b * b, Y);
			}
			for (int t = 0; t < nt; t++)
			{
				const double *v = rows + (size_t) t * R + (size_t) s * r;
				double		schur = m->D2[start + t];

				for (int j = 0; j < r; j++)
					schur += v[j] * v[j];
				for (int u = 0; u < b; u++)
					schur -= Y[(size_t) t * b + u] * Y[(size_t) t * b + u];
				scores[start + t] += (schur > 0.0 ? log(schur) : -INFINITY) / S;
			}
		}
	}
	pfree(VBall);
	pfree(VB);
	pfree(L);
	pfree(Y);
	pfree(rows);
	pfree(idx);
}

/* each sample of rank r conditions on at most r - 1 items */
static int
bayes_context_limit(const MtdppModel *m)
{
	return Max(0, Min(MTDPP_MAX_CONTEXT, m->rank / mtdpp_bayes_samples(m) - 1));
}

static const MtdppKindDefault bayes_defaults[] = {
	/* the burn-in's descent: lowrank's rate */
	{"learning_rate", 0.005},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_bayesian_lowrank = {
	.kind = MTDPP_BAYESIAN_LOWRANK,
	.name = "bayesian_lowrank",
	.defaults = bayes_defaults,
	.factors = true,
	.likelihood = true,
	.fit = mtdpp_fit_bayesian_lowrank,
	.score_all = bayes_score_all,
	.context_limit = bayes_context_limit,
	.similar = mtdpp_similar_cosine,
};
