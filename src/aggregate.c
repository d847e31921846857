/*
 * aggregate.c
 *		The training aggregate mtdpp_fit: order lines in, a trained model out.
 *
 * The transition function only gathers order lines, 16 bytes each (order id,
 * item id, position), in one array that grows by doubling; large arrays are
 * remapped by the allocator rather than copied, so resident memory stays
 * near 16 bytes a line.  That is what lets PostgreSQL's parallel workers
 * (and engines built on partial aggregation) read the orders side by side:
 * a worker's serial function sorts its lines (order, item, position) and
 * sends them as a run, delta- and varint-encoded (a few bytes a line); the
 * leader's combine function keeps the runs as they come.
 *
 * The final function makes the result independent of the plan: it sorts the
 * lines, or merges the runs, drops repeated items of a basket (the first
 * position counts), orders each basket by position, maps item ids to dense
 * indices, and hands the baskets to the trainer.  Without workers, the
 * baskets' item indices are written over the lines' own memory; with them,
 * the runs merge straight into the baskets, so the leader never holds the
 * lines at 16 bytes each.  The hyperparameters come with the rows (the same
 * jsonb on each) and travel in the state.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "mtdpp.h"

typedef struct OrderLine
{
	int64		order_id;
	int32		item_id;
	int32		position;
} OrderLine;

StaticAssertDecl(sizeof(OrderLine) == 16, "an order line takes 16 bytes");

/* sorted order lines, encoded by encode_run */
typedef struct Run
{
	int64		n;				/* lines */
	int64		len;			/* bytes */
	int32		lo,				/* least and greatest item id */
				hi;
	const uint8 *data;
} Run;

typedef struct FitState
{
	int64		n;
	int64		cap;
	OrderLine  *lines;
	bool		sorted;			/* lines in (order, item, position) order */
	bool		borrowed;		/* runs point into a serialised state: read only */
	bool		consumed;		/* serialised, lines freed: must not be used again */
	Jsonb	   *params;			/* NULL until a row brings some */
	Run		   *runs;			/* sorted runs received from other processes */
	int			n_runs;
	int			max_runs;
} FitState;

/*
 * serialised state: this header, the params jsonb (padded to 8), then each
 * run: its RunHeader and its bytes (padded to 8)
 */
typedef struct FitStateHeader
{
	uint32		format;
	int32		params_len;
	int32		n_runs;
	int32		unused;
} FitStateHeader;

typedef struct RunHeader
{
	int64		n;
	int64		len;
	int32		lo;
	int32		hi;
} RunHeader;

PG_FUNCTION_INFO_V1(mtdpp_fit_transfn);
PG_FUNCTION_INFO_V1(mtdpp_fit_combinefn);
PG_FUNCTION_INFO_V1(mtdpp_fit_serialfn);
PG_FUNCTION_INFO_V1(mtdpp_fit_deserialfn);
PG_FUNCTION_INFO_V1(mtdpp_fit_finalfn);

static MemoryContext
aggregate_context(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext ctx;

	if (!AggCheckCallContext(fcinfo, &ctx))
		elog(ERROR, "%s called in non-aggregate context", fn);
	return ctx;
}

/*
 * The serial function frees a state's lines once copied (PostgreSQL
 * serialises a partial state once, at the end of its partial aggregation):
 * that halves a parallel participant's peak memory.  Should a state ever be
 * used after that, fail rather than train on missing lines.
 */
static void
state_check_live(const FitState *st)
{
	if (st->consumed)
		elog(ERROR, "mtdpp_fit state used after it was serialised");
}

static FitState *
state_new(MemoryContext ctx)
{
	FitState   *st = MemoryContextAllocZero(ctx, sizeof(FitState));

	st->sorted = true;			/* no line is out of order */
	return st;
}

