/*
 * kinds/cooccurrence.c
 *		Counting the items bought together, item by item: what item-kNN's
 *		lists (itemknn.c) and EASE's neighbourhoods (ease_neighborhood.c)
 *		are built from; and what their cuts share: the selection of the
 *		largest values, and the longest list every item may keep within a
 *		number of pairs.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "kinds/cooccurrence.h"
#include "model/baskets.h"
#include "model/model.h"
#include "numeric/helper_thread.h"

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

/* an item's distinct companions in item order, sorted on either thread */
#define RS_SORT radix_sort_items
#define RS_ELEMENT int32
#define RS_KEY(p) ((uint64) (uint32) *(p))
#define RS_FINISH(a, n) insertion_sort_items(a, n)
#define RS_SMALL 32
#define RS_QUIET
#include "numeric/radix_sort.h"

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

/* baskets an item's count reads ahead of the one it counts */
#define AHEAD 8
/* companions a round of items holds at most (unless one item has more) */
#define ROUND_ROOM (4 * 1024 * 1024)
/*
 * pairs (with repeats) a round counts at most, unless one item has more:
 * interrupts are checked between rounds, so a cancel waits for at most a
 * round, a fraction of a second on a loaded machine even where dense
 * baskets give each item millions of pairs
 */
#define ROUND_WORK (32 * 1024 * 1024)
/* an item with more companions than 1 / DENSE of the catalog: its counts scanned, not sorted */
#define DENSE 32

/*
 * A thread's share of a round of items: each item's companions counted from
 * its baskets, then written in item order with their counts into the
 * round's buffer.  Runs on a helper thread: no allocation, no error, no
 * interrupt.
 */
typedef struct CountJob
{
	const MtdppBaskets *data;
	const int64 *held;			/* item i's baskets: basket[held[i] .. held[i + 1]) */
	const int32 *basket;
	const int64 *at;			/* each item's place in the buffer */
	int32	   *companion;		/* the buffer: companions, in item order */
	int32	   *shared;			/* and the baskets shared with each */
	int		   *len;			/* companions of each item */
	int32	   *count;			/* the thread's dense counts, zero between items */
	int			from;
	int			to;
} CountJob;

static void
count_part(void *arg)
{
	CountJob   *j = arg;
	const MtdppBaskets *data = j->data;
	int			n = data->n_items;
	int32	   *count = j->count;

	for (int i = j->from; i < j->to; i++)
	{
		int32	   *seen = j->companion + j->at[i];
		int32	   *shared = j->shared + j->at[i];
		int64		end = j->held[i + 1];
		int			d = 0;

		for (int64 q = j->held[i]; q < end; q++)
		{
			int			b = j->basket[q];
			bool		itself = false;

			/* the baskets ahead, from memory: their offsets, then their lines */
			if (q + 2 * AHEAD < end)
				__builtin_prefetch(&data->start[j->basket[q + 2 * AHEAD]]);
			if (q + AHEAD < end)
				__builtin_prefetch(&data->items[data->start[j->basket[q + AHEAD]]]);
			/* every other line of the basket: one of I's lines is the one indexed */
			for (int64 l = data->start[b]; l < data->start[b + 1]; l++)
			{
				int32		c = data->items[l];

				if (c == i && !itself)
					itself = true;
				else if (count[c]++ == 0)
					seen[d++] = c;
			}
		}
		if ((int64) d * DENSE > n)
		{
			d = 0;
			for (int c = 0; c < n; c++)
				if (count[c] != 0)
				{
					seen[d] = c;
					shared[d++] = count[c];
					count[c] = 0;
				}
		}
		else
		{
			radix_sort_items(seen, d);
			for (int t = 0; t < d; t++)
			{
				shared[t] = count[seen[t]];
				count[seen[t]] = 0;
			}
		}
		j->len[i] = d;
	}
}

/*
 * The baskets holding each item of DATA, in basket order, into
 * BASKET[HELD[i] .. HELD[i + 1]) (HELD zeroed, N + 1 entries); FILL is
 * scratch of N.
 */
