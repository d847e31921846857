/*
 * store/model_read.c
 *		A stored model's rows, read from mtdpp.models and mtdpp.items into a
 *		model in memory: its factors (squared where the bounds need them),
 *		its neighbour lists, checked as every model is (model_validate.c) and
 *		prepared for scoring.  The per-backend cache (cache.c) reads through
 *		it; the shared copies (shared_models.c) are built from what it read.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "model/kinds.h"
#include "model/model.h"
#include "store/store.h"

/*
 * A row of real[] factors into DST (RANK floats), squared if SQUARE.  A
 * detoasted copy is freed: it would otherwise stay in the cache's context.
 */
static void
fill_factors(Datum datum, float *dst, int rank, bool square, int item_id, const char *what)
{
	ArrayType  *arr = DatumGetArrayTypeP(datum);
	float4	   *src;
	float		least = square ? MTDPP_NEGLIGIBLE_ROOT : MTDPP_NEGLIGIBLE;
	int			flushed = 0;

	if (rank == 0 && ARR_NDIM(arr) == 0)
		return;					/* baselines have no factors */
	if (ARR_NDIM(arr) != 1 || ARR_HASNULL(arr) || ARR_ELEMTYPE(arr) != FLOAT4OID ||
		ARR_DIMS(arr)[0] != rank)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("%s of item %d are not %d non-NULL reals", what, item_id, rank),
				 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
	src = (float4 *) ARR_DATA_PTR(arr);
	for (int j = 0; j < rank; j++)
		if (!isfinite(src[j]))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("%s of item %d hold %g", what, item_id, src[j]),
					 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
	/* values too small to carry signal are zero (see MTDPP_NEGLIGIBLE) */
	for (int j = 0; j < rank; j++)
	{
		bool		off = fabsf(src[j]) < least;

		flushed += off && src[j] != 0.0f;
		dst[j] = off ? 0.0f : (square ? src[j] * src[j] : src[j]);
	}
	if (flushed > 0)
		elog(DEBUG2, "%s of item %d: %d of %d below %g, read as zero",
			 what, item_id, flushed, rank, least);
	if ((Pointer) arr != DatumGetPointer(datum))
		pfree(arr);
}

/*
 * The weights every item shares (a kind with weights), from
 * mtdpp.models.weights of model MODEL_ID.  Called with the cache context
 * current.
 */
static void
load_weights(MtdppModel *m, int model_id)
{
	ArrayType  *arr;
	bool		isnull;
	Datum		d;
	float4	   *src;
	int			n;
	MemoryContext cache = CurrentMemoryContext;

	if (SPI_execute_with_args("SELECT weights FROM mtdpp.models WHERE model_id OPERATOR(pg_catalog.=) $1",
							  1, (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(model_id)},
							  NULL, true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the weights of model %d", model_id);
	/* SPI leaves its own context current: back to the cache's */
	MemoryContextSwitchTo(cache);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("model %d of kind %s has no weights", model_id, mtdpp_kind_name(m->kind)),
				 errhint("The rows of mtdpp.models were changed by hand; train the model again.")));
	arr = DatumGetArrayTypeP(d);
	if (ARR_NDIM(arr) > 1 || ARR_HASNULL(arr) || ARR_ELEMTYPE(arr) != FLOAT4OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("weights of model %d are not an array of non-NULL reals", model_id),
				 errhint("The rows of mtdpp.models were changed by hand; train the model again.")));
	n = ARR_NDIM(arr) == 0 ? 0 : ARR_DIMS(arr)[0];
	src = (float4 *) ARR_DATA_PTR(arr);
	m->n_weights = n;
	m->weights = palloc(sizeof(double) * Max(n, 1));
	for (int k = 0; k < n; k++)
		m->weights[k] = src[k];
}

/*
 * A kind with neighbours: the lists of all its rows take TOTAL entries
 * (their lengths summed by the tables, under the snapshot the rows are
 * read with).  Called with the cache context current.
 */
static void
alloc_neighbors(MtdppModel *m, int64 total)
{
	m->nbr_index = mtdpp_alloc_huge(sizeof(int32) * Max(total, 1));
	m->nbr_weight = mtdpp_alloc_huge(sizeof(float4) * Max(total, 1));
	m->nbr_start = mtdpp_alloc_huge(sizeof(int64) * (m->n_items + 1));
	m->nbr_start[0] = 0;
}

