/*
 * kinds/multitask_nobias/multitask_nobias.c
 *		The kind "multitask_nobias": the multi-task DPP without the item
 *		bias, K_t[C] = V_C diag(R_t^2) V_C^T (plus the jitter every kernel
 *		has), scored as the multitask kind's models are.
 */
#include "postgres.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "kinds/multitask/multitask.h"
#include "model/kinds.h"
#include "score/score.h"

/* the shared keys it takes */
static const char *const nobias_keys_taken[] = {MTDPP_SGD_KEYS, MTDPP_VALIDATION_KEYS, "fits", MTDPP_WARM_KEYS, NULL};

const MtdppKindRoutine mtdpp_kind_multitask_nobias = {
	.kind = MTDPP_MULTITASK_NOBIAS,
	.name = "multitask_nobias",
	.keys = nobias_keys_taken,
	.defaults = mtdpp_capacity_defaults,
	.blocks_key = "fits",
	.factors = true,
	.task_factors = true,
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
