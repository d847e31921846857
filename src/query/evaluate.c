/*
 * query/evaluate.c
 *		mtdpp_evaluate: mean percentile rank and precision@K, in the database.
 *
 * The protocol of the benchmark (data/README.md of the benchmark data):
 * for each test basket, context = the basket without its held-out item;
 * candidates = every catalog item not in the context; every candidate is
 * scored, and
 *		rank = 1 + #(candidates scored higher) + 0.5 #(other candidates tied)
 *		PR = 100 (n - rank) / (n - 1),		n = number of candidates
 * MPR is the mean PR, precision@K the percentage of baskets with rank <= K.
 *
 * The catalog is the model's items, or, given catalog_size, a larger one
 * whose items the model never saw: those score below every known item and
 * tie among themselves, so a held-out item the model never saw is ranked
 * honestly rather than dropped.
 *
 * mtdpp_evaluate_at reads several held-out items per basket too (an
 * integer[] column): the context is the basket without all of them, each is
 * ranked among the candidates as above (the others among them), and an item
 * ranked K or better is a hit at K; per basket, precision@K = hits / K
 * (at most 1: held-out items tied across the K-th place could count more),
 * recall@K = hits / held-out items, NDCG@K = DCG / ideal DCG with binary
 * gains, DCG = sum over the hits of 1 / log2(rank + 1) and the ideal DCG
 * that of min(K, held-out items) hits at ranks 1, 2, ...  (at most 1 as
 * well); hit rate is the share of baskets with a hit.  Every figure is a
 * percentage of the test baskets, as mtdpp_evaluate's are.
 *
 * test_query checks the arguments and builds the SQL that reads the test
 * baskets; rank_test_baskets runs it, and basket_ranks applies the protocol
 * to one basket with the ranking of topk.c (mtdpp_ranks_of), which scores
 * exactly only the candidates that may rank above a held-out item.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/tuplestore.h"

#include "model/model.h"
#include "query/arguments.h"
#include "query/item_args.h"
#include "score/score.h"
#include "shown.h"
#include "store/store.h"

PG_FUNCTION_INFO_V1(mtdpp_evaluate);
PG_FUNCTION_INFO_V1(mtdpp_evaluate_at);

/* the largest K mtdpp_evaluate_at takes, and how many of them */
#define EVAL_MAX_K		100000
#define EVAL_MAX_KS		1000

/* COL must be a column of RELID; ARRAYS: the held-out column may be an int[] */
static void
check_column(Oid relid, const char *col, const char *what, bool arrays)
{
	if (get_attnum(relid, col) == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" (%s) does not exist in %s", mtdpp_shown(col), what,
						get_rel_name(relid)),
				 arrays ?
				 errhint("The test source needs a basket column (int[]) and a held-out column (int, or int[] for several items); name them with basket_col and held_out_col.") :
				 errhint("The test source needs a basket (int[]) and a held-out item (int) column; name them with basket_col and held_out_col.")));
}

static char *
json_quoted(const char *s)
{
	StringInfoData buf;

	initStringInfo(&buf);
	escape_json(&buf, s);
	return buf.data;
}

/* what mtdpp_evaluate's test baskets add up to */
typedef struct EvalTotals
{
	double		sum_pr;
	int			hits5,
				hits10,
				hits20,
				counted;
} EvalTotals;

/* what mtdpp_evaluate_at's add up to, for each of the NK values of K */
typedef struct EvalAtTotals
{
	int			nk;
	int		   *k;
	double	   *recall,
			   *ndcg;
	int64	   *hit,
			   *in_top;			/* hits, at most K a basket: precision's numerator */
	int64		counted;
} EvalAtTotals;

/* the rank of each of NH held-out items among N candidates: adds to ARG */
typedef void (*EvalAdd) (void *arg, const double *rank, int nh, int n);

/*
 * The query that reads the test baskets of the source in argument 1, the
 * basket and held-out columns in arguments COL_ARG and COL_ARG + 1, its
 * arguments checked; the source's OID into *RELID, whether the held-out
 * column is an array (several items a basket) into *HELD_ARRAY, which may be
 * NULL (then the column is read as one integer).
 */
