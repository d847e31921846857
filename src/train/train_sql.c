/*
 * train/train_sql.c
 *		mtdpp_train: training from a table, a view or a query in one
 *		statement.
 *
 * It builds the query that runs the mtdpp_fit aggregate (aggregate.c) over
 * the user's table or query (source.c: a query is run once, into a
 * temporary table, before the lines are read), every name in it qualified by
 * schema, runs it through SPI as the calling role (a plan that may be
 * parallel), and stores the model it hands over (in memory, handoff.c)
 * as the next version of its name (store.c).  Its named arguments go into the hyperparameters, checked
 * there (params.c).  Test baskets it holds out are left out of the lines
 * the aggregate reads and measured once the model is stored (held_out.c);
 * the promotion rule then says whether the new version becomes the active
 * one (promote.c).
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"

#include "fit/params.h"
#include "fit/progress.h"
#include "model/kinds.h"
#include "model/model.h"
#include "shown.h"
#include "store/store.h"
#include "train/train.h"

PG_FUNCTION_INFO_V1(mtdpp_train);

/*
 * Expression reading column COL of RELID, cast for the aggregate.  A domain
 * over an integer type is read as its base type.  *WIDE: whether the
 * column is a bigint that the cast to integer may not hold.
 */
static char *
column_expression(const TrainSource *src, const char *col, const char *what, bool order_id, bool *wide)
{
	Oid			given,
				type;
	const char *q = psprintf("l.%s", quote_identifier(col));

	*wide = false;
	if (!mtdpp_source_column(src, col, &given, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" (%s) does not exist in %s", mtdpp_shown(col), what, src->shown),
				 errhint("Name the column with %s => '...'.", what)));
	type = getBaseType(given);
	switch (type)
	{
		case INT2OID:
		case INT4OID:
			return psprintf(order_id ? "%s::bigint" : "%s::integer", q);
		case INT8OID:
			*wide = !order_id;
			return psprintf(order_id ? "%s::bigint" : "%s::integer", q);
		default:
			if (order_id)		/* any other order id: its hash identifies it */
				return psprintf("pg_catalog.hashtextextended(%s::pg_catalog.text, 0::pg_catalog.int8)", q);
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" (%s) has type %s, expected %s",
							mtdpp_shown(col), what, format_type_be(given),
							strcmp(what, "item_col") == 0 ? "integer, bigint, text or uuid" : "an integer type"),
					 strcmp(what, "item_col") == 0 ?
					 errhint("Cast the items to one of these types with a view.") :
					 errhint("Positions are integers; number the items of each basket with a view if needed.")));
	}
	pg_unreachable();
}

/*
 * Text keys are numbered, and looked up at completion, by their bytes: under
 * a nondeterministic collation the spellings it takes as equal would be one
 * item in training and different items at completion, so it is refused.
 */
static void
check_deterministic(Oid coll, const char *col)
{
	if (OidIsValid(coll) && !get_collation_isdeterministic(coll))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("item column \"%s\" has the nondeterministic collation %s",
						mtdpp_shown(col), get_collation_name(coll)),
				 errdetail("Items are told apart by their keys' bytes: spellings the collation takes as equal would be one item in training and different items when completing."),
				 errhint("Train from a view giving the column a deterministic collation, such as %s COLLATE \"C\", or one spelling per item, such as lower(%s).",
						 quote_identifier(col), quote_identifier(col))));
}

/*
 * The type of keys item column COL of SRC holds: bigint, text or uuid
 * (domains read as their base); InvalidOid for an integer column.
 */
static Oid
item_key_type(const TrainSource *src, const char *col)
{
	Oid			type,
				coll;

	if (!mtdpp_source_column(src, col, &type, &coll))
		return InvalidOid;		/* column_expression says so */
	type = getBaseType(type);
	if (type == TEXTOID || type == VARCHAROID)
		check_deterministic(coll, col);
	if (type == INT8OID || type == TEXTOID || type == UUIDOID)
		return type;
	if (type == VARCHAROID)
		return TEXTOID;
	return InvalidOid;
}

/*
 * The distinct keys of item column COL of SRC, in their order (text in
 * the "C" collation, the same on every server), as text, into *KEYS in the
 * caller's memory; item i is the i-th.  Inside the caller's SPI connection.
 *
 * The keys are held twice while the fit runs over them (the list, and the
 * array the query numbers the lines by) and each is as long as the table
 * makes it: they count against maintenance_work_mem like any other part of
 * the training, read through a cursor a few at a time so that a refusal
 * comes before they are all held.  The array is made once from the list,
 * which then points into it.
 */
