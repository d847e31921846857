/*
 * kinds/bayesian_lowrank/bayesian_lowrank.h
 *		The kind "bayesian_lowrank" (bayesian_lowrank.c): its
 *		hyperparameters, and its fit by Langevin dynamics (bayes_sgld.c).
 */
#ifndef MTDPP_BAYESIAN_LOWRANK_H
#define MTDPP_BAYESIAN_LOWRANK_H

#include "fit/params.h"
#include "model/baskets.h"

/* the values of its own keys, in its block of MtdppParams */
typedef struct MtdppBayesParams
{
	int			samples;		/* samples of V kept side by side */
	int			burn_in;		/* Langevin epochs before the first */
	int			thinning;		/* steps between samples, < 0: automatic */
	double		prior_precision;	/* of the Gaussian prior on V, < 0: automatic */
	double		step_size;		/* the first Langevin step, < 0: chosen */
} MtdppBayesParams;

#define mtdpp_bayes_params(p) MTDPP_KIND_PARAMS((p), MTDPP_BAYESIAN_LOWRANK, MtdppBayesParams)

/* bayes_sgld.c */
extern MtdppModel *mtdpp_fit_bayesian_lowrank(MtdppBaskets *data, const MtdppParams *p);

#endif							/* MTDPP_BAYESIAN_LOWRANK_H */
