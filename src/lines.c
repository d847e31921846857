/*
 * lines.c
 *		Order lines gathered by the training aggregate: storage, sorting,
 *		the runs parallel workers send, and the baskets they all become.
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

#include "lines.h"

/* below this many lines, merging runs on one thread costs less than starting a second */
#define MERGE_SPLIT_LINES 1000000

StaticAssertDecl(sizeof(OrderLine) == 16, "an order line takes 16 bytes");

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
 * Room for NEED lines of SIZE bytes, checked against this process's share
 * of maintenance_work_mem (see gather_participants in aggregate.c).
 * Past 64k lines, straight to just over 32 MB: the C library maps arrays that
 * large on their own, so growing them remaps pages, while smaller ones are
 * copied and leave their old copies resident in its heap.  (Pages of the
 * array that are never written cost nothing.)
 */
static void
lines_reserve(MemoryContext ctx, LineArray *la, int64 need, Size size)
{
	int			participants = Max(la->participants, 1);
	Size		limit = (Size) maintenance_work_mem * 1024 / participants;
	int64		cap;

	if (need <= la->cap && size == line_size(la))
		return;
	if ((Size) need * size > limit && participants > 1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gathering " INT64_FORMAT " order lines in one of %d parallel participants needs %zu kB, more than its share of maintenance_work_mem (%zu of %d kB)",
						need, participants, ((Size) need * size + 1023) / 1024, limit / 1024,
						maintenance_work_mem),
				 errdetail("The participants of a parallel read share maintenance_work_mem, as those of a parallel CREATE INDEX do."),
				 errhint("Raise maintenance_work_mem for this session (8 bytes per order line, 16 when lines have positions or order ids beyond 32 bits), or train on fewer orders.")));
	if ((Size) need * size > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gathering " INT64_FORMAT " order lines needs %zu kB, more than maintenance_work_mem (%d kB)",
						need, ((Size) need * size + 1023) / 1024, maintenance_work_mem),
				 errhint("Raise maintenance_work_mem for this session (8 bytes per order line, 16 when lines have positions or order ids beyond 32 bits), or train on fewer orders.")));
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

static void
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