static void
number_keys(const TrainSource *src, const char *col, MtdppTrainedKeys *keys, MemoryContext caller)
{
	const char *q = psprintf("l.%s", quote_identifier(col));
	char	   *sql;
	Portal		portal;
	Size		limit = (Size) maintenance_work_mem * 1024;
	Size		bytes = 0;
	int			allocated = 1024;
	long		batch = 1024;
	uint64		seen = 0;
	bool		over = false;
	ArrayType  *array;

	sql = psprintf("SELECT k::pg_catalog.text FROM (SELECT DISTINCT %s AS k FROM %s WHERE %s IS NOT NULL) s ORDER BY k%s",
				   q, src->from, q,
				   keys->type == TEXTOID ? " COLLATE \"C\"" : "");
	portal = SPI_cursor_open_with_args(NULL, sql, 0, NULL, NULL, NULL, true, 0);
	keys->n = 0;
	keys->texts = MemoryContextAlloc(caller, sizeof(Datum) * allocated);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, batch);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
			MemoryContext spi = MemoryContextSwitchTo(caller);
			struct varlena *key = pg_detoast_datum_copy((struct varlena *) DatumGetPointer(d));

			MemoryContextSwitchTo(spi);
			seen++;
			bytes = add_size(bytes, MAXALIGN(VARSIZE(key)) + sizeof(Datum));
			/* past the budget: count the rest without keeping it */
			over = over || mul_size(bytes, 2) > limit;
			if (over)
			{
				pfree(key);
				continue;
			}
			if (keys->n == allocated)
			{
				allocated *= 2;
				keys->texts = repalloc(keys->texts, sizeof(Datum) * allocated);
			}
			keys->texts[keys->n++] = PointerGetDatum(key);
		}
		/* about a megabyte a fetch, however long the keys */
		batch = Max(1, Min(4096, (long) ((Size) 1048576 / Max((Size) 1, bytes / seen))));
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	if (over)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the distinct keys of item column \"%s\" take %zu kB, held twice while training: more than maintenance_work_mem (%d kB)",
						mtdpp_shown(col), (bytes + 1023) / 1024, maintenance_work_mem),
				 errdetail("Training numbers the items by their keys and keeps the keys with the model; a completing session keeps them once."),
				 errhint("SET maintenance_work_mem = '%zuMB' for this session, or train from a view that keys the items by something shorter, such as an id from the catalog.",
						 (mul_size(bytes, 2) >> 20) + 1)));
	/* the array the query takes; the list then points into it */
	{
		MemoryContext old = MemoryContextSwitchTo(caller);

		array = construct_array(keys->texts, keys->n, TEXTOID, -1, false, TYPALIGN_INT);
		for (int i = 0; i < keys->n; i++)
			pfree(DatumGetPointer(keys->texts[i]));
		pfree(keys->texts);
		keys->texts = NULL;
		if (keys->n > 0)
			deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &keys->texts, NULL, &keys->n);
		keys->array = PointerGetDatum(array);
		MemoryContextSwitchTo(old);
	}
}

/*
 * A bigint position column COL of SRC read as integer (a bigint item
 * column is read as keys): its first value beyond integer, if any, is an
 * error naming it, rather than the cast's bare "integer out of range" in the
 * middle of the fit.  Runs inside the caller's SPI connection; costs a scan
 * of the column, for bigint columns only.
 */
