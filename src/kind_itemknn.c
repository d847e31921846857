/*
 * kind_itemknn.c
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
 * no item is completed by popularity.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "mtdpp.h"

/*
 * Grow M's neighbour arrays to hold at least NEED entries, SCRATCH bytes
 * being in use beside them: doubling while maintenance_work_mem allows.
 */
static void
grow_lists(MtdppModel *m, int64 *capacity, int64 need, int64 total, Size scratch)
{
	Size		limit = (Size) maintenance_work_mem * 1024;
	int64		room = limit > scratch ? (int64) ((limit - scratch) / (sizeof(int32) + sizeof(float4))) : 0;
	int64		cap = Max(Min(Min(Max(*capacity * 2, need), total), Max(room, need)), 1);

	if (need > room)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("item-kNN over " INT64_FORMAT " co-occurrences keeps more than " INT64_FORMAT " distinct pairs, more than maintenance_work_mem (%d kB) holds",
						total, room, maintenance_work_mem),
				 errhint("Raise maintenance_work_mem for this session: the lists take 8 bytes per distinct pair of items bought together.")));
	m->nbr_index = repalloc_huge(m->nbr_index, sizeof(int32) * cap);
	m->nbr_weight = repalloc_huge(m->nbr_weight, sizeof(float4) * cap);
	*capacity = cap;
}

/*
 * Co-occurrence lists of DATA's items into M's neighbour lists, weighted by
 * the cosine.  A first pass over the baskets sizes each item's list (with
 * repeats); then each pass fills the lists of a range of items into a
 * scratch area of at most a quarter of maintenance_work_mem, sorts each list
 * and sums its repeats into the kept lists.  Memory grows with the distinct
 * pairs, not with the pairs bought (which a grocer's history has by the
 * billion); the passes only cost reading the baskets again.  Shared with the
 * hybrid kind, which weighs this evidence beside a DPP.
 */
void
mtdpp_cooccurrence_lists(const MtdppBaskets *data, MtdppModel *m)
{
	int			n = data->n_items;
	int64	   *start = mtdpp_alloc_huge(sizeof(int64) * (n + 1));
	int64	   *fill = mtdpp_alloc_huge(sizeof(int64) * Max(n, 1));
	int64		total = 0,
				longest = 0,
				chunk,
				capacity,
				kept = 0;
	int32	   *scratch;

	for (int b = 0; b < data->n_baskets; b++)
	{
		int64		len = data->start[b + 1] - data->start[b];

		for (int64 k = data->start[b]; k < data->start[b + 1]; k++)
			start[data->items[k] + 1] += len - 1;
		total += len * (len - 1);
	}
	for (int i = 0; i < n; i++)
	{
		longest = Max(longest, start[i + 1]);
		start[i + 1] += start[i];
	}
	chunk = Min(total, Max(longest, (int64) ((Size) maintenance_work_mem * 1024 / 4 / sizeof(int32))));
	scratch = mtdpp_alloc_huge(sizeof(int32) * Max(chunk, 1));
	capacity = 0;
	m->nbr_index = mtdpp_alloc_huge(sizeof(int32));
	m->nbr_weight = mtdpp_alloc_huge(sizeof(float4));
	grow_lists(m, &capacity, Min(total, chunk), Max(total, 1), sizeof(int32) * chunk);
	m->nbr_start = mtdpp_alloc_huge(sizeof(int64) * (n + 1));

	for (int lo = 0, hi = 0; lo < n; lo = hi)
	{
		int64		base = start[lo];

		while (hi < n && start[hi + 1] - base <= chunk)
			hi++;
		for (int i = lo; i < hi; i++)
			fill[i] = start[i] - base;
		for (int b = 0; b < data->n_baskets; b++)
		{
			for (int64 k = data->start[b]; k < data->start[b + 1]; k++)
			{
				int32		c = data->items[k];

				if (c < lo || c >= hi)
					continue;
				for (int64 l = data->start[b]; l < data->start[b + 1]; l++)
					if (k != l)
						scratch[fill[c]++] = data->items[l];
			}
			if ((b & 0xfff) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		/* sort each list, sum its repeats into cosine weights */
		for (int i = lo; i < hi; i++)
		{
			int32	   *list = scratch + (start[i] - base);
			int64		len = start[i + 1] - start[i];

			m->nbr_start[i] = kept;
			if (kept + len > capacity)
				grow_lists(m, &capacity, kept + len, total, sizeof(int32) * chunk);
			pg_qsort(list, len, sizeof(int32), mtdpp_cmp_int32);
			for (int64 k = 0; k < len;)
			{
				int64		run = k;
				int32		c = list[k];

				while (run < len && list[run] == c)
					run++;
				m->nbr_index[kept] = c;
				m->nbr_weight[kept] = (float4) ((run - k) /
												sqrt((double) data->popularity[i] * data->popularity[c]));
				kept++;
				k = run;
			}
		}
	}
	m->nbr_start[n] = kept;
	pfree(scratch);
	pfree(fill);
	pfree(start);
}

static MtdppModel *
itemknn_fit(MtdppBaskets *data, const MtdppParams *p)
{
	MtdppModel *m = mtdpp_counts_model(data, p);

	mtdpp_cooccurrence_lists(data, m);
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

static const MtdppKindDefault itemknn_defaults[] = {
	/* no factors */
	{"rank", 0},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_itemknn = {
	.kind = MTDPP_ITEMKNN,
	.name = "itemknn",
	.defaults = itemknn_defaults,
	.neighbors = true,
	.fit = itemknn_fit,
	.score_all = itemknn_score_all,
};
