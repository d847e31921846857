/*
 * kind_multitask.c
 *		The multi-task DPP kinds: "multitask", the paper's model, and
 *		"multitask_nobias", the same without the item bias.
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
 * completion scores exactly only the candidates whose bound can reach the
 * top k (topk.c).  Both kinds train by the stochastic gradient of fit.c, a
 * target against the rest of its basket and against negative targets.
 *
 * An empty context (every basket item unknown to the model) has no kernel:
 * completions then fall back to popularity.
 */
#include "postgres.h"

#include "fit.h"
#include "kinds.h"
#include "model.h"
#include "params.h"
#include "score.h"

static void
multitask_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
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

static void
multitask_score_some(const MtdppModel *m, const int32 *ctx, int b,
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

const MtdppKindRoutine mtdpp_kind_multitask = {
	.kind = MTDPP_MULTITASK,
	.name = "multitask",
	.defaults = mtdpp_capacity_defaults,
	.factors = true,
	.task_factors = true,
	.bias = true,
	.bounded = true,
	.fit = mtdpp_train_dpp,
	.score_all = multitask_score_all,
	.score_some = multitask_score_some,
};

const MtdppKindRoutine mtdpp_kind_multitask_nobias = {
	.kind = MTDPP_MULTITASK_NOBIAS,
	.name = "multitask_nobias",
	.defaults = mtdpp_capacity_defaults,
	.factors = true,
	.task_factors = true,
	.bounded = true,
	.fit = mtdpp_train_dpp,
	.score_all = multitask_score_all,
	.score_some = multitask_score_some,
};
