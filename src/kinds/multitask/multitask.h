/*
 * kinds/multitask/multitask.h
 *		The multi-task DPP's scores (multitask.c), which its variant without
 *		bias (multitask_nobias.c) shares.
 */
#ifndef MTDPP_MULTITASK_H
#define MTDPP_MULTITASK_H

#include "model/model.h"

extern void mtdpp_multitask_score_all(const MtdppModel *m, const int32 *ctx, int b,
									  double *scores);
extern void mtdpp_multitask_score_some(const MtdppModel *m, const int32 *ctx, int b,
									   const int32 *cands, int n, double *scores);

#endif							/* MTDPP_MULTITASK_H */