static void
check_integer_column(const TrainSource *src, const char *col)
{
	const char *what = "position_col";
	const char *q = psprintf("l.%s", quote_identifier(col));
	char	   *sql;
	bool		isnull;
	int64		value;

	sql = psprintf("SELECT %s::pg_catalog.int8 FROM %s WHERE %s::pg_catalog.int8 OPERATOR(pg_catalog.<) '-2147483648'::pg_catalog.int8 "
				   "OR %s::pg_catalog.int8 OPERATOR(pg_catalog.>) '2147483647'::pg_catalog.int8 LIMIT 1",
				   q, src->from, q, q);
	if (SPI_execute(sql, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not run %s", sql);
	if (SPI_processed == 0)
		return;
	value = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("column \"%s\" (%s) of %s holds " INT64_FORMAT ", beyond the integer range",
					mtdpp_shown(col), what, src->shown, value),
			 errdetail("Item ids and positions must fit in integer (int4), from -2147483648 to 2147483647."),
			 errhint("Number the items of each basket with a view, for example with row_number() OVER (PARTITION BY the order id ORDER BY %s).",
					 mtdpp_shown(quote_identifier(col)))));
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

/*
 * The hyperparameters of the call: its named arguments, then its params
 * jsonb (which may not repeat them); resolved into P, returned as jsonb for
 * the aggregate.
 */
static Datum
training_params(FunctionCallInfo fcinfo, text *name, MtdppParams *p)
{
	Jsonb	   *params = PG_ARGISNULL(12) ? NULL : PG_GETARG_JSONB_P(12);
	StringInfoData json;
	Datum		pjson;

	/* NULL is no kind: the default is the argument's, when it is left out */
	if (PG_ARGISNULL(7))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("kind must not be NULL"),
				 errhint("Leave kind out for the default, '%s', or name a kind: SELECT name FROM mtdpp_kinds() lists them.",
						 mtdpp_kind_name(mtdpp_default_kind()))));
	initStringInfo(&json);
	appendStringInfoString(&json, "{\"kind\": ");
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
	/* warm_start (since 0.2.0: a database not yet updated passes 13 arguments) */
	if (PG_NARGS() > 13 && !PG_ARGISNULL(13) && PG_GETARG_BOOL(13))
	{
		appendStringInfoString(&json, ", \"warm_start\": ");
		escape_json(&json, text_to_cstring(name));
	}
	appendStringInfo(&json, ", \"verbose\": %s}",
					 (!PG_ARGISNULL(10) && PG_GETARG_BOOL(10)) ? "true" : "false");
	if (params != NULL)
	{
		const char *named[] = {"kind", "target", "rank", "epochs", "seed", "verbose"};

		if (!JB_ROOT_IS_OBJECT(params))
			mtdpp_params_parse(p, params);	/* raises the error */
		for (int k = 0; k < lengthof(named); k++)
			reject_named_key(params, named[k]);
	}
	pjson = DirectFunctionCall1(jsonb_in, CStringGetDatum(json.data));
	if (params != NULL)
		pjson = DirectFunctionCall2(jsonb_concat, pjson, JsonbPGetDatum(params));
	mtdpp_params_resolve(p, DatumGetJsonbP(pjson));
	if (mtdpp_kind(p->kind)->add_order && PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind %s needs a position column", mtdpp_kind_name(p->kind)),
				 errdetail("It learns from the order in which the items of a basket were added."),
				 errhint("Name the column that orders the items of a basket with position_col => '...'.")));
	if (p->target == MTDPP_TARGET_LAST && PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("target => 'last' needs a position column"),
				 errhint("Name the column that orders the items of a basket with position_col => '...'.")));
	return pjson;
}

/*
 * Runs mtdpp_fit over the columns the call names of SRC, with the
 * hyperparameters PJSON, leaving out the lines of the test baskets H holds
 * out; returns the model, in a memory context of its own under the
 * caller's, that context into *HOLDER, and the number of lines it read
 * into *LINES.  The aggregate hands the model over in memory (handoff.c);
 * where it returns a value instead (an aggregate Citus ran whole on a
 * worker), the model is read from it.
 */
