/*
 * kinds/poisson/poisson.h
 *		Poisson factorisation of the baskets x items matrix (poisson.c):
 *		its variational fit (poisson_vi.c) and the inference of one basket's
 *		factors, which scoring shares with it.
 */
#ifndef MTDPP_POISSON_H
#define MTDPP_POISSON_H

#include "fit/params.h"
#include "model/baskets.h"
#include "model/model.h"

/* the values of its own keys, in its block of MtdppParams and in its models */
typedef struct MtdppPoissonParams
{
	double		a;				/* shape of the basket factors' prior */
	double		c;				/* shape of the item factors' prior, < 0: chosen */
} MtdppPoissonParams;

#define mtdpp_poisson_params(p) MTDPP_KIND_PARAMS((p), MTDPP_POISSON, MtdppPoissonParams)

/* a model's values of them (a, which inferring a basket's factors reads) */
#define mtdpp_poisson_model(m) MTDPP_MODEL_PARAMS((m), MtdppPoissonParams)

/*
 * The hierarchical priors of Gopalan, Hofman and Blei (2015), shape and
 * rate: a basket's activity xi ~ Gamma(a', b'), its factors theta_k ~
 * Gamma(a, xi); an item's popularity eta ~ Gamma(c', d'), its factors
 * beta_k ~ Gamma(c, eta).  The outer shapes and rates are fixed (the
 * paper's values, 0.3 and 1); the inner shapes a and c are hyperparameters.
 */
#define MTDPP_POISSON_A_PRIME	0.3
#define MTDPP_POISSON_B_PRIME	1.0
#define MTDPP_POISSON_C_PRIME	0.3
#define MTDPP_POISSON_D_PRIME	1.0

/* coordinate-ascent passes over a basket's factors at query time */
#define MTDPP_POISSON_QUERY_PASSES	30

/* poisson_vi.c */
extern double mtdpp_digamma(double x);
extern Size mtdpp_poisson_memory(const MtdppBaskets *d, int rank);
extern void mtdpp_poisson_fit(const MtdppBaskets *d, int rank, double a, double c,
							  int passes, int64 seed, bool verbose, double *ebeta);
extern void mtdpp_poisson_basket(const MtdppModel *m, double a, const int32 *ctx, int b,
								 double *etheta);

#endif							/* MTDPP_POISSON_H */
