/*
 * kinds/itemknn/itemknn.c
 *		The kind "itemknn": co-occurrence cosine, a baseline.
 *
 *		score(c) = sum over basket items j of cooc(j, c) / sqrt(freq(j) freq(c))
 *
 * with cooc(j, c) the number of training baskets holding both and freq the
 * number holding one.  Each item keeps the list of items it co-occurs with
 * and the cosine weights (compressed sparse rows, stored in mtdpp.items'
 * neighbors and neighbor_weights), so a completion costs the neighbours of
 * the basket's items, not the catalog squared.  It is exact, needs no
 * hyperparameters and has no factors (rank 0); a basket of which it knows
 * no item is completed by popularity.  An item keeps every item it met,
 * unless max_neighbors says otherwise or the lists would not fit in what a
 * model may take (half of maintenance_work_mem; as mtdpp_fit's value, 1 GB:
 * about 130 million pairs) or in maintenance_work_mem beside the baskets,
 * twice (lists_room), and then its heaviest pairs.
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "fit/params.h"
#include "kinds/cooccurrence.h"
#include "kinds/ease/ease.h"
#include "kinds/itemknn/itemknn.h"
#include "kinds/popularity/popularity.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"
#include "score/score.h"

/*
 * The pairs the lists of DATA's items have room for, SCRATCH bytes being
 * held beside them while they are filled: within maintenance_work_mem
 * beside the baskets, the per-item arrays and SCRATCH while they are
 * filled, and twice within what the baskets leave of it at the end, when
 * the model is held beside its value (and no more than
 * mtdpp_model_budget).
 */
static int64
lists_room(const MtdppBaskets *data, Size scratch)
{
	Size		limit = (Size) maintenance_work_mem * 1024;
	/* the baskets; per item, the model's ids, counts and list starts, a list's weights and their copy */
	Size		base = add_size(mtdpp_baskets_bytes(data), mul_size(Max(data->n_items, 1), 24));
	Size		held = add_size(base, scratch);
	Size		lists = limit > held ? limit - held : 0;

	lists = Min(lists, limit > base ? (limit - base) / 2 : 0);
	lists = Min(lists, mtdpp_model_budget());
	return (int64) (lists / (sizeof(int32) + sizeof(float4)));
}

/*
 * Grow M's neighbour arrays to hold at least NEED entries, SCRATCH bytes
 * being in use beside them: doubling while maintenance_work_mem allows
 * (lists_room).
 */
static void
grow_lists(const MtdppBaskets *data, MtdppModel *m, int64 *capacity, int64 need, int64 total, Size scratch)
{
	int64		room = lists_room(data, scratch);
	int64		cap = Max(Min(Min(Max(*capacity * 2, need), total), Max(room, need)), 1);

	if (need > room)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("item-kNN over " INT64_FORMAT " co-occurrences keeps more than " INT64_FORMAT " distinct pairs, more than maintenance_work_mem (%d kB) holds beside the baskets",
						total, room, maintenance_work_mem),
				 errdetail("The lists take 8 bytes per distinct pair of items bought together, and storing a trained model holds as much again beside it."),
				 errhint("Give max_neighbors, the longest list an item keeps, a smaller value, or raise maintenance_work_mem for this session.")));
	m->nbr_index = repalloc_huge(m->nbr_index, sizeof(int32) * cap);
	m->nbr_weight = repalloc_huge(m->nbr_weight, sizeof(float4) * cap);
	*capacity = cap;
}

static void
visit_length(int i, const int32 *seen, const int32 *count, int d, void *arg)
{
	((int64 *) arg)[i] = d;
}

/*
 * The longest neighbour list an item of DATA keeps in a model of KIND at
 * RANK trained with P, or 0 for no limit: max_neighbors when given; when it
 * is not, every co-occurring item, unless the lists would outgrow what a
 * model may take (half of maintenance_work_mem, and MaxAllocSize for a
 * model returned as a value), or what grow_lists allows them in the pass that
 * fills them, where BESIDE bytes are held beside the counting's own (an
 * EASE fit whose pass they ride), and then the longest that fit.  The pairs
 * counted with repeats bound the lists; only when that bound does not fit
 * are the lists counted exactly (a pass as long as filling them).
 */
