/*
 * store/shared_models_int.h
 *		What the parts of the shared copies of models share: the layout of
 *		a segment (shared_models_segment.c).
 */
#ifndef MTDPP_SHARED_MODELS_INT_H
#define MTDPP_SHARED_MODELS_INT_H

#include "model/model.h"
#include "store/store.h"

#define SHARED_MAGIC	0x4d445348	/* "MDSH" */

/* A segment: this header, then the arrays at the offsets it gives. */
typedef struct SegmentHeader
{
	uint32		magic;
	int32		kind;
	int32		n_items;
	int32		rank;
	int32		n_baskets;
	double		log_w;
	int32		blocks;			/* fits side by side */
	MtdppKindValues own;		/* its kind's own values (MtdppModel.own) */
	int64		n_neighbors;
	int32		n_weights;		/* shared weights, else 0 */
	int32		scan;			/* holds a scan order (model.h), else 0 */
	Size		item_ids,
				popularity,
				D,
				D2,
				Vnorm2,
				Vf,
				R2f,
				Rf,
				weights,
				nbr_start,
				nbr_index,
				nbr_weight,
				versions,
				scan_order,
				scan_key,
				scan_R2f,
				scan_env;
	Size		total;
} SegmentHeader;

extern void mtdpp_segment_layout(SegmentHeader *h, int n_items, int rank, int64 nn, bool neighbors);
extern void mtdpp_segment_point(MtdppModel *m, char *base);
extern void mtdpp_segment_fill(char *base, const SegmentHeader *layout_of, const MtdppModel *m,
							   const MtdppSharedKey *key);

#endif							/* MTDPP_SHARED_MODELS_INT_H */
