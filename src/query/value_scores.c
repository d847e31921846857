/*
 * query/value_scores.c
 *		The scores of a model read from its value, in double precision: a
 *		function of measurement builds alone, not of the extension's SQL.
 *
 * A model is stored, cached and so scored in single precision: the tables
 * hold its factors, task factors and biases as real, the cache as float
 * (model.h), while its fit computes in double and its value (the bytea the
 * aggregate mtdpp_fit returns) holds doubles.  What that rounding costs is
 * measured by scoring one trained model both ways: mtdpp_score on the model
 * mtdpp_save stored from the value, and this function on the value itself,
 * through the same routines of its kind (kinds.h) with the factors as
 * trained.
 *
 * Built only with -DMTDPP_VALUE_SCORES (make COPT=-DMTDPP_VALUE_SCORES):
 * without it the library is what users install, with no such symbol.  A
 * measurement declares the function itself:
 *
 *		CREATE FUNCTION value_scores(model bytea, basket integer[], items integer[])
 *		RETURNS float8[] AS '$libdir/mtdpp', 'mtdpp_value_scores' LANGUAGE C STABLE STRICT;
 *
 * It answers as mtdpp_score does, one array rather than rows: the score of
 * each of ITEMS as a completion of BASKET, NULL for an item of the basket or
 * one the model does not know.  Only models of integer item ids (the
 * aggregate's own).  The value read last is kept for the next call of the
 * same call site, so a query over many baskets reads it once.
 */
#include "postgres.h"

#ifdef MTDPP_VALUE_SCORES

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "model/kinds.h"
#include "model/model.h"
#include "query/arguments.h"

PG_FUNCTION_INFO_V1(mtdpp_value_scores);

/* the value read last by a call site, and its model, prepared for scoring */
typedef struct ValueModel
{
	MemoryContext context;
	Size		len;
	char	   *bytes;
	MtdppModel *m;
} ValueModel;

static MtdppModel *
value_model(FunctionCallInfo fcinfo, bytea *value)
{
	ValueModel *v = fcinfo->flinfo->fn_extra;
	Size		len = VARSIZE_ANY_EXHDR(value);
	MemoryContext old;
	MtdppModel *m;

	if (v != NULL && v->m != NULL && v->len == len && memcmp(v->bytes, VARDATA_ANY(value), len) == 0)
		return v->m;
	if (v == NULL)
		v = fcinfo->flinfo->fn_extra = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ValueModel));
	else
	{
		MemoryContextDelete(v->context);
		v->m = NULL;			/* no value kept, should this one fail to read */
	}
	v->context = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt, "mtdpp value model",
									   ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(v->context);
	m = mtdpp_model_deserialize(value); /* validated as mtdpp_save validates */
	mtdpp_model_prepare(m);
	v->bytes = MemoryContextAllocHuge(v->context, Max(len, 1));
	memcpy(v->bytes, VARDATA_ANY(value), len);
	v->len = len;
	v->m = m;
	MemoryContextSwitchTo(old);
	return m;
}

/* the elements of the integer[] argument ARG, none NULL, into *N */
static int32 *
int_array_arg(FunctionCallInfo fcinfo, int arg, const char *what, int *n)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(arg);
	Datum	   *d;
	bool	   *nulls;
	int32	   *ids;

	if (ARR_ELEMTYPE(a) != INT4OID || ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s must be a one-dimensional integer[]", what),
				 errhint("Pass the item ids as integer[].")));
	deconstruct_array(a, INT4OID, 4, true, TYPALIGN_INT, &d, &nulls, n);
	ids = palloc(sizeof(int32) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s holds a NULL at position %d", what, i + 1),
					 errhint("Remove the NULL elements.")));
		ids[i] = DatumGetInt32(d[i]);
	}
	return ids;
}

Datum
mtdpp_value_scores(PG_FUNCTION_ARGS)
{
	MtdppModel *m = value_model(fcinfo, PG_GETARG_BYTEA_PP(0));
	int			nb,
				n,
				b,
				nc = 0;
	int32	   *basket = int_array_arg(fcinfo, 1, "basket", &nb);
	int32	   *items = int_array_arg(fcinfo, 2, "items", &n);
	bool	   *in_basket = palloc0(sizeof(bool) * Max(m->n_items, 1));
	int32	   *ctx = mtdpp_basket_context(m, basket, nb, NULL, in_basket, &b, NULL, NULL);
	int32	   *cands = palloc(sizeof(int32) * Max(n, 1));
	double	   *scores = palloc(sizeof(double) * Max(n, 1));
	Datum	   *out = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int i = 0; i < n; i++)
	{
		int			idx = mtdpp_model_index(m, items[i]);

		if (idx >= 0 && !in_basket[idx])
			cands[nc++] = idx;
	}
	mtdpp_score_some(m, ctx, b, cands, nc, scores);
	for (int i = 0, c = 0; i < n; i++)
	{
		int			idx = mtdpp_model_index(m, items[i]);

		nulls[i] = idx < 0 || in_basket[idx];
		out[i] = nulls[i] ? (Datum) 0 : Float8GetDatum(scores[c++]);
	}
	PG_RETURN_ARRAYTYPE_P(construct_md_array(out, nulls, 1, dims, lbs, FLOAT8OID,
											 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

#endif							/* MTDPP_VALUE_SCORES */
