/*
 * kinds/multitask/multitask.h
 *		The multi-task DPP's scores and its pruned top k (multitask.c), which
 *		its variant without bias (multitask_nobias.c) shares.
 */
#ifndef MTDPP_MULTITASK_H
#define MTDPP_MULTITASK_H

#include "model/model.h"
#include "score/score.h"

extern void mtdpp_multitask_score_all(const MtdppModel *m, const int32 *ctx, int b,
									  double *scores);
extern void mtdpp_multitask_score_some(const MtdppModel *m, const int32 *ctx, int b,
									   const int32 *cands, int n, double *scores);
extern int	mtdpp_multitask_top_k(const MtdppModel *m, const int32 *ctx, int b,
								  const bool *exclude, const int32 *allowed, int n_allowed,
								  int k, MtdppRanked *out);
extern void mtdpp_multitask_ranks_of(const MtdppModel *m, const int32 *ctx, int b,
									 const bool *exclude, const int32 *held, int nh,
									 double held_score_if_unknown, int *above, int *ties,
									 int *candidates);
extern int	mtdpp_multitask_scores_reaching(const MtdppModel *m, const int32 *ctx, int b,
											const bool *exclude, double floor,
											const bool *also, int32 *cands,
											double *scores);

#endif							/* MTDPP_MULTITASK_H */