static inline int
cmp_pos_item(const OrderLine *x, const OrderLine *y)
{
	if (x->position != y->position)
		return x->position < y->position ? -1 : 1;
	if (x->item_id != y->item_id)
		return x->item_id < y->item_id ? -1 : 1;
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

#define ST_SORT sort_basket
#define ST_ELEMENT_TYPE OrderLine
#define ST_COMPARE(a, b) cmp_pos_item(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

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

DEFINE_INSERTION_SORT(insertion_sort_keys, uint64)
DEFINE_INSERTION_SORT(insertion_sort_ints, int32)

static inline void
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
#include "radix_sort.h"

/* lines by order id (sign bit flipped: ascending), then item and position */
#define RS_SORT radix_sort_lines
#define RS_ELEMENT OrderLine
#define RS_KEY(p) ((uint64) (p)->order_id ^ (UINT64CONST(1) << 63))
#define RS_FINISH(a, n) finish_lines(a, n)
#define RS_SMALL 32
#include "radix_sort.h"

/* the N lines of one order, by item then position */
static inline void
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
static void
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

/*
 * Runs.  A run is a sequence of orders, each coded against the one before:
 * the increase of its order id and its number of lines (varints of 7-bit
 * groups), then its items, each as its distance from the run's least item
 * id in a fixed number of bytes (enough for the run's span of ids: two for
 * a catalog of up to 65,536 ids), then, if the run has positions, each
 * line's position (a zigzag-coded varint).  Fixed-width items are read and
 * written without a branch per byte, which is where the merge spends its
 * time; an order of ten lines takes about 22 bytes.
 */
static inline uint8 *
put_varint(uint8 *p, uint64 v)
{
	while (v >= 0x80)
	{
		*p++ = (uint8) (v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8) v;
	return p;
}

static inline uint64
zigzag(int32 v)
{
	return (uint32) (((uint32) v << 1) ^ (uint32) (v >> 31));
}

static inline int32
unzigzag(uint64 v)
{
	return (int32) ((uint32) (v >> 1) ^ -(uint32) (v & 1));
}

/* bytes an item takes in a run whose item ids span SPAN (hi - lo) */
static inline int
item_width(uint32 span)
{
	return span < (1U << 8) ? 1 : span < (1U << 16) ? 2 : span < (1U << 24) ? 3 : 4;
}

/* V in WIDTH bytes, least significant first */
static inline uint8 *
put_item(uint8 *p, uint32 v, int width)
{
	p[0] = (uint8) v;
	if (width > 1)
		p[1] = (uint8) (v >> 8);
	if (width > 2)
		p[2] = (uint8) (v >> 16);
	if (width > 3)
		p[3] = (uint8) (v >> 24);
	return p + width;
}

static inline uint32
get_item(const uint8 *p, int width)
{
	uint32		v = p[0];

	if (width > 1)
		v |= (uint32) p[1] << 8;
	if (width > 2)
		v |= (uint32) p[2] << 16;
	if (width > 3)
		v |= (uint32) p[3] << 24;
	return v;
}

static inline OrderLine
line_at(const LineArray *la, int64 k)
{
	return la->wide ? ((const OrderLine *) la->data)[k] : key_line(((const uint64 *) la->data)[k]);
}

/* LA's least and greatest item ids, and whether some line has a position */
static void
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
 * The most bytes a run of LA's lines can take: 10 an order id, 10 a count,
 * 4 an item, 5 a position, and the marks.
 */
Size
lines_run_bound(const LineArray *la)
{
	return (Size) la->n * (la->wide ? 29 : 24) +
		sizeof(RunMark) * (la->n / MARK_LINES + 1) + sizeof(int64);
}

/*
 * Encodes LA's lines, sorted, as RUN and frees them; returns whether there
 * were any.  The run is written in one pass, into DEST (room for
 * lines_run_bound bytes) if given, else into its own bytes in the current
 * memory context, shrunk to fit afterwards: the pages never written cost
 * nothing.
 */
bool
lines_to_run(LineArray *la, Run *run, uint8 *dest)
{
	uint64		prev = 0;
	uint8	   *p;
	int64		n_marks = 0,
				next_mark = MARK_LINES;
	RunMark    *marks;
	bool		by_order;
	int			width;
	uint32		lo;

	if (la->n == 0)
		return false;
	/* lines in order id order: each order sorted as it is encoded */
	by_order = !la->sorted && !la->shuffled;
	if (!by_order)
		lines_sort(la);
	memset(run, 0, sizeof(*run));
	run->n = la->n;
	lines_survey(la, &run->lo, &run->hi, &run->positions);
	lo = (uint32) run->lo;
	width = item_width((uint32) run->hi - lo);

	marks = palloc(sizeof(RunMark) * (la->n / MARK_LINES + 1));
	p = dest ? dest : MemoryContextAllocHuge(CurrentMemoryContext, lines_run_bound(la));
	run->data = p;
	for (int64 s = 0, e; s < la->n; s = e)
	{
		OrderLine	first = line_at(la, s);

		if (s >= next_mark)
		{
			marks[n_marks++] = (RunMark) {first.order_id, (int64) prev, p - run->data, s};
			next_mark = s + MARK_LINES;
		}
		if (la->wide)
		{
			const OrderLine *l = la->data;

			for (e = s + 1; e < la->n && l[e].order_id == first.order_id; e++)
				;
			if (by_order)
				sort_order_lines(la, s, e - s);
			p = put_varint(p, (uint64) first.order_id - prev);
			p = put_varint(p, (uint64) (e - s));
			for (int64 k = s; k < e; k++)
				p = put_item(p, (uint32) l[k].item_id - lo, width);
			if (run->positions)
				for (int64 k = s; k < e; k++)
					p = put_varint(p, zigzag(l[k].position));
		}
		else
		{
			/* keys: an order's are those with its upper half */
			const uint64 *key = la->data;
			uint64		upper = key[s] >> 32;

			for (e = s + 1; e < la->n && key[e] >> 32 == upper; e++)
				;
			if (by_order)
				sort_order_lines(la, s, e - s);
			p = put_varint(p, (uint64) first.order_id - prev);
			p = put_varint(p, (uint64) (e - s));
			if (width == 2)		/* the common case, with the width known */
				for (int64 k = s; k < e; k++)
					p = put_item(p, (uint32) key_item(key[k]) - lo, 2);
			else
				for (int64 k = s; k < e; k++)
					p = put_item(p, (uint32) key_item(key[k]) - lo, width);
		}
		prev = (uint64) first.order_id;
	}
	memcpy(p, marks, sizeof(RunMark) * n_marks);
	p += sizeof(RunMark) * n_marks;
	memcpy(p, &n_marks, sizeof(int64));
	p += sizeof(int64);
	pfree(marks);
	run->len = p - run->data;
	if (!dest)
		run->data = repalloc_huge((void *) run->data, run->len);
	lines_free(la);
	return true;
}

/*
 * RUN's marks (unaligned: read with memcpy) and their number; the codes end
 * where the marks begin.  False if the trailer does not fit the run.
 */
static bool
run_marks(const Run *run, const uint8 **marks, int64 *n_marks)
{
	if (run->len < (int64) sizeof(int64))
		return false;
	memcpy(n_marks, run->data + run->len - sizeof(int64), sizeof(int64));
	if (*n_marks < 0 || *n_marks > (run->len - (int64) sizeof(int64)) / (int64) sizeof(RunMark))
		return false;
	*marks = run->data + run->len - sizeof(int64) - *n_marks * sizeof(RunMark);
	return true;
}

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

static pg_noinline uint64
reader_corrupt(RunReader *r)
{
	r->corrupt = true;
	r->p = r->end;
	r->left = r->count = 0;
	return 0;
}

static inline uint64
get_varint(RunReader *r)
{
	uint64		v = 0;

	/* most codes take one byte */
	if (likely(r->p < r->end) && *r->p < 0x80)
		return *r->p++;

	for (int shift = 0; shift < 64; shift += 7)
	{
		uint8		byte;

		if (r->p >= r->end)
			break;
		byte = *r->p++;
		v |= (uint64) (byte & 0x7f) << shift;
		if (byte < 0x80)
			return v;
	}
	return reader_corrupt(r);
}

static inline void
reader_next_order(RunReader *r)
{
	r->more = false;
	if (r->left == 0)
		return;
	r->order_id = (int64) ((uint64) r->order_id + get_varint(r));
	r->count = (int64) get_varint(r);
	if (r->corrupt || r->count <= 0 || r->count > r->left)
	{
		reader_corrupt(r);
		return;
	}
	r->left -= r->count;
	r->more = true;
}

/*
 * A reader of RUN from its start, or from MARK (read from the run's marks);
 * a run whose trailer does not fit is corrupt.
 */
static void
reader_start(RunReader *r, const Run *run, const RunMark *mark)
{
	const uint8 *marks;
	int64		n_marks;

	memset(r, 0, sizeof(*r));
	r->positions = run->positions;
	r->lo = run->lo;
	r->span = (uint32) run->hi - (uint32) run->lo;
	r->width = item_width(r->span);
	if (!run_marks(run, &marks, &n_marks))
	{
		r->corrupt = true;
		return;
	}
	r->p = run->data;
	r->end = marks;
	r->left = run->n;
	if (mark)
	{
		if (mark->offset < 0 || mark->offset > marks - run->data ||
			mark->lines_before < 0 || mark->lines_before > run->n)
		{
			r->corrupt = true;
			return;
		}
		r->p += mark->offset;
		r->left -= mark->lines_before;
		r->order_id = mark->prev;
	}
	reader_next_order(r);
}

/*
 * Whether the current order's items (r->count of them) are all in the run;
 * if not, the run is corrupt.
 */
static inline bool
reader_has_items(RunReader *r)
{
	if (r->end - r->p >= r->count * r->width)
		return true;
	reader_corrupt(r);
	return false;
}

/* the current order's lines into L (room for r->count); returns how many */
static inline int64
reader_read_order(RunReader *r, OrderLine *l)
{
	int64		n = r->count;
	uint32		prev = 0;

	if (!reader_has_items(r))
		return 0;
	for (int64 k = 0; k < n; k++)
	{
		uint32		v = get_item(r->p, r->width);

		r->p += r->width;
		/* an order's items come in order (the merge drops repeats next to each other) */
		if (v > r->span || v < prev)
			return reader_corrupt(r);
		prev = v;
		l[k] = (OrderLine) {r->order_id, (int32) ((uint32) r->lo + v), 0};
	}
	if (r->positions)
		for (int64 k = 0; k < n; k++)
			l[k].position = unzigzag(get_varint(r));
	return r->corrupt ? 0 : n;
}

/*
 * The same, items only, each once (a run without positions), into ITEMS;
 * returns how many.  WIDTH is r->width, a constant where this is inlined.
 */
static pg_attribute_always_inline int64
read_items_width(RunReader *r, int32 *items, int width)
{
	/* locals: the stores to ITEMS could otherwise alias the reader */
	const uint8 *p = r->p;
	uint32		lo = (uint32) r->lo,
				span = r->span,
				prev = 0;
	int64		count = r->count,
				n = 0;

	for (int64 k = 0; k < count; k++, p += width)
	{
		uint32		v = get_item(p, width);

		/* an order's items come in order: a repeat follows its first */
		if (v > span || v < prev)
			return reader_corrupt(r);
		if (k == 0 || v != prev)
			items[n++] = (int32) (lo + v);
		prev = v;
	}
	r->p = p;
	return n;
}

static inline int64
reader_read_items(RunReader *r, int32 *items)
{
	if (!reader_has_items(r))
		return 0;
	switch (r->width)
	{
		case 1:
			return read_items_width(r, items, 1);
		case 2:
			return read_items_width(r, items, 2);
		case 3:
			return read_items_width(r, items, 3);
		default:
			return read_items_width(r, items, 4);
	}
}

/* the current order's lines, unread (a run without positions) */
static inline void
reader_skip_order(RunReader *r)
{
	if (reader_has_items(r))
		r->p += r->count * r->width;
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

static void
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

static inline void
itemset_add(ItemSet *set, int32 id)
{
	if (set->dense)
		set->dense[id - set->lo] = 1;
	else
		(void) hash_search(set->hash, &id, HASH_ENTER, NULL);
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

static inline int32
itemset_index(const ItemSet *set, int32 id)
{
	if (set->dense)
		return set->dense[id - set->lo];
	return (int32) ((const int32 *) bsearch(&id, set->ids, set->n, sizeof(int32),
											mtdpp_cmp_int32) - set->ids);
}

static void
itemset_free(ItemSet *set)
{
	if (set->dense)
		pfree(set->dense);
	set->dense = NULL;
}

static void
check_baskets(int64 nb)
{
	if (nb > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many orders: " INT64_FORMAT ", at most %d", nb, PG_INT32_MAX)));
}

/* one basket's lines, by position (they come by item: often nothing to do) */
static void
order_basket(OrderLine *l, int64 n)
{
	for (int64 k = 1; k < n; k++)
		if (l[k].position != l[0].position)
		{
			sort_basket(l, n);
			return;
		}
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
static void
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
			order_basket(l, m);
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

/* sorts N item ids and drops repeats; returns how many are left */
static int64
sort_distinct_ints(int32 *a, int64 n)
{
	int64		m = 0;

	if (n > 32)
		pg_qsort(a, n, sizeof(int32), mtdpp_cmp_int32);
	else
		insertion_sort_ints(a, n);
	for (int64 k = 0; k < n; k++)
		if (m == 0 || a[k] != a[m - 1])
			a[m++] = a[k];
	return m;
}

/*
 * The runs holding the least order id (below STOP when BOUNDED) into SRC;
 * returns how many, and their lines in *LINES.
 */
static inline int
least_order(RunReader *rd, int nr, bool bounded, int64 stop, int *src, int64 *lines)
{
	int			ns = 0;
	int64		order_id = 0;

	*lines = 0;
	for (int r = 0; r < nr; r++)
		if (rd[r].more && (!bounded || rd[r].order_id < stop) &&
			(ns == 0 || rd[r].order_id <= order_id))
		{
			if (ns > 0 && rd[r].order_id < order_id)
				ns = *lines = 0;
			order_id = rd[r].order_id;
			src[ns++] = r;
			*lines += rd[r].count;
		}
	return ns;
}

/*
 * One part of a merge of runs without positions: the orders of every run
 * (below STOP when BOUNDED) into baskets of item ids, each basket's items
 * sorted and distinct, and every id marked in MARKS (if set).  Computation
 * only: it may run on the helper thread.
 */
typedef struct MergePart
{
	RunReader  *rd;				/* positioned at the part's first order */
	int			nr;
	bool		bounded;
	int64		stop;
	int		   *src;			/* room for nr */
	int32	   *items;			/* out: room for the part's lines */
	int64		n;
	int64	   *start;			/* out: room for the part's orders */
	int64		nb;
	int32	   *marks;			/* marks[id - lo] = 1, or NULL */
	int32		lo;
} MergePart;

static void
merge_part(void *arg)
{
	MergePart  *mp = (MergePart *) arg;

	/* locals: stores through the output pointers could alias *mp */
	RunReader  *rd = mp->rd;
	int		   *src = mp->src;
	int32	   *items = mp->items;
	int64	   *start = mp->start;
	int32	   *marks = mp->marks;
	int32		lo = mp->lo;
	int64		n = 0,
				nb = 0,
				lines;
	int			ns;

	while ((ns = least_order(rd, mp->nr, mp->bounded, mp->stop, src, &lines)) > 0)
	{
		int32	   *out = items + n;
		int64		m = 0;

		for (int i = 0; i < ns; i++)
		{
			m += reader_read_items(&rd[src[i]], out + m);
			reader_next_order(&rd[src[i]]);
		}
		if (ns > 1)
			m = sort_distinct_ints(out, m);
		if (marks)
			for (int64 k = 0; k < m; k++)
				marks[out[k] - lo] = 1;
		start[nb++] = n;
		n += m;
	}
	mp->n = n;
	mp->nb = nb;
}

/*
 * Room for N readers (and their source list) on cache lines of their own,
 * so that two threads never write the same line.
 */
static RunReader *
readers_alloc(int n, int **src)
{
	char	   *p = palloc(sizeof(RunReader) * n + sizeof(int) * n + 3 * PG_CACHE_LINE_SIZE);
	RunReader  *rd = (RunReader *) TYPEALIGN(PG_CACHE_LINE_SIZE, p + PG_CACHE_LINE_SIZE);

	*src = (int *) (rd + n);
	return rd;
}

/*
 * The merge in two parts, on this thread and helper H: the orders below a
 * pivot (the order at the middle mark of the longest run) and the others.
 * Each part writes where its lines would start: the second part's items
 * are moved down by the index pass, the first N0 then lying from GAP_FROM.
 */
static void
merge_split(MtdppHelper *h, MergePart *whole, const Run *runs, int64 range,
			int64 *n0, int64 *gap_from)
{
	MergePart	part[2];
	int		   *src2;
	RunReader  *rd2 = readers_alloc(whole->nr, &src2);
	int			longest = 0;
	int64		before = 0,
				pivot,
				n_marks;
	const uint8 *marks;
	RunMark		mark;

	for (int r = 1; r < whole->nr; r++)
		if (runs[r].n > runs[longest].n)
			longest = r;
	if (!run_marks(&runs[longest], &marks, &n_marks) || n_marks == 0)
	{
		merge_part(whole);
		*n0 = *gap_from = whole->n;
		return;
	}
	memcpy(&mark, marks + (n_marks / 2) * sizeof(RunMark), sizeof(RunMark));
	pivot = mark.order_id;

	/* each run from its last mark below the pivot, then order by order */
	for (int r = 0; r < whole->nr; r++)
	{
		bool		found = false;

		if (run_marks(&runs[r], &marks, &n_marks))
			for (int64 i = 0; i < n_marks; i++)
			{
				RunMark		m;

				memcpy(&m, marks + i * sizeof(RunMark), sizeof(RunMark));
				if (m.order_id >= pivot)
					break;
				mark = m;
				found = true;
			}
		reader_start(&rd2[r], &runs[r], found ? &mark : NULL);
		before += found ? mark.lines_before : 0;
		while (rd2[r].more && rd2[r].order_id < pivot)
		{
			before += rd2[r].count;
			reader_skip_order(&rd2[r]);
			reader_next_order(&rd2[r]);
		}
	}

	part[0] = *whole;
	part[0].bounded = true;
	part[0].stop = pivot;
	part[1] = *whole;
	part[1].rd = rd2;
	part[1].src = src2;
	part[1].items = whole->items + before;
	part[1].start = whole->start + before;
	part[1].marks = whole->marks ? mtdpp_alloc_huge(sizeof(int32) * range) : NULL;
	mtdpp_helper_run_pair(h, merge_part, &part[0], &part[1]);

	/*
	 * The second part's baskets after the first's; its items stay where
	 * they are (from *GAP_FROM on) until the index pass moves them down.
	 */
	for (int64 b = 0; b < part[1].nb; b++)
		whole->start[part[0].nb + b] = part[1].start[b] + part[0].n;
	whole->n = part[0].n + part[1].n;
	whole->nb = part[0].nb + part[1].nb;
	*n0 = part[0].n;
	*gap_from = before;
	for (int r = 0; r < whole->nr; r++)
		whole->rd[r].corrupt |= rd2[r].corrupt;
	if (whole->marks)
	{
		for (int64 v = 0; v < range; v++)
			whole->marks[v] |= part[1].marks[v];
		pfree(part[1].marks);
	}
}

/*
 * The same from sorted runs (a parallel plan's), merged order by order
 * straight into the baskets: the leader holds the encoded runs, the baskets'
 * items (4 bytes a line) and offsets, never the lines themselves.  Without
 * positions, an order's items are read straight into its basket (and
 * sorted there when several runs hold the order), on two threads when
 * allowed (max_parallel_maintenance_workers > 0) and worth it; with
 * positions, an order's lines go through a small buffer.
 */
MtdppBaskets *
runs_to_baskets(const Run *runs, int nr, int *threads)
{
	MtdppBaskets *d = palloc0(sizeof(MtdppBaskets));
	int		   *src;
	RunReader  *rd = readers_alloc(nr, &src);
	int64		total = 0,
				n = 0,
				nb = 0;
	int32		lo = PG_INT32_MAX,
				hi = PG_INT32_MIN;
	bool		positions = false;
	ItemSet		set;
	int64	   *start;
	int64		n0,				/* items in place; the others lie from gap_from */
				gap_from;
	MemoryContext merge_cxt = NULL;
	MtdppHelper *h = NULL;

	*threads = 1;
	for (int r = 0; r < nr; r++)
	{
		total += runs[r].n;
		lo = Min(lo, runs[r].lo);
		hi = Max(hi, runs[r].hi);
		positions |= runs[r].positions;
	}
	itemset_init(&set, lo, hi, total);
	d->items = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int32) * Max(total, 1));
	/* room for an order a line: the pages past the last order are never touched */
	start = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * (total + 1));
	for (int r = 0; r < nr; r++)
		reader_start(&rd[r], &runs[r], NULL);

	if (!positions)
	{
		MergePart	whole = {rd, nr, false, 0, src, d->items, 0, start, 0, set.dense, lo};

		if (total >= MERGE_SPLIT_LINES && set.dense && max_parallel_maintenance_workers > 0)
		{
			MemoryContext old;

			merge_cxt = AllocSetContextCreate(CurrentMemoryContext, "mtdpp merge",
											  ALLOCSET_SMALL_SIZES);
			old = MemoryContextSwitchTo(merge_cxt);
			h = mtdpp_helper_start();
			MemoryContextSwitchTo(old);
			*threads = h ? 2 : 1;
			merge_split(h, &whole, runs, set.range, &n0, &gap_from);
		}
		else
		{
			merge_part(&whole);
			n0 = gap_from = whole.n;
		}
		n = whole.n;
		nb = whole.nb;
		if (!set.dense)
			for (int64 k = 0; k < n; k++)
				itemset_add(&set, d->items[k]);
	}
	else
	{
		OrderLine  *bl;			/* the current basket's lines */
		int64		bl_cap = 64,
					lines;
		int			ns;

		bl = palloc(sizeof(OrderLine) * bl_cap);
		while ((ns = least_order(rd, nr, false, 0, src, &lines)) > 0)
		{
			int64		m = 0;

			if (lines > bl_cap)
			{
				bl_cap = Max(lines, bl_cap * 2);
				bl = repalloc_huge(bl, sizeof(OrderLine) * bl_cap);
			}
			for (int i = 0; i < ns; i++)
			{
				m += reader_read_order(&rd[src[i]], bl + m);
				reader_next_order(&rd[src[i]]);
			}
			if (ns > 1)
				finish_lines(bl, m);
			/* repeated items: the first position counts */
			lines = m;
			m = 0;
			for (int64 k = 0; k < lines; k++)
				if (m == 0 || bl[k].item_id != bl[m - 1].item_id)
					bl[m++] = bl[k];
			order_basket(bl, m);
			start[nb++] = n;
			for (int64 k = 0; k < m; k++)
			{
				d->items[n++] = bl[k].item_id;
				itemset_add(&set, bl[k].item_id);
			}
			if ((nb & 0xffff) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		pfree(bl);
		n0 = gap_from = n;
	}
	for (int r = 0; r < nr; r++)
		if (rd[r].corrupt)
			elog(ERROR, "mtdpp_fit state has a corrupt run of order lines");
	check_baskets(nb);
	start[nb] = n;
	d->start = repalloc_huge(start, sizeof(int64) * (nb + 1));
	d->n_baskets = (int) nb;
	d->n_lines = n;
	baskets_index_items(d, &set, h, n0, gap_from);
	if (merge_cxt)
		MemoryContextDelete(merge_cxt); /* stops the helper */
	if (n > 0)
		d->items = repalloc_huge(d->items, sizeof(int32) * n);
	return d;
}
