/*
 * train/lines_int.h
 *		What the stages of the order lines share: storage and sorting
 *		(lines.c), runs (lines_run.c) and baskets (lines_baskets.c).
 */
#ifndef MTDPP_LINES_INT_H
#define MTDPP_LINES_INT_H

#include "utils/hsearch.h"

#include "model/baskets.h"
#include "model/model.h"
#include "numeric/helper_thread.h"
#include "train/lines.h"

static inline int64
key_order(uint64 key)
{
	return (int32) (uint32) ((key ^ LINE_KEY_SIGN) >> 32);
}

static inline int32
key_item(uint64 key)
{
	return (int32) (uint32) (key ^ LINE_KEY_SIGN);
}

static inline OrderLine
key_line(uint64 key)
{
	OrderLine	l = {key_order(key), key_item(key), 0};

	return l;
}

static inline int64
line_order(const LineArray *la, int64 k)
{
	return la->wide ? ((const OrderLine *) la->data)[k].order_id
		: key_order(((const uint64 *) la->data)[k]);
}

static inline Size
line_size(const LineArray *la)
{
	return la->wide ? sizeof(OrderLine) : sizeof(uint64);
}

/*
 * The distinct item ids and their dense indices (ascending): a table over
 * the id range when ids are compact (4 MB, or a quarter byte a line), else a
 * hash table, then a binary search.
 */
typedef struct ItemSet
{
	int32		lo;
	int64		range;
	int32	   *dense;			/* id - lo -> mark, then index; or NULL */
	HTAB	   *hash;
	const int32 *ids;			/* once finished: index -> id */
	int			n;
} ItemSet;

static inline void
itemset_add(ItemSet *set, int32 id)
{
	if (set->dense)
		set->dense[id - set->lo] = 1;
	else
		(void) hash_search(set->hash, &id, HASH_ENTER, NULL);
}

static inline int32
itemset_index(const ItemSet *set, int32 id)
{
	if (set->dense)
		return set->dense[id - set->lo];
	return (int32) ((const int32 *) bsearch(&id, set->ids, set->n, sizeof(int32),
											mtdpp_cmp_int32) - set->ids);
}

/*
 * A run ends with marks: every MARK_LINES lines or so, where an order starts
 * (its id, the id its code is relative to, its byte offset and the lines
 * before it), then the number of marks (8 bytes).  The leader finds where a
 * run crosses a given order id from them, without reading the run.
 */
#define MARK_LINES 65536

typedef struct RunMark
{
	int64		order_id;
	int64		prev;
	int64		offset;
	int64		lines_before;
} RunMark;

/*
 * Reads a run back, order by order.  A reader raises no error (it may run on
 * the helper thread): a corrupt run sets its flag and ends it, and the
 * caller raises once the merge is over.
 */
typedef struct RunReader
{
	const uint8 *p;
	const uint8 *end;
	int64		left;			/* lines after the current order's */
	int64		order_id;		/* the current order, while more is true */
	int64		count;			/* its lines, not yet read */
	bool		more;
	bool		corrupt;
	bool		positions;
	int32		lo;				/* the run's item id range */
	uint32		span;			/* hi - lo */
	int			width;			/* bytes an item */
} RunReader;

static inline OrderLine
line_at(const LineArray *la, int64 k)
{
	return la->wide ? ((const OrderLine *) la->data)[k] : key_line(((const uint64 *) la->data)[k]);
}

/* a few keys or item ids: insertion sort beats a call to a quicksort */
#define DEFINE_INSERTION_SORT(name, type) \
static inline void \
name(type *a, int64 n) \
{ \
	for (int64 i = 1; i < n; i++) \
	{ \
		type		x = a[i]; \
		int64		j = i; \
\
		while (j > 0 && a[j - 1] > x) \
		{ \
			a[j] = a[j - 1]; \
			j--; \
		} \
		a[j] = x; \
	} \
}

/*
 * The routines below are the family's own: hidden from the other libraries
 * a backend loads, whatever their names.
 */
#pragma GCC visibility push(hidden)

/* lines.c */
extern void finish_lines(OrderLine *a, int64 n);
extern void lines_free(LineArray *la);
extern void sort_order_lines(LineArray *la, int64 s, int64 n);
extern void lines_sort(LineArray *la);
extern void lines_survey(const LineArray *la, int32 *lo, int32 *hi, bool *positions);

/* lines_baskets.c */
extern void itemset_init(ItemSet *set, int32 lo, int32 hi, int64 lines);
extern void check_baskets(int64 nb);
extern bool order_basket(OrderLine *l, int64 n);
extern void baskets_index_items(MtdppBaskets *d, ItemSet *set, MtdppHelper *h, int64 n0, int64 gap_from);

#pragma GCC visibility pop

#endif							/* MTDPP_LINES_INT_H */
