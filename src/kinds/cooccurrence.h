/*
 * kinds/cooccurrence.h
 *		Items bought together, counted item by item (cooccurrence.c), for
 *		item-kNN's lists and EASE's neighbourhoods, and what the cuts of
 *		those lists share.
 */
#ifndef MTDPP_COOCCURRENCE_H
#define MTDPP_COOCCURRENCE_H

#include "model/baskets.h"

/*
 * What is done with item I's co-occurrence list: its D distinct items in
 * SEEN (in item order), how many baskets each shares with I in COUNT
 * (indexed by item).
 */
typedef void (*MtdppListVisitor) (int i, const int32 *seen, const int32 *count, int d, void *arg);

/*
 * A second visitor riding along a pass made for another, so that the
 * hybrid's cosine lists are counted in the pass of EASE's neighbourhoods
 * (mtdpp_ease_lists): VISIT with ARG, before which the pass writes
 * *SCRATCH_BYTES (all it holds besides what VISIT keeps) and *PAIRS, as
 * mtdpp_visit_lists writes them; DONE once it has run.
 */
typedef struct MtdppListTap
{
	MtdppListVisitor visit;
	void	   *arg;
	Size	   *scratch_bytes;
	int64	   *pairs;
	bool		done;
} MtdppListTap;

extern int64 *mtdpp_pair_counts(const MtdppBaskets *data, int64 *total);
extern void mtdpp_visit_lists(const MtdppBaskets *data, MtdppListVisitor visit, void *arg,
							  Size *scratch_bytes, int64 *pairs);
extern Size mtdpp_visit_scratch_bound(const MtdppBaskets *data);
extern float mtdpp_kth_largest(float *v, int n, int k);
extern int	mtdpp_list_cap(const int64 *length, int n, int64 longest, int64 room);

#endif							/* MTDPP_COOCCURRENCE_H */
