/*
 * cooccurrence.c
 *		Counting the items bought together, item by item: what item-kNN's
 *		lists (kind_itemknn.c) and EASE's neighbourhoods (ease_neighborhood.c)
 *		are built from; and the selection of the largest values their cuts
 *		share.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "cooccurrence.h"
#include "model.h"

/* a small part of an item's companions, by insertion */
static void
insertion_sort_items(int32 *a, int64 n)
{
	for (int64 i = 1; i < n; i++)
	{
		int32		x = a[i];
		int64		j = i;

		while (j > 0 && a[j - 1] > x)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

/* an item's distinct companions in item order: thousands of them at 50,000 items */
#define RS_SORT radix_sort_items
#define RS_ELEMENT int32
#define RS_KEY(p) ((uint64) (uint32) *(p))
#define RS_FINISH(a, n) insertion_sort_items(a, n)
#define RS_SMALL 32
#include "radix_sort.h"

/* each item's appearances in pairs, counted with repeats (an upper bound on its list) */
int64 *
mtdpp_pair_counts(const MtdppBaskets *data, int64 *total)
{
	int64	   *start = mtdpp_alloc_huge(sizeof(int64) * (data->n_items + 1));

	*total = 0;
	for (int b = 0; b < data->n_baskets; b++)
	{
		int64		len = data->start[b + 1] - data->start[b];

		for (int64 k = data->start[b]; k < data->start[b + 1]; k++)
			start[data->items[k] + 1] += len - 1;
		*total += len * (len - 1);
	}
	return start;
}

/*
 * Hands every item's co-occurrence list in DATA to VISIT.  A first pass
 * over the baskets sizes each item's list with repeats; then each pass
 * fills the lists of a range of items into a scratch area of at most a
 * quarter of maintenance_work_mem (*SCRATCH_BYTES: its size; *PAIRS:
 * the pairs with repeats, both set before the first visit) and counts each
 * list in a dense array.  Memory grows with what VISIT keeps, not
 * with the pairs bought (which a grocer's history has by the billion); the
 * passes only cost reading the baskets again.
 */
void
mtdpp_visit_lists(const MtdppBaskets *data, MtdppListVisitor visit, void *arg, Size *scratch_bytes,
				  int64 *pairs)
{
	int			n = data->n_items;
	int64		total,
				longest = 0,
				chunk;
	int64	   *start = mtdpp_pair_counts(data, &total);
	int64	   *fill = mtdpp_alloc_huge(sizeof(int64) * Max(n, 1));
	int32	   *count = mtdpp_alloc_huge(sizeof(int32) * Max(n, 1));
	int32	   *seen = mtdpp_alloc_huge(sizeof(int32) * Max(n, 1));
	int32	   *scratch;

	for (int i = 0; i < n; i++)
	{
		longest = Max(longest, start[i + 1]);
		start[i + 1] += start[i];
	}
	chunk = Min(total, Max(longest, (int64) ((Size) maintenance_work_mem * 1024 / 4 / sizeof(int32))));
	scratch = mtdpp_alloc_huge(sizeof(int32) * Max(chunk, 1));
	*scratch_bytes = sizeof(int32) * Max(chunk, 1);
	*pairs = total;

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
		for (int i = lo; i < hi; i++)
		{
			int32	   *list = scratch + (start[i] - base);
			int64		len = start[i + 1] - start[i];
			int			d = 0;

			for (int64 k = 0; k < len; k++)
				if (count[list[k]]++ == 0)
					seen[d++] = list[k];
			radix_sort_items(seen, d);
			visit(i, seen, count, d, arg);
			for (int t = 0; t < d; t++)
				count[seen[t]] = 0;
		}
	}
	pfree(scratch);
	pfree(seen);
	pfree(count);
	pfree(fill);
	pfree(start);
}

/* the K-th largest (from 1) of the N values V, which it reorders; the cuts of item-kNN and of EASE's lists */
float
mtdpp_kth_largest(float *v, int n, int k)
{
	int			lo = 0,
				hi = n - 1,
				want = k - 1;

	while (lo < hi)
	{
		float		pivot = v[lo + (hi - lo) / 2];
		int			i = lo,
					j = hi;

		while (i <= j)
		{
			while (v[i] > pivot)
				i++;
			while (v[j] < pivot)
				j--;
			if (i <= j)
			{
				float		t = v[i];

				v[i++] = v[j];
				v[j--] = t;
			}
		}
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			break;				/* between the two parts: equal to the pivot */
	}
	return v[want];
}
