/*
 * kinds/ease/ease_neighborhood.h
 *		EASE's weights item by item, on co-occurrence neighbourhoods
 *		(ease_neighborhood.c), which ease.c fits above a catalog size.
 */
#ifndef MTDPP_EASE_NEIGHBORHOOD_H
#define MTDPP_EASE_NEIGHBORHOOD_H

#include "kinds/cooccurrence.h"
#include "model/baskets.h"
#include "model/model.h"

typedef struct MtdppEaseNeighborhoods MtdppEaseNeighborhoods;

extern Size mtdpp_ease_neighborhood_memory(const MtdppBaskets *d);
extern MtdppEaseNeighborhoods *mtdpp_ease_neighborhoods(const MtdppBaskets *d, MtdppListTap *tap);
extern void mtdpp_ease_neighborhoods_free(MtdppEaseNeighborhoods *e);
extern int64 mtdpp_ease_neighborhood_weights(MtdppEaseNeighborhoods *e, double lambda,
											 double q, int cap, MtdppModel *m);

#endif							/* MTDPP_EASE_NEIGHBORHOOD_H */
