/*
 * complete.c
 *		Query time: mtdpp_complete, mtdpp_score and mtdpp_explain.
 *
 * A basket arrives as int[]; items the model has never seen are ignored and
 * repeated items count once (a model cannot say anything about an item it
 * never saw).  The remaining context is scored against the whole catalog in
 * one batch and the k best items not in the basket are kept (see topk.c),
 * ties broken by item id so answers are repeatable.  Candidate filters
 * (allowed, excluded) act inside the top k: k rows come back whenever k
 * candidates pass them, and an allowed list is the only one bounded and
 * scored, so a short list costs little.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "mtdpp.h"

PG_FUNCTION_INFO_V1(mtdpp_complete);
PG_FUNCTION_INFO_V1(mtdpp_score);
PG_FUNCTION_INFO_V1(mtdpp_explain);

/* A one-dimensional int[] without NULLs, or an error saying what is wrong. */
static ArrayType *
checked_int_array(FunctionCallInfo fcinfo, int arg, const char *what)
{
	ArrayType  *a;

	if (PG_ARGISNULL(arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", what),
				 errhint("Pass an array of item ids, such as ARRAY[1, 2, 3]; '{}' for none.")));
	a = PG_GETARG_ARRAYTYPE_P(arg);
	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array, not %d-dimensional", what, ARR_NDIM(a)),
				 errhint("Pass a flat array of item ids.")));
	if (array_contains_nulls(a))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not contain NULL elements", what),
				 errhint("Remove NULLs with array_remove(%s, NULL).", what)));
	return a;
}

static const char *
model_arg(FunctionCallInfo fcinfo, int arg)
{
	return PG_ARGISNULL(arg) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(arg));
}

/*
 * The context of a basket of N item ids: the dense indices of its known,
 * distinct items in basket order, without the item *SKIP if given (a
 * held-out item); beyond mtdpp_context_limit(m) items the last ones are
 * kept.  Every known basket item is flagged in EXCLUDE (n_items entries, all
 * false on entry), so callers never propose one.  *N_DISTINCT, if given,
 * receives the number of distinct ids in the basket other than *SKIP, known
 * to the model or not.
 */
int32 *
mtdpp_basket_context(const MtdppModel *m, const int32 *ids, int n, const int32 *skip,
					 bool *exclude, int *b_out, int *n_distinct)
{
	int32	   *ctx = palloc(sizeof(int32) * Max(n, 1));
	int32	   *unknown = palloc(sizeof(int32) * Max(n, 1));
	int			b = 0,
				nu = 0,
				limit = mtdpp_context_limit(m);

	for (int k = 0; k < n; k++)
	{
		int			idx;

		if (skip != NULL && ids[k] == *skip)
			continue;
		idx = mtdpp_model_index(m, ids[k]);
		if (idx < 0)
			unknown[nu++] = ids[k];
		else if (!exclude[idx])
		{
			exclude[idx] = true;
			ctx[b++] = idx;
		}
	}
	if (n_distinct != NULL)
	{
		int			distinct_unknown = 0;

		qsort(unknown, nu, sizeof(int32), mtdpp_cmp_int32);
		for (int k = 0; k < nu; k++)
			distinct_unknown += (k == 0 || unknown[k] != unknown[k - 1]);
		*n_distinct = b + distinct_unknown;
	}
	if (skip != NULL)
	{
		int			idx = mtdpp_model_index(m, *skip);

		/* the held-out item is a candidate even if the basket repeats it */
		if (idx >= 0)
			exclude[idx] = false;
	}
	if (b > limit)
	{
		memmove(ctx, ctx + (b - limit), sizeof(int32) * limit);
		b = limit;
	}
	pfree(unknown);
	*b_out = b;
	return ctx;
}

