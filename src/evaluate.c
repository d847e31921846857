/*
 * evaluate.c
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
 * test_query checks the arguments and builds the SQL that reads the test
 * baskets; rank_test_baskets runs it, and rank_basket applies the protocol
 * to one basket with the ranking of topk.c (mtdpp_rank_of), which scores
 * exactly only the candidates that may rank above the held-out item.
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

#include "model.h"
#include "score.h"
#include "store.h"

PG_FUNCTION_INFO_V1(mtdpp_evaluate);

static void
check_column(Oid relid, const char *col, const char *what)
{
	if (get_attnum(relid, col) == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" (%s) does not exist in %s", mtdpp_shown(col), what,
						get_rel_name(relid)),
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

/* what the test baskets add up to */
typedef struct EvalTotals
{
	double		sum_pr;
	int			hits5,
				hits10,
				hits20,
				counted;
} EvalTotals;

/*
 * The query that reads the test baskets of mtdpp_evaluate's source, its
 * arguments checked; the source's OID into *RELID.
 */
static char *
test_query(FunctionCallInfo fcinfo, Oid *relid)
{
	char	   *basket_col,
			   *held_col;
	StringInfoData q;

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
	if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("basket_col and held_out_col must not be NULL")));
	basket_col = text_to_cstring(PG_GETARG_TEXT_PP(2));
	held_col = text_to_cstring(PG_GETARG_TEXT_PP(3));
	check_column(*relid, basket_col, "basket_col");
	check_column(*relid, held_col, "held_out_col");

	initStringInfo(&q);
	appendStringInfo(&q, "SELECT %s::integer[], %s::integer FROM %s",
					 quote_identifier(basket_col), quote_identifier(held_col),
					 mtdpp_qualified_relation(*relid));
	return q.data;
}

/*
 * The protocol for one test basket (row ROW of the source): the rank of the
 * held-out item HELD among the candidates, added to TOTALS unless fewer than
 * two candidates are left.  IN_CTX (n_items flags, all false) is scratch.
 */
static void
rank_basket(const MtdppModel *m, ArrayType *basket, int32 held, int catalog_size,
			uint64 row, bool *in_ctx, EvalTotals *totals)
{
	int			held_idx = mtdpp_model_index(m, held);
	int32	   *ids;
	int32	   *ctx;
	int			nids,
				b = 0,
				n_ctx_distinct = 0,
				known_cands = 0,
				n;
	double		above = 0.0,
				ties = 0.0,
				rank;

	if (ARR_NDIM(basket) > 1 || array_contains_nulls(basket))
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("test basket at row " UINT64_FORMAT " is not a one-dimensional array without NULLs",
						row + 1)));
	nids = ArrayGetNItems(ARR_NDIM(basket), ARR_DIMS(basket));
	ids = (int32 *) ARR_DATA_PTR(basket);

	ctx = mtdpp_basket_context(m, ids, nids, &held, in_ctx, &b, &n_ctx_distinct);

	if (held_idx >= 0)
	{
		int			na,
					nt;

		mtdpp_rank_of(m, ctx, b, in_ctx, held_idx, 0.0, &na, &nt, &known_cands);
		above = na;
		ties = nt;
	}
	else
		for (int i = 0; i < m->n_items; i++)
			known_cands += !in_ctx[i];
	for (int k = 0; k < nids; k++)
	{
		int			idx = mtdpp_model_index(m, ids[k]);

		if (idx >= 0)
			in_ctx[idx] = false;	/* ready for the next basket */
	}

	if (catalog_size > 0)
		n = catalog_size - n_ctx_distinct;
	else
		n = known_cands + (held_idx < 0 ? 1 : 0);
	if (held_idx < 0)			/* unknown: below every known item, tied with the unknown */
	{
		above = known_cands;
		ties = Max(0, n - known_cands - 1);
	}
	if (n < 2)
		return;
	rank = 1.0 + above + 0.5 * ties;
	totals->sum_pr += 100.0 * (n - rank) / (n - 1);
	totals->hits5 += rank <= 5.0;
	totals->hits10 += rank <= 10.0;
	totals->hits20 += rank <= 20.0;
	totals->counted++;
}

/* Every test basket QUERY reads, ranked with M into TOTALS. */
static void
rank_test_baskets(const MtdppModel *m, const char *query, int catalog_size,
				  EvalTotals *totals)
{
	bool	   *in_ctx;
	MemoryContext per_basket,
				old;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(query, true, 0) != SPI_OK_SELECT)
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

		if (bnull || hnull)
			continue;
		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(per_basket);
		rank_basket(m, DatumGetArrayTypeP(bd), DatumGetInt32(hd), catalog_size, row,
					in_ctx, totals);
		MemoryContextSwitchTo(old);
		MemoryContextReset(per_basket);
	}
	SPI_finish();
}

Datum
mtdpp_evaluate(PG_FUNCTION_ARGS)
{
	const char *name = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			relid;
	int			catalog_size = PG_ARGISNULL(4) ? -1 : PG_GETARG_INT32(4);
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

	INSTR_TIME_SET_CURRENT(start);
	query = test_query(fcinfo, &relid);
	m = mtdpp_lookup_model(name, &model_id, NULL);
	if (catalog_size != -1 && catalog_size < m->n_items)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("catalog_size %d is smaller than the model's %d items", catalog_size, m->n_items),
				 errhint("Pass the number of distinct items of the whole catalog, or NULL for the model's items.")));

	rank_test_baskets(m, query, catalog_size, &totals);
	counted = totals.counted;
	if (counted == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("no test basket to evaluate in %s", get_rel_name(relid)),
				 errhint("Each row needs a non-NULL basket and held-out item, with at least two candidates left.")));

	seconds = mtdpp_seconds_since(start);

	values[0] = Int32GetDatum(counted);
	values[1] = Float8GetDatum(totals.sum_pr / counted);
	values[2] = Float8GetDatum(100.0 * totals.hits5 / counted);
	values[3] = Float8GetDatum(100.0 * totals.hits10 / counted);
	values[4] = Float8GetDatum(100.0 * totals.hits20 / counted);
	values[5] = Float8GetDatum(seconds);

	mtdpp_store_metrics(model_id,
						psprintf("{\"baskets\": %d, \"mpr\": %.4f, \"precision_at_5\": %.4f, "
								 "\"precision_at_10\": %.4f, \"precision_at_20\": %.4f, "
								 "\"evaluated_on\": %s, \"evaluate_seconds\": %.3f}",
								 counted, totals.sum_pr / counted, 100.0 * totals.hits5 / counted,
								 100.0 * totals.hits10 / counted, 100.0 * totals.hits20 / counted,
								 json_quoted(get_rel_name(relid)), seconds));

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "mtdpp_evaluate must return a row");
	tupdesc = BlessTupleDesc(tupdesc);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
