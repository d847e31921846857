/*
 * kinds/lowrank/lowrank.c
 *		The kind "lowrank": the low-rank DPP of Gartrell et al. (2017),
 *		one kernel L = V V^T, fitted by maximum likelihood.
 *
 * A candidate c is scored by its conditional density
 * ln det L[B + c] - ln det L[B], through the Schur complement of L[B] that
 * the numeric core computes for the whole catalog at once
 * (mtdpp_schur_logdets, kernel.c), as the logistic kind's.  The kernel has
 * rank r, so any r + 1 items are linearly dependent and det L = 0: the kind
 * conditions on at most rank - 1 items (the last ones of the basket), which
 * leaves every candidate a positive conditional probability.
 */
#include "postgres.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "model/kinds.h"
#include "model/model.h"
#include "numeric/kernel.h"
#include "score/score.h"

static void
lowrank_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	mtdpp_schur_logdets(m, ctx, b, true, scores);
}

static int
lowrank_context_limit(const MtdppModel *m)
{
	return Max(0, Min(MTDPP_MAX_CONTEXT, m->rank - 1));
}

/* the shared keys it takes */
static const char *const lowrank_keys_taken[] = {MTDPP_SGD_KEYS, MTDPP_VALIDATION_KEYS, MTDPP_WARM_KEYS, NULL};

static const MtdppKindDefault lowrank_defaults[] = {
	/* the best validation MPR of the steps tried */
	{"learning_rate", 0.005},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_lowrank = {
	.kind = MTDPP_LOWRANK,
	.name = "lowrank",
	.keys = lowrank_keys_taken,
	.defaults = lowrank_defaults,
	.factors = true,
	.likelihood = true,
	.fit = mtdpp_fit_dpp,
	.score_all = lowrank_score_all,
	.context_limit = lowrank_context_limit,
	.similar = mtdpp_similar_cosine,
};