/*
 * The rows of MODEL_ID the caller sees, and the entries of their neighbour
 * lists into *NEIGHBORS: read before anything is allocated, under the
 * snapshot the rows are then read with, so that a count the tables do not
 * hold (a row of mtdpp.models changed by hand) is refused, not allocated.
 */
static uint64
count_rows(int model_id, int64 *neighbors)
{
	bool		isnull;
	Datum		d;
	uint64		n;

	if (SPI_execute_with_args("SELECT pg_catalog.count(*), pg_catalog.sum(pg_catalog.cardinality(neighbors)) "
							  "FROM mtdpp.items WHERE model_id OPERATOR(pg_catalog.=) $1",
							  1, (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(model_id)},
							  NULL, true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not count the items of model %d", model_id);
	n = (uint64) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	*neighbors = isnull ? 0 : DatumGetInt64(d);
	SPI_freetuptable(SPI_tuptable);
	return n;
}

/*
 * The neighbour list of row I (columns 6 and 7 of TUP), its item ids as
 * they are stored: neighbors_to_indices makes them dense indices once
 * every item is read.
 */
static void
neighbors_row(MtdppModel *m, int i, HeapTuple tup, TupleDesc td, int64 capacity)
{
	bool		n1,
				n2;
	Datum		d1 = SPI_getbinval(tup, td, 6, &n1);
	Datum		d2 = SPI_getbinval(tup, td, 7, &n2);
	ArrayType  *ids,
			   *ws;
	int			len;
	int64		at = m->nbr_start[i];

	if (n1 || n2)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("item %d of an %s model has no neighbour list", m->item_ids[i],
						mtdpp_kind_name(m->kind)),
				 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
	ids = DatumGetArrayTypeP(d1);
	ws = DatumGetArrayTypeP(d2);
	if (ARR_NDIM(ids) > 1 || ARR_NDIM(ws) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("neighbour lists of item %d have %d and %d dimensions",
						m->item_ids[i], ARR_NDIM(ids), ARR_NDIM(ws)),
				 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
	len = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
	if (ARR_HASNULL(ids) || ARR_HASNULL(ws) || len != ArrayGetNItems(ARR_NDIM(ws), ARR_DIMS(ws)) ||
		at + len > capacity)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("neighbour lists of item %d do not match", m->item_ids[i]),
				 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
	memcpy(m->nbr_index + at, ARR_DATA_PTR(ids), sizeof(int32) * len);
	memcpy(m->nbr_weight + at, ARR_DATA_PTR(ws), sizeof(float4) * len);
	m->nbr_start[i + 1] = at + len;
	if ((Pointer) ids != DatumGetPointer(d1))
		pfree(ids);
	if ((Pointer) ws != DatumGetPointer(d2))
		pfree(ws);
}

/* a table from id to index where the ids span at most this many times the items */
#define ID_TABLE_SPAN	4

/*
 * The item ids of M's lists as dense indices, every item read: a list may
 * name a later batch's.  Where the model's ids are dense enough (as
 * item_keys.c's keys and most catalogs' ids are), through a table indexed
 * by id, one access a pair; else by binary search (mtdpp_model_index),
 * whose cache misses made most of a large model's read.
 */
static void
neighbors_to_indices(MtdppModel *m)
{
	int32	   *table = NULL;
	int32		first = m->n_items > 0 ? m->item_ids[0] : 0;
	int64		span = m->n_items > 0 ? (int64) m->item_ids[m->n_items - 1] - first + 1 : 0;

	if (span > 0 && span <= (int64) ID_TABLE_SPAN * m->n_items)
	{
		table = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int32) * span);
		memset(table, 0xff, sizeof(int32) * span);	/* -1: no item */
		for (int i = 0; i < m->n_items; i++)
			table[(int64) m->item_ids[i] - first] = i;
	}
	for (int i = 0; i < m->n_items; i++)
		for (int64 k = m->nbr_start[i]; k < m->nbr_start[i + 1]; k++)
		{
			int32		id = m->nbr_index[k];
			int64		at = (int64) id - first;
			int			idx = table == NULL ? mtdpp_model_index(m, id) :
				(at >= 0 && at < span ? table[at] : -1);

			if (idx < 0)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("neighbour %d of item %d is not an item of the model",
								id, m->item_ids[i])));
			m->nbr_index[k] = idx;
		}
	if (table != NULL)
		pfree(table);
}