static MtdppModel *
run_fit(FunctionCallInfo fcinfo, const TrainSource *src, Datum pjson, MtdppTrainedKeys *keys,
		HeldOut *h, int64 *lines, MemoryContext *holder)
{
	char	   *order_col = text_to_cstring(mtdpp_text_arg(fcinfo, 2, "order_col"));
	char	   *item_col = text_to_cstring(mtdpp_text_arg(fcinfo, 3, "item_col"));
	char	   *pos_expr,
			   *order_expr,
			   *item_expr;
	const char *nsp;
	StringInfoData query;
	MemoryContext caller = CurrentMemoryContext;
	MtdppModel *m;
	MtdppHandoff *handoff;
	bool		isnull;

	char	   *pos_col = PG_ARGISNULL(4) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(4));
	bool		wide_pos = false,
				wide_item = false,
				wide_order;
	const char *key_sql;

	pos_expr = pos_col == NULL ? "NULL::integer" :
		column_expression(src, pos_col, "position_col", false, &wide_pos);
	nsp = get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid));
	initStringInfo(&query);
	keys->type = item_key_type(src, item_col);
	key_sql = keys->type == INT8OID ? "int8" : keys->type == UUIDOID ? "uuid" : "text";
	order_expr = column_expression(src, order_col, "order_col", true, &wide_order);
	item_expr = OidIsValid(keys->type) ?
		psprintf("l.%s::pg_catalog.%s", quote_identifier(item_col), key_sql) :
		column_expression(src, item_col, "item_col", false, &wide_item);
	appendStringInfo(&query, "SELECT %s.mtdpp_fit(%s, %s, %s, $1), pg_catalog.count(*) FROM %s",
					 quote_identifier(nsp), order_expr,
					 OidIsValid(keys->type) ? "n.item" : item_expr, pos_expr, src->from);
	/*
	 * keys: each line's item is its key's number (number_keys); a NULL key
	 * stays a NULL item, which mtdpp_fit counts in its NOTICE
	 */
	if (OidIsValid(keys->type))
		appendStringInfo(&query, " LEFT JOIN (SELECT k::pg_catalog.%s AS key, i::pg_catalog.int4 AS item "
						 "FROM pg_catalog.unnest($2::pg_catalog.text[]) WITH ORDINALITY AS u(k, i)) AS n "
						 "ON l.%s OPERATOR(pg_catalog.=) n.key",
						 key_sql, quote_identifier(item_col));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (OidIsValid(keys->type))
		number_keys(src, item_col, keys, caller);
	if (wide_pos)
		check_integer_column(src, pos_col);
	if (h->share > 0)
	{
		MemoryContext spi = MemoryContextSwitchTo(caller);

		mtdpp_held_out_prepare(h, src, order_expr, item_expr, pos_col == NULL ? NULL : pos_expr);
		MemoryContextSwitchTo(spi);
		appendStringInfo(&query, " WHERE (%s) IS NOT TRUE", h->predicate);
	}
	handoff = mtdpp_handoff_arm(query.data, caller);
	PG_TRY();
	{
		if (SPI_execute_with_args(query.data, 3, (Oid[]) {JSONBOID, TEXTARRAYOID, INT8ARRAYOID},
								  (Datum[]) {pjson, OidIsValid(keys->type) ?
									  keys->array :
								  (Datum) 0, h->orders},
								  (char[]) {' ', OidIsValid(keys->type) ? ' ' : 'n', h->orders ? ' ' : 'n'},
								  true, 0) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "could not run %s", query.data);
	}
	PG_FINALLY();
	{
		mtdpp_handoff_disarm(handoff);
	}
	PG_END_TRY();
	/* out of SPI's memory, which SPI_finish frees */
	{
		bytea	   *value = DatumGetByteaPP(SPI_getbinval(SPI_tuptable->vals[0],
														  SPI_tuptable->tupdesc, 1, &isnull));

		*lines = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
		m = mtdpp_handoff_take(handoff, value, holder);
		if (m == NULL)
		{
			*holder = AllocSetContextCreate(caller, "mtdpp trained model", ALLOCSET_DEFAULT_SIZES);
			MemoryContextSwitchTo(*holder);
			m = mtdpp_model_deserialize(value);
		}
	}
	SPI_finish();
	MemoryContextSwitchTo(caller);
	return m;
}

/* The row mtdpp_train returns for model M, stored as MODEL_ID. */
static Datum
result_row(FunctionCallInfo fcinfo, int model_id, text *name, const MtdppModel *m)
{
	TupleDesc	tupdesc;
	Datum		values[10];
	bool		nulls[10] = {0};
	bool		isnull;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "mtdpp_train must return a row");
	tupdesc = BlessTupleDesc(tupdesc);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT version FROM mtdpp.models WHERE model_id OPERATOR(pg_catalog.=) $1", 1,
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
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

/*
 * The source of the call, argument 1, into SRC: a regclass, or a text that
 * is a query (source.c says how it is told) or else the name of a table or
 * view, read as the regclass form of the call reads it.
 */
