/*
 * kinds/gru/gru.h
 *		The kind gru (gru.c): a GRU over a basket's items in the order
 *		they were added; its fit (gru_fit.c).
 */
#ifndef MTDPP_GRU_H
#define MTDPP_GRU_H

#include "fit/fit.h"
#include "fit/params.h"
#include "model/baskets.h"
#include "model/model.h"

/*
 * The recurrent weights of hidden size D in a model's weights, one after
 * the other: W_x (3D x D, the input's, rows z, r, n), W_h (3D x D, the
 * hidden state's) and b (3D).
 */
static inline int
mtdpp_gru_n_weights(int d)
{
	return 6 * d * d + 3 * d;
}

/* gru_unit.c */
extern void mtdpp_gru_step(const double *W, int d, const double *x, const double *h,
						   double *out, double *gates);
extern void mtdpp_gru_hidden(const MtdppModel *m, const int32 *ctx, int b, double *h);

/* gru_fit.c */
extern MtdppModel *mtdpp_gru_fit(MtdppBaskets *data, const MtdppParams *p);

#endif							/* MTDPP_GRU_H */