Datum
mtdpp_complete(PG_FUNCTION_ARGS)
{
	ArrayType  *basket = checked_int_array(fcinfo, 0, "basket");
	int			k;
	MtdppModel *m;
	int32	   *ctx;
	int			b;
	bool	   *in_ctx;
	int32	   *allowed = NULL;
	int			n_allowed = 0;
	MtdppRanked *best;
	int			nb;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("k must not be NULL"),
				 errhint("Ask for the number of completions wanted, such as 10.")));
	k = PG_GETARG_INT32(1);
	if (k < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must be at least 1, not %d", k),
				 errhint("Ask for the number of completions wanted, such as 10.")));

	m = mtdpp_lookup_model(model_arg(fcinfo, 2), NULL);
	in_ctx = palloc0(sizeof(bool) * Max(m->n_items, 1));
	ctx = mtdpp_basket_context(m, (int32 *) ARR_DATA_PTR(basket),
							   ArrayGetNItems(ARR_NDIM(basket), ARR_DIMS(basket)),
							   NULL, in_ctx, &b, NULL);
	/*
	 * The candidate filters: excluded items, and outside the allowed ones
	 * (arguments since 0.2.0: a database not yet updated passes three).
	 */
	if (PG_NARGS() > 4 && !PG_ARGISNULL(4))
	{
		ArrayType  *excluded = checked_int_array(fcinfo, 4, "excluded");
		int32	   *ids = (int32 *) ARR_DATA_PTR(excluded);

		for (int i = ArrayGetNItems(ARR_NDIM(excluded), ARR_DIMS(excluded)) - 1; i >= 0; i--)
		{
			int			idx = mtdpp_model_index(m, ids[i]);

			if (idx >= 0)
				in_ctx[idx] = true;
		}
	}
	if (PG_NARGS() > 3 && !PG_ARGISNULL(3))
	{
		ArrayType  *allowed_ids = checked_int_array(fcinfo, 3, "allowed");
		int			n = ArrayGetNItems(ARR_NDIM(allowed_ids), ARR_DIMS(allowed_ids));
		int32	   *ids = (int32 *) ARR_DATA_PTR(allowed_ids);
		bool	   *listed = palloc0(sizeof(bool) * Max(m->n_items, 1));

		allowed = palloc(sizeof(int32) * Max(n, 1));
		for (int i = 0; i < n; i++)
		{
			int			idx = mtdpp_model_index(m, ids[i]);

			if (idx >= 0 && !in_ctx[idx] && !listed[idx])
			{
				listed[idx] = true;
				allowed[n_allowed++] = idx;
			}
		}
		/* every other item is no candidate */
		for (int i = 0; i < m->n_items; i++)
			in_ctx[i] |= !listed[i];
		pfree(listed);
	}

	k = Min(k, m->n_items);
	best = palloc(sizeof(MtdppRanked) * Max(k, 1));
	nb = mtdpp_top_k(m, ctx, b, in_ctx, allowed, n_allowed, k, best);

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < nb; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = Int32GetDatum(m->item_ids[best[i].index]);
		values[1] = Float8GetDatum(best[i].score);
		values[2] = Int32GetDatum(i + 1);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}

Datum
mtdpp_score(PG_FUNCTION_ARGS)
{
	ArrayType  *basket = checked_int_array(fcinfo, 0, "basket");
	ArrayType  *items = checked_int_array(fcinfo, 1, "items");
	MtdppModel *m = mtdpp_lookup_model(model_arg(fcinfo, 2), NULL);
	int			n = ArrayGetNItems(ARR_NDIM(items), ARR_DIMS(items));
	int32	   *ids = (int32 *) ARR_DATA_PTR(items);
	int32	   *cands = palloc(sizeof(int32) * Max(n, 1));
	double	   *scores = palloc(sizeof(double) * Max(n, 1));
	int			nc = 0;
	int32	   *ctx;
	int			b;
	bool	   *in_basket = palloc0(sizeof(bool) * Max(m->n_items, 1));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	ctx = mtdpp_basket_context(m, (int32 *) ARR_DATA_PTR(basket),
							   ArrayGetNItems(ARR_NDIM(basket), ARR_DIMS(basket)),
							   NULL, in_basket, &b, NULL);
	/* an item of the basket is no completion of it: its score is NULL */
	for (int i = 0; i < n; i++)
	{
		int			idx = mtdpp_model_index(m, ids[i]);

		if (idx >= 0 && !in_basket[idx])
			cands[nc++] = idx;
	}
	mtdpp_score_some(m, ctx, b, cands, nc, scores);

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0, c = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};
		int			idx = mtdpp_model_index(m, ids[i]);

		values[0] = Int32GetDatum(ids[i]);
		if (idx >= 0 && !in_basket[idx])
			values[1] = Float8GetDatum(scores[c++]);
		else
			nulls[1] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}