/* Room for ADD more lines, checked against maintenance_work_mem. */
static void
state_reserve(MemoryContext ctx, FitState *st, int64 add)
{
	int64		need = st->n + add;
	Size		limit = (Size) maintenance_work_mem * 1024;
	int64		cap;

	Assert(!st->borrowed);
	if (need <= st->cap)
		return;
	if ((Size) need * sizeof(OrderLine) > limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("gathering " INT64_FORMAT " order lines needs %zu kB, more than maintenance_work_mem (%d kB)",
						need, (Size) need * sizeof(OrderLine) / 1024, maintenance_work_mem),
				 errhint("Raise maintenance_work_mem for this session (16 bytes per order line), or train on fewer orders.")));
	cap = Max(need, Max(st->cap * 2, 1024));

	/*
	 * Past 64k lines, straight to just over 32 MB: the C library maps arrays
	 * that large on their own, so growing them remaps pages, while smaller
	 * ones are copied and leave their old copies resident in its heap.
	 * (Pages of the array that are never written cost nothing.)
	 */
	if (cap > 65536)
		cap = Max(cap, (int64) (32 * 1024 * 1024) / (int64) sizeof(OrderLine) + 1024);
	cap = Min(cap, (int64) (limit / sizeof(OrderLine)));
	cap = Max(cap, need);
	if (st->lines == NULL)
		st->lines = MemoryContextAllocHuge(ctx, (Size) cap * sizeof(OrderLine));
	else
		st->lines = repalloc_huge(st->lines, (Size) cap * sizeof(OrderLine));
	st->cap = cap;
}

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

/*
 * Sorts specialised for order lines (the comparators inlined): sorting the
 * lines is most of the aggregate's own work.  Interruptible.
 */
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

/*
 * Sorts N lines by (order, item, position).  Tables are often stored order
 * by order, with the lines of an order together: then only each order's few
 * lines need sorting.
 */
static void
sort_order_lines(OrderLine *l, int64 n)
{
	int64		s = 0;

	for (int64 k = 1; k < n; k++)
		if (l[k].order_id < l[k - 1].order_id)
		{
			sort_lines(l, n);
			return;
		}
	for (int64 e = 1; e <= n; e++)
		if (e == n || l[e].order_id != l[s].order_id)
		{
			/* an order's few lines: insertion sort beats a call to qsort */
			if (e - s <= 16)
			{
				for (int64 i = s + 1; i < e; i++)
				{
					OrderLine	x = l[i];
					int64		j = i;

					while (j > s && cmp_order_item_pos(&l[j - 1], &x) > 0)
					{
						l[j] = l[j - 1];
						j--;
					}
					l[j] = x;
				}
			}
			else
				sort_lines(l + s, e - s);
			s = e;
		}
}

Datum
mtdpp_fit_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext ctx = aggregate_context(fcinfo, "mtdpp_fit_transfn");
	FitState   *st = PG_ARGISNULL(0) ? NULL : (FitState *) PG_GETARG_POINTER(0);
	int			nargs = PG_NARGS();

	if (st == NULL)
		st = state_new(ctx);
	state_check_live(st);

	if (nargs > 4 && !PG_ARGISNULL(4) && st->params == NULL)
	{
		Jsonb	   *j = PG_GETARG_JSONB_P(4);
		MtdppParams check;

		/* fail on the first row, not after reading the whole table */
		mtdpp_params_resolve(&check, j);
		st->params = MemoryContextAlloc(ctx, VARSIZE(j));
		memcpy(st->params, j, VARSIZE(j));
	}

	/* a line without order or item says nothing about a basket */
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_POINTER(st);

	state_reserve(ctx, st, 1);
	st->lines[st->n].order_id = PG_GETARG_INT64(1);
	st->lines[st->n].item_id = PG_GETARG_INT32(2);
	st->lines[st->n].position = (nargs > 3 && !PG_ARGISNULL(3)) ? PG_GETARG_INT32(3) : 0;
	st->n++;
	st->sorted = false;
	PG_RETURN_POINTER(st);
}

/*
 * Runs.  Each line is coded against the one before it in the run: the order
 * id's increase, then the item id (its increase within an order, the id
 * itself, zigzag-coded, in a new one), then the position (zigzag-coded),
 * each as a varint of 7-bit groups.  Lines of one order take 2 or 3 bytes.
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

static inline int
varint_size(uint64 v)
{
	int			n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint64
zigzag(int32 v)
{
	return (uint32) ((v << 1) ^ (v >> 31));
}

static inline int32
unzigzag(uint64 v)
{
	return (int32) ((uint32) (v >> 1) ^ -(uint32) (v & 1));
}

/* the three varints coding line L after line PREV (NULL: the first) */
static inline void
line_codes(const OrderLine *prev, const OrderLine *l, uint64 *c)
{
	uint64		d = (uint64) l->order_id - (uint64) (prev ? prev->order_id : 0);

	c[0] = d;
	c[1] = (prev && d == 0) ? (uint64) ((uint32) l->item_id - (uint32) prev->item_id)
		: zigzag(l->item_id);
	c[2] = zigzag(l->position);
}

