/*
 * kinds/hybrid/hybrid_weights.h
 *		The hybrid's forms of co-occurrence evidence, and the search of
 *		their weights on its validation slice (hybrid_weights.c), which its
 *		fit (hybrid.c) then builds the evidence with.
 */
#ifndef MTDPP_HYBRID_WEIGHTS_H
#define MTDPP_HYBRID_WEIGHTS_H

#include <math.h>

#include "fit/fit.h"
#include "fit/params.h"
#include "model/baskets.h"
#include "model/model.h"

typedef enum HybridForm
{
	FORM_COSINE = 0,
	FORM_LOG_COSINE,
	FORM_CONFIDENCE,
	FORM_EASE,
	N_FORMS,
	/* a choice, not a form of its own: beta * cosine + ease_beta * ease */
	FORM_COSINE_EASE = N_FORMS
} HybridForm;

/* the forms computed from the cosine lists: those before FORM_EASE */
#define N_COSINE_FORMS		FORM_EASE

extern const char *const mtdpp_hybrid_form_names[N_FORMS + 1];

/* the cosine at which log_cosine is ln 2 */
#define LOG_COSINE_SCALE	0.01

/* g(j, c) of FORM, from their cosine and the baskets holding each */
static inline double
mtdpp_hybrid_form_weight(HybridForm form, double cosine, int32 freq_j, int32 freq_c)
{
	switch (form)
	{
		case FORM_COSINE:
			return cosine;
		case FORM_LOG_COSINE:
			return log1p(cosine / LOG_COSINE_SCALE);
		case FORM_CONFIDENCE:
			return cosine * sqrt((double) freq_c / Max(freq_j, 1));
		case FORM_EASE:
		case N_FORMS:
			break;
	}
	pg_unreachable();
}

extern void mtdpp_hybrid_choose_weights(MtdppModel *dpp, MtdppBaskets *data, MtdppValidation *v,
										const MtdppParams *p, int cap, Size dpp_memory, HybridForm *form,
										double *beta, double *ease_beta, MtdppMetrics *chosen,
										double *alpha, double *cosine_beta, bool *ease_neighborhood);

#endif							/* MTDPP_HYBRID_WEIGHTS_H */
