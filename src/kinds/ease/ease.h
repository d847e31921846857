/*
 * kinds/ease/ease.h
 *		The kind "ease" (ease.c): its hyperparameters, and its weights as
 *		neighbour lists, which the hybrid kind uses as evidence.
 */
#ifndef MTDPP_EASE_H
#define MTDPP_EASE_H

#include "fit/params.h"
#include "model/baskets.h"

/* how EASE's weights are fitted (the key ease_solver) */
typedef enum MtdppEaseSolver
{
	MTDPP_EASE_AUTO = 0,		/* exact up to EASE_EXACT_ITEMS items (ease.c) */
	MTDPP_EASE_EXACT,			/* the inverse of X^T X + lambda I (ease_exact.c) */
	MTDPP_EASE_NEIGHBORHOOD		/* item by item, on neighbourhoods (ease_neighborhood.c) */
} MtdppEaseSolver;

/* the values of its own keys, in its block of MtdppParams */
typedef struct MtdppEaseParams
{
	double		lambda;			/* L2 of its weights, < 0: chosen on validation */
	int			solver;			/* MtdppEaseSolver */
	double		dropout;		/* lambda I + dropout / (1 - dropout) diag(G) */
} MtdppEaseParams;

#define mtdpp_ease_params(p) MTDPP_KIND_PARAMS((p), MTDPP_EASE, MtdppEaseParams)

struct MtdppValidation;
struct MtdppListTap;
extern Size mtdpp_ease_tap_memory(const MtdppParams *p, const MtdppBaskets *data, Size beside);
extern bool mtdpp_ease_lists(MtdppBaskets *data, const MtdppParams *p, double *lambda,
							 MtdppModel *m, bool *neighborhood, struct MtdppValidation *slice,
							 double *dropout, Size beside, struct MtdppListTap *tap);

#endif							/* MTDPP_EASE_H */