/*
 * The text of KEY's value in the stored hyperparameters of model MODEL_ID
 * (ARG, an int *), or NULL where they do not hold the key; in the caller's
 * memory context.  Through SPI, connected.
 */
static const char *
stored_value_of(const char *key, void *arg)
{
	int			model_id = *(int *) arg;
	MemoryContext caller = CurrentMemoryContext;
	char	   *text = NULL;
	bool		ok;

	/* SPI returns in its own memory context: the caller's is restored */
	ok = SPI_execute_with_args("SELECT hyperparams OPERATOR(pg_catalog.->>) $2 "
							   "FROM mtdpp.models WHERE model_id OPERATOR(pg_catalog.=) $1",
							   2, (Oid[]) {INT4OID, TEXTOID},
							   (Datum[]) {Int32GetDatum(model_id), CStringGetTextDatum(key)},
							   NULL, true, 1) == SPI_OK_SELECT;
	MemoryContextSwitchTo(caller);
	if (!ok)
		elog(ERROR, "could not read the hyperparameters of model %d", model_id);
	if (SPI_processed == 1)
		text = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	return text;
}

/*
 * The fits side by side of model MODEL_ID, of kind KIND (MtdppModel.blocks):
 * what its stored hyperparameters give for the kind's blocks key, read as
 * a model value's are (mtdpp_model_blocks).  Through SPI, connected.
 */
static int
read_model_blocks(int model_id, const MtdppKindRoutine *kind)
{
	if (kind->blocks_key == NULL)
		return 1;
	return mtdpp_model_blocks(kind->kind, stored_value_of(kind->blocks_key, &model_id));
}

/* item I of model M from the row TUP of mtdpp.items; ROW: RANK floats of scratch */
static void
fill_item(MtdppModel *m, int i, HeapTuple tup, TupleDesc td, float *row)
{
	int			rank = m->rank;
	bool		isnull;

	m->item_ids[i] = DatumGetInt32(SPI_getbinval(tup, td, 1, &isnull));
	m->popularity[i] = DatumGetInt32(SPI_getbinval(tup, td, 2, &isnull));
	m->D[i] = DatumGetFloat4(SPI_getbinval(tup, td, 3, &isnull));
	if (!isfinite(m->D[i]))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("bias of item %d is %g", m->item_ids[i], m->D[i]),
				 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
	fill_factors(SPI_getbinval(tup, td, 4, &isnull),
				 m->Vf + (size_t) i * rank, rank, false, m->item_ids[i], "factors");
	if (mtdpp_kind(m->kind)->signed_task_factors)
	{
		/* read as they are, not squared (task factors of any sign) */
		fill_factors(SPI_getbinval(tup, td, 5, &isnull),
					 m->Rf + (size_t) i * rank, rank, false, m->item_ids[i], "task factors");
		return;
	}
	if (mtdpp_kind(m->kind)->task_factors)
		fill_factors(SPI_getbinval(tup, td, 5, &isnull),
					 row, rank, true, m->item_ids[i], "task factors");
	else
		for (int j = 0; j < rank; j++)
			row[j] = 1.0f;
	for (int j = 0; j < rank; j++)
		m->R2f[mtdpp_panel_cell(rank, i, j)] = row[j];
}

/*
 * Rows of mtdpp.items fetched at a time: reading a model holds its arrays
 * and one batch of its rows, not every row at once (a model of a million
 * items would otherwise need its size twice).
 */
#define READ_BATCH 4096

/*
 * Reads model MODEL_ID, named NAME, from the tables into memory context CONTEXT;
 * ROW_SECURITY if row-level security filters what the caller reads.
 */
