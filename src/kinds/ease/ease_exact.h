/*
 * kinds/ease/ease_exact.h
 *		EASE's weights in closed form over the whole catalog (ease_exact.c),
 *		which ease.c fits up to a catalog size.
 */
#ifndef MTDPP_EASE_EXACT_H
#define MTDPP_EASE_EXACT_H

#include "model/baskets.h"
#include "model/model.h"

typedef struct MtdppEaseExact MtdppEaseExact;

extern Size mtdpp_ease_exact_memory(int n);
extern MtdppEaseExact *mtdpp_ease_exact_alloc(int n, int cap);
extern void mtdpp_ease_exact_gram(MtdppEaseExact *w, const MtdppBaskets *d);
extern bool mtdpp_ease_exact_weights(MtdppEaseExact *w, double lambda, double q, MtdppModel *m);
extern void mtdpp_ease_exact_free(MtdppEaseExact *w);

#endif							/* MTDPP_EASE_EXACT_H */
