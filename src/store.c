/*
 * store.c
 *		The model tables of schema mtdpp, and the per-backend model cache.
 *
 * A trained model is one row of mtdpp.models and one row per item of
 * mtdpp.items, ordinary tables that analysts read and join, that pg_dump
 * keeps and that a standby replicates.  Many versions of a name can coexist;
 * one is active per name, and the most recently activated active model is
 * the default one, answering when a query names no model.
 *
 * Query time reads a model from the tables once per backend and keeps it in
 * a cache (its own memory context).  Statement triggers on both tables
 * register a relcache invalidation of mtdpp.models, which PostgreSQL sends
 * to every backend at commit (and replays locally at the next command, or on
 * abort); the callback below then marks the cache stale, and the next lookup
 * rebuilds it.  So a retrained, re-activated or dropped model answers from
 * the very next statement in every session, and no statement pays a catalog
 * round trip while nothing changes.
 *
 * mtdpp_train is here too: it runs the mtdpp_fit aggregate over the user's
 * table through SPI (a plan that may be parallel) and stores the result.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

#include "mtdpp.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(mtdpp_models_changed);
PG_FUNCTION_INFO_V1(mtdpp_save);
PG_FUNCTION_INFO_V1(mtdpp_train);
PG_FUNCTION_INFO_V1(mtdpp_activate);
PG_FUNCTION_INFO_V1(mtdpp_drop);
PG_FUNCTION_INFO_V1(mtdpp_rename);

/* One cached model; name NULL is the default model. */
typedef struct CachedModel
{
	struct CachedModel *next;
	char	   *name;
	int			model_id;
	MtdppModel *model;
} CachedModel;

static MemoryContext cache_context = NULL;
static CachedModel *cache_head = NULL;
static bool cache_stale = false;
static Oid	models_relid = InvalidOid;

void		_PG_init(void);

static void
relcache_callback(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == models_relid)
		cache_stale = true;
}

void
_PG_init(void)
{
	mtdpp_blas_init();
	CacheRegisterRelcacheCallback(relcache_callback, (Datum) 0);
}

static Oid
lookup_models_relid(void)
{
	Oid			nsp = get_namespace_oid("mtdpp", true);
	Oid			relid = OidIsValid(nsp) ? get_relname_relid("models", nsp) : InvalidOid;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table mtdpp.models does not exist"),
				 errhint("Run CREATE EXTENSION mtdpp in this database.")));
	return relid;
}

/* Trigger on the model tables: every backend drops its cache. */
Datum
mtdpp_models_changed(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "mtdpp_models_changed must be called as a trigger");
	CacheInvalidateRelcacheByRelid(lookup_models_relid());
	return PointerGetDatum(NULL);
}

static void
check_name(const char *what, text *name)
{
	if (VARSIZE_ANY_EXHDR(name) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what),
				 errhint("Name models with a short identifier such as 'shop'.")));
	if (VARSIZE_ANY_EXHDR(name) > 200)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("%s is %d bytes long, at most 200 are allowed",
						what, (int) VARSIZE_ANY_EXHDR(name))));
}

static text *
required_text(FunctionCallInfo fcinfo, int arg, const char *what)
{
	if (PG_ARGISNULL(arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what)));
	return PG_GETARG_TEXT_PP(arg);
}

static void
spi_connect(void)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

static void
unknown_model(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("model \"%s\" does not exist", name),
			 errhint("SELECT name FROM mtdpp_models lists the models; mtdpp_train creates one.")));
}

/* ---------------------------------------------------------------------
 * Writing models
 * --------------------------------------------------------------------- */

