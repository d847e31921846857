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
#include "fit/params.h"
#include "kinds/bayesian_lowrank/bayesian_lowrank.h"
#include "model/kinds.h"
#include "model/model.h"
#include "numeric/kernel.h"
#include "numeric/linalg.h"
#include "score/score.h"

/*
 * Scores every item: the mean over the samples of ln det L_s[B + c] -
 * ln det L_s[B] (see the top of the file).  A sample whose L_s[B] is
 * singular makes every score -inf, as for the lowrank kind.
 */
static void
bayes_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	int			S = Max(m->blocks, 1);
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
	return Max(0, Min(MTDPP_MAX_CONTEXT, m->rank / Max(m->blocks, 1) - 1));
}

#define OWN(field) MTDPP_KIND_FIELD(MtdppBayesParams, field)

/* its own hyperparameters (params.c lists them among the others) */
static const MtdppParamKey bayes_keys[] = {
	{"samples", MTDPP_PARAM_INT, OWN(samples), 8, 1, 64, NULL, "an integer from 1 to 64", true, "bayesian_lowrank: posterior samples of the factors kept (samples x rank at most 1024); a score is their mean"},
	{"burn_in", MTDPP_PARAM_INT, OWN(burn_in), 1, 0, 1000, NULL, "an integer from 0 to 1000", true, "bayesian_lowrank: Langevin epochs from the posterior mode before the first sample is kept"},
	{"thinning", MTDPP_PARAM_INT, OWN(thinning), -1, 1, 1000000, NULL, "an integer from 1 to 1000000, or null", true, "bayesian_lowrank: Langevin steps between two samples kept; null: a quarter of an epoch's"},
	{"prior_precision", MTDPP_PARAM_REAL, OWN(prior_precision), -1, 1e-6, 1e6, NULL, "a number in [1e-6, 1e6], or null", true, "bayesian_lowrank: precision lambda of the Gaussian prior N(0, 1/lambda) on each factor; null: 1 / the mean square of the posterior mode's factors"},
	{"step_size", MTDPP_PARAM_REAL, OWN(step_size), -1, 1e-12, 1.0, NULL, "a number in [1e-12, 1], or null", true, "bayesian_lowrank: the first Langevin step, then times (1 + t/T)^-0.55 at step t (T: an epoch's steps); null: 1e-3, 1e-4 or 1e-5, the best on validation baskets"},
	{NULL}
};

#undef OWN

/* the shared keys it takes */
static const char *const bayes_keys_taken[] = {MTDPP_SGD_KEYS, MTDPP_VALIDATION_KEYS, NULL};

static const MtdppKindDefault bayes_defaults[] = {
	/* the burn-in's descent: lowrank's rate */
	{"learning_rate", 0.005},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_bayesian_lowrank = {
	.kind = MTDPP_BAYESIAN_LOWRANK,
	.name = "bayesian_lowrank",
	.own_keys = bayes_keys,
	.keys = bayes_keys_taken,
	.defaults = bayes_defaults,
	.blocks_key = "samples",
	.factors = true,
	.likelihood = true,
	.fit = mtdpp_fit_bayesian_lowrank,
	.score_all = bayes_score_all,
	.context_limit = bayes_context_limit,
	.similar = mtdpp_similar_cosine,
};