static char *
test_query(FunctionCallInfo fcinfo, int col_arg, const char *type, Oid *relid, bool *held_array)
{
	char	   *basket_col,
			   *held_col;
	StringInfoData q;
	bool		array = false;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("source must not be NULL"),
				 errhint("Name a table or view of test baskets with their held-out items.")));
	*relid = PG_GETARG_OID(1);
	if (get_rel_name(*relid) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", *relid)));
	if (PG_ARGISNULL(col_arg) || PG_ARGISNULL(col_arg + 1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("basket_col and held_out_col must not be NULL")));
	basket_col = text_to_cstring(PG_GETARG_TEXT_PP(col_arg));
	held_col = text_to_cstring(PG_GETARG_TEXT_PP(col_arg + 1));
	check_column(*relid, basket_col, "basket_col", held_array != NULL);
	check_column(*relid, held_col, "held_out_col", held_array != NULL);
	if (held_array != NULL)
	{
		Oid			type = getBaseType(get_atttype(*relid, get_attnum(*relid, held_col)));

		array = OidIsValid(get_element_type(type));
		*held_array = array;
	}

	initStringInfo(&q);
	appendStringInfo(&q, "SELECT %s::pg_catalog.%s[], %s::pg_catalog.%s%s FROM %s",
					 quote_identifier(basket_col), type, quote_identifier(held_col), type,
					 array ? "[]" : "", mtdpp_qualified_relation(*relid));
	return q.data;
}

/*
 * The columns of the test baskets (arguments COL_ARG and COL_ARG + 1 of
 * RELID) hold items of the type model MODEL_NAME takes from a call
 * (item_args.c), checked before any basket is scored: cast to the model's
 * type, integers would read as text keys no model knows, every held-out
 * item ranked last without a word, and keys as integers would not read at
 * all.  The basket column is an array; the held-out one an item, or with
 * HELD_ARRAYS an array of them too.
 */
static void
check_test_types(FunctionCallInfo fcinfo, int col_arg, Oid relid, const MtdppItemKeys *keys,
				 const char *model_name, bool held_arrays)
{
	const char *mt = format_type_be(keys != NULL ? keys->type : INT4OID);

	for (int c = 0; c < 2; c++)
	{
		char	   *col = text_to_cstring(PG_GETARG_TEXT_PP(col_arg + c));
		const char *what = c == 0 ? "basket_col" : "held_out_col";
		Oid			given = get_atttype(relid, get_attnum(relid, col));
		Oid			type = getBaseType(given);
		Oid			elem = get_element_type(type);

		if (OidIsValid(elem))
			elem = getBaseType(elem);
		if (c == 0 && !OidIsValid(elem))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" (%s) of %s is %s, not an array of items",
							mtdpp_shown(col), what, get_rel_name(relid), format_type_be(given)),
					 errhint("Give each test basket as an array of the items of model \"%s\" (%s[]).",
							 mtdpp_shown(model_name), mt)));
		if (c == 1 && OidIsValid(elem) && !held_arrays)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" (%s) of %s is %s, but mtdpp_evaluate holds out one item a basket",
							mtdpp_shown(col), what, get_rel_name(relid), format_type_be(given)),
					 errhint("Use mtdpp_evaluate_at for several held-out items a basket.")));
		if (!mtdpp_item_type_accepted(OidIsValid(elem) ? elem : type, keys))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" (%s) of %s is %s, but the items of model \"%s\" are %s",
							mtdpp_shown(col), what, get_rel_name(relid), format_type_be(given),
							mtdpp_shown(model_name), mt),
					 errhint("Evaluate a model trained on %s items, or give the test baskets in the model's type (a view can cast the column: %s::%s%s).",
							 format_type_be(OidIsValid(elem) ? elem : type), mtdpp_shown(quote_identifier(col)),
							 mt, OidIsValid(elem) ? "[]" : "")));
	}
}

/*
 * The protocol for one test basket (row ROW of the source): the rank of
 * each of the NH held-out items HELD (distinct item ids) among the
 * candidates into RANK; returns the number of candidates, or 0 when fewer
 * than two are left (the basket counts for nothing).  IN_CTX (n_items
 * flags, all false) is scratch.
 */