/*
 * Encodes N sorted lines; returns the bytes, their number in *LEN and the
 * range of the item ids in *LO and *HI.
 */
static uint8 *
encode_run(const OrderLine *l, int64 n, int64 *len, int32 *lo, int32 *hi)
{
	int64		size = 0;
	uint8	   *out,
			   *p;
	uint64		c[3];

	*lo = PG_INT32_MAX;
	*hi = PG_INT32_MIN;
	for (int64 k = 0; k < n; k++)
	{
		line_codes(k > 0 ? &l[k - 1] : NULL, &l[k], c);
		size += varint_size(c[0]) + varint_size(c[1]) + varint_size(c[2]);
		*lo = Min(*lo, l[k].item_id);
		*hi = Max(*hi, l[k].item_id);
	}
	p = out = palloc_extended(Max(size, 1), MCXT_ALLOC_HUGE);
	for (int64 k = 0; k < n; k++)
	{
		line_codes(k > 0 ? &l[k - 1] : NULL, &l[k], c);
		p = put_varint(p, c[0]);
		p = put_varint(p, c[1]);
		p = put_varint(p, c[2]);
	}
	*len = size;
	return out;
}

/* reads a run back, line by line */
typedef struct RunReader
{
	const uint8 *p;
	const uint8 *end;
	int64		left;
	OrderLine	cur;			/* valid while more is true */
	bool		more;
} RunReader;

static inline uint64
get_varint(RunReader *r)
{
	uint64		v = 0;
	int			shift = 0;

	for (;;)
	{
		uint8		byte;

		if (r->p >= r->end || shift > 63)
			elog(ERROR, "mtdpp_fit state has a corrupt run of order lines");
		byte = *r->p++;
		v |= (uint64) (byte & 0x7f) << shift;
		if (byte < 0x80)
			return v;
		shift += 7;
	}
}

static inline void
reader_next(RunReader *r)
{
	uint64		d,
				item;

	if (r->left == 0)
	{
		r->more = false;
		return;
	}
	d = get_varint(r);
	item = get_varint(r);
	if (r->more && d == 0)
		r->cur.item_id = (int32) ((uint32) r->cur.item_id + (uint32) item);
	else
		r->cur.item_id = unzigzag(item);
	r->cur.order_id = (int64) ((uint64) (r->more ? r->cur.order_id : 0) + d);
	r->cur.position = unzigzag(get_varint(r));
	r->left--;
	r->more = true;
}

static void
reader_start(RunReader *r, const Run *run)
{
	r->p = run->data;
	r->end = run->data + run->len;
	r->left = run->n;
	r->more = false;
	reader_next(r);
}

static void
state_add_run(MemoryContext ctx, FitState *st, const uint8 *data, int64 n, int64 len,
			  int32 lo, int32 hi)
{
	if (st->n_runs == st->max_runs)
	{
		st->max_runs = Max(4, st->max_runs * 2);
		st->runs = st->runs ? repalloc(st->runs, sizeof(Run) * st->max_runs)
			: MemoryContextAlloc(ctx, sizeof(Run) * st->max_runs);
	}
	st->runs[st->n_runs++] = (Run) {n, len, lo, hi, data};
}

/*
 * The state's own lines, sorted and encoded as one more run (its bytes in
 * the current memory context), their array freed; returns whether there
 * were any.
 */
static bool
state_lines_to_run(MemoryContext ctx, FitState *st)
{
	uint8	   *run;
	int64		len;
	int32		lo,
				hi;

	if (st->n == 0)
		return false;
	if (!st->sorted)
		sort_order_lines(st->lines, st->n);
	run = encode_run(st->lines, st->n, &len, &lo, &hi);
	state_add_run(ctx, st, run, st->n, len, lo, hi);
	pfree(st->lines);
	st->lines = NULL;
	st->n = st->cap = 0;
	return true;
}