/*
 * mtdpp_explain(basket, items): which items of the basket drive each
 * completion, and by how much.  The contribution of basket item i to the
 * completion t is how much t's score falls when i is left out:
 *
 *		contribution(i, t) = score(t | B) - score(t | B without i)
 *
 * For item-kNN that is the cosine weight of i and t, so contributions sum
 * to the score.  For the multi-task DPP it is ln of what is left of i's
 * row of K_t once the other basket items are projected out (the Schur
 * complement of i in K_t[B], t's task factors weighting the directions):
 * an item counts the more as t's task sees it strongly and the rest of the
 * basket does not already cover it.  Leaving out a one-item basket's only
 * item leaves the empty basket, which every kind completes by popularity.
 * One batch of scores per basket item: (b + 1) batches for b basket items.
 */
Datum
mtdpp_explain(PG_FUNCTION_ARGS)
{
	ArrayType  *basket = checked_int_array(fcinfo, 0, "basket");
	ArrayType  *items = checked_int_array(fcinfo, 1, "items");
	MtdppModel *m = mtdpp_lookup_model(model_arg(fcinfo, 2), NULL);
	int			n = ArrayGetNItems(ARR_NDIM(items), ARR_DIMS(items));
	int32	   *ids = (int32 *) ARR_DATA_PTR(items);
	bool	   *in_basket = palloc0(sizeof(bool) * Max(m->n_items, 1));
	int32	   *cands = palloc(sizeof(int32) * Max(n, 1));
	int32	   *rest;
	double	   *full,
			   *without;
	int32	   *ctx;
	int			b,
				nc = 0;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	ctx = mtdpp_basket_context(m, (int32 *) ARR_DATA_PTR(basket),
							   ArrayGetNItems(ARR_NDIM(basket), ARR_DIMS(basket)),
							   NULL, in_basket, &b, NULL);
	/* the completions to explain: items the model knows, not of the basket */
	for (int i = 0; i < n; i++)
	{
		int			idx = mtdpp_model_index(m, ids[i]);

		if (idx >= 0 && !in_basket[idx])
			cands[nc++] = idx;
	}
	full = palloc(sizeof(double) * Max(nc, 1));
	without = palloc(sizeof(double) * (size_t) Max(nc, 1) * Max(b, 1));
	rest = palloc(sizeof(int32) * Max(b, 1));
	if (nc > 0)
	{
		mtdpp_score_some(m, ctx, b, cands, nc, full);
		for (int s = 0; s < b; s++)
		{
			int			r = 0;

			CHECK_FOR_INTERRUPTS();
			for (int u = 0; u < b; u++)
				if (u != s)
					rest[r++] = ctx[u];
			mtdpp_score_some(m, rest, r, cands, nc, without + (size_t) s * nc);
		}
	}

	InitMaterializedSRF(fcinfo, 0);
	for (int c = 0; c < nc; c++)
	{
		/* the basket items by decreasing contribution, ties by item id */
		int		   *order = palloc(sizeof(int) * Max(b, 1));

		for (int s = 0; s < b; s++)
		{
			int			at = s;

			while (at > 0)
			{
				int			o = order[at - 1];
				double		co = full[c] - without[(size_t) o * nc + c],
							cs = full[c] - without[(size_t) s * nc + c];

				if (co > cs || (co == cs && m->item_ids[ctx[o]] < m->item_ids[ctx[s]]))
					break;
				order[at] = o;
				at--;
			}
			order[at] = s;
		}
		for (int k = 0; k < b; k++)
		{
			int			s = order[k];
			Datum		values[4];
			bool		nulls[4] = {false, false, false, false};

			values[0] = Int32GetDatum(m->item_ids[cands[c]]);
			values[1] = Int32GetDatum(m->item_ids[ctx[s]]);
			values[2] = Float8GetDatum(full[c] - without[(size_t) s * nc + c]);
			values[3] = Int32GetDatum(k + 1);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		pfree(order);
	}
	PG_RETURN_NULL();
}
