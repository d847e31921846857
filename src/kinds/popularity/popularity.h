/*
 * kinds/popularity/popularity.h
 *		The kind "popularity" (popularity.c): the counts model and the
 *		scores every other kind falls back to.
 */
#ifndef MTDPP_POPULARITY_H
#define MTDPP_POPULARITY_H

#include "fit/params.h"
#include "model/baskets.h"

extern MtdppModel *mtdpp_counts_model(const MtdppBaskets *data, const MtdppParams *p);
extern void mtdpp_popularity_scores(const MtdppModel *m, double *scores);

#endif							/* MTDPP_POPULARITY_H */
