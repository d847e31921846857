/*
 * aggregate.c
 *		The training aggregate mtdpp_fit: order lines in, a trained model out.
 *
 * The transition function only gathers order lines, 16 bytes each (order id,
 * item id, position), in one array that grows by doubling; large arrays are
 * remapped by the allocator rather than copied, so resident memory stays
 * near 16 bytes a line.  Partial states combine by concatenation and
 * serialise as a flat copy, which is what lets PostgreSQL's parallel workers
 * (and engines built on partial aggregation) read the orders side by side.
 *
 * The final function makes the result independent of the plan: it sorts the
 * lines (order, item, position), drops repeated items of a basket (the
 * first position counts), orders each basket by position, maps item ids to
 * dense indices, and hands the baskets to the trainer.  In a parallel plan
 * each worker's serial function sorts its own lines and the leader merges
 * sorted runs, so the sort is parallel too.  The hyperparameters
 * come with the rows (the same jsonb on each) and travel in the state.
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

typedef struct FitState
{
	int64		n;
	int64		cap;
	OrderLine  *lines;
	bool		sorted;			/* lines in (order, item, position) order */
	bool		borrowed;		/* lines point into a serialised state: read only */
	bool		consumed;		/* serialised, lines freed: must not be used again */
	Jsonb	   *params;			/* NULL until a row brings some */
} FitState;

/* serialised state: this header, the params jsonb (padded to 8), the lines */
typedef struct FitStateHeader
{
	uint32		format;
	int32		params_len;
	int64		n;
	int32		sorted;
	int32		unused;
} FitStateHeader;

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
	if (b->n > 0)
	{
		int64		na = a->n;

		state_reserve(ctx, a, b->n);
		if (a->sorted && b->sorted)
		{
			/* both sorted (by the workers' serial functions): merge from the back */
			int64		i = na - 1,
						j = b->n - 1,
						k = na + b->n - 1;

			while (j >= 0)
			{
				if (i >= 0 && cmp_order_item_pos(&a->lines[i], &b->lines[j]) > 0)
					a->lines[k--] = a->lines[i--];
				else
					a->lines[k--] = b->lines[j--];
			}
		}
		else
		{
			memcpy(a->lines + na, b->lines, (Size) b->n * sizeof(OrderLine));
			a->sorted = false;
		}
		a->n = na + b->n;
	}
	PG_RETURN_POINTER(a);
}

Datum
mtdpp_fit_serialfn(PG_FUNCTION_ARGS)
{
	FitState   *st = (FitState *) PG_GETARG_POINTER(0);
	FitStateHeader h;
	int			plen = st->params ? VARSIZE(st->params) : 0;
	int			padded = TYPEALIGN(8, plen);
	Size		size = add_size(VARHDRSZ + sizeof(h) + padded,
								mul_size(st->n, sizeof(OrderLine)));
	bytea	   *out;
	char	   *p;

	aggregate_context(fcinfo, "mtdpp_fit_serialfn");
	state_check_live(st);

	/* each parallel worker sorts its own lines: the leader only merges */
	if (!st->sorted)
	{
		sort_order_lines(st->lines, st->n);
		st->sorted = true;
	}
	out = palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	SET_VARSIZE(out, size);
	h.format = MTDPP_FORMAT_VERSION;
	h.params_len = plen;
	h.n = st->n;
	h.sorted = st->sorted;
	p = VARDATA(out);
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	if (plen > 0)
		memcpy(p, st->params, plen);
	p += padded;
	if (st->n > 0)
		memcpy(p, st->lines, (Size) st->n * sizeof(OrderLine));
	if (st->lines != NULL)
		pfree(st->lines);
	st->lines = NULL;
	st->n = st->cap = 0;
	st->consumed = true;
	PG_RETURN_BYTEA_P(out);
}

/*
 * The deserialised state lives in the current (per-input-tuple) memory
 * context and is only read by the combine function that follows, so its
 * lines stay where they are in the serialised bytes when aligned: the leader
 * of a parallel plan then holds each worker's lines once, not twice.
 */
