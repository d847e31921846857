/*
 * kinds/multitask/multitask.c
 *		The kind "multitask": the paper's multi-task DPP; its scores serve
 *		"multitask_nobias" (multitask_nobias.c) too.
 *
 * For a context C and a target t (paper, eq. "rescal"),
 *
 *		K_t[C] = V_C diag(R_t^2) V_C^T + D_C^2,	P(y = 1 | C, t) = 1 - exp(-w det K_t[C])
 *
 * with D = 0 for multitask_nobias.  The score of t is z = ln(w det K_t[C]),
 * so that P(y = 1 | C, t) = 1 - exp(-exp(z)); ranking by z rather than by
 * ln P(y = 1) keeps apart candidates whose probabilities all round to 1 in
 * double precision.  Every candidate has a kernel of its own, computed by
 * the numeric core (kernel.c) a block of candidates per BLAS call; a
 * completion scores exactly only the candidates whose Hadamard bound can
 * reach the top k (the pruning of score/topk_bounded.c, which its routines
 * top_k, ranks_of and scores_reaching call).  Both kinds train by the stochastic gradient of fit.c, a
 * target against the rest of its basket and against negative targets.
 *
 * An empty context (every basket item unknown to the model) has no kernel:
 * completions then fall back to popularity.
 *
 * Ensembles.  With "fits" N above 1, the model is N independent fits (seeds
 * seed, seed + 1, ...; fit_ensemble.c) side by side, as the Bayesian
 * low-rank kind keeps its samples: an item's factors and task factors hold
 * fit f's rank r in columns f r .. f r + r - 1, so the model's rank is N r,
 * and a score is the mean of the fits' scores,
 *
 *		score(t) = ln w + 1/N sum_f ln det K_{f,t}[C]
 *
 * the log-space mean for the reason bayesian_lowrank.c gives (the
 * count is read from the hyperparameters by mtdpp_model_fits, model_validate.c).  The
 * fits share one bias: fit f's kernel V_f diag(R_t^2) V_f^T + D_f^2 is kept
 * as S_f (V'_f diag(R_t^2) V'_f^T + D^2) S_f with D^2 the geometric mean of
 * the fits' D_f^2 (jitter included) and V'_f = S_f^-1 V_f, S_f^2 =
 * D_f^2 / D^2; the ln det S_f^2 of a context then sum to 0 over the fits,
 * so the mean score is exactly the mean of the fits' own.  The numeric core
 * (kernel.c) takes the mean; the top k stays exact (topk_bounded.c): the
 * mean of the fits' Hadamard bounds bounds the mean score.
 */
#include "postgres.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "kinds/multitask/multitask.h"
#include "kinds/popularity/popularity.h"
#include "model/kinds.h"
#include "model/model.h"
#include "numeric/kernel.h"
#include "score/score.h"

void
mtdpp_multitask_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	int			npair = b * (b + 1) / 2;
	double	   *P;

	if (b == 0)
	{
		mtdpp_popularity_scores(m, scores);
		return;
	}
	P = palloc(sizeof(double) * (size_t) m->rank * npair);
	mtdpp_basket_pairs(m, ctx, b, P);
	mtdpp_targets_logdet(m, ctx, b, P, NULL, 0, m->n_items,
						 mtdpp_score_block_rows(m, b), scores);
	for (int t = 0; t < m->n_items; t++)
		scores[t] += m->log_w;
	pfree(P);
}

void
mtdpp_multitask_score_some(const MtdppModel *m, const int32 *ctx, int b,
					 const int32 *cands, int n, double *scores)
{
	int			npair = b * (b + 1) / 2;
	double	   *P = palloc(sizeof(double) * (size_t) m->rank * npair);

	mtdpp_basket_pairs(m, ctx, b, P);
	mtdpp_targets_logdet(m, ctx, b, P, cands, 0, n,
						 Min(mtdpp_score_block_rows(m, b), Max(n, 1)), scores);
	for (int t = 0; t < n; t++)
		scores[t] += m->log_w;
	pfree(P);
}

/* the k best candidates, pruned by their Hadamard bounds */
int
mtdpp_multitask_top_k(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
					  const int32 *allowed, int n_allowed, int k, MtdppRanked *out)
{
	return mtdpp_bounded_top_k(m, ctx, b, exclude, allowed, n_allowed, k, NULL, out);
}

/* the ranks of held-out items, pruned by the candidates' Hadamard bounds */
void
mtdpp_multitask_ranks_of(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
						 const int32 *held, int nh, double held_score_if_unknown,
						 int *above, int *ties, int *candidates)
{
	mtdpp_bounded_ranks_of(m, ctx, b, exclude, held, nh, held_score_if_unknown, NULL,
						   above, ties, candidates);
}

/* the candidates whose Hadamard bound reaches FLOOR, scored */
int
mtdpp_multitask_scores_reaching(const MtdppModel *m, const int32 *ctx, int b,
								const bool *exclude, double floor, const bool *also,
								int32 *cands, double *scores)
{
	return mtdpp_bounded_scores_reaching(m, ctx, b, exclude, floor, also, NULL, cands,
										 scores);
}

/* the shared keys it takes */
static const char *const multitask_keys_taken[] = {MTDPP_SGD_KEYS, MTDPP_VALIDATION_KEYS, "fits", MTDPP_WARM_KEYS, NULL};

const MtdppKindRoutine mtdpp_kind_multitask = {
	.kind = MTDPP_MULTITASK,
	.name = "multitask",
	.keys = multitask_keys_taken,
	.defaults = mtdpp_capacity_defaults,
	.blocks_key = "fits",
	.factors = true,
	.task_factors = true,
	.bias = true,
	.bounded = true,
	.ensemble = true,
	.fit = mtdpp_fit_ensemble,
	.score_all = mtdpp_multitask_score_all,
	.score_some = mtdpp_multitask_score_some,
	.top_k = mtdpp_multitask_top_k,
	.ranks_of = mtdpp_multitask_ranks_of,
	.scores_reaching = mtdpp_multitask_scores_reaching,
	.similar = mtdpp_similar_cosine,
};