static void
open_source(FunctionCallInfo fcinfo, TrainSource *src)
{
	Oid			relid;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("source must not be NULL"),
				 errhint("Name a table or view of order lines, such as 'order_lines', or pass a query of them.")));
	if (get_fn_expr_argtype(fcinfo->flinfo, 1) == TEXTOID)
	{
		char	   *given = text_to_cstring(PG_GETARG_TEXT_PP(1));

		if (mtdpp_source_is_query(given))
		{
			mtdpp_source_open(src, InvalidOid, given);
			return;
		}
		relid = DatumGetObjectId(DirectFunctionCall1(regclassin, CStringGetDatum(given)));
	}
	else
		relid = PG_GETARG_OID(1);
	if (get_rel_name(relid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	mtdpp_source_open(src, relid, NULL);
}

/* what the version read: its lines, and its baskets (trained on and held out) */
static void
record_read(int model_id, int64 lines, int64 baskets)
{
	if (!mtdpp_has_column("lines_read"))
		return;					/* a database not yet updated to 0.6.0 */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("UPDATE mtdpp.models SET lines_read = $2, baskets_read = $3 "
							  "WHERE model_id OPERATOR(pg_catalog.=) $1", 3,
							  (Oid[]) {INT4OID, INT8OID, INT8OID},
							  (Datum[]) {Int32GetDatum(model_id), Int64GetDatum(lines), Int64GetDatum(baskets)},
							  NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record what model %d read", model_id);
	SPI_finish();
}

Datum
mtdpp_train(PG_FUNCTION_ARGS)
{
	text	   *name = mtdpp_text_arg(fcinfo, 0, "model name");
	TrainSource src;
	MtdppParams p;
	Datum		pjson;
	MtdppModel *m;
	MemoryContext holder;
	Datum		result;
	int			model_id;
	bool		reports,
				activate = PG_ARGISNULL(11) ? true : PG_GETARG_BOOL(11);
	MtdppTrainedKeys keys = {0};
	HeldOut		h = {0};
	char	   *rule = NULL;
	int64		lines,
				test_baskets = 0;
	double		test_mpr;

	mtdpp_check_name("model name", name);
	open_source(fcinfo, &src);
	/* the columns are read before the hyperparameters are checked, as before */
	(void) mtdpp_text_arg(fcinfo, 2, "order_col");
	(void) mtdpp_text_arg(fcinfo, 3, "item_col");
	pjson = training_params(fcinfo, name, &p);
	/* held-out tests and promotion rules since 0.6.0 */
	if (PG_NARGS() > 17)
	{
		mtdpp_held_out_args(fcinfo, 14, &h, p.seed, p.target == MTDPP_TARGET_LAST);
		rule = mtdpp_promote_rule(fcinfo, 17, &h, activate);
	}
	/* a name keeps its item type: refused before the lines are read */
	mtdpp_check_item_type(text_to_cstring(name),
						  item_key_type(&src, text_to_cstring(PG_GETARG_TEXT_PP(3))));
	/* seen in mtdpp_progress until stored; an error or a cancel clears it */
	reports = mtdpp_progress_begin(text_to_cstring(name));
	mtdpp_progress_kind(mtdpp_kind_name(p.kind));
	if (PG_NARGS() > 13 && !PG_ARGISNULL(13) && PG_GETARG_BOOL(13) &&
		OidIsValid(item_key_type(&src, text_to_cstring(PG_GETARG_TEXT_PP(3)))))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("warm_start needs integer item ids"),
				 errdetail("Items known by bigint, text or uuid keys are numbered anew by each training."),
				 errhint("Train without warm_start.")));
	/* a query runs once, here: everything below reads what it returned */
	mtdpp_source_materialize(&src, (const char *[]) {text_to_cstring(PG_GETARG_TEXT_PP(2)),
							 text_to_cstring(PG_GETARG_TEXT_PP(3)),
							 PG_ARGISNULL(4) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(4)), h.by}, 4);
	m = run_fit(fcinfo, &src, pjson, &keys, &h, &lines, &holder);
	mtdpp_progress_phase(MTDPP_PHASE_SAVING);
	/* under a rule, stored inactive, then promoted or not */
	model_id = mtdpp_store_model(text_to_cstring(name), m, activate && rule == NULL,
								 mtdpp_source_recorded(&src),
								 OidIsValid(keys.type) ? &keys : NULL);
	if (h.share > 0)
		mtdpp_store_test(model_id, mtdpp_held_out_test(&h, m, text_to_cstring(name), model_id, &test_mpr, &test_baskets));
	record_read(model_id, lines, (int64) m->n_baskets + test_baskets);
	if (rule != NULL)
		mtdpp_promote(text_to_cstring(name), model_id, rule, &h);
	mtdpp_source_close(&src);
	if (reports)
		mtdpp_progress_end();
	result = result_row(fcinfo, model_id, name, m);
	MemoryContextDelete(holder);
	PG_RETURN_DATUM(result);
}