static Datum
float8_array(const double *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = Float8GetDatum(v[i]);
	return PointerGetDatum(construct_array(d, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static Datum
float4_array(const double *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = Float4GetDatum((float4) v[i]);
	return PointerGetDatum(construct_array(d, n, FLOAT4OID, 4, true, TYPALIGN_INT));
}

/*
 * Stores M as the next version of NAME; returns its model_id.  Runs inside
 * the caller's transaction, so a failure or cancel leaves nothing behind.
 */
int
mtdpp_store_model(const char *name, MtdppModel *m, bool activate, const char *source)
{
	Oid			types[15] = {TEXTOID, TEXTOID, BOOLOID, INT4OID, INT4OID, INT4OID, INT8OID,
		FLOAT8OID, JSONBOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8OID, INT4OID, FLOAT8OID, TEXTOID};
	Datum		values[15];
	char		nulls[16];
	int			model_id;
	bool		isnull;
	SPIPlanPtr	plan;
	Oid			item_types[8] = {INT4OID, INT4OID, INT4OID, FLOAT4OID, FLOAT4ARRAYOID, FLOAT4ARRAYOID,
	INT4ARRAYOID, FLOAT4ARRAYOID};
	bool		multitask = (m->kind == MTDPP_MULTITASK || m->kind == MTDPP_MULTITASK_NOBIAS);
	bool		knn = (m->kind == MTDPP_ITEMKNN);

	spi_connect();

	/* one writer per name at a time, so versions are numbered in order */
	if (SPI_execute_with_args("SELECT pg_advisory_xact_lock(hashtext('mtdpp.models'), hashtext($1))",
							  1, (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
							  NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock model name \"%s\"", name);
	if (activate &&
		SPI_execute_with_args("UPDATE mtdpp.models SET active = false WHERE name = $1 AND active",
							  1, (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not deactivate model \"%s\"", name);

	memset(nulls, ' ', sizeof(nulls));
	nulls[15] = '\0';
	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(mtdpp_kind_name(m->kind));
	values[2] = BoolGetDatum(activate);
	values[3] = Int32GetDatum(m->rank);
	values[4] = Int32GetDatum(m->n_items);
	values[5] = Int32GetDatum(m->n_baskets);
	values[6] = Int64GetDatum(m->n_examples);
	values[7] = Float8GetDatum(m->log_w);
	values[8] = DirectFunctionCall1(jsonb_in, CStringGetDatum(m->hyperparams ? m->hyperparams : "{}"));
	values[9] = float8_array(m->loss_history, m->epochs_run);
	values[10] = float8_array(m->val_history, m->epochs_run);
	values[11] = Float8GetDatum(m->final_loss);
	values[12] = Int32GetDatum(m->best_epoch);
	values[13] = Float8GetDatum(m->seconds);
	values[14] = source ? CStringGetTextDatum(source) : (Datum) 0;
	if (m->epochs_run == 0)
		nulls[11] = nulls[12] = 'n';	/* nothing was fitted by SGD */
	if (source == NULL)
		nulls[14] = 'n';
	if (SPI_execute_with_args("INSERT INTO mtdpp.models (name, version, kind, active, rank, n_items, "
							  "  n_baskets, n_examples, log_w, hyperparams, loss_history, val_mpr_history, "
							  "  final_loss, best_epoch, train_seconds, source, activated_at) "
							  "SELECT $1, coalesce(max(version), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9, "
							  "  $10, $11, $12, $13, $14, $15, CASE WHEN $3 THEN clock_timestamp() END "
							  "FROM mtdpp.models WHERE name = $1 RETURNING model_id",
							  15, types, values, nulls, false, 1) != SPI_OK_INSERT_RETURNING ||
		SPI_processed != 1)
		elog(ERROR, "could not insert model \"%s\"", name);
	model_id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	plan = SPI_prepare("INSERT INTO mtdpp.items (model_id, item_id, popularity, bias, factors, "
					   "task_factors, neighbors, neighbor_weights) "
					   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", 8, item_types);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	for (int i = 0; i < m->n_items; i++)
	{
		MemoryContext row = AllocSetContextCreate(CurrentMemoryContext, "mtdpp item row",
												  ALLOCSET_SMALL_SIZES);
		MemoryContext old = MemoryContextSwitchTo(row);
		Datum		iv[8];
		char		in[8] = {' ', ' ', ' ', ' ', ' ', ' ', knn ? ' ' : 'n', knn ? ' ' : 'n'};

		CHECK_FOR_INTERRUPTS();
		iv[0] = Int32GetDatum(model_id);
		iv[1] = Int32GetDatum(m->item_ids[i]);
		iv[2] = Int32GetDatum(m->popularity[i]);
		iv[3] = Float4GetDatum((float4) m->D[i]);
		iv[4] = float4_array(m->V + (size_t) i * m->rank, m->rank);
		/* single-kernel kinds have no task factors (R = 1) */
		iv[5] = float4_array(m->R + (size_t) i * m->rank, multitask ? m->rank : 0);
		if (knn)
		{
			int64		s = m->nbr_start[i],
						e = m->nbr_start[i + 1];
			Datum	   *ids = palloc(sizeof(Datum) * Max(e - s, 1));
			Datum	   *ws = palloc(sizeof(Datum) * Max(e - s, 1));

			for (int64 k = s; k < e; k++)
			{
				ids[k - s] = Int32GetDatum(m->item_ids[m->nbr_index[k]]);
				ws[k - s] = Float4GetDatum(m->nbr_weight[k]);
			}
			iv[6] = PointerGetDatum(construct_array(ids, e - s, INT4OID, 4, true, TYPALIGN_INT));
			iv[7] = PointerGetDatum(construct_array(ws, e - s, FLOAT4OID, 4, true, TYPALIGN_INT));
		}
		if (SPI_execute_plan(plan, iv, in, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not insert item %d of model \"%s\"", m->item_ids[i], name);
		MemoryContextSwitchTo(old);
		MemoryContextDelete(row);
	}
	SPI_finish();
	return model_id;
}

void
mtdpp_store_metrics(int model_id, const char *json)
{
	spi_connect();
	if (SPI_execute_with_args("UPDATE mtdpp.models SET metrics = metrics || $2 WHERE model_id = $1",
							  2, (Oid[]) {INT4OID, JSONBOID},
							  (Datum[]) {Int32GetDatum(model_id),
							  DirectFunctionCall1(jsonb_in, CStringGetDatum(json))},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not store the metrics of model %d", model_id);
	SPI_finish();
}

Datum
mtdpp_save(PG_FUNCTION_ARGS)
{
	text	   *name = required_text(fcinfo, 0, "model name");
	bytea	   *blob;
	MtdppModel *m;
	bool		activate = PG_ARGISNULL(2) ? true : PG_GETARG_BOOL(2);
	char	   *source = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));

	check_name("model name", name);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model must not be NULL"),
				 errhint("Pass the value returned by the mtdpp_fit aggregate.")));
	blob = PG_GETARG_BYTEA_PP(1);
	m = mtdpp_model_deserialize(blob);
	PG_RETURN_INT32(mtdpp_store_model(text_to_cstring(name), m, activate, source));
}

/* ---------------------------------------------------------------------
 * Reading models: the cache
 * --------------------------------------------------------------------- */

static void
cache_reset(void)
{
	if (cache_context != NULL)
		MemoryContextReset(cache_context);
	else
		cache_context = AllocSetContextCreate(TopMemoryContext, "mtdpp model cache",
											  ALLOCSET_DEFAULT_SIZES);
	cache_head = NULL;
	cache_stale = false;
}

/* A row of real[] factors into DST (RANK floats), squared if SQUARE. */
static void
fill_factors(ArrayType *arr, float *dst, int rank, bool square, int item_id, const char *what)
{
	float4	   *src;

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
	if (square)
		for (int j = 0; j < rank; j++)
			dst[j] = src[j] * src[j];
	else
		memcpy(dst, src, sizeof(float) * rank);
}

/*
 * itemknn: the neighbour lists of the rows just read (columns 6 and 7), as
 * dense indices.  Called with the cache context current.
 */
static void
load_neighbors(MtdppModel *m)
{
	int64		total = 0;

	for (uint64 pass = 0; pass < 2; pass++)
	{
		if (pass == 1)
		{
			m->nbr_index = mtdpp_alloc_huge(sizeof(int32) * Max(total, 1));
			m->nbr_weight = mtdpp_alloc_huge(sizeof(float4) * Max(total, 1));
			m->nbr_start = mtdpp_alloc_huge(sizeof(int64) * (m->n_items + 1));
			total = 0;
		}
		for (int i = 0; i < m->n_items; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			TupleDesc	td = SPI_tuptable->tupdesc;
			bool		n1,
						n2;
			Datum		d1 = SPI_getbinval(tup, td, 6, &n1);
			Datum		d2 = SPI_getbinval(tup, td, 7, &n2);
			ArrayType  *ids,
					   *ws;
			int			len;

			if (n1 || n2)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("item %d of an itemknn model has no neighbour list", m->item_ids[i]),
						 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
			ids = DatumGetArrayTypeP(d1);
			ws = DatumGetArrayTypeP(d2);
			len = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
			if (ARR_HASNULL(ids) || ARR_HASNULL(ws) || len != ArrayGetNItems(ARR_NDIM(ws), ARR_DIMS(ws)))
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("neighbour lists of item %d do not match", m->item_ids[i]),
						 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
			if (pass == 1)
			{
				int32	   *src = (int32 *) ARR_DATA_PTR(ids);
				float4	   *w = (float4 *) ARR_DATA_PTR(ws);

				m->nbr_start[i] = total;
				for (int k = 0; k < len; k++)
				{
					int			idx = mtdpp_model_index(m, src[k]);

					if (idx < 0)
						ereport(ERROR,
								(errcode(ERRCODE_DATA_CORRUPTED),
								 errmsg("neighbour %d of item %d is not an item of the model",
										src[k], m->item_ids[i])));
					m->nbr_index[total + k] = idx;
					m->nbr_weight[total + k] = w[k];
				}
			}
			total += len;
		}
	}
	m->nbr_start[m->n_items] = total;
}

/* Reads model MODEL_ID from the tables into the cache context. */
static MtdppModel *
load_model(int model_id, const char *kind, int rank, int n_items, int n_baskets, double log_w)
{
	MtdppModel *m;
	MemoryContext old;
	uint64		n;
	float	   *row;

	if (SPI_execute_with_args("SELECT item_id, popularity, bias, factors, task_factors, "
							  "neighbors, neighbor_weights "
							  "FROM mtdpp.items WHERE model_id = $1 ORDER BY item_id",
							  1, (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(model_id)},
							  NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the items of model %d", model_id);
	n = SPI_processed;
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
		(strcmp(kind, "itemknn") == 0 || strcmp(kind, "popularity") == 0) != (rank == 0))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("model %d of kind %s has rank %d", model_id, kind, rank),
				 errhint("The rows of mtdpp.models were changed by hand; train the model again.")));
	old = MemoryContextSwitchTo(cache_context);
	m = mtdpp_model_alloc_cached(mtdpp_kind_from_name(kind), n_items, rank);
	m->log_w = log_w;
	m->n_baskets = n_baskets;
	row = palloc(sizeof(float) * Max(rank, 1));
	for (uint64 i = 0; i < n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	td = SPI_tuptable->tupdesc;
		bool		isnull;

		m->item_ids[i] = DatumGetInt32(SPI_getbinval(tup, td, 1, &isnull));
		m->popularity[i] = DatumGetInt32(SPI_getbinval(tup, td, 2, &isnull));
		m->D[i] = DatumGetFloat4(SPI_getbinval(tup, td, 3, &isnull));
		if (!isfinite(m->D[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("bias of item %d is %g", m->item_ids[i], m->D[i]),
					 errhint("The rows of mtdpp.items were changed by hand; train the model again.")));
		fill_factors(DatumGetArrayTypeP(SPI_getbinval(tup, td, 4, &isnull)),
					 m->Vf + (size_t) i * rank, rank, false, m->item_ids[i], "factors");
		if (m->kind == MTDPP_MULTITASK || m->kind == MTDPP_MULTITASK_NOBIAS)
			fill_factors(DatumGetArrayTypeP(SPI_getbinval(tup, td, 5, &isnull)),
						 row, rank, true, m->item_ids[i], "task factors");
		else
			for (int j = 0; j < rank; j++)
				row[j] = 1.0f;
		for (int j = 0; j < rank; j++)
			m->R2f[mtdpp_panel_cell(rank, i, j)] = row[j];
	}
	pfree(row);
	if (m->kind == MTDPP_ITEMKNN)
		load_neighbors(m);
	mtdpp_model_prepare(m);
	MemoryContextSwitchTo(old);
	return m;
}

/*
 * The active model of NAME, or the default model when NAME is NULL, from the
 * cache or read from the tables.  The pointer is valid until the next call.
 */
MtdppModel *
mtdpp_lookup_model(const char *name, int *model_id)
{
	CachedModel *c;
	int			ret;
	HeapTuple	tup;
	TupleDesc	td;
	bool		isnull;
	int			id;
	MtdppModel *m;

	if (cache_stale || cache_context == NULL)
		cache_reset();
	for (c = cache_head; c != NULL; c = c->next)
		if ((name == NULL && c->name == NULL) ||
			(name != NULL && c->name != NULL && strcmp(name, c->name) == 0))
		{
			if (model_id)
				*model_id = c->model_id;
			return c->model;
		}

	models_relid = lookup_models_relid();
	spi_connect();
	if (name == NULL)
		ret = SPI_execute("SELECT model_id, kind, rank, n_items, n_baskets, log_w FROM mtdpp.models "
						  "WHERE active ORDER BY activated_at DESC NULLS LAST, model_id DESC LIMIT 1",
						  true, 1);
	else
		ret = SPI_execute_with_args("SELECT model_id, kind, rank, n_items, n_baskets, log_w "
									"FROM mtdpp.models WHERE name = $1 AND active",
									1, (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
									NULL, true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read mtdpp.models");
	if (SPI_processed == 0)
	{
		if (name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("there is no active mtdpp model"),
					 errhint("Train one with mtdpp_train, or activate one with mtdpp_activate.")));
		if (SPI_execute_with_args("SELECT 1 FROM mtdpp.models WHERE name = $1", 1,
								  (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
								  NULL, true, 1) == SPI_OK_SELECT && SPI_processed > 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("model \"%s\" has no active version", name),
					 errhint("Activate one with mtdpp_activate('%s').", name)));
		unknown_model(name);
	}
	tup = SPI_tuptable->vals[0];
	td = SPI_tuptable->tupdesc;
	id = DatumGetInt32(SPI_getbinval(tup, td, 1, &isnull));
	m = load_model(id,
				   TextDatumGetCString(SPI_getbinval(tup, td, 2, &isnull)),
				   DatumGetInt32(SPI_getbinval(tup, td, 3, &isnull)),
				   DatumGetInt32(SPI_getbinval(tup, td, 4, &isnull)),
				   DatumGetInt32(SPI_getbinval(tup, td, 5, &isnull)),
				   DatumGetFloat8(SPI_getbinval(tup, td, 6, &isnull)));
	SPI_finish();

	c = MemoryContextAllocZero(cache_context, sizeof(CachedModel));
	c->name = name ? MemoryContextStrdup(cache_context, name) : NULL;
	c->model_id = id;
	c->model = m;
	c->next = cache_head;
	cache_head = c;
	if (model_id)
		*model_id = id;
	return m;
}

/* ---------------------------------------------------------------------
 * Managing models
 * --------------------------------------------------------------------- */

Datum
mtdpp_activate(PG_FUNCTION_ARGS)
{
	text	   *name = required_text(fcinfo, 0, "model name");
	Datum		args[2];
	char		nulls[2] = {' ', PG_ARGISNULL(1) ? 'n' : ' '};
	bool		isnull;
	int			id;

	args[0] = PointerGetDatum(name);
	args[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	spi_connect();
	if (SPI_execute_with_args("SELECT model_id FROM mtdpp.models WHERE name = $1 "
							  "AND ($2 IS NULL OR version = $2) ORDER BY version DESC LIMIT 1",
							  2, (Oid[]) {TEXTOID, INT4OID}, args, nulls, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read mtdpp.models");
	if (SPI_processed == 0)
	{
		if (PG_ARGISNULL(1))
			unknown_model(text_to_cstring(name));
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("model \"%s\" has no version %d", text_to_cstring(name), PG_GETARG_INT32(1)),
				 errhint("SELECT version FROM mtdpp_models WHERE name = '%s' lists its versions.",
						 text_to_cstring(name))));
	}
	id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	/* two statements: the one-active-per-name index is checked row by row */
	if (SPI_execute_with_args("UPDATE mtdpp.models SET active = false "
							  "WHERE name = $1 AND active AND model_id <> $2",
							  2, (Oid[]) {TEXTOID, INT4OID},
							  (Datum[]) {PointerGetDatum(name), Int32GetDatum(id)},
							  NULL, false, 0) != SPI_OK_UPDATE ||
		SPI_execute_with_args("UPDATE mtdpp.models SET active = true, activated_at = clock_timestamp() "
							  "WHERE model_id = $1",
							  1, (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(id)},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not activate model %d", id);
	SPI_finish();
	PG_RETURN_INT32(id);
}

Datum
mtdpp_drop(PG_FUNCTION_ARGS)
{
	text	   *name = required_text(fcinfo, 0, "model name");
	char		nulls[2] = {' ', PG_ARGISNULL(1) ? 'n' : ' '};
	Datum		args[2];
	uint64		n;

	args[0] = PointerGetDatum(name);
	args[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	spi_connect();
	if (SPI_execute_with_args("DELETE FROM mtdpp.models WHERE name = $1 AND ($2 IS NULL OR version = $2)",
							  2, (Oid[]) {TEXTOID, INT4OID}, args, nulls, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete from mtdpp.models");
	n = SPI_processed;
	SPI_finish();
	if (n == 0)
	{
		if (PG_ARGISNULL(1))
			unknown_model(text_to_cstring(name));
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("model \"%s\" has no version %d", text_to_cstring(name), PG_GETARG_INT32(1))));
	}
	PG_RETURN_INT32((int32) n);
}

Datum
mtdpp_rename(PG_FUNCTION_ARGS)
{
	text	   *name = required_text(fcinfo, 0, "model name");
	text	   *new_name = required_text(fcinfo, 1, "new model name");
	uint64		n;

	check_name("new model name", new_name);
	spi_connect();
	if (SPI_execute_with_args("SELECT 1 FROM mtdpp.models WHERE name = $1", 1, (Oid[]) {TEXTOID},
							  (Datum[]) {PointerGetDatum(new_name)}, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read mtdpp.models");
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("model \"%s\" already exists", text_to_cstring(new_name)),
				 errhint("Drop it first with mtdpp_drop('%s'), or choose another name.",
						 text_to_cstring(new_name))));
	if (SPI_execute_with_args("UPDATE mtdpp.models SET name = $2 WHERE name = $1", 2,
							  (Oid[]) {TEXTOID, TEXTOID},
							  (Datum[]) {PointerGetDatum(name), PointerGetDatum(new_name)},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update mtdpp.models");
	n = SPI_processed;
	SPI_finish();
	if (n == 0)
		unknown_model(text_to_cstring(name));
	PG_RETURN_INT32((int32) n);
}

/* ---------------------------------------------------------------------
 * mtdpp_train: the aggregate over a table, stored
 * --------------------------------------------------------------------- */

/* Expression reading column COL of RELID, cast for the aggregate. */
static char *
column_expression(Oid relid, const char *col, const char *what, bool order_id)
{
	AttrNumber	att = get_attnum(relid, col);
	Oid			type;
	const char *q = quote_identifier(col);

	if (att == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" (%s) does not exist in %s", col, what,
						get_rel_name(relid)),
				 errhint("Name the column with %s => '...'.", what)));
	type = get_atttype(relid, att);
	switch (type)
	{
		case INT2OID:
		case INT4OID:
			return psprintf(order_id ? "%s::bigint" : "%s::integer", q);
		case INT8OID:
			return psprintf(order_id ? "%s" : "%s::integer", q);
		default:
			if (order_id)		/* any other order id: its hash identifies it */
				return psprintf("hashtextextended(%s::text, 0)", q);
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" (%s) has type %s, expected an integer type",
							col, what, format_type_be(type)),
					 errhint("Item ids and positions are integers; map them with a view if needed.")));
	}
	pg_unreachable();
}

static void
reject_named_key(Jsonb *params, const char *key)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	if (findJsonbValueFromContainer(&params->root, JB_FOBJECT, &k) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("hyperparameter \"%s\" is an argument of mtdpp_train", key),
				 errhint("Pass it as %s => ... rather than inside params.", key)));
}

Datum
mtdpp_train(PG_FUNCTION_ARGS)
{
	text	   *name = required_text(fcinfo, 0, "model name");
	Oid			relid;
	char	   *order_col,
			   *item_col,
			   *pos_expr;
	Jsonb	   *params = PG_ARGISNULL(12) ? NULL : PG_GETARG_JSONB_P(12);
	StringInfoData json;
	StringInfoData query;
	MtdppParams p;
	Datum		pjson;
	bytea	   *blob;
	MtdppModel *m;
	int			model_id;
	bool		isnull;
	TupleDesc	tupdesc;
	Datum		values[10];
	bool		nulls[10] = {0};
	const char *nsp;
	const char *source;
	MemoryContext caller = CurrentMemoryContext;

	check_name("model name", name);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("source must not be NULL"),
				 errhint("Name a table or view of order lines, such as 'order_lines'.")));
	relid = PG_GETARG_OID(1);
	if (get_rel_name(relid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	order_col = text_to_cstring(required_text(fcinfo, 2, "order_col"));
	item_col = text_to_cstring(required_text(fcinfo, 3, "item_col"));

	/* named arguments go into the hyperparameters, checked there */
	initStringInfo(&json);
	appendStringInfoString(&json, "{\"kind\": ");
	if (PG_ARGISNULL(7))
		appendStringInfoString(&json, "null");
	else
		escape_json(&json, text_to_cstring(PG_GETARG_TEXT_PP(7)));
	appendStringInfoString(&json, ", \"target\": ");
	if (PG_ARGISNULL(8))
		appendStringInfoString(&json, "null");
	else
		escape_json(&json, text_to_cstring(PG_GETARG_TEXT_PP(8)));
	if (!PG_ARGISNULL(5))
		appendStringInfo(&json, ", \"rank\": %d", PG_GETARG_INT32(5));
	if (!PG_ARGISNULL(6))
		appendStringInfo(&json, ", \"epochs\": %d", PG_GETARG_INT32(6));
	if (!PG_ARGISNULL(9))
		appendStringInfo(&json, ", \"seed\": " INT64_FORMAT, PG_GETARG_INT64(9));
	appendStringInfo(&json, ", \"verbose\": %s}",
					 (!PG_ARGISNULL(10) && PG_GETARG_BOOL(10)) ? "true" : "false");
	if (params != NULL)
	{
		const char *named[] = {"kind", "target", "rank", "epochs", "seed", "verbose"};

		if (!JB_ROOT_IS_OBJECT(params))
			mtdpp_params_parse(&p, params);	/* raises the error */
		for (int k = 0; k < lengthof(named); k++)
			reject_named_key(params, named[k]);
	}
	pjson = DirectFunctionCall1(jsonb_in, CStringGetDatum(json.data));
	if (params != NULL)
		pjson = DirectFunctionCall2(jsonb_concat, pjson, JsonbPGetDatum(params));
	mtdpp_params_resolve(&p, DatumGetJsonbP(pjson));
	if (p.target == MTDPP_TARGET_LAST && PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("target => 'last' needs a position column"),
				 errhint("Name the column that orders the items of a basket with position_col => '...'.")));

	pos_expr = PG_ARGISNULL(4) ? "NULL::integer" :
		column_expression(relid, text_to_cstring(PG_GETARG_TEXT_PP(4)), "position_col", false);
	nsp = get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid));
	source = DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid)));
	initStringInfo(&query);
	appendStringInfo(&query, "SELECT %s.mtdpp_fit(%s, %s, %s, $1) FROM %s",
					 quote_identifier(nsp),
					 column_expression(relid, order_col, "order_col", true),
					 column_expression(relid, item_col, "item_col", false),
					 pos_expr, source);

	spi_connect();
	if (SPI_execute_with_args(query.data, 1, (Oid[]) {JSONBOID}, (Datum[]) {pjson}, NULL,
							  true, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not run %s", query.data);
	/* copied out of SPI's memory, which SPI_finish frees */
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext spi = MemoryContextSwitchTo(caller);

		blob = DatumGetByteaPCopy(d);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();

	m = mtdpp_model_deserialize(blob);
	model_id = mtdpp_store_model(text_to_cstring(name), m,
								 PG_ARGISNULL(11) ? true : PG_GETARG_BOOL(11), source);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "mtdpp_train must return a row");
	tupdesc = BlessTupleDesc(tupdesc);
	spi_connect();
	if (SPI_execute_with_args("SELECT version FROM mtdpp.models WHERE model_id = $1", 1,
							  (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(model_id)},
							  NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read back model %d", model_id);
	values[2] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	SPI_finish();
	values[0] = Int32GetDatum(model_id);
	values[1] = PointerGetDatum(name);
	values[3] = CStringGetTextDatum(mtdpp_kind_name(m->kind));
	values[4] = Int32GetDatum(m->n_items);
	values[5] = Int32GetDatum(m->n_baskets);
	values[6] = Int64GetDatum(m->n_examples);
	values[7] = Float8GetDatum(m->final_loss);
	values[8] = Int32GetDatum(m->best_epoch);
	values[9] = Float8GetDatum(m->seconds);
	if (m->epochs_run == 0)
		nulls[7] = nulls[8] = true;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