static int
basket_ranks(const MtdppModel *m, ArrayType *basket, const int32 *held, int nh,
			 int catalog_size, uint64 row, bool *in_ctx, double *rank)
{
	int32	   *ids,
			   *rest,
			   *known = palloc(sizeof(int32) * Max(nh, 1));
	int		   *above = palloc(sizeof(int) * Max(nh, 1));
	int		   *ties = palloc(sizeof(int) * Max(nh, 1));
	int32	   *ctx;
	int			nids,
				nrest = 0,
				nknown = 0,
				b = 0,
				n_ctx_distinct = 0,
				known_cands = 0,
				n;

	if (ARR_NDIM(basket) > 1 || array_contains_nulls(basket))
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("test basket at row " UINT64_FORMAT " is not a one-dimensional array without NULLs",
						row + 1)));
	nids = ArrayGetNItems(ARR_NDIM(basket), ARR_DIMS(basket));
	ids = (int32 *) ARR_DATA_PTR(basket);

	/* the context: the basket without its held-out items */
	rest = palloc(sizeof(int32) * Max(nids, 1));
	for (int k = 0; k < nids; k++)
	{
		bool		is_held = false;

		for (int h = 0; h < nh && !is_held; h++)
			is_held = ids[k] == held[h];
		if (!is_held)
			rest[nrest++] = ids[k];
	}
	ctx = mtdpp_basket_context(m, rest, nrest, NULL, in_ctx, &b, &n_ctx_distinct, NULL);

	for (int h = 0; h < nh; h++)
		if (mtdpp_model_index(m, held[h]) >= 0)
			known[nknown++] = mtdpp_model_index(m, held[h]);
	mtdpp_ranks_of(m, ctx, b, in_ctx, known, nknown, 0.0, above, ties, &known_cands);
	for (int k = 0; k < nids; k++)
	{
		int			idx = mtdpp_model_index(m, ids[k]);

		if (idx >= 0)
			in_ctx[idx] = false;	/* ready for the next basket */
	}

	if (catalog_size > 0)
		n = catalog_size - n_ctx_distinct;
	else
		n = known_cands + (nh - nknown);
	if (n < 2)
		return 0;
	for (int h = 0, j = 0; h < nh; h++)
	{
		if (mtdpp_model_index(m, held[h]) >= 0)
		{
			rank[h] = 1.0 + above[j] + 0.5 * ties[j];
			j++;
		}
		else					/* unknown: below every known item, tied with the unknown */
			rank[h] = 1.0 + known_cands + 0.5 * Max(0, n - known_cands - 1);
	}
	return n;
}

/* mtdpp_evaluate's figures of one basket, its one held-out item ranked RANK */
static void
evaluate_add(void *arg, const double *rank, int nh, int n)
{
	EvalTotals *totals = arg;

	totals->sum_pr += 100.0 * (n - rank[0]) / (n - 1);
	totals->hits5 += rank[0] <= 5.0;
	totals->hits10 += rank[0] <= 10.0;
	totals->hits20 += rank[0] <= 20.0;
	totals->counted++;
}

/* mtdpp_evaluate_at's figures of one basket, at every K */
static void
evaluate_at_add(void *arg, const double *rank, int nh, int n)
{
	EvalAtTotals *t = arg;

	for (int i = 0; i < t->nk; i++)
	{
		int			k = t->k[i],
					hits = 0;
		double		dcg = 0.0,
					ideal = 0.0;

		for (int h = 0; h < nh; h++)
			if (rank[h] <= k)
			{
				hits++;
				dcg += 1.0 / log2(rank[h] + 1.0);
			}
		for (int r = 1; r <= Min(k, nh); r++)
			ideal += 1.0 / log2(r + 1.0);
		t->in_top[i] += Min(hits, k);
		t->recall[i] += (double) hits / nh;
		t->ndcg[i] += Min(1.0, dcg / ideal);
		t->hit[i] += hits > 0;
	}
	t->counted++;
}

/*
 * The held-out items of one row, from datum D (one integer, or with ARRAY
 * an integer[]), distinct, into *HELD; how many (0: the row counts for
 * nothing).
 */
static int
held_items(Datum d, bool array, uint64 row, int32 **held)
{
	ArrayType  *a;
	int			n,
				nd = 0;

	if (!array)
	{
		*held = palloc(sizeof(int32));
		(*held)[0] = DatumGetInt32(d);
		return 1;
	}
	a = DatumGetArrayTypeP(d);
	if (ARR_NDIM(a) > 1 || array_contains_nulls(a))
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("held-out items at row " UINT64_FORMAT " are not a one-dimensional array without NULLs",
						row + 1),
				 errhint("Hold out an integer[] of item ids; an empty array or NULL leaves the row out.")));
	n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
	*held = palloc(sizeof(int32) * Max(n, 1));
	memcpy(*held, ARR_DATA_PTR(a), sizeof(int32) * n);
	qsort(*held, n, sizeof(int32), mtdpp_cmp_int32);
	for (int i = 0; i < n; i++)
		if (i == 0 || (*held)[i] != (*held)[i - 1])
			(*held)[nd++] = (*held)[i];
	return nd;
}

