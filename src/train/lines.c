/*
 * train/lines.c
 *		Order lines gathered by the training aggregate: their storage and
 *		sorting.  The runs parallel workers send are lines_run.c's, the
 *		baskets lines become lines_baskets.c's.
 *
 * Lines are held 8 bytes each (one key) while order ids fit 32 bits and no
 * position is given, else 16 (see lines.h).  They are sorted in place by a
 * radix sort on the order id.  A parallel worker encodes its sorted lines as
 * a run, order by order (a few bytes a line); the leader merges the runs
 * order by order straight into the baskets.  The baskets do not depend on
 * the plan: repeated items of a basket are dropped (the first position
 * counts), each basket is in position order (then item order), the baskets
 * in order id order, and item ids become dense indices.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "train/lines.h"
#include "train/lines_int.h"

StaticAssertDecl(sizeof(OrderLine) == 16, "an order line takes 16 bytes");

/*
 * Refuses NEED order lines of SIZE bytes beyond maintenance_work_mem: what
 * a serial read holds, and what the runs of a parallel one add up to when
 * they are merged (the finalfn), so that both accept and refuse the same
 * lines, however the scan divided them.
 */
void
lines_check_budget(int64 need, Size size)
{
	if ((Size) need * size > (Size) maintenance_work_mem * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gathering " INT64_FORMAT " order lines needs %zu kB, more than maintenance_work_mem (%d kB)",
						need, ((Size) need * size + 1023) / 1024, maintenance_work_mem),
				 errhint("Raise maintenance_work_mem for this session (8 bytes per order line, 16 when lines have positions or order ids beyond 32 bits), or train on fewer orders.")));
}

/*
 * Room for NEED lines of SIZE bytes within maintenance_work_mem: a parallel
 * participant holds at most what the whole read may, and the total is
 * checked once the runs are merged.  Past 64k lines, straight to just over
 * 32 MB: the C library maps arrays that large on their own, so growing them
 * remaps pages, while smaller ones are copied and leave their old copies
 * resident in its heap.  (Pages of the array that are never written cost
 * nothing.)
 */
static void
lines_reserve(MemoryContext ctx, LineArray *la, int64 need, Size size)
{
	Size		limit = (Size) maintenance_work_mem * 1024;
	int64		cap;

	if (need <= la->cap && size == line_size(la))
		return;
	lines_check_budget(need, size);
	cap = Max(need, Max(size == line_size(la) ? la->cap * 2 : la->cap, 1024));
	if (cap > 65536)
		cap = Max(cap, (int64) (32 * 1024 * 1024) / (int64) size + 1024);
	cap = Min(cap, (int64) (limit / size));
	cap = Max(cap, need);
	if (la->data == NULL)
		la->data = MemoryContextAllocHuge(ctx, (Size) cap * size);
	else
		la->data = repalloc_huge(la->data, (Size) cap * size);
	la->cap = cap;
}

/* every line to an OrderLine, in place (backwards: each lands past its key) */
static void
lines_widen(MemoryContext ctx, LineArray *la, int64 need)
{
	OrderLine  *l;

	lines_reserve(ctx, la, need, sizeof(OrderLine));
	l = la->data;
	for (int64 k = la->n - 1; k >= 0; k--)
		l[k] = key_line(((uint64 *) la->data)[k]);
	la->wide = true;
}

void
lines_add_slow(MemoryContext ctx, LineArray *la, int64 order_id, int32 item_id, int32 position)
{
	if (!la->wide && !line_fits_key(order_id, position))
		lines_widen(ctx, la, la->n + 1);
	lines_reserve(ctx, la, la->n + 1, line_size(la));
	if (order_id < la->last_order && la->n > 0)
		la->shuffled = true;
	la->last_order = order_id;
	if (la->wide)
		((OrderLine *) la->data)[la->n++] = (OrderLine) {order_id, item_id, position};
	else
		((uint64 *) la->data)[la->n++] = line_key(order_id, item_id);
	la->sorted = false;
}