int
mtdpp_neighbor_cap(const MtdppBaskets *data, const MtdppParams *p, MtdppKind kind, int rank,
				   Size beside)
{
	int			n = data->n_items;
	int64		total = 0,
				room,
				longest = 0;
	int64	   *length;
	int			cap;
	Size		scratch,
				held;

	if (p->max_neighbors > 0)
		return p->max_neighbors;
	room = mtdpp_neighbor_room(kind, n, rank, p->epochs);
	held = add_size(beside, mtdpp_visit_scratch_bound(data));
	room = Min(room, lists_room(data, held));
	length = mtdpp_pair_counts(data, &total);
	total = 0;
	for (int i = 0; i < n; i++)
		total += Min(length[i + 1], n - 1);
	if (total > room)
	{
		mtdpp_visit_lists(data, visit_length, length, &scratch, &total);
		total = 0;
		for (int i = 0; i < n; i++)
		{
			total += length[i];
			longest = Max(longest, length[i]);
		}
	}
	if (total <= room)
	{
		pfree(length);
		return 0;
	}
	/* the largest cap whose lists fit */
	cap = mtdpp_list_cap(length, n, longest, room);
	pfree(length);
	return cap;
}

/* item-kNN's weight of the pair (I, C), bought together in COOC baskets */
static inline float4
cosine(const MtdppBaskets *data, int i, int c, int64 cooc)
{
	return (float4) (cooc / sqrt((double) data->popularity[i] * data->popularity[c]));
}

struct MtdppCosineLists
{
	const MtdppBaskets *data;
	MtdppModel *m;
	int			cap;			/* pairs kept per item, 0: all */
	int64		capacity;		/* of m's arrays */
	int64		kept;
	int64		distinct;
	int64		total;			/* pairs with repeats, a bound on kept */
	Size		scratch;		/* bytes mtdpp_visit_lists holds beside the lists */
	float4	   *weight;			/* one list's weights */
	float	   *heavy;			/* a copy for the selection */
	const MtdppListTap *tap;	/* what another pass was to call */
};

/* item I's cosine weights into the lists, cut to the CAP heaviest */
static void
visit_build(int i, const int32 *seen, const int32 *count, int d, void *arg)
{
	MtdppCosineLists *lb = arg;
	MtdppModel *m = lb->m;
	bool		cut = lb->cap > 0 && d > lb->cap;
	float		least = 0;
	int			ties = 0;

	m->nbr_start[i] = lb->kept;
	lb->distinct += d;
	for (int t = 0; t < d; t++)
		lb->weight[t] = cosine(lb->data, i, seen[t], count[seen[t]]);
	if (cut)
	{
		/* the CAP heaviest, in item order; of equal weights, the first items */
		memcpy(lb->heavy, lb->weight, sizeof(float) * d);
		least = mtdpp_kth_largest(lb->heavy, d, lb->cap);
		ties = lb->cap;
		for (int t = 0; t < d; t++)
			ties -= lb->weight[t] > least;
	}
	if (lb->kept + (cut ? lb->cap : d) > lb->capacity)
		grow_lists(lb->data, m, &lb->capacity, lb->kept + (cut ? lb->cap : d), lb->total, lb->scratch);
	for (int t = 0; t < d; t++)
		if (!cut || lb->weight[t] > least || (lb->weight[t] == least && ties-- > 0))
		{
			m->nbr_index[lb->kept] = seen[t];
			m->nbr_weight[lb->kept++] = lb->weight[t];
		}
}

/*
 * Co-occurrence lists of DATA's items into M's neighbour lists, weighted by
 * the cosine, each cut to its CAP heaviest pairs if CAP > 0; returns the
 * distinct pairs before the cut.  Shared with the hybrid kind, which weighs
 * this evidence beside a DPP.
 */
int64
mtdpp_cooccurrence_lists(const MtdppBaskets *data, MtdppModel *m, int cap)
{
	MtdppListTap tap;

	return mtdpp_cosine_lists_finish(mtdpp_cosine_lists_start(data, m, cap, &tap));
}

/*
 * mtdpp_cooccurrence_lists in two halves, around a pass made by another
 * (mtdpp_ease_lists): TAP says what that pass is to call; then
 * mtdpp_cosine_lists_finish, which makes a pass of its own if it did not.
 */
MtdppCosineLists *
mtdpp_cosine_lists_start(const MtdppBaskets *data, MtdppModel *m, int cap, MtdppListTap *tap)
{
	int			n = data->n_items;
	MtdppCosineLists *lb = palloc0(sizeof(MtdppCosineLists));

	lb->data = data;
	lb->m = m;
	lb->cap = cap;
	lb->weight = mtdpp_alloc_huge(sizeof(float4) * Max(n, 1));
	lb->heavy = cap > 0 ? mtdpp_alloc_huge(sizeof(float) * Max(n, 1)) : NULL;
	m->nbr_index = mtdpp_alloc_huge(sizeof(int32));
	m->nbr_weight = mtdpp_alloc_huge(sizeof(float4));
	m->nbr_start = mtdpp_alloc_huge(sizeof(int64) * (n + 1));
	tap->visit = visit_build;
	tap->arg = lb;
	tap->scratch_bytes = &lb->scratch;
	tap->pairs = &lb->total;
	tap->done = false;
	lb->tap = tap;
	return lb;
}

