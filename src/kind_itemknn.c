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
 * Co-occurrence lists of DATA's items into M's neighbour lists, weighted by
 * the cosine, in two passes over the baskets: the first sizes each item's
 * list (with repeats), the second fills it; each list is then sorted and its
 * repeats summed.  Memory is checked against maintenance_work_mem.  Shared
 * with the hybrid kind, which weighs this evidence beside a DPP.
 */
void
mtdpp_cooccurrence_lists(const MtdppBaskets *data, MtdppModel *m)
{
	int			n = data->n_items;
	int64	   *start = mtdpp_alloc_huge(sizeof(int64) * (n + 1));
	int64	   *fill;
	int32	   *nbr;
	int64		total = 0,
				kept = 0;
	Size		need;

	for (int b = 0; b < data->n_baskets; b++)
	{
		int64		len = data->start[b + 1] - data->start[b];

		for (int64 k = data->start[b]; k < data->start[b + 1]; k++)
			start[data->items[k] + 1] += len - 1;
		total += len * (len - 1);
	}
	need = mul_size(total, sizeof(int32) + sizeof(float4) + sizeof(int32));
	if (need > (Size) maintenance_work_mem * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("item-kNN over " INT64_FORMAT " co-occurrences needs %zu kB, more than maintenance_work_mem (%d kB)",
						total, need / 1024, maintenance_work_mem),
				 errhint("Raise maintenance_work_mem for this session.")));
	for (int i = 0; i < n; i++)
		start[i + 1] += start[i];

	nbr = mtdpp_alloc_huge(sizeof(int32) * Max(total, 1));
	fill = mtdpp_alloc_huge(sizeof(int64) * Max(n, 1));
	memcpy(fill, start, sizeof(int64) * n);
	for (int b = 0; b < data->n_baskets; b++)
	{
		for (int64 k = data->start[b]; k < data->start[b + 1]; k++)
			for (int64 l = data->start[b]; l < data->start[b + 1]; l++)
				if (k != l)
					nbr[fill[data->items[k]]++] = data->items[l];
		if ((b & 0xfff) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	/* sort each list, sum its repeats into cosine weights, compact in place */
	m->nbr_start = mtdpp_alloc_huge(sizeof(int64) * (n + 1));
	m->nbr_weight = mtdpp_alloc_huge(sizeof(float4) * Max(total, 1));
	for (int i = 0; i < n; i++)
	{
		int64		s = start[i],
					e = start[i + 1];

		m->nbr_start[i] = kept;
		pg_qsort(nbr + s, e - s, sizeof(int32), mtdpp_cmp_int32);
		for (int64 k = s; k < e;)
		{
			int64		run = k;
			int32		c = nbr[k];

			while (run < e && nbr[run] == c)
				run++;
			nbr[kept] = c;
			m->nbr_weight[kept] = (float4) ((run - k) /
											sqrt((double) data->popularity[i] * data->popularity[c]));
			kept++;
			k = run;
		}
	}
	m->nbr_start[n] = kept;
	m->nbr_index = nbr;
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
