/*
 * query/arguments.h
 *		What the query functions share (complete.c): a basket as a context,
 *		and the arguments every one of them takes.
 */
#ifndef MTDPP_ARGUMENTS_H
#define MTDPP_ARGUMENTS_H

#include "fmgr.h"

#include "model/model.h"
#include "store/store.h"

extern int32 *mtdpp_basket_context(const MtdppModel *m, const int32 *ids, int n,
								   const int32 *skip, bool *exclude, int *b_out,
								   int *n_distinct, int *n_unknown);
extern const char *mtdpp_model_arg(FunctionCallInfo fcinfo, int arg);
extern int	mtdpp_k_arg(FunctionCallInfo fcinfo, int arg);
struct MtdppCallItems;
extern void mtdpp_candidate_filters(FunctionCallInfo fcinfo, const struct MtdppCallItems *ci, int allowed_arg,
									int excluded_arg, bool *no, int32 **allowed, int *n_allowed);

/* evaluate.c: held-out baskets measured for a training */
typedef struct MtdppTestFigures
{
	int			nk;
	const int  *k;				/* the cut-offs, increasing */
	int64		baskets;
	double		mpr;
	double	   *precision,		/* at each K, percentages */
			   *recall,
			   *ndcg;
} MtdppTestFigures;
extern int	mtdpp_k_values(FunctionCallInfo fcinfo, int arg, const char *what, int **k);
extern void mtdpp_evaluate_baskets(const MtdppModel *m, const MtdppItemKeys *keys, const char *query,
								   int nargs, Oid *types, Datum *values, MtdppTestFigures *f);

#endif							/* MTDPP_ARGUMENTS_H */
