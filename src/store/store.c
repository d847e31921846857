/*
 * store/store.c
 *		The model tables of schema mtdpp: writing models and managing their
 *		versions.
 *
 * A trained model is one row of mtdpp.models and one row per item of
 * mtdpp.items, ordinary tables that analysts read and join, that pg_dump
 * keeps and that a standby replicates.  Many versions of a name can coexist;
 * one is active per name, and the most recently activated active model is
 * the default one, answering when a query names no model.  Everything here
 * runs inside the caller's transaction and as the calling role, so a failure
 * or cancel leaves nothing behind and the table privileges decide who may
 * write (whether a name is free, and its next version, excepted: see
 * isolation.c).  Reading models back, for query time, is cache.c's.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "model/kinds.h"
#include "model/model.h"
#include "shown.h"
#include "store/store.h"

PG_FUNCTION_INFO_V1(mtdpp_save);
PG_FUNCTION_INFO_V1(mtdpp_drop);
PG_FUNCTION_INFO_V1(mtdpp_rename);
PG_FUNCTION_INFO_V1(mtdpp_prune);

void
mtdpp_check_name(const char *what, text *name)
{
	if (VARSIZE_ANY_EXHDR(name) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", what),
				 errhint("Name models with a short identifier such as 'shop'.")));
	if (VARSIZE_ANY_EXHDR(name) > MTDPP_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("%s is %d bytes long, at most %d are allowed",
						what, (int) VARSIZE_ANY_EXHDR(name), MTDPP_NAME_MAX),
				 errhint("Name models with a short identifier such as 'shop'.")));
}

text *
mtdpp_text_arg(FunctionCallInfo fcinfo, int arg, const char *what)
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

/*
 * One writer per model name at a time (inside an SPI connection), until the
 * transaction ends: versions are numbered in order, and concurrent
 * activations of one name queue rather than collide on its active index.
 */
static void
lock_model_name(const char *name)
{
	if (SPI_execute_with_args("SELECT pg_catalog.pg_advisory_xact_lock("
							  "pg_catalog.hashtext('mtdpp.models'::pg_catalog.text), "
							  "pg_catalog.hashtext($1))",
							  1, (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
							  NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock model name \"%s\"", name);
}

void
mtdpp_unknown_model(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("model \"%s\" does not exist", mtdpp_shown(name)),
			 errhint("SELECT name FROM mtdpp_models lists the models; mtdpp_train creates one.")));
}

/* Whether the database's mtdpp has relation NAME of schema mtdpp (0.5.0 added some). */
bool
mtdpp_has_relation(const char *relname)
{
	Oid			nsp = get_namespace_oid("mtdpp", true);

	return OidIsValid(nsp) && OidIsValid(get_relname_relid(relname, nsp));
}

/*
 * Runs QUERY, a write to mtdpp.models that gives rows name NAME, through SPI
 * (connected) and returns SPI's result code, after checking, under the
 * name's lock, that no other role holds NAME while the models are isolated
 * (isolation.c).  Under row-level security of the DBA's own, rows the
 * caller cannot see may hold NAME already, and the unique indexes
 * of mtdpp.models then refuse it: that is reported as the name not being
 * available, saying nothing about those rows (a raw unique violation would
 * name the index and the key).  The query runs in a subtransaction so that
 * its failure can be caught.
 */
static int
write_name(const char *name, const char *query, int nargs, Oid *types, Datum *values,
		   const char *nulls, long tcount)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	int			ret = 0;

	(void) mtdpp_name_next_version(name);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller);
	PG_TRY();
	{
		ret = SPI_execute_with_args(query, nargs, types, values, nulls, false, tcount);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(caller);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(caller);
		CurrentResourceOwner = owner;
		if (edata->sqlerrcode == ERRCODE_UNIQUE_VIOLATION && edata->constraint_name != NULL &&
			(strcmp(edata->constraint_name, "models_name_version_key") == 0 ||
			 strcmp(edata->constraint_name, "models_one_active_per_name") == 0))
			mtdpp_name_not_available(name);
		ReThrowError(edata);
	}
	PG_END_TRY();
	return ret;
}

