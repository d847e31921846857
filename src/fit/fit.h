/*
 * fit/fit.h
 *		The fit of the DPP kinds (fit*.c, whose own header is fit_int.h), and
 *		the validation slice of the training baskets fits measure on.
 */
#ifndef MTDPP_FIT_H
#define MTDPP_FIT_H

#include "common/pg_prng.h"

#include "fit/params.h"
#include "model/baskets.h"

/*
 * A validation slice of the training baskets (validation_slice.c): the baskets,
 * the item each hides, and the candidates its held-out items rank among.
 */
typedef struct MtdppValidation
{
	const MtdppBaskets *data;
	int			n;				/* validation baskets (0: none) */
	int32	   *baskets;		/* their indices in data */
	int32	   *held;			/* the item each hides */
	bool	   *is_val;			/* per basket of data: in the slice */
	bool	   *outside;		/* per item: not a candidate */
	int			n_candidates;
	bool		target_last;	/* the last item is the one hidden */
	int			max_context;
	bool	   *exclude;		/* scratch: outside, plus a context */
	int32	   *ctx;			/* scratch: a context */
} MtdppValidation;

/* How well a model completes a validation slice. */
typedef struct MtdppMetrics
{
	int			n;				/* baskets measured */
	double		mpr;
	double		p5;
	double		p10;
	double		p20;
} MtdppMetrics;

/* validation_slice.c: a validation slice of the training baskets */
extern void mtdpp_validation_carve(MtdppValidation *v, const MtdppBaskets *d,
								   const MtdppParams *p, pg_prng_state *rng);
extern void mtdpp_validation_measure(MtdppValidation *v, const MtdppModel *m,
									 MtdppMetrics *out);
extern double mtdpp_validation_mpr(MtdppValidation *v, const MtdppModel *m);
extern MtdppBaskets *mtdpp_baskets_without(const MtdppBaskets *d, const bool *drop);
extern void mtdpp_validation_copy(MtdppValidation *to, const MtdppValidation *from);
extern int	mtdpp_validation_context(MtdppValidation *v, int k, int limit);
extern void mtdpp_validation_release(MtdppValidation *v, int k);

/* fit.c: the fit of the DPP kinds, its rank and L2 chosen when not given */
extern MtdppModel *mtdpp_fit_dpp(MtdppBaskets *data, const MtdppParams *p);
extern MtdppModel *mtdpp_fit_dpp_slice(MtdppBaskets *data, const MtdppParams *p,
										 MtdppValidation *slice);
extern MtdppModel *mtdpp_fit_dpp_chosen(MtdppBaskets *data, const MtdppParams *p,
										  MtdppValidation *slice, MtdppParams *chosen);

/* fit_ensemble.c: the fit of a kind that keeps several fits side by side when asked */
extern MtdppModel *mtdpp_fit_ensemble(MtdppBaskets *data, const MtdppParams *p);

/* fit_epochs.c: one fit at a given rank */
extern MtdppModel *mtdpp_fit_dpp_rank(MtdppBaskets *data, const MtdppParams *p,
										const MtdppValidation *given,
										MtdppValidation *slice, double to_beat);

#endif							/* MTDPP_FIT_H */