/* the lists' end, after a pass over every item; the distinct pairs before the cut */
int64
mtdpp_cosine_lists_finish(MtdppCosineLists *lb)
{
	int64		distinct;

	if (!lb->tap->done)
		mtdpp_visit_lists(lb->data, visit_build, lb, &lb->scratch, &lb->total);
	distinct = lb->distinct;
	lb->m->nbr_start[lb->data->n_items] = lb->kept;
	if (lb->heavy)
		pfree(lb->heavy);
	pfree(lb->weight);
	pfree(lb);
	return distinct;
}

/*
 * Says what the cut of the lists kept: a NOTICE when the cap was automatic
 * (the lists would not have fitted in a model value, or in half of
 * maintenance_work_mem), with verbose otherwise.  P: the parameters with
 * the cap, GIVEN: as given.
 */
void
mtdpp_report_neighbor_cap(const MtdppParams *p, const MtdppParams *given,
						  int64 distinct, int64 kept)
{
	bool		by_memory = mtdpp_model_budget_settable();

	if (given->max_neighbors < 0 && kept < distinct)
		ereport(NOTICE,
				(errmsg("kept the %d strongest neighbours of each item: " INT64_FORMAT " of " INT64_FORMAT " distinct pairs of items bought together",
						p->max_neighbors, kept, distinct),
				 by_memory ?
				 errdetail("All the pairs would not fit in maintenance_work_mem (%d kB) beside the baskets: storing a trained model holds as much again beside it.",
						   maintenance_work_mem) :
				 errdetail("All the pairs would not fit in the 1 GB value mtdpp_fit returns a model as."),
				 by_memory ?
				 errhint("SET maintenance_work_mem = '%dMB' keeps every pair; max_neighbors chooses the cut.",
						 /* twice the pairs left out, 8 bytes each, beyond the present setting */
						 (int) Min(((double) maintenance_work_mem * 1024 + 16.0 * (distinct - kept)) / (1024 * 1024) + 1,
								   (double) INT_MAX / 1024)) :
				 errhint("Give max_neighbors to choose the cut, or train on a more recent window of orders.")));
	else if (given->verbose)
		ereport(NOTICE,
				(errmsg("neighbour lists: " INT64_FORMAT " of " INT64_FORMAT " distinct pairs of items bought together",
						kept, distinct)));
}

static MtdppModel *
itemknn_fit(MtdppBaskets *data, const MtdppParams *given)
{
	MtdppParams p = *given;
	int			cap = mtdpp_neighbor_cap(data, &p, MTDPP_ITEMKNN, 0, 0);
	MtdppModel *m;
	int64		distinct;

	if (cap > 0)
		p.max_neighbors = cap;
	m = mtdpp_counts_model(data, &p);
	distinct = mtdpp_cooccurrence_lists(data, m, cap);
	mtdpp_report_neighbor_cap(&p, given, distinct, m->nbr_start[m->n_items]);
	return m;
}

/* score(c) = sum over the context of the cosine weights to c */
static void
itemknn_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	if (b == 0)
	{
		mtdpp_popularity_scores(m, scores);
		return;
	}
	memset(scores, 0, sizeof(double) * m->n_items);
	for (int s = 0; s < b; s++)
	{
		int			j = ctx[s];

		for (int64 k = m->nbr_start[j]; k < m->nbr_start[j + 1]; k++)
			scores[m->nbr_index[k]] += m->nbr_weight[k];
	}
}

/* the shared keys it takes */
static const char *const itemknn_keys_taken[] = {"max_neighbors", NULL};

static const MtdppKindDefault itemknn_defaults[] = {
	/* no factors */
	{"rank", 0},
	/* every co-occurring item, while the lists fit in a model value */
	{"max_neighbors", -1},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_itemknn = {
	.kind = MTDPP_ITEMKNN,
	.name = "itemknn",
	.keys = itemknn_keys_taken,
	.defaults = itemknn_defaults,
	.neighbors = true,
	.cosine_weights = true,
	.fit = itemknn_fit,
	.score_all = itemknn_score_all,
	.similar = mtdpp_similar_lists,
};
