/*
 * train/lines_run.c
 *		The runs parallel workers send: sorted order lines encoded order by
 *		order, and read back.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "model/baskets.h"
#include "model/model.h"
#include "numeric/helper_thread.h"
#include "train/lines.h"
#include "train/lines_int.h"

/* below this many lines, merging runs on one thread costs less than starting a second */
#define MERGE_SPLIT_LINES 1000000

DEFINE_INSERTION_SORT(insertion_sort_ints, int32)

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
 * The merge of runs with positions, order by order into D's baskets: an
 * order's lines gathered from every run that holds it into a small buffer,
 * its repeated items dropped (the first position counts), ordered by
 * position, then its items appended to D->items and START.  Returns the
 * items placed; *NB counts the baskets.
 */
static int64
merge_positioned(RunReader *rd, int nr, int *src, MtdppBaskets *d, ItemSet *set,
				 int64 *start, int64 *nb)
{
	OrderLine  *bl;				/* the current basket's lines */
	int64		bl_cap = 64,
				lines,
				n = 0;
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
		d->ordered |= order_basket(bl, m);
		start[(*nb)++] = n;
		for (int64 k = 0; k < m; k++)
		{
			d->items[n++] = bl[k].item_id;
			itemset_add(set, bl[k].item_id);
		}
		if ((*nb & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(bl);
	return n;
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
	MtdppHelper *h = NULL;

	*threads = 1;
	for (int r = 0; r < nr; r++)
	{
		total += runs[r].n;
		lo = Min(lo, runs[r].lo);
		hi = Max(hi, runs[r].hi);
		positions |= runs[r].positions;
	}
	d->positions = positions;
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
			h = mtdpp_helper_start_for("merge of sorted runs");
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
		n = merge_positioned(rd, nr, src, d, &set, start, &nb);
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
	mtdpp_helper_stop(h);
	if (n > 0)
		d->items = repalloc_huge(d->items, sizeof(int32) * n);
	return d;
}