static void
index_baskets(const MtdppBaskets *data, int64 *held, int32 *basket, int64 *fill)
{
	for (int64 k = 0; k < data->n_lines; k++)
		held[data->items[k] + 1]++;
	for (int i = 0; i < data->n_items; i++)
	{
		held[i + 1] += held[i];
		fill[i] = held[i];
	}
	for (int b = 0; b < data->n_baskets; b++)
	{
		for (int64 k = data->start[b]; k < data->start[b + 1]; k++)
			basket[fill[data->items[k]]++] = b;
		if ((b & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

/* the companions a round of N items holds at most (beyond: the longest list) */
static int64
round_room(int n)
{
	return Max(Min(ROUND_ROOM, (int64) maintenance_work_mem * 1024 / 16 / (2 * sizeof(int32))), n);
}

/* what mtdpp_visit_lists holds beside its visitor's: the index, the counts, a round's buffers */
static Size
visit_scratch(const MtdppBaskets *data, bool helper, int64 room)
{
	Size		n = Max(data->n_items, 1);

	return sizeof(int32) * Max(data->n_lines, 1) + sizeof(int64) * (3 * n + 1) +
		sizeof(int32) * (helper ? 3 : 2) * n + sizeof(int32) * 2 * room;
}

/*
 * At most what mtdpp_visit_lists holds beside its visitor's for DATA, known
 * before the pass: for the lists that a visitor keeps to be sized beside it.
 */
Size
mtdpp_visit_scratch_bound(const MtdppBaskets *data)
{
	return visit_scratch(data, true, round_room(data->n_items));
}

/*
 * Hands every item's co-occurrence list in DATA to VISIT, item by item in
 * item order: SEEN the D distinct companions in item order, COUNT[c] the
 * baskets shared with each.  An index of the baskets holding each item (4
 * bytes a line) is built once; an item's list is then counted from its
 * baskets alone, in a dense array that stays in cache, so the pairs bought
 * (which a grocer's history has by the billion, *PAIRS, counted with
 * repeats) are counted once and never written out.  The items are counted
 * a round at a time on two threads (as many as max_parallel_maintenance_
 * workers allows, up to one helper), then visited in order on this one.
 * *SCRATCH_BYTES: what the visit holds beside what VISIT keeps.
 */
void
mtdpp_visit_lists(const MtdppBaskets *data, MtdppListVisitor visit, void *arg, Size *scratch_bytes,
				  int64 *pairs)
{
	int			n = data->n_items;
	int64		need = 0,
				room;
	int64	   *held = mtdpp_alloc_huge(sizeof(int64) * (n + 1));
	int64	   *pair_counts = mtdpp_pair_counts(data, pairs);
	const int64 *work = pair_counts + 1;	/* item i's pairs, with repeats */
	int64	   *at = mtdpp_alloc_huge(sizeof(int64) * Max(n, 1));
	int32	   *basket = mtdpp_alloc_huge(sizeof(int32) * Max(data->n_lines, 1));
	int32	   *count = mtdpp_alloc_huge(sizeof(int32) * Max(n, 1));
	int		   *len = mtdpp_alloc_huge(sizeof(int) * Max(n, 1));
	int32	   *companion;
	int32	   *shared;
	MtdppHelper *h = NULL;
	CountJob	job[2];

	index_baskets(data, held, basket, at);

	/*
	 * A round's buffer: ROUND_ROOM companions in at most a sixteenth of
	 * maintenance_work_mem, room for the longest list, no more than all.
	 */
	for (int i = 0; i < n; i++)
		need += Min(work[i], n);
	room = Min(round_room(n), Max(need, 1));
	companion = mtdpp_alloc_huge(sizeof(int32) * room);
	shared = mtdpp_alloc_huge(sizeof(int32) * room);

	if (n > 1)
		h = mtdpp_helper_start_for("co-occurrence counts");
	for (int t = 0; t < 2; t++)
	{
		job[t].data = data;
		job[t].held = held;
		job[t].basket = basket;
		job[t].at = at;
		job[t].companion = companion;
		job[t].shared = shared;
		job[t].len = len;
		job[t].count = t == 0 ? count : (h ? mtdpp_alloc_huge(sizeof(int32) * Max(n, 1)) : NULL);
	}
	*scratch_bytes = visit_scratch(data, h != NULL, room);

	for (int lo = 0, hi; lo < n; lo = hi)
	{
		int64		used = 0,
					half = 0,
					sum = 0;
		int			mid;

		CHECK_FOR_INTERRUPTS();
		/* a round: as many items as the buffer holds, each with room for its companions */
		for (hi = lo; hi < n && (hi == lo || (used + Min(work[hi], n) <= room &&
											  half + work[hi] <= ROUND_WORK)); hi++)
		{
			at[hi] = used;
			used += Min(work[hi], n);
			half += work[hi];
		}
		/* split in two halves of the work: the helper counts the first */
		half /= 2;
		for (mid = lo; mid < hi && sum < half; mid++)
			sum += work[mid];
		if (h)
		{
			job[1].from = lo;
			job[1].to = mid;
			job[0].from = mid;
			job[0].to = hi;
			mtdpp_helper_run_pair(h, count_part, &job[1], &job[0]);
		}
		else
		{
			job[0].from = lo;
			job[0].to = hi;
			count_part(&job[0]);
		}
		for (int i = lo; i < hi; i++)
		{
			const int32 *seen = companion + at[i];

			for (int t = 0; t < len[i]; t++)
				count[seen[t]] = shared[at[i] + t];
			visit(i, seen, count, len[i], arg);
			for (int t = 0; t < len[i]; t++)
				count[seen[t]] = 0;
		}
	}
	if (h)
		pfree(job[1].count);
	mtdpp_helper_stop(h);
	pfree(shared);
	pfree(companion);
	pfree(len);
	pfree(count);
	pfree(basket);
	pfree(at);
	pfree(pair_counts);
	pfree(held);
	/* the index and the rounds' buffers, given back before what follows the pass */
	mtdpp_release_freed();
}

/*
 * The largest cap on each of the N lists whose lengths LENGTH are at most
 * LONGEST under which they keep at most ROOM pairs in all, by bisection
 * over [1, LONGEST] (1 when no cap fits): the cut of item-kNN's lists and
 * of the hybrid's union of two, when they do not fit whole.
 */
int
mtdpp_list_cap(const int64 *length, int n, int64 longest, int64 room)
{
	int			lo = 1,
				hi = (int) longest;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo + 1) / 2;
		int64		kept = 0;

		for (int i = 0; i < n && kept <= room; i++)
			kept += Min(length[i], mid);
		if (kept <= room)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
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