Datum
mtdpp_fit_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext ctx = aggregate_context(fcinfo, "mtdpp_fit_combinefn");
	FitState   *a = PG_ARGISNULL(0) ? NULL : (FitState *) PG_GETARG_POINTER(0);
	FitState   *b = PG_ARGISNULL(1) ? NULL : (FitState *) PG_GETARG_POINTER(1);

	if (b == NULL)
		PG_RETURN_POINTER(a);
	if (a == NULL)
		a = state_new(ctx);
	state_check_live(a);
	state_check_live(b);
	if (a->params == NULL && b->params != NULL)
	{
		a->params = MemoryContextAlloc(ctx, VARSIZE(b->params));
		memcpy(a->params, b->params, VARSIZE(b->params));
	}
	/* lines of a partial state of this process (partitionwise plans) */
	if (b->n > 0)
	{
		state_reserve(ctx, a, b->n);
		memcpy(a->lines + a->n, b->lines, (Size) b->n * sizeof(OrderLine));
		a->n += b->n;
		a->sorted = false;
	}
	/* runs from workers: kept as they are, in this context */
	for (int k = 0; k < b->n_runs; k++)
	{
		uint8	   *copy = MemoryContextAllocHuge(ctx, Max(b->runs[k].len, 1));

		memcpy(copy, b->runs[k].data, b->runs[k].len);
		state_add_run(ctx, a, copy, b->runs[k].n, b->runs[k].len, b->runs[k].lo, b->runs[k].hi);
	}
	PG_RETURN_POINTER(a);
}

/*
 * Each parallel worker sorts its own lines and sends them as one run (with
 * any runs it holds): the leader only merges.
 */
Datum
mtdpp_fit_serialfn(PG_FUNCTION_ARGS)
{
	MemoryContext ctx = aggregate_context(fcinfo, "mtdpp_fit_serialfn");
	FitState   *st = (FitState *) PG_GETARG_POINTER(0);
	FitStateHeader h;
	int			plen = st->params ? VARSIZE(st->params) : 0;
	Size		size;
	bytea	   *out;
	char	   *p;
	bool		own;

	state_check_live(st);
	own = state_lines_to_run(ctx, st);
	size = VARHDRSZ + sizeof(h) + TYPEALIGN(8, plen);
	for (int k = 0; k < st->n_runs; k++)
		size = add_size(size, sizeof(RunHeader) + TYPEALIGN(8, st->runs[k].len));

	out = palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	SET_VARSIZE(out, size);
	h.format = MTDPP_FORMAT_VERSION;
	h.params_len = plen;
	h.n_runs = st->n_runs;
	h.unused = 0;
	p = VARDATA(out);
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	if (plen > 0)
		memcpy(p, st->params, plen);
	p += TYPEALIGN(8, plen);
	for (int k = 0; k < st->n_runs; k++)
	{
		RunHeader	rh = {st->runs[k].n, st->runs[k].len, st->runs[k].lo, st->runs[k].hi};

		memcpy(p, &rh, sizeof(rh));
		p += sizeof(rh);
		memcpy(p, st->runs[k].data, rh.len);
		p += TYPEALIGN(8, rh.len);
	}

	/* PostgreSQL serialises a partial state once, at the end: free it */
	if (own)
		pfree((void *) st->runs[--st->n_runs].data);
	st->consumed = true;
	PG_RETURN_BYTEA_P(out);
}

/*
 * The deserialised state lives in the current (per-input-tuple) memory
 * context and is only read by the combine function that follows: its runs
 * stay where they are in the serialised bytes.
 */
