/*
 * score/score.h
 *		Query time: the top k and ranks of a basket's completions (topk.c),
 *		diverse picks (diverse.c) and a basket as a context (complete.c).
 */
#ifndef MTDPP_SCORE_H
#define MTDPP_SCORE_H

#include "fmgr.h"
#include "utils/array.h"

#include "model/model.h"

/* topk.c */
typedef struct MtdppRanked
{
	double		score;
	int32		index;			/* dense item index */
} MtdppRanked;

extern int	mtdpp_top_k(const MtdppModel *m, const int32 *ctx, int b,
						const bool *exclude, const int32 *allowed, int n_allowed,
						int k, MtdppRanked *out);
extern void mtdpp_rank_of(const MtdppModel *m, const int32 *ctx, int b,
						  const bool *exclude, int held, double held_score_if_unknown,
						  int *above, int *ties, int *candidates);
extern void mtdpp_ranks_of(const MtdppModel *m, const int32 *ctx, int b,
						   const bool *exclude, const int32 *held, int nh,
						   double held_score_if_unknown, int *above, int *ties,
						   int *candidates);
extern int	mtdpp_scores_reaching(const MtdppModel *m, const int32 *ctx, int b,
								  const bool *exclude, double floor, const bool *also,
								  int32 *cands, double *scores);
extern void mtdpp_evidence(const MtdppModel *m, const int32 *ctx, int b, double *ev);

/* diverse.c */
extern int	mtdpp_diverse_pool(int k);
extern int	mtdpp_diverse_select(const MtdppModel *m, const MtdppRanked *cands, int n,
								 int k, double diversity, int *chosen);

/* complete.c: a basket as a context; the arguments the query functions share */
extern int32 *mtdpp_basket_context(const MtdppModel *m, const int32 *ids, int n,
								   const int32 *skip, bool *exclude, int *b_out,
								   int *n_distinct);
extern const char *mtdpp_model_arg(FunctionCallInfo fcinfo, int arg);
extern int	mtdpp_k_arg(FunctionCallInfo fcinfo, int arg);
struct MtdppCallItems;
extern void mtdpp_candidate_filters(FunctionCallInfo fcinfo, const struct MtdppCallItems *ci, int allowed_arg,
									int excluded_arg, bool *no, int32 **allowed, int *n_allowed);

#endif							/* MTDPP_SCORE_H */
