/*
 * kinds/itemknn/itemknn.h
 *		The kind "itemknn" (itemknn.c): its co-occurrence lists, which the
 *		hybrid kind shares.
 */
#ifndef MTDPP_ITEMKNN_H
#define MTDPP_ITEMKNN_H

#include "fit/params.h"
#include "model/baskets.h"

struct MtdppListTap;
typedef struct MtdppCosineLists MtdppCosineLists;

extern int	mtdpp_neighbor_cap(const MtdppBaskets *data, const MtdppParams *p,
							   MtdppKind kind, int rank, Size beside);
extern int64 mtdpp_cooccurrence_lists(const MtdppBaskets *data, MtdppModel *m, int cap);
extern MtdppCosineLists *mtdpp_cosine_lists_start(const MtdppBaskets *data, MtdppModel *m, int cap,
												  struct MtdppListTap *tap);
extern int64 mtdpp_cosine_lists_finish(MtdppCosineLists *lb);
extern void mtdpp_report_neighbor_cap(const MtdppParams *p, const MtdppParams *given,
									  int64 distinct, int64 kept);

#endif							/* MTDPP_ITEMKNN_H */
