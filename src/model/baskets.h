/*
 * model/baskets.h
 *		The baskets a model is fitted to, as the training aggregate gathers
 *		them (lines_baskets.c).
 */
#ifndef MTDPP_BASKETS_H
#define MTDPP_BASKETS_H

#include "postgres.h"

/* Baskets gathered by the training aggregate: CSR over dense item indices. */
typedef struct MtdppBaskets
{
	int			n_baskets;
	int			n_items;
	int64		n_lines;
	int32	   *item_ids;		/* dense index -> item id, ascending */
	int32	   *popularity;		/* baskets holding each item */
	int64	   *start;			/* basket b is items[start[b] .. start[b+1]) */
	int32	   *items;			/* dense indices, in position order */
	bool		positions;		/* some line had a position: baskets in add-to-cart order */
	bool		ordered;		/* some basket's lines had two positions: an order to learn */
} MtdppBaskets;

/* the bytes DATA holds while a kind fits to it (lines_baskets.c allocates them) */
static inline Size
mtdpp_baskets_bytes(const MtdppBaskets *data)
{
	return sizeof(int32) * (Size) data->n_lines + sizeof(int64) * ((Size) data->n_baskets + 1) +
		2 * sizeof(int32) * (Size) data->n_items;
}

#endif							/* MTDPP_BASKETS_H */
