/*
 * train/lines_baskets.c
 *		The baskets order lines become: from the leader's own sorted lines
 *		(lines_to_baskets), or by merging the runs of parallel workers order
 *		by order (runs_to_baskets), item ids made dense indices.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "model/baskets.h"
#include "model/model.h"
#include "numeric/helper_thread.h"
#include "train/lines.h"
#include "train/lines_int.h"

static inline int
cmp_pos_item(const OrderLine *x, const OrderLine *y)
{
	if (x->position != y->position)
		return x->position < y->position ? -1 : 1;
	if (x->item_id != y->item_id)
		return x->item_id < y->item_id ? -1 : 1;
	return 0;
}

#define ST_SORT sort_basket
#define ST_ELEMENT_TYPE OrderLine
#define ST_COMPARE(a, b) cmp_pos_item(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

void
itemset_init(ItemSet *set, int32 lo, int32 hi, int64 lines)
{
	memset(set, 0, sizeof(*set));
	set->lo = lo;
	set->range = lines > 0 ? (int64) hi - lo + 1 : 0;
	if (lines > 0 && set->range <= Max((int64) 1 << 20, lines / 16))
		set->dense = mtdpp_alloc_huge(sizeof(int32) * set->range);
	else
	{
		HASHCTL		hctl;

		memset(&hctl, 0, sizeof(hctl));
		hctl.keysize = sizeof(int32);
		hctl.entrysize = sizeof(int32);
		hctl.hcxt = CurrentMemoryContext;
		set->hash = hash_create("mtdpp distinct items", 1024, &hctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
}

/* the distinct ids into D (item_ids, n_items, zero popularity) */
static void
itemset_finish(ItemSet *set, MtdppBaskets *d)
{
	int			ni = 0;

	if (set->dense)
	{
		for (int64 v = 0; v < set->range; v++)
			ni += set->dense[v] != 0;
		d->item_ids = palloc(sizeof(int32) * Max(ni, 1));
		ni = 0;
		for (int64 v = 0; v < set->range; v++)
			if (set->dense[v])
			{
				d->item_ids[ni] = (int32) (set->lo + v);
				set->dense[v] = ni++;
			}
	}
	else
	{
		HASH_SEQ_STATUS seq;
		int32	   *key;

		d->item_ids = palloc(sizeof(int32) * Max(hash_get_num_entries(set->hash), 1));
		hash_seq_init(&seq, set->hash);
		while ((key = hash_seq_search(&seq)) != NULL)
			d->item_ids[ni++] = *key;
		hash_destroy(set->hash);
		set->hash = NULL;
		pg_qsort(d->item_ids, ni, sizeof(int32), mtdpp_cmp_int32);
	}
	set->ids = d->item_ids;
	set->n = ni;
	d->n_items = ni;
	d->popularity = palloc0(sizeof(int32) * Max(ni, 1));
}

static void
itemset_free(ItemSet *set)
{
	if (set->dense)
		pfree(set->dense);
	set->dense = NULL;
}

