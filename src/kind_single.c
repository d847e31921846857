/*
 * kind_single.c
 *		The single-kernel DPP kinds: "logistic" (single-task logistic DPP,
 *		L = V V^T + D^2) and "lowrank" (Gartrell et al. 2017, L = V V^T,
 *		maximum likelihood).
 *
 * One kernel serves every target, so a candidate c is scored through
 *
 *		det L[B + c] = det L[B] (L_cc - L_cB L[B]^-1 L_Bc)
 *
 * which the numeric core computes for the whole catalog at once
 * (mtdpp_schur_logdets, kernel.c): cheaper than a kernel per candidate, so
 * these kinds score the whole catalog even for a few candidates, and
 * complete without the pruning of topk.c.
 *		logistic:	ln(w det L[B + c]), P(y = 1 | B + c) = 1 - exp(-exp(score))
 *		lowrank:	ln det L[B + c] - ln det L[B], the conditional density
 *
 * Both train by the stochastic gradient of fit.c with R = 1, through the
 * numeric core (kernel.c): the logistic DPP on whole baskets against baskets
 * with one item swapped, the low-rank DPP by maximum likelihood.  The
 * low-rank kernel has rank r, so any r + 1 items are linearly dependent and
 * det L = 0: it conditions on at most rank - 1 items (the last ones of the
 * basket), which leaves every candidate a positive conditional probability.
 */
#include "postgres.h"

#include <math.h>

#include "fit.h"
#include "kinds.h"
#include "model.h"
#include "params.h"
#include "score.h"

static void
logistic_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	mtdpp_schur_logdets(m, ctx, b, false, scores);
}

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

static const MtdppKindDefault logistic_defaults[] = {
	/* the single-task logistic DPP keeps the paper's loss: see fit_loss.c */
	{"loss", MTDPP_LOSS_LOGISTIC},
	/* the best validation MPR of the steps tried */
	{"learning_rate", 0.02},
	{"l2", 1e-4},
	{"l2_bias", 1e-4},
	{NULL, 0}
};

static const MtdppKindDefault lowrank_defaults[] = {
	/* the best validation MPR of the steps tried */
	{"learning_rate", 0.005},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_logistic = {
	.kind = MTDPP_LOGISTIC,
	.name = "logistic",
	.defaults = logistic_defaults,
	.factors = true,
	.bias = true,
	.fit = mtdpp_train_dpp,
	.score_all = logistic_score_all,
	.similar = mtdpp_similar_cosine,
};

const MtdppKindRoutine mtdpp_kind_lowrank = {
	.kind = MTDPP_LOWRANK,
	.name = "lowrank",
	.defaults = lowrank_defaults,
	.factors = true,
	.likelihood = true,
	.fit = mtdpp_train_dpp,
	.score_all = lowrank_score_all,
	.similar = mtdpp_similar_cosine,
	.context_limit = lowrank_context_limit,
};