Datum
mtdpp_fit_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *in;
	const char *p,
			   *end;
	FitStateHeader h;
	FitState   *st;

	aggregate_context(fcinfo, "mtdpp_fit_deserialfn");
	in = PG_GETARG_BYTEA_PP(0);
	p = VARDATA_ANY(in);
	end = p + VARSIZE_ANY_EXHDR(in);
	st = palloc0(sizeof(FitState));
	st->sorted = true;
	st->borrowed = true;
	if (end - p < (ptrdiff_t) sizeof(h))
		elog(ERROR, "mtdpp_fit state is truncated");
	memcpy(&h, p, sizeof(h));
	p += sizeof(h);
	if (h.format != MTDPP_FORMAT_VERSION || h.params_len < 0 || h.n_runs < 0 ||
		end - p < (ptrdiff_t) TYPEALIGN(8, h.params_len))
		elog(ERROR, "mtdpp_fit state has format %u and %zu bytes, which do not match",
			 h.format, (Size) VARSIZE_ANY_EXHDR(in));
	if (h.params_len > 0)
	{
		st->params = palloc(h.params_len);
		memcpy(st->params, p, h.params_len);
	}
	p += TYPEALIGN(8, h.params_len);
	st->runs = palloc(sizeof(Run) * Max(h.n_runs, 1));
	st->max_runs = Max(h.n_runs, 1);
	for (int k = 0; k < h.n_runs; k++)
	{
		RunHeader	rh;

		if (end - p < (ptrdiff_t) sizeof(rh))
			elog(ERROR, "mtdpp_fit state is truncated");
		memcpy(&rh, p, sizeof(rh));
		p += sizeof(rh);
		if (rh.n < 0 || rh.len < 0 || end - p < (ptrdiff_t) TYPEALIGN(8, rh.len))
			elog(ERROR, "mtdpp_fit state is truncated");
		st->runs[st->n_runs++] = (Run) {rh.n, rh.len, rh.lo, rh.hi, (const uint8 *) p};
		p += TYPEALIGN(8, rh.len);
	}
	PG_RETURN_POINTER(st);
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
 * Sorts the gathered lines into baskets over dense item indices.  The
 * baskets' item indices (4 bytes a line) are written over the lines (16
 * bytes a line) as they are read, the first of each basket flagged by its
 * sign bit; the basket offsets (8 bytes a basket) are read off the flags once
 * the lines' memory has shrunk to the items.  So the peak is the lines
 * themselves and the distinct items, nothing per basket or line beyond.
 */
#define BASKET_FIRST ((int32) 0x80000000)