MtdppModel *
mtdpp_read_model_rows(MemoryContext context, int model_id, const char *name, const char *kind, int rank,
		   int n_items, int n_baskets, double log_w, bool row_security)
{
	MtdppModel *m;
	MemoryContext old;
	uint64		n,
				read = 0;
	float	   *row;
	int64		neighbors = 0;
	Portal		portal;

	n = count_rows(model_id, &neighbors);
	/* a policy on mtdpp.items that hides some items of a model it shows */
	if (row_security && n < (uint64) n_items)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("row-level security hides " UINT64_FORMAT " of the %d items of model \"%s\" from role \"%s\"",
						(uint64) n_items - n, n_items, name, GetUserNameFromId(GetUserId(), false)),
				 errhint("A model answers only a role that may read all of its rows: "
						 "the policies on mtdpp.items must show every item of the models those on mtdpp.models show.")));
	if (n != (uint64) n_items)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("model %d has %d items but mtdpp.items holds " UINT64_FORMAT " of them",
						model_id, n_items, n),
				 errhint("The model tables were changed by hand; train the model again.")));
	if (!isfinite(log_w))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("model %d has log_w %g", model_id, log_w),
				 errhint("The rows of mtdpp.models were changed by hand; train the model again.")));
	/* the DPP kinds have factors (rank 1 or more), the baselines none */
	if (rank < 0 || rank > MTDPP_MAX_RANK ||
		mtdpp_kind(mtdpp_kind_from_name(kind))->factors != (rank > 0))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("model %d of kind %s has rank %d", model_id, kind, rank),
				 errhint("The rows of mtdpp.models were changed by hand; train the model again.")));
	old = MemoryContextSwitchTo(context);
	m = mtdpp_model_alloc_cached(mtdpp_kind_from_name(kind), n_items, rank);
	m->log_w = log_w;
	m->n_baskets = n_baskets;
	if (mtdpp_kind(m->kind)->neighbors)
		alloc_neighbors(m, neighbors);
	row = palloc(sizeof(float) * Max(rank, 1));
	portal = SPI_cursor_open_with_args(NULL,
									   "SELECT item_id, popularity, bias, factors, task_factors, "
									   "neighbors, neighbor_weights "
									   "FROM mtdpp.items WHERE model_id OPERATOR(pg_catalog.=) $1 ORDER BY item_id",
									   1, (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(model_id)},
									   NULL, true, CURSOR_OPT_NO_SCROLL);
	/* SPI leaves its own context current, after each call: the cache's again */
	MemoryContextSwitchTo(context);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, READ_BATCH);
		MemoryContextSwitchTo(context);
		if (SPI_processed == 0)
			break;
		/* rows past the count are only counted, for the check below */
		for (uint64 r = 0; r < SPI_processed; r++, read++)
			if (read < n)
			{
				fill_item(m, (int) read, SPI_tuptable->vals[r], SPI_tuptable->tupdesc, row);
				if (mtdpp_kind(m->kind)->neighbors)
					neighbors_row(m, (int) read, SPI_tuptable->vals[r], SPI_tuptable->tupdesc, neighbors);
			}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	pfree(row);
	/* the same snapshot as the count's: anything else is a bug */
	if (read != n)
		elog(ERROR, "model %d: counted " UINT64_FORMAT " items, read " UINT64_FORMAT, model_id, n, read);
	if (mtdpp_kind(m->kind)->neighbors)
		neighbors_to_indices(m);
	if (mtdpp_kind(m->kind)->weights)
		load_weights(m, model_id);
	m->blocks = read_model_blocks(model_id, mtdpp_kind(m->kind));
	mtdpp_model_restore(m, stored_value_of, &model_id);
	mtdpp_model_validate(m, MTDPP_FROM_TABLES);
	mtdpp_model_prepare(m);
	MemoryContextSwitchTo(old);
	return m;
}

/*
 * Connects to SPI to read the model tables; returns the GUC nest level
 * mtdpp_model_tables_done closes.  Inside a query that Citus runs on a
 * shard (a distributed batch of completions), reading them is a read of
 * reference tables, which have a copy on every node, yet Citus would refuse
 * it as a nested distributed query: allowed for these reads alone.
 */
int
mtdpp_model_tables_connect(void)
{
	int			nest = NewGUCNestLevel();

	if (GetConfigOption("citus.allow_nested_distributed_execution", true, false) != NULL)
		(void) set_config_option("citus.allow_nested_distributed_execution", "on", PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	return nest;
}

void
mtdpp_model_tables_done(int nest)
{
	SPI_finish();
	AtEOXact_GUC(true, nest);
}