/* the SQL name, in pg_catalog, of the keys' type */
static const char *
key_type_sql(const MtdppItemKeys *keys)
{
	return keys->type == INT8OID ? "int8" : keys->type == UUIDOID ? "uuid" : "text";
}

/* an array of keys D as an integer[] of item numbers */
static Datum
item_numbers(const MtdppItemKeys *keys, Datum d)
{
	int			n;
	int32	   *ids = mtdpp_key_array_items(keys, DatumGetArrayTypeP(d), &n);
	Datum	   *v = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		v[i] = Int32GetDatum(ids[i]);
	return PointerGetDatum(construct_array(v, n, INT4OID, sizeof(int32), true, TYPALIGN_INT));
}

static void rank_test_baskets_with(const MtdppModel *m, const MtdppItemKeys *keys, const char *query,
								   int nargs, Oid *types, Datum *values, bool array,
								   int catalog_size, EvalAdd add, void *arg);

/*
 * Every test basket QUERY reads (its held-out column an integer[] if
 * ARRAY), ranked with M, added by ADD to ARG.
 */
static void
rank_test_baskets(const MtdppModel *m, const MtdppItemKeys *keys, const char *query, bool array,
				  int catalog_size, EvalAdd add, void *arg)
{
	rank_test_baskets_with(m, keys, query, 0, NULL, NULL, array, catalog_size, add, arg);
}

/* rank_test_baskets with NARGS parameters of QUERY, of TYPES and VALUES (none NULL) */
static void
rank_test_baskets_with(const MtdppModel *m, const MtdppItemKeys *keys, const char *query,
					   int nargs, Oid *types, Datum *values, bool array,
					   int catalog_size, EvalAdd add, void *arg)
{
	bool	   *in_ctx;
	MemoryContext per_basket,
				old;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(query, nargs, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read %s", query);

	in_ctx = palloc0(sizeof(bool) * Max(m->n_items, 1));
	per_basket = AllocSetContextCreate(CurrentMemoryContext, "mtdpp evaluate basket",
									   ALLOCSET_DEFAULT_SIZES);
	for (uint64 row = 0; row < SPI_processed; row++)
	{
		HeapTuple	tup = SPI_tuptable->vals[row];
		bool		bnull,
					hnull;
		Datum		bd = SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &bnull);
		Datum		hd = SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &hnull);
		int32	   *held;
		double	   *rank;
		int			nh,
					n;

		if (bnull || hnull)
			continue;
		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(per_basket);
		if (keys != NULL)
		{
			/* keys as the model's item numbers */
			bd = item_numbers(keys, bd);
			hd = array ? item_numbers(keys, hd) : Int32GetDatum(mtdpp_key_item(keys, hd));
		}
		nh = held_items(hd, array, row, &held);
		rank = palloc(sizeof(double) * Max(nh, 1));
		n = nh > 0 ? basket_ranks(m, DatumGetArrayTypeP(bd), held, nh, catalog_size, row,
								  in_ctx, rank) : 0;
		MemoryContextSwitchTo(old);
		if (n > 0)
			add(arg, rank, nh, n);
		MemoryContextReset(per_basket);
	}
	SPI_finish();
}

/* the catalog size of argument ARG, checked against M: -1 for the model's items */
static int
catalog_arg(FunctionCallInfo fcinfo, int arg, const MtdppModel *m)
{
	int			catalog_size = PG_ARGISNULL(arg) ? -1 : PG_GETARG_INT32(arg);

	if (catalog_size != -1 && catalog_size < m->n_items)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("catalog_size %d is smaller than the model's %d items", catalog_size, m->n_items),
				 errhint("Pass the number of distinct items of the whole catalog, or NULL for the model's items.")));
	return catalog_size;
}