void
check_baskets(int64 nb)
{
	if (nb > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many orders: " INT64_FORMAT ", at most %d", nb, PG_INT32_MAX)));
}

/*
 * One basket's lines, by position (they come by item: often nothing to
 * do); whether they had two positions, an order.
 */
bool
order_basket(OrderLine *l, int64 n)
{
	for (int64 k = 1; k < n; k++)
		if (l[k].position != l[0].position)
		{
			sort_basket(l, n);
			return true;
		}
	return false;
}

/*
 * Item ids made dense indices (through a dense table), popularity counted:
 * N ids read from FROM, written to ITEMS (FROM itself, or below it).  May
 * run on the helper thread.
 */
typedef struct IndexPart
{
	int32	   *items;
	const int32 *from;
	int64		n;
	const int32 *dense;
	int32		lo;
	int32	   *popularity;
} IndexPart;

static void
index_part(void *arg)
{
	IndexPart  *ip = (IndexPart *) arg;

	/* locals, so that the compiler keeps them in registers */
	int32	   *items = ip->items;
	const int32 *from = ip->from;
	const int32 *dense = ip->dense;
	int32	   *popularity = ip->popularity;
	int32		lo = ip->lo;

	for (int64 k = 0; k < ip->n; k++)
	{
		int32		idx = dense[from[k] - lo];

		items[k] = idx;
		popularity[idx]++;
	}
}

/*
 * D's items, which hold item ids, made dense indices once every distinct
 * item is in SET; the popularity counted.  The first N0 items are in
 * place; the others still lie from item GAP_FROM on (a split merge's second
 * part) and are moved down to follow them.  With a dense table, the two
 * parts are done side by side on this thread and helper H (if not NULL).
 */
void
baskets_index_items(MtdppBaskets *d, ItemSet *set, MtdppHelper *h, int64 n0, int64 gap_from)
{
	itemset_finish(set, d);
	if (set->dense)
	{
		IndexPart	part[2] = {
			{d->items, d->items, n0, set->dense, set->lo, d->popularity},
			{d->items + n0, d->items + gap_from, d->n_lines - n0, set->dense, set->lo, NULL}
		};

		if (part[1].n == 0)
			index_part(&part[0]);
		else
		{
			part[1].popularity = palloc0(sizeof(int32) * Max(d->n_items, 1));
			mtdpp_helper_run_pair(h, index_part, &part[0], &part[1]);
			for (int i = 0; i < d->n_items; i++)
				d->popularity[i] += part[1].popularity[i];
			pfree(part[1].popularity);
		}
	}
	else
		for (int64 k = 0; k < d->n_lines; k++)
		{
			int32		idx = itemset_index(set, d->items[k]);

			d->items[k] = idx;
			d->popularity[idx]++;
		}
	itemset_free(set);
}

/*
 * The sorted lines into baskets.  The baskets' item ids (4 bytes a line)
 * are written over the lines (8 or 16 bytes a line) as they are read, the
 * first of each basket flagged by its sign bit; the basket offsets (8 bytes
 * a basket) are read off the flags once the lines' memory has shrunk to the
 * items.  So the peak is the lines themselves and the distinct items.
 */
#define BASKET_FIRST ((int32) 0x80000000)

MtdppBaskets *
lines_to_baskets(LineArray *la)
{
	MtdppBaskets *d = palloc0(sizeof(MtdppBaskets));
	int32	   *items = la->data;
	int64		n = 0,
				nb = 0;
	int32		lo,
				hi;
	bool		positions;
	ItemSet		set;

	lines_sort(la);
	CHECK_FOR_INTERRUPTS();
	lines_survey(la, &lo, &hi, &positions);
	d->positions = positions;
	itemset_init(&set, lo, hi, la->n);
	for (int64 k = 0; k < la->n; k++)
		itemset_add(&set, line_at(la, k).item_id);
	itemset_finish(&set, d);

	/*
	 * Basket by basket, in position order, repeated items dropped (the first
	 * position counts).  items[n] overwrites bytes 4n..4n+3 (n <= k), inside
	 * a line already read; the current basket's lines, from line s on, are
	 * untouched.
	 */
	for (int64 s = 0, e; s < la->n; s = e)
	{
		int64		order_id = line_order(la, s);
		int64		first = n;

		for (e = s + 1; e < la->n && line_order(la, e) == order_id; e++)
			;
		if (la->wide)
		{
			OrderLine  *l = (OrderLine *) la->data + s;
			int64		m = 0;

			for (int64 k = 0; k < e - s; k++)
				if (m == 0 || l[k].item_id != l[m - 1].item_id)
					l[m++] = l[k];
			d->ordered |= order_basket(l, m);
			for (int64 k = 0; k < m; k++)
				items[n++] = itemset_index(&set, l[k].item_id);
		}
		else
		{
			const uint64 *key = (const uint64 *) la->data;
			uint64		prev = ~key[s];	/* key[k - 1] may be overwritten */

			for (int64 k = s; k < e; k++)
			{
				uint64		x = key[k];

				if (x != prev)
					items[n++] = itemset_index(&set, key_item(x));
				prev = x;
			}
		}
		for (int64 k = first; k < n; k++)
			d->popularity[items[k]]++;
		items[first] |= BASKET_FIRST;
		nb++;
		if ((nb & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	check_baskets(nb);
	itemset_free(&set);

	/* the lines' memory now holds the baskets' items: shrink, then offsets */
	d->items = n > 0 ? repalloc_huge(items, sizeof(int32) * n) : items;
	la->data = NULL;
	la->n = la->cap = 0;
	d->n_baskets = (int) nb;
	d->n_lines = n;
	d->start = mtdpp_alloc_huge(sizeof(int64) * (nb + 1));
	nb = 0;
	for (int64 k = 0; k < n; k++)
		if (d->items[k] & BASKET_FIRST)
		{
			d->items[k] &= ~BASKET_FIRST;
			d->start[nb++] = k;
		}
	Assert(nb == d->n_baskets);
	d->start[nb] = n;
	return d;
}