/* SRC's lines after DST's (partial states of one process combined) */
void
lines_append(MemoryContext ctx, LineArray *dst, const LineArray *src)
{
	if (src->n == 0)
		return;
	if (src->shuffled || (dst->n > 0 && line_order(src, 0) < dst->last_order))
		dst->shuffled = true;
	dst->last_order = src->last_order;
	if (src->wide && !dst->wide)
		lines_widen(ctx, dst, dst->n + src->n);
	lines_reserve(ctx, dst, dst->n + src->n, line_size(dst));
	if (dst->wide && !src->wide)
		for (int64 k = 0; k < src->n; k++)
			((OrderLine *) dst->data)[dst->n + k] = key_line(((const uint64 *) src->data)[k]);
	else
		memcpy((char *) dst->data + dst->n * line_size(dst), src->data, src->n * line_size(dst));
	dst->n += src->n;
	dst->sorted = false;
}

void
lines_free(LineArray *la)
{
	if (la->data)
		pfree(la->data);
	la->data = NULL;
	la->n = la->cap = 0;
	la->wide = false;
	la->sorted = true;
	la->shuffled = false;
}

/* Sorting */

static inline int
cmp_order_item_pos(const OrderLine *x, const OrderLine *y)
{
	if (x->order_id != y->order_id)
		return x->order_id < y->order_id ? -1 : 1;
	if (x->item_id != y->item_id)
		return x->item_id < y->item_id ? -1 : 1;
	if (x->position != y->position)
		return x->position < y->position ? -1 : 1;
	return 0;
}

/* quicksorts with the comparators inlined, for long orders */
#define ST_SORT sort_lines
#define ST_ELEMENT_TYPE OrderLine
#define ST_COMPARE(a, b) cmp_order_item_pos(a, b)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

DEFINE_INSERTION_SORT(insertion_sort_keys, uint64)

void
finish_lines(OrderLine *a, int64 n)
{
	if (n > 16)
	{
		sort_lines(a, n);
		return;
	}
	for (int64 i = 1; i < n; i++)
	{
		OrderLine	x = a[i];
		int64		j = i;

		while (j > 0 && cmp_order_item_pos(&a[j - 1], &x) > 0)
		{
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

/* keys sort as their lines (the key is the whole line) */
#define RS_SORT radix_sort_keys
#define RS_ELEMENT uint64
#define RS_KEY(p) (*(p))
#define RS_FINISH(a, n) insertion_sort_keys(a, n)
#define RS_SMALL 32
#include "numeric/radix_sort.h"

/* lines by order id (sign bit flipped: ascending), then item and position */
#define RS_SORT radix_sort_lines
#define RS_ELEMENT OrderLine
#define RS_KEY(p) ((uint64) (p)->order_id ^ (UINT64CONST(1) << 63))
#define RS_FINISH(a, n) finish_lines(a, n)
#define RS_SMALL 32
#include "numeric/radix_sort.h"

/* the N lines of one order, by item then position */
void
sort_order_lines(LineArray *la, int64 s, int64 n)
{
	if (la->wide)
		finish_lines((OrderLine *) la->data + s, n);
	else if (n <= 32)
		insertion_sort_keys((uint64 *) la->data + s, n);
	else
		radix_sort_keys((uint64 *) la->data + s, n);
}

/*
 * Sorts the lines by (order, item, position).  Tables are often stored
 * order by order (no order id came after a greater one): then only each
 * order's few lines need sorting.
 */
void
lines_sort(LineArray *la)
{
	int64		s = 0;

	if (la->sorted)
		return;
	if (la->shuffled)
	{
		if (la->wide)
			radix_sort_lines(la->data, la->n);
		else
			radix_sort_keys(la->data, la->n);
		la->sorted = true;
		return;
	}
	for (int64 e = 1; e <= la->n; e++)
		if (e == la->n || line_order(la, e) != line_order(la, s))
		{
			sort_order_lines(la, s, e - s);
			s = e;
		}
	la->sorted = true;
}

/* LA's least and greatest item ids, and whether some line has a position */
void
lines_survey(const LineArray *la, int32 *lo, int32 *hi, bool *positions)
{
	/* locals: stores through the pointers could alias the lines */
	int32		lo_id = PG_INT32_MAX,
				hi_id = PG_INT32_MIN;
	bool		any = false;

	for (int64 k = 0; k < la->n; k++)
	{
		OrderLine	l = line_at(la, k);

		lo_id = Min(lo_id, l.item_id);
		hi_id = Max(hi_id, l.item_id);
		any |= l.position != 0;
	}
	*lo = lo_id;
	*hi = hi_id;
	*positions = any;
}
