/*
 * numeric/kernel.h
 *		The numeric core's scoring (kernel.c): ln det of a context's kernels
 *		under a batch of targets, which training and completion share.
 */
#ifndef MTDPP_KERNEL_H
#define MTDPP_KERNEL_H

#include "model/model.h"

extern const double *mtdpp_rows_R2(const MtdppModel *m, int start, int n, double *scratch);
extern void mtdpp_gather_R2(const MtdppModel *m, const int32 *idx, int n, double *out);
extern void mtdpp_gather_V(const MtdppModel *m, const int32 *idx, int n, double *out);
extern void mtdpp_schur_logdets(const MtdppModel *m, const int32 *ctx, int b,
								bool conditional, double *scores);
extern int	mtdpp_score_block_rows(const MtdppModel *m, int b);
extern void mtdpp_context_pairs(const double *VB, int b, int r, double *P);
extern void mtdpp_basket_pairs(const MtdppModel *m, const int32 *ctx, int b, double *P);
extern int	mtdpp_kernels_logdet(const MtdppModel *m, const int32 *ctx, int b,
								 const double *P, const double *R2rows, int nt,
								 double *packed, double *K, bool keep_factors,
								 double *logdet);
extern void mtdpp_targets_logdet(const MtdppModel *m, const int32 *ctx, int b,
								 const double *P, const int32 *targets, int first,
								 int n, int block, double *logdet);

#endif							/* MTDPP_KERNEL_H */