Datum
mtdpp_fit_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *in;
	const char *p;
	Size		len;
	FitStateHeader h;
	FitState   *st;

	aggregate_context(fcinfo, "mtdpp_fit_deserialfn");
	in = PG_GETARG_BYTEA_PP(0);
	p = VARDATA_ANY(in);
	len = VARSIZE_ANY_EXHDR(in);
	st = palloc0(sizeof(FitState));
	if (len < sizeof(h))
		elog(ERROR, "mtdpp_fit state is truncated");
	memcpy(&h, p, sizeof(h));
	if (h.format != MTDPP_FORMAT_VERSION ||
		len != sizeof(h) + TYPEALIGN(8, h.params_len) + (Size) h.n * sizeof(OrderLine))
		elog(ERROR, "mtdpp_fit state has format %u and %zu bytes, which do not match",
			 h.format, len);
	p += sizeof(h);
	if (h.params_len > 0)
	{
		st->params = palloc(h.params_len);
		memcpy(st->params, p, h.params_len);
	}
	p += TYPEALIGN(8, h.params_len);
	if (h.n > 0)
	{
		if ((uintptr_t) p % MAXIMUM_ALIGNOF == 0)
			st->lines = (OrderLine *) p;
		else
		{
			st->lines = palloc_extended((Size) h.n * sizeof(OrderLine), MCXT_ALLOC_HUGE);
			memcpy(st->lines, p, (Size) h.n * sizeof(OrderLine));
		}
		st->n = st->cap = h.n;
	}
	st->borrowed = true;
	st->sorted = h.sorted;
	PG_RETURN_POINTER(st);
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
	int			ni = 0;
	HASHCTL		hctl;
	HTAB	   *distinct;
	HASH_SEQ_STATUS seq;
	int32	   *key;
	int32		lo = PG_INT32_MAX,
				hi = PG_INT32_MIN;
	int64		range;
	int32	   *dense = NULL;

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

	/* the number of baskets and the range of item ids */
	for (int64 k = 0; k < n; k++)
	{
		if (k == 0 || l[k].order_id != l[k - 1].order_id)
			nb++;
		lo = Min(lo, l[k].item_id);
		hi = Max(hi, l[k].item_id);
	}
	if (nb > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many orders: " INT64_FORMAT ", at most %d", nb, PG_INT32_MAX)));

	/*
	 * Distinct items, ascending, and each id's dense index: through a table
	 * over the id range when ids are compact (4 MB, or a quarter byte a line),
	 * else a hash table and a binary search.
	 */
	range = n > 0 ? (int64) hi - lo + 1 : 0;
	if (n > 0 && range <= Max((int64) 1 << 20, n / 16))
	{
		dense = mtdpp_alloc_huge(sizeof(int32) * range);
		for (int64 k = 0; k < n; k++)
			dense[l[k].item_id - lo] = 1;
		for (int64 v = 0; v < range; v++)
			if (dense[v])
				ni++;
		d->item_ids = palloc(sizeof(int32) * Max(ni, 1));
		ni = 0;
		for (int64 v = 0; v < range; v++)
			if (dense[v])
			{
				d->item_ids[ni] = (int32) (lo + v);
				dense[v] = ni++;
			}
	}
	else
	{
		memset(&hctl, 0, sizeof(hctl));
		hctl.keysize = sizeof(int32);
		hctl.entrysize = sizeof(int32);
		hctl.hcxt = CurrentMemoryContext;
		distinct = hash_create("mtdpp distinct items", 1024, &hctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		for (int64 k = 0; k < n; k++)
			(void) hash_search(distinct, &l[k].item_id, HASH_ENTER, NULL);
		d->item_ids = palloc(sizeof(int32) * Max(hash_get_num_entries(distinct), 1));
		hash_seq_init(&seq, distinct);
		while ((key = hash_seq_search(&seq)) != NULL)
			d->item_ids[ni++] = *key;
		hash_destroy(distinct);
		pg_qsort(d->item_ids, ni, sizeof(int32), mtdpp_cmp_int32);
	}
	d->n_items = ni;
	d->popularity = palloc0(sizeof(int32) * Max(ni, 1));

	/*
	 * Baskets in position order.  items[k] overwrites bytes 4k..4k+3, inside
	 * line k / 4, which was read already; the current basket's lines, from
	 * line s on, are untouched.
	 */
	d->n_baskets = (int) nb;
	d->n_lines = n;
	for (int64 s = 0; s < n;)
	{
		int64		e = s + 1;

		while (e < n && l[e].order_id == l[s].order_id)
			e++;
		/* by position (lines come by item: without positions, nothing to do) */
		for (int64 k = s + 1; k < e; k++)
			if (l[k].position != l[s].position)
			{
				sort_basket(l + s, e - s);
				break;
			}
		nb++;
		for (int64 k = s; k < e; k++)
		{
			int32		id = l[k].item_id;
			int32		idx;

			if (dense)
				idx = dense[id - lo];
			else
				idx = (int32) ((int32 *) bsearch(&id, d->item_ids, ni, sizeof(int32),
												 mtdpp_cmp_int32) - d->item_ids);

			items[k] = k == s ? idx | BASKET_FIRST : idx;
			d->popularity[idx]++;
		}
		s = e;
		if ((nb & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
	}

	if (dense)
		pfree(dense);

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

Datum
mtdpp_fit_finalfn(PG_FUNCTION_ARGS)
{
	FitState   *st = PG_ARGISNULL(0) ? NULL : (FitState *) PG_GETARG_POINTER(0);
	MtdppParams p;
	MtdppBaskets *data;
	MtdppModel *m;

	aggregate_context(fcinfo, "mtdpp_fit_finalfn");
	if (st == NULL || st->n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("mtdpp_fit received no order lines"),
				 errhint("The source is empty, or every row has a NULL order id or item id.")));

	mtdpp_params_resolve(&p, st->params);
	data = build_baskets(st);

	m = mtdpp_train_model(data, &p);
	PG_RETURN_BYTEA_P(mtdpp_model_serialize(m));
}