static MtdppBaskets *
build_baskets(FitState *st)
{
	MtdppBaskets *d = palloc0(sizeof(MtdppBaskets));
	OrderLine  *l = st->lines;
	int32	   *items = (int32 *) st->lines;
	int64		n = 0;
	int64		nb = 0;
	int32		lo = PG_INT32_MAX,
				hi = PG_INT32_MIN;
	ItemSet		set;

	if (!st->sorted)
		sort_order_lines(l, st->n);
	CHECK_FOR_INTERRUPTS();

	/* repeated items of a basket: the first position counts */
	for (int64 k = 0; k < st->n; k++)
	{
		if (n > 0 && l[n - 1].order_id == l[k].order_id && l[n - 1].item_id == l[k].item_id)
			continue;
		l[n++] = l[k];
	}

	/* the number of baskets, the items */
	for (int64 k = 0; k < n; k++)
	{
		if (k == 0 || l[k].order_id != l[k - 1].order_id)
			nb++;
		lo = Min(lo, l[k].item_id);
		hi = Max(hi, l[k].item_id);
	}
	check_baskets(nb);
	itemset_init(&set, lo, hi, n);
	for (int64 k = 0; k < n; k++)
		itemset_add(&set, l[k].item_id);
	itemset_finish(&set, d);

	/*
	 * Baskets in position order.  items[k] overwrites bytes 4k..4k+3, inside
	 * line k / 4, which was read already; the current basket's lines, from
	 * line s on, are untouched.
	 */
	d->n_baskets = (int) nb;
	d->n_lines = n;
	nb = 0;
	for (int64 s = 0; s < n;)
	{
		int64		e = s + 1;

		while (e < n && l[e].order_id == l[s].order_id)
			e++;
		order_basket(l + s, e - s);
		nb++;
		for (int64 k = s; k < e; k++)
		{
			int32		idx = itemset_index(&set, l[k].item_id);

			items[k] = k == s ? idx | BASKET_FIRST : idx;
			d->popularity[idx]++;
		}
		s = e;
		if ((nb & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	itemset_free(&set);

	/* the lines' memory now holds the baskets' items: shrink, then offsets */
	d->items = n > 0 ? repalloc_huge(items, sizeof(int32) * n) : items;
	st->lines = NULL;
	st->n = st->cap = 0;
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

/*
 * The same from sorted runs (a parallel plan's), merged straight into the
 * baskets in one pass.
 * The leader holds the encoded runs, the baskets' items (4 bytes a line)
 * and offsets, never the lines themselves.
 */
static MtdppBaskets *
build_baskets_from_runs(FitState *st)
{
	MtdppBaskets *d = palloc0(sizeof(MtdppBaskets));
	int			nr = st->n_runs;
	RunReader  *rd = palloc(sizeof(RunReader) * nr);
	int64		total = 0,
				n = 0,
				nb = 0,
				cap_b = 1024;
	int32		lo = PG_INT32_MAX,
				hi = PG_INT32_MIN;
	ItemSet		set;
	OrderLine  *bl;				/* the current basket's lines */
	int64		bl_n = 0,
				bl_cap = 64;
	int64	   *start;

	/* the range of the item ids, as each run's sender measured it */
	for (int r = 0; r < nr; r++)
	{
		total += st->runs[r].n;
		lo = Min(lo, st->runs[r].lo);
		hi = Max(hi, st->runs[r].hi);
	}
	itemset_init(&set, lo, hi, total);

	/*
	 * The merge: repeated items of a basket dropped (the first position
	 * counts), the item ids written as they are, then made dense indices
	 * once every distinct item is known.
	 */
	d->items = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int32) * Max(total, 1));
	start = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64) * cap_b);
	bl = palloc(sizeof(OrderLine) * bl_cap);
	for (int r = 0; r < nr; r++)
		reader_start(&rd[r], &st->runs[r]);
	for (;;)
	{
		int			best = -1;
		OrderLine	l;

		for (int r = 0; r < nr; r++)
			if (rd[r].more && (best < 0 || cmp_order_item_pos(&rd[r].cur, &rd[best].cur) < 0))
				best = r;
		if (best >= 0)
		{
			l = rd[best].cur;
			reader_next(&rd[best]);
			if (bl_n > 0 && l.order_id == bl[bl_n - 1].order_id)
			{
				if (l.item_id != bl[bl_n - 1].item_id)
				{
					if (bl_n == bl_cap)
					{
						bl_cap *= 2;
						bl = repalloc_huge(bl, sizeof(OrderLine) * bl_cap);
					}
					bl[bl_n++] = l;
				}
				continue;
			}
		}
		/* a new order (or the end): the basket so far goes out */
		if (bl_n > 0)
		{
			order_basket(bl, bl_n);
			if (nb + 1 >= cap_b)
			{
				cap_b *= 2;
				start = repalloc_huge(start, sizeof(int64) * cap_b);
			}
			start[nb++] = n;
			for (int64 k = 0; k < bl_n; k++)
			{
				d->items[n++] = bl[k].item_id;
				itemset_add(&set, bl[k].item_id);
			}
			if ((nb & 0xffff) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		if (best < 0)
			break;
		bl[0] = l;
		bl_n = 1;
	}
	check_baskets(nb);
	itemset_finish(&set, d);
	for (int64 k = 0; k < n; k++)
	{
		int32		idx = itemset_index(&set, d->items[k]);

		d->items[k] = idx;
		d->popularity[idx]++;
	}
	itemset_free(&set);
	pfree(bl);
	pfree(rd);
	start[nb] = n;
	d->start = start;
	d->n_baskets = (int) nb;
	d->n_lines = n;
	if (n > 0)
		d->items = repalloc_huge(d->items, sizeof(int32) * n);
	return d;
}

Datum
mtdpp_fit_finalfn(PG_FUNCTION_ARGS)
{
	FitState   *st = PG_ARGISNULL(0) ? NULL : (FitState *) PG_GETARG_POINTER(0);
	MtdppParams p;
	MtdppBaskets *data;
	MtdppModel *m;

	aggregate_context(fcinfo, "mtdpp_fit_finalfn");
	if (st != NULL)
		state_check_live(st);
	if (st == NULL || (st->n == 0 && st->n_runs == 0))
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("mtdpp_fit received no order lines"),
				 errhint("The source is empty, or every row has a NULL order id or item id.")));

	mtdpp_params_resolve(&p, st->params);
	if (st->n_runs == 0)
		data = build_baskets(st);
	else
	{
		/* lines of this process too (mixed plans): one more run */
		state_lines_to_run(CurrentMemoryContext, st);
		data = build_baskets_from_runs(st);
		for (int k = 0; k < st->n_runs; k++)
			pfree((void *) st->runs[k].data);
		st->n_runs = 0;
	}

	m = mtdpp_train_model(data, &p);
	PG_RETURN_BYTEA_P(mtdpp_model_serialize(m));
}