/* RELID's name, schema-qualified and quoted, for the SQL the extension builds. */
char *
mtdpp_qualified_relation(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/* ---------------------------------------------------------------------
 * Writing models
 * --------------------------------------------------------------------- */

/* integer and bigint are one type to a call: it may pass either to both (item_args.c) */
static bool
integer_items(const char *type)
{
	return strcmp(type, "integer") == 0 || strcmp(type, "bigint") == 0;
}

/*
 * Every version of a name holds items of one type, whatever the call that
 * stores it (mtdpp_train, mtdpp_save, activating or not), so that the calls
 * completing with the name keep passing the type they pass whichever
 * version is active: a new version of items of another type TYPE (a key
 * type, InvalidOid for integers) is refused, compared with the active
 * version or else the newest.  Moving the old versions away (renamed or
 * dropped) is how a caller says the name changes type.  Inside an SPI
 * connection; a database whose extension predates keys has integers only.
 */
static void
check_item_type(const char *name, Oid type)
{
	const char *given = mtdpp_key_type_name(type);
	Oid			models = get_relname_relid("models", get_namespace_oid("mtdpp", false));
	char	   *held;

	if (get_attnum(models, "item_type") == InvalidAttrNumber)
		return;
	if (SPI_execute_with_args("SELECT COALESCE(item_type, 'integer'::pg_catalog.text) FROM mtdpp.models "
							  "WHERE name OPERATOR(pg_catalog.=) $1 ORDER BY active DESC, version DESC LIMIT 1",
							  1, (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
							  NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read mtdpp.models");
	if (SPI_processed == 0)
		return;
	held = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (strcmp(held, given) == 0 || (integer_items(held) && integer_items(given)))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("the items of model \"%s\" are %s, and the new version's would be %s",
					mtdpp_shown(name), held, given),
			 errdetail("Every version of a model holds items of one type, so that the calls completing with it keep working whichever version is active."),
			 errhint("Train under another name, or first rename the versions of \"%s\" (mtdpp_rename) or drop them (mtdpp_drop), in the same transaction for no gap.",
					 mtdpp_shown(name))));
}

/*
 * The check above for a training of NAME from items of type TYPE, made
 * before the lines are read: the store makes it again under the name's lock.
 */
void
mtdpp_check_item_type(const char *name, Oid type)
{
	spi_connect();
	check_item_type(name, type);
	SPI_finish();
}

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
 * The row of a model in mtdpp.models, with the weights column only for a
 * kind that has them: a database whose extension is not yet updated
 * to 0.4.0 has no such column, and stores the other kinds as before.
 */
static const char *const insert_model[2] = {
	"INSERT INTO mtdpp.models (name, version, kind, active, rank, n_items, "
	"  n_baskets, n_examples, log_w, hyperparams, loss_history, val_mpr_history, "
	"  final_loss, best_epoch, train_seconds, source, activated_at) "
	"VALUES ($1, $16, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, "
	"  CASE WHEN $3 THEN pg_catalog.clock_timestamp() END) RETURNING model_id",
	"INSERT INTO mtdpp.models (name, version, kind, active, rank, n_items, "
	"  n_baskets, n_examples, log_w, hyperparams, loss_history, val_mpr_history, "
	"  final_loss, best_epoch, train_seconds, source, weights, activated_at) "
	"VALUES ($1, $16, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $17, "
	"  CASE WHEN $3 THEN pg_catalog.clock_timestamp() END) RETURNING model_id"
};

/*
 * Inserts M's row into mtdpp.models as the next version of NAME, with the
 * type of its item keys if it has them; returns its model_id.
 */
static int
insert_model_row(const char *name, MtdppModel *m, bool activate, const char *source,
				 const MtdppTrainedKeys *keys)
{
	Oid			types[17] = {TEXTOID, TEXTOID, BOOLOID, INT4OID, INT4OID, INT4OID, INT8OID,
		FLOAT8OID, JSONBOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8OID, INT4OID, FLOAT8OID, TEXTOID,
	INT4OID, FLOAT4ARRAYOID};
	Datum		values[17];
	char		nulls[18];
	int			model_id;
	bool		isnull;

	memset(nulls, ' ', sizeof(nulls));
	nulls[17] = '\0';
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
	nulls[14] = source ? ' ' : 'n';
	values[15] = Int32GetDatum(mtdpp_name_next_version(name));	/* of every role's */
	/* the weights every item shares, if the kind has them, else NULL */
	if (mtdpp_kind(m->kind)->weights)
		values[16] = float4_array(m->weights, m->n_weights);
	else
		nulls[16] = 'n';
	if (write_name(name, insert_model[mtdpp_kind(m->kind)->weights],
				   mtdpp_kind(m->kind)->weights ? 17 : 16, types, values, nulls, 1) != SPI_OK_INSERT_RETURNING ||
		SPI_processed != 1)
		elog(ERROR, "could not insert model \"%s\"", name);
	model_id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (keys != NULL &&
		SPI_execute_with_args("UPDATE mtdpp.models SET item_type = $2 WHERE model_id OPERATOR(pg_catalog.=) $1",
							  2, (Oid[]) {INT4OID, TEXTOID},
							  (Datum[]) {Int32GetDatum(model_id), CStringGetTextDatum(mtdpp_key_type_name(keys->type))},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the item type of model \"%s\"", name);
	return model_id;
}

/*
 * Inserts M's items into mtdpp.items under MODEL_ID: each one's factors,
 * its neighbours for a kind that keeps them, its key if the model has keys.
 * A row's arrays live in a context reset after each row.
 */
static void
insert_item_rows(int model_id, const char *name, MtdppModel *m, const MtdppTrainedKeys *keys)
{
	Oid			item_types[9] = {INT4OID, INT4OID, INT4OID, FLOAT4OID, FLOAT4ARRAYOID, FLOAT4ARRAYOID,
	INT4ARRAYOID, FLOAT4ARRAYOID, TEXTOID};
	bool		task_factors = mtdpp_kind(m->kind)->task_factors;
	bool		knn = mtdpp_kind(m->kind)->neighbors;
	SPIPlanPtr	plan;
	MemoryContext row;

	plan = SPI_prepare(keys != NULL ?
					   "INSERT INTO mtdpp.items (model_id, item_id, popularity, bias, factors, "
					   "task_factors, neighbors, neighbor_weights, item_key) "
					   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)" :
					   "INSERT INTO mtdpp.items (model_id, item_id, popularity, bias, factors, "
					   "task_factors, neighbors, neighbor_weights) "
					   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", keys != NULL ? 9 : 8, item_types);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	row = AllocSetContextCreate(CurrentMemoryContext, "mtdpp item row", ALLOCSET_SMALL_SIZES);
	for (int i = 0; i < m->n_items; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(row);
		Datum		iv[9];
		char		in[9] = {' ', ' ', ' ', ' ', ' ', ' ', knn ? ' ' : 'n', knn ? ' ' : 'n', ' '};

		CHECK_FOR_INTERRUPTS();
		iv[0] = Int32GetDatum(model_id);
		iv[1] = Int32GetDatum(m->item_ids[i]);
		iv[2] = Int32GetDatum(m->popularity[i]);
		iv[3] = Float4GetDatum((float4) m->D[i]);
		iv[4] = float4_array(m->V + (size_t) i * m->rank, m->rank);
		/* single-kernel kinds have no task factors (R = 1) */
		iv[5] = float4_array(m->R + (size_t) i * m->rank, task_factors ? m->rank : 0);
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
		if (keys != NULL)
		{
			if (m->item_ids[i] < 1 || m->item_ids[i] > keys->n)
				elog(ERROR, "item %d of model \"%s\" has no key", m->item_ids[i], name);
			iv[8] = keys->texts[m->item_ids[i] - 1];
		}
		if (SPI_execute_plan(plan, iv, in, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not insert item %d of model \"%s\"", m->item_ids[i], name);
		MemoryContextSwitchTo(old);
		MemoryContextReset(row);
	}
	MemoryContextDelete(row);
}

/*
 * Stores M as the next version of NAME; returns its model_id.  Runs inside
 * the caller's transaction, so a failure or cancel leaves nothing behind.
 */
int
mtdpp_store_model(const char *name, MtdppModel *m, bool activate, const char *source,
				  const MtdppTrainedKeys *keys)
{
	int			model_id;

	spi_connect();

	lock_model_name(name);
	check_item_type(name, keys != NULL ? keys->type : InvalidOid);
	if (activate &&
		SPI_execute_with_args("UPDATE mtdpp.models SET active = false "
							  "WHERE name OPERATOR(pg_catalog.=) $1 AND active",
							  1, (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not deactivate model \"%s\"", name);
	model_id = insert_model_row(name, m, activate, source, keys);
	insert_item_rows(model_id, name, m, keys);
	SPI_finish();
	return model_id;
}

void
mtdpp_store_metrics(int model_id, const char *json)
{
	spi_connect();
	if (SPI_execute_with_args("UPDATE mtdpp.models SET metrics = metrics OPERATOR(pg_catalog.||) $2 "
							  "WHERE model_id OPERATOR(pg_catalog.=) $1",
							  2, (Oid[]) {INT4OID, JSONBOID},
							  (Datum[]) {Int32GetDatum(model_id),
							  DirectFunctionCall1(jsonb_in, CStringGetDatum(json))},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not store the metrics of model %d", model_id);
	SPI_finish();
}

/* Whether mtdpp.models has column COL (0.6.0 added some). */
bool
mtdpp_has_column(const char *col)
{
	Oid			nsp = get_namespace_oid("mtdpp", true);
	Oid			rel = OidIsValid(nsp) ? get_relname_relid("models", nsp) : InvalidOid;

	return OidIsValid(rel) && get_attnum(rel, col) != InvalidAttrNumber;
}

/* Stores JSON into jsonb column COL of model MODEL_ID (test, promotion). */
static void
store_json(int model_id, const char *col, const char *json)
{
	spi_connect();
	if (SPI_execute_with_args(psprintf("UPDATE mtdpp.models SET %s = $2 WHERE model_id OPERATOR(pg_catalog.=) $1",
									   quote_identifier(col)),
							  2, (Oid[]) {INT4OID, JSONBOID},
							  (Datum[]) {Int32GetDatum(model_id),
							  DirectFunctionCall1(jsonb_in, CStringGetDatum(json))},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not store the %s of model %d", col, model_id);
	SPI_finish();
}

void
mtdpp_store_test(int model_id, const char *json)
{
	store_json(model_id, "test", json);
}

void
mtdpp_store_promotion(int model_id, const char *json)
{
	store_json(model_id, "promotion", json);
}

Datum
mtdpp_save(PG_FUNCTION_ARGS)
{
	text	   *name = mtdpp_text_arg(fcinfo, 0, "model name");
	bytea	   *blob;
	MtdppModel *m;
	bool		activate = PG_ARGISNULL(2) ? true : PG_GETARG_BOOL(2);
	char	   *source = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));

	mtdpp_check_name("model name", name);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("model must not be NULL"),
				 errhint("Pass the value returned by the mtdpp_fit aggregate.")));
	blob = PG_GETARG_BYTEA_PP(1);
	m = mtdpp_model_deserialize(blob);
	PG_RETURN_INT32(mtdpp_store_model(text_to_cstring(name), m, activate, source, NULL));
}

/* ---------------------------------------------------------------------
 * Managing models
 * --------------------------------------------------------------------- */

/*
 * After a DELETE from mtdpp.models RETURNING model_id, deletes the items of
 * the models it deleted; returns how many models.
 */
static uint64
deleted_items_of_gone(void)
{
	uint64		n = SPI_processed;
	Datum	   *ids = palloc(sizeof(Datum) * Max(n, 1));
	bool		isnull;

	for (uint64 i = 0; i < n; i++)
		ids[i] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
	if (n > 0)
		mtdpp_delete_items_of(PointerGetDatum(construct_array(ids, (int) n, INT4OID, 4, true, TYPALIGN_INT)));
	return n;
}

/*
 * The model a management call names: argument ARG, model; or, in a call
 * written for 0.4.0, argument ALIAS, name, which says it is deprecated.  A
 * database whose extension is not updated yet passes no ALIAS argument.
 */
static text *
model_arg(FunctionCallInfo fcinfo, int arg, int alias)
{
	if (PG_NARGS() > alias && !PG_ARGISNULL(alias))
	{
		const char *fn = get_func_name(fcinfo->flinfo->fn_oid);

		if (!PG_ARGISNULL(arg))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s was given both model and name", fn),
					 errhint("Name the model once, with model => '...'.")));
		ereport(NOTICE,
				(errmsg("argument name of %s is deprecated: it is now model", fn),
				 errhint("Write %s(model => '...'); name => will be refused from mtdpp 0.7.0.", fn)));
		mtdpp_check_name("model name", PG_GETARG_TEXT_PP(alias));
		return PG_GETARG_TEXT_PP(alias);
	}
	return mtdpp_text_arg(fcinfo, arg, "model name");
}

/*
 * Makes model ID the active version of NAME, under the name's lock (SPI
 * connected).  Two statements: the one-active-per-name index is checked row
 * by row.  The time of the activation is a parameter, the clock read here:
 * an UPDATE that calls a volatile function is refused by Citus when the
 * model tables are reference tables (doc/scaling.md, "Citus").
 */
static void
activate_id(const char *name, int id)
{
	if (SPI_execute_with_args("UPDATE mtdpp.models SET active = false "
							  "WHERE name OPERATOR(pg_catalog.=) $1 AND active "
							  "AND model_id OPERATOR(pg_catalog.<>) $2",
							  2, (Oid[]) {TEXTOID, INT4OID},
							  (Datum[]) {CStringGetTextDatum(name), Int32GetDatum(id)},
							  NULL, false, 0) != SPI_OK_UPDATE ||
		write_name(name, "UPDATE mtdpp.models "
				   "SET active = true, activated_at = $2 "
				   "WHERE model_id OPERATOR(pg_catalog.=) $1",
				   2, (Oid[]) {INT4OID, TIMESTAMPTZOID},
				   (Datum[]) {Int32GetDatum(id), TimestampTzGetDatum(GetCurrentTimestamp())},
				   NULL, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not activate model %d", id);
}

/* Makes model ID, stored as a version of NAME, its active version. */
void
mtdpp_activate_version(const char *name, int id)
{
	spi_connect();
	lock_model_name(name);
	activate_id(name, id);
	SPI_finish();
}

/*
 * The version mtdpp_activate names (argument 0, model, or 2, its former
 * name; argument 1, version, NULL for the newest): its model_id, its name
 * into *NAME.  The name's lock is taken first and held to the end of the
 * transaction, so the version and the active one stay as read.
 */
int
mtdpp_version_to_activate(FunctionCallInfo fcinfo, char **name_out)
{
	text	   *name = model_arg(fcinfo, 0, 2);
	Datum		args[2];
	char		nulls[2] = {' ', PG_ARGISNULL(1) ? 'n' : ' '};
	bool		isnull;
	int			id;

	args[0] = PointerGetDatum(name);
	args[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	spi_connect();
	lock_model_name(text_to_cstring(name));
	if (SPI_execute_with_args("SELECT model_id FROM mtdpp.models WHERE name OPERATOR(pg_catalog.=) $1 "
							  "AND ($2 IS NULL OR version OPERATOR(pg_catalog.=) $2) "
							  "ORDER BY version DESC LIMIT 1",
							  2, (Oid[]) {TEXTOID, INT4OID}, args, nulls, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read mtdpp.models");
	if (SPI_processed == 0)
	{
		if (PG_ARGISNULL(1))
			mtdpp_unknown_model(text_to_cstring(name));
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("model \"%s\" has no version %d", mtdpp_shown(text_to_cstring(name)),
						PG_GETARG_INT32(1)),
				 errhint("SELECT version FROM mtdpp_models WHERE name = '%s' lists its versions.",
						 mtdpp_shown(text_to_cstring(name)))));
	}
	id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	*name_out = text_to_cstring(name);
	return id;
}

Datum
mtdpp_drop(PG_FUNCTION_ARGS)
{
	text	   *name = model_arg(fcinfo, 0, 2);
	char		nulls[2] = {' ', PG_ARGISNULL(1) ? 'n' : ' '};
	Datum		args[2];
	uint64		n;

	args[0] = PointerGetDatum(name);
	args[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	spi_connect();
	lock_model_name(text_to_cstring(name));
	if (SPI_execute_with_args("DELETE FROM mtdpp.models WHERE name OPERATOR(pg_catalog.=) $1 "
							  "AND ($2 IS NULL OR version OPERATOR(pg_catalog.=) $2) RETURNING model_id",
							  2, (Oid[]) {TEXTOID, INT4OID}, args, nulls, false, 0) != SPI_OK_DELETE_RETURNING)
		elog(ERROR, "could not delete from mtdpp.models");
	n = deleted_items_of_gone();
	SPI_finish();
	if (n == 0)
	{
		if (PG_ARGISNULL(1))
			mtdpp_unknown_model(text_to_cstring(name));
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("model \"%s\" has no version %d", mtdpp_shown(text_to_cstring(name)),
						PG_GETARG_INT32(1))));
	}
	PG_RETURN_INT32((int32) n);
}

/*
 * mtdpp_prune(name, keep): drops the versions of NAME but its KEEP newest and
 * its active one, so that retraining on a schedule does not pile versions up.
 */
Datum
mtdpp_prune(PG_FUNCTION_ARGS)
{
	text	   *name = model_arg(fcinfo, 0, 2);
	int			keep;
	uint64		n;

	if (PG_ARGISNULL(1) || PG_GETARG_INT32(1) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keep must be 0 or more, not %s",
						PG_ARGISNULL(1) ? "NULL" : psprintf("%d", PG_GETARG_INT32(1))),
				 errhint("Pass the number of newest versions to keep besides the active one.")));
	keep = PG_GETARG_INT32(1);
	spi_connect();
	lock_model_name(text_to_cstring(name));
	if (SPI_execute_with_args("SELECT 1 FROM mtdpp.models WHERE name OPERATOR(pg_catalog.=) $1", 1,
							  (Oid[]) {TEXTOID}, (Datum[]) {PointerGetDatum(name)},
							  NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read mtdpp.models");
	if (SPI_processed == 0)
		mtdpp_unknown_model(text_to_cstring(name));
	if (SPI_execute_with_args("DELETE FROM mtdpp.models WHERE name OPERATOR(pg_catalog.=) $1 AND NOT active "
							  "AND version OPERATOR(pg_catalog.<) ALL ("
							  "  SELECT version FROM mtdpp.models WHERE name OPERATOR(pg_catalog.=) $1 "
							  "  ORDER BY version DESC LIMIT $2) RETURNING model_id",
							  2, (Oid[]) {TEXTOID, INT4OID},
							  (Datum[]) {PointerGetDatum(name), Int32GetDatum(keep)},
							  NULL, false, 0) != SPI_OK_DELETE_RETURNING)
		elog(ERROR, "could not delete from mtdpp.models");
	n = deleted_items_of_gone();
	SPI_finish();
	PG_RETURN_INT32((int32) n);
}

Datum
mtdpp_rename(PG_FUNCTION_ARGS)
{
	text	   *name = model_arg(fcinfo, 0, 2);
	text	   *new_name = mtdpp_text_arg(fcinfo, 1, "new model name");
	uint64		n;

	mtdpp_check_name("new model name", new_name);
	spi_connect();
	/* both names, in a fixed order, so two renames cannot deadlock */
	if (strcmp(text_to_cstring(name), text_to_cstring(new_name)) < 0)
	{
		lock_model_name(text_to_cstring(name));
		lock_model_name(text_to_cstring(new_name));
	}
	else
	{
		lock_model_name(text_to_cstring(new_name));
		lock_model_name(text_to_cstring(name));
	}
	if (SPI_execute_with_args("SELECT 1 FROM mtdpp.models WHERE name OPERATOR(pg_catalog.=) $1", 1,
							  (Oid[]) {TEXTOID},
							  (Datum[]) {PointerGetDatum(new_name)}, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read mtdpp.models");
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("model \"%s\" already exists", text_to_cstring(new_name)),
				 errhint("Drop it first with mtdpp_drop('%s'), or choose another name.",
						 text_to_cstring(new_name))));
	if (write_name(text_to_cstring(new_name),
				   "UPDATE mtdpp.models SET name = $2 WHERE name OPERATOR(pg_catalog.=) $1", 2,
				   (Oid[]) {TEXTOID, TEXTOID},
				   (Datum[]) {PointerGetDatum(name), PointerGetDatum(new_name)},
				   NULL, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update mtdpp.models");
	n = SPI_processed;
	/*
	 * the shares of the renamed models follow them: those of their role, by
	 * OID where both rows are this cluster's, else by name (isolation.c)
	 */
	if (n > 0 && mtdpp_has_relation("model_readers") &&
		SPI_execute_with_args(get_attnum(get_relname_relid("model_readers", get_namespace_oid("mtdpp", false)),
										 "role_cluster") != InvalidAttrNumber ?
							  "UPDATE mtdpp.model_readers r SET name = $2 "
							  "WHERE r.name OPERATOR(pg_catalog.=) $1 AND EXISTS "
							  "(SELECT FROM mtdpp.models m WHERE m.name OPERATOR(pg_catalog.=) $2 "
							  "AND CASE WHEN m.role_cluster OPERATOR(pg_catalog.=) mtdpp.cluster_id() "
							  "AND r.role_cluster OPERATOR(pg_catalog.=) m.role_cluster "
							  "THEN m.trained_by_oid OPERATOR(pg_catalog.=) r.trained_by_oid "
							  "ELSE m.trained_by OPERATOR(pg_catalog.=) r.trained_by END)" :
							  "UPDATE mtdpp.model_readers r SET name = $2 "
							  "WHERE r.name OPERATOR(pg_catalog.=) $1 AND EXISTS "
							  "(SELECT FROM mtdpp.models m WHERE m.name OPERATOR(pg_catalog.=) $2 "
							  "AND m.trained_by OPERATOR(pg_catalog.=) r.trained_by)",
							  2, (Oid[]) {TEXTOID, TEXTOID},
							  (Datum[]) {PointerGetDatum(name), PointerGetDatum(new_name)},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update mtdpp.model_readers");
	SPI_finish();
	if (n == 0)
		mtdpp_unknown_model(text_to_cstring(name));
	PG_RETURN_INT32((int32) n);
}
