/*
 * kinds/logistic/logistic.c
 *		The kind "logistic": the single-task logistic DPP, one kernel
 *		L = V V^T + D^2 for every target.
 *
 * One kernel serves every target, so a candidate c is scored through
 *
 *		det L[B + c] = det L[B] (L_cc - L_cB L[B]^-1 L_Bc)
 *
 * which the numeric core computes for the whole catalog at once
 * (mtdpp_schur_logdets, kernel.c): cheaper than a kernel per candidate, so
 * the kind scores the whole catalog even for a few candidates, and
 * completes without the pruning of topk_bounded.c.  The score is
 * ln(w det L[B + c]), P(y = 1 | B + c) = 1 - exp(-exp(score)).
 *
 * It trains by the stochastic gradient of fit/ with R = 1, on whole baskets
 * against baskets with one item swapped.
 */
#include "postgres.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "model/kinds.h"
#include "model/model.h"
#include "numeric/kernel.h"
#include "score/score.h"

static void
logistic_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	mtdpp_schur_logdets(m, ctx, b, false, scores);
}

/* the shared keys it takes */
static const char *const logistic_keys_taken[] = {MTDPP_SGD_KEYS, MTDPP_VALIDATION_KEYS, MTDPP_WARM_KEYS, NULL};

static const MtdppKindDefault logistic_defaults[] = {
	/* the single-task logistic DPP keeps the paper's loss: see fit_loss.c */
	{"loss", MTDPP_LOSS_LOGISTIC},
	/* the best validation MPR of the steps tried */
	{"learning_rate", 0.02},
	{"l2", 1e-4},
	{"l2_bias", 1e-4},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_logistic = {
	.kind = MTDPP_LOGISTIC,
	.name = "logistic",
	.keys = logistic_keys_taken,
	.defaults = logistic_defaults,
	.factors = true,
	.bias = true,
	.fit = mtdpp_fit_dpp,
	.score_all = logistic_score_all,
	.similar = mtdpp_similar_cosine,
};