Datum
mtdpp_evaluate(PG_FUNCTION_ARGS)
{
	const char *name = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			relid;
	int			catalog_size;
	char	   *query;
	MtdppModel *m;
	int			model_id;
	EvalTotals	totals = {0};
	instr_time	start;
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {0};
	double		seconds;
	int			counted;
	const MtdppItemKeys *keys;
	const char *model_name;

	INSTR_TIME_SET_CURRENT(start);
	query = test_query(fcinfo, 2, "int4", &relid, NULL);
	m = mtdpp_lookup_model(name, &model_id, &model_name);
	keys = mtdpp_model_keys(m);
	check_test_types(fcinfo, 2, relid, keys, model_name, false);
	if (keys != NULL)
		query = test_query(fcinfo, 2, key_type_sql(keys), &relid, NULL);
	catalog_size = catalog_arg(fcinfo, 4, m);

	rank_test_baskets(m, keys, query, false, catalog_size, evaluate_add, &totals);
	counted = totals.counted;
	if (counted == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("no test basket to evaluate in %s", get_rel_name(relid)),
				 errdetail("No basket was evaluated; the metrics recorded for the model are left as they were."),
				 errhint("Each row needs a non-NULL basket and held-out item, with at least two candidates left.")));

	seconds = mtdpp_seconds_since(start);

	values[0] = Int32GetDatum(counted);
	values[1] = Float8GetDatum(totals.sum_pr / counted);
	values[2] = Float8GetDatum(100.0 * totals.hits5 / counted);
	values[3] = Float8GetDatum(100.0 * totals.hits10 / counted);
	values[4] = Float8GetDatum(100.0 * totals.hits20 / counted);
	values[5] = Float8GetDatum(seconds);

	/* which baskets: the user's table, its columns, the catalog they were ranked in */
	mtdpp_store_metrics(model_id,
						psprintf("{\"baskets\": %d, \"mpr\": %.4f, \"precision_at_5\": %.4f, "
								 "\"precision_at_10\": %.4f, \"precision_at_20\": %.4f, "
								 "\"evaluated_on\": %s, \"evaluated_relation\": %s, "
								 "\"basket_col\": %s, \"held_out_col\": %s, \"catalog_size\": %s, "
								 "\"evaluate_seconds\": %.3f}",
								 counted, totals.sum_pr / counted, 100.0 * totals.hits5 / counted,
								 100.0 * totals.hits10 / counted, 100.0 * totals.hits20 / counted,
								 json_quoted(get_rel_name(relid)), json_quoted(mtdpp_qualified_relation(relid)),
								 json_quoted(text_to_cstring(PG_GETARG_TEXT_PP(2))),
								 json_quoted(text_to_cstring(PG_GETARG_TEXT_PP(3))),
								 catalog_size > 0 ? psprintf("%d", catalog_size) : "null", seconds));

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "mtdpp_evaluate must return a row");
	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * The values of K of argument ARG, named WHAT: a non-empty integer[] of values from 1 to
 * EVAL_MAX_K without NULLs, sorted, each once, into *K; how many.
 */
int
mtdpp_k_values(FunctionCallInfo fcinfo, int arg, const char *what, int **k)
{
	ArrayType  *a;
	int			n,
				nd = 0;
	const char *hint = "Pass the cut-offs wanted, such as ARRAY[5, 10, 20].";

	if (PG_ARGISNULL(arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what),
				 errhint("%s", hint)));
	a = PG_GETARG_ARRAYTYPE_P(arg);
	n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array, not %d-dimensional", what, ARR_NDIM(a)),
				 errhint("%s", hint)));
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must hold at least one value", what),
				 errhint("%s", hint)));
	if (array_contains_nulls(a))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not contain NULL elements", what),
				 errhint("%s", hint)));
	if (n > EVAL_MAX_KS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s holds %d values, at most %d are taken", what, n, EVAL_MAX_KS),
				 errhint("%s", hint)));
	*k = palloc(sizeof(int) * n);
	memcpy(*k, ARR_DATA_PTR(a), sizeof(int) * n);
	for (int i = 0; i < n; i++)
		if ((*k)[i] < 1 || (*k)[i] > EVAL_MAX_K)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("each value of %s must be between 1 and %d, not %d", what, EVAL_MAX_K, (*k)[i]),
					 errhint("%s", hint)));
	qsort(*k, n, sizeof(int), mtdpp_cmp_int32);
	for (int i = 0; i < n; i++)
		if (i == 0 || (*k)[i] != (*k)[i - 1])
			(*k)[nd++] = (*k)[i];
	return nd;
}

