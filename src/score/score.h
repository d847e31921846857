/*
 * score/score.h
 *		Scoring: the top k and ranks of a basket's completions (topk.c),
 *		the pruning by bounds the bounded kinds' routines call
 *		(topk_bounded.c), co-occurrence evidence (evidence.c) and diverse
 *		picks (diverse.c).
 */
#ifndef MTDPP_SCORE_H
#define MTDPP_SCORE_H

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

/* topk_bounded.c: the routines of the bounded kinds, EV their evidence (NULL: none) */
extern int	mtdpp_bounded_top_k(const MtdppModel *m, const int32 *ctx, int b,
								const bool *exclude, const int32 *allowed, int n_allowed,
								int k, const double *ev, MtdppRanked *out);
extern void mtdpp_bounded_ranks_of(const MtdppModel *m, const int32 *ctx, int b,
								   const bool *exclude, const int32 *held, int nh,
								   double held_score_if_unknown, const double *ev,
								   int *above, int *ties, int *candidates);
extern int	mtdpp_bounded_scores_reaching(const MtdppModel *m, const int32 *ctx, int b,
										  const bool *exclude, double floor,
										  const bool *also, const double *ev,
										  int32 *cands, double *scores);

/* topk_candidates.c: mtdpp.candidates */
extern int	mtdpp_candidates;
extern void mtdpp_candidates_init(void);

/* evidence.c */
extern void mtdpp_evidence(const MtdppModel *m, const int32 *ctx, int b, double *ev);
extern int	mtdpp_evidence_items(const MtdppModel *m, const int32 *ctx, int b,
								 const double *ev, const bool *exclude, int32 *list,
								 bool *listed);

/* diverse.c */
extern int	mtdpp_diverse_pool(int k);
extern int	mtdpp_diverse_select(const MtdppModel *m, const MtdppRanked *cands, int n,
								 int k, double diversity, int *chosen);

/* similarity.c: the measures of similarity several kinds share */
extern void mtdpp_similar_cosine(const MtdppModel *m, int item, double *sim, int8 *tier);
extern void mtdpp_similar_lists(const MtdppModel *m, int item, double *sim, int8 *tier);

#endif							/* MTDPP_SCORE_H */