/*
 * mtdpp_evaluate_at(model, source, k, basket_col, held_out_col,
 * catalog_size): for each K of the array K, in increasing order, the test baskets
 * counted and the hit rate, precision, recall and NDCG at K of MODEL on
 * them, as percentages (see the top of this file).  Stores nothing.
 */
Datum
mtdpp_evaluate_at(PG_FUNCTION_ARGS)
{
	const char *name = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			relid;
	bool		array;
	char	   *query;
	MtdppModel *m;
	EvalAtTotals t = {0};
	ReturnSetInfo *rsinfo;
	const MtdppItemKeys *keys;
	const char *model_name;

	query = test_query(fcinfo, 3, "int4", &relid, &array);
	t.nk = mtdpp_k_values(fcinfo, 2, "k", &t.k);
	m = mtdpp_lookup_model(name, NULL, &model_name);
	keys = mtdpp_model_keys(m);
	check_test_types(fcinfo, 3, relid, keys, model_name, true);
	if (keys != NULL)
		query = test_query(fcinfo, 3, key_type_sql(keys), &relid, &array);
	t.in_top = palloc0(sizeof(int64) * t.nk);
	t.recall = palloc0(sizeof(double) * t.nk);
	t.ndcg = palloc0(sizeof(double) * t.nk);
	t.hit = palloc0(sizeof(int64) * t.nk);

	rank_test_baskets(m, keys, query, array, catalog_arg(fcinfo, 5, m), evaluate_at_add, &t);
	if (t.counted == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("no test basket to evaluate in %s", get_rel_name(relid)),
				 errhint("Each row needs a non-NULL basket and held-out items, with at least two candidates left.")));

	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	for (int i = 0; i < t.nk; i++)
	{
		Datum		values[6];
		bool		nulls[6] = {0};

		values[0] = Int32GetDatum(t.k[i]);
		values[1] = Int64GetDatum(t.counted);
		values[2] = Float8GetDatum(100.0 * t.hit[i] / t.counted);
		values[3] = Float8GetDatum(100.0 * t.in_top[i] / ((double) t.k[i] * t.counted));
		values[4] = Float8GetDatum(100.0 * t.recall[i] / t.counted);
		values[5] = Float8GetDatum(100.0 * t.ndcg[i] / t.counted);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}

/* both adders: mtdpp_evaluate's MPR and mtdpp_evaluate_at's figures at every K */
typedef struct EvalBoth
{
	EvalTotals	one;
	EvalAtTotals at;
} EvalBoth;

static void
evaluate_both_add(void *arg, const double *rank, int nh, int n)
{
	EvalBoth   *b = arg;

	evaluate_add(&b->one, rank, nh, n);
	evaluate_at_add(&b->at, rank, nh, n);
}

/*
 * The figures of M (its keys KEYS, NULL for integers) on the test baskets
 * QUERY reads with its NARGS parameters (a basket and one held-out item a
 * row), by mtdpp_evaluate's protocol over the model's items: the baskets
 * counted, MPR, and at each of the NK cut-offs K precision (the share of
 * baskets whose item ranks K or better, mtdpp_evaluate's), recall and NDCG
 * (mtdpp_evaluate_at's), into F, whose arrays hold NK values.
 */
void
mtdpp_evaluate_baskets(const MtdppModel *m, const MtdppItemKeys *keys, const char *query,
					   int nargs, Oid *types, Datum *values, MtdppTestFigures *f)
{
	EvalBoth	b = {0};

	b.at.nk = f->nk;
	b.at.k = (int *) f->k;
	b.at.in_top = palloc0(sizeof(int64) * f->nk);
	b.at.recall = palloc0(sizeof(double) * f->nk);
	b.at.ndcg = palloc0(sizeof(double) * f->nk);
	b.at.hit = palloc0(sizeof(int64) * f->nk);
	rank_test_baskets_with(m, keys, query, nargs, types, values, false, -1, evaluate_both_add, &b);
	f->baskets = b.one.counted;
	f->mpr = b.one.counted > 0 ? b.one.sum_pr / b.one.counted : 0.0;
	for (int i = 0; i < f->nk; i++)
	{
		f->precision[i] = b.one.counted > 0 ? 100.0 * b.at.hit[i] / b.one.counted : 0.0;
		f->recall[i] = b.one.counted > 0 ? 100.0 * b.at.recall[i] / b.one.counted : 0.0;
		f->ndcg[i] = b.one.counted > 0 ? 100.0 * b.at.ndcg[i] / b.one.counted : 0.0;
	}
}
