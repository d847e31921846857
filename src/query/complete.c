/*
 * query/complete.c
 *		Query time: mtdpp_complete, mtdpp_complete_set, mtdpp_score and
 *		mtdpp_explain.
 *
 * A basket arrives as int[]; items the model has never seen are ignored and
 * repeated items count once (a model cannot say anything about an item it
 * never saw).  The remaining context is scored against the whole catalog in
 * one batch and the k best items not in the basket are kept (see topk.c),
 * ties broken by item id so answers are repeatable.  Candidate filters
 * (allowed, excluded) act inside the top k: k rows come back whenever k
 * candidates pass them, and an allowed list is the only one bounded and
 * scored, so a short list costs little.  mtdpp_complete_set chooses a
 * diverse set among the best candidates (diverse.c).  Each row says whether
 * its score comes from the basket or from the fallback (from_basket).
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

#include "model/kinds.h"
#include "model/model.h"
#include "query/arguments.h"
#include "query/item_args.h"
#include "score/score.h"
#include "shown.h"
#include "store/store.h"

PG_FUNCTION_INFO_V1(mtdpp_complete);
PG_FUNCTION_INFO_V1(mtdpp_complete_set);
PG_FUNCTION_INFO_V1(mtdpp_score);
PG_FUNCTION_INFO_V1(mtdpp_explain);

/* the name of a model, NULL for the default model */
const char *
mtdpp_model_arg(FunctionCallInfo fcinfo, int arg)
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
 * to the model or not; *N_UNKNOWN, if given, those the model does not know.
 */
int32 *
mtdpp_basket_context(const MtdppModel *m, const int32 *ids, int n, const int32 *skip,
					 bool *exclude, int *b_out, int *n_distinct, int *n_unknown)
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
	if (n_distinct != NULL || n_unknown != NULL)
	{
		int			distinct_unknown = 0;

		qsort(unknown, nu, sizeof(int32), mtdpp_cmp_int32);
		for (int k = 0; k < nu; k++)
			distinct_unknown += (k == 0 || unknown[k] != unknown[k - 1]);
		if (n_distinct != NULL)
			*n_distinct = b + distinct_unknown;
		if (n_unknown != NULL)
			*n_unknown = distinct_unknown;
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

/* k, the number of completions wanted: at least 1 */
int
mtdpp_k_arg(FunctionCallInfo fcinfo, int arg)
{
	int			k;

	if (PG_ARGISNULL(arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("k must not be NULL"),
				 errhint("Ask for the number of completions wanted, such as 10.")));
	k = PG_GETARG_INT32(arg);
	if (k < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must be at least 1, not %d", k),
				 errhint("Ask for the number of completions wanted, such as 10.")));
	return k;
}

/*
 * The candidate filters of arguments EXCLUDED_ARG and ALLOWED_ARG applied
 * to model M's candidates: every excluded item flagged in NO (n_items
 * entries), and, if the allowed argument is not NULL, every item but the
 * allowed ones, which are listed (those NO did not flag, once each) in
 * *ALLOWED, *N_ALLOWED (else NULL, 0).  A filter argument beyond PG_NARGS()
 * is absent: a database not yet updated calls with fewer arguments.
 */
void
mtdpp_candidate_filters(FunctionCallInfo fcinfo, const MtdppCallItems *ci, int allowed_arg,
						int excluded_arg, bool *no, int32 **allowed, int *n_allowed)
{
	const MtdppModel *m = ci->m;

	*allowed = NULL;
	*n_allowed = 0;
	if (PG_NARGS() > excluded_arg && !PG_ARGISNULL(excluded_arg))
	{
		int			n;
		int32	   *ids = mtdpp_items_arg(ci, fcinfo, excluded_arg, "excluded", &n);

		for (int i = n - 1; i >= 0; i--)
		{
			int			idx = mtdpp_model_index(m, ids[i]);

			if (idx >= 0)
				no[idx] = true;
		}
	}
	if (PG_NARGS() > allowed_arg && !PG_ARGISNULL(allowed_arg))
	{
		int			n;
		int32	   *ids = mtdpp_items_arg(ci, fcinfo, allowed_arg, "allowed", &n);
		bool	   *listed = palloc0(sizeof(bool) * Max(m->n_items, 1));

		*allowed = palloc(sizeof(int32) * Max(n, 1));
		for (int i = 0; i < n; i++)
		{
			int			idx = mtdpp_model_index(m, ids[i]);

			if (idx >= 0 && !no[idx] && !listed[idx])
			{
				listed[idx] = true;
				(*allowed)[(*n_allowed)++] = idx;
			}
		}
		/* every other item is no candidate */
		for (int i = 0; i < m->n_items; i++)
			no[i] |= !listed[i];
		pfree(listed);
	}
}

/*
 * The items of a basket that the model does not know (N_UNKNOWN of them,
 * distinct) are ignored, said once per statement, for the first such
 * basket, as the baskets of which it knows no item are.  The known ones
 * (B in the context) give the answer.  Nothing is asked while every item
 * is known.  Candidate lists are not counted: an unknown allowed or
 * excluded item changes no score, and is never proposed.
 */
static void
notice_unknown_items(FunctionCallInfo fcinfo, MtdppStatementOnce *once,
					 const MtdppCallItems *ci, int n_unknown, int b)
{
	if (n_unknown == 0 || !mtdpp_first_in_statement(once))
		return;
	ereport(NOTICE,
			(errmsg_plural("%s ignored %d item of a basket that model \"%s\" does not know",
						   "%s ignored %d items of a basket that model \"%s\" does not know",
						   n_unknown, get_func_name(fcinfo->flinfo->fn_oid), n_unknown,
						   mtdpp_shown(ci->model_name)),
			 b > 0 ?
			 errdetail("The answer comes from the items of the basket that the model knows; said once per statement, for the first such basket.") :
			 errdetail("The model knows no item of the basket: the answer is that of an empty basket; said once per statement, for the first such basket."),
			 errhint("Train the model on orders holding these items, or check that the basket holds item ids of the model's catalog.")));
}

/*
 * The candidates of a completion of the basket in argument 0 by model M: the
 * context (*CTX, *B), every item that is no candidate flagged in the
 * returned array (the basket's, and those the filters of arguments
 * ALLOWED_ARG and EXCLUDED_ARG leave out: mtdpp_candidate_filters, which
 * lists the allowed ones in *ALLOWED, *N_ALLOWED).
 */
static bool *
completion_candidates(FunctionCallInfo fcinfo, const MtdppCallItems *ci,
					  int allowed_arg, int excluded_arg, int32 **ctx, int *b,
					  int32 **allowed, int *n_allowed)
{
	static MtdppStatementOnce unknown_basket;
	static MtdppStatementOnce unknown_items;
	const MtdppModel *m = ci->m;
	int			n;
	int32	   *basket = mtdpp_items_arg(ci, fcinfo, 0, "basket", &n);
	bool	   *in_ctx = palloc0(sizeof(bool) * Max(m->n_items, 1));
	int			n_distinct,
				n_unknown;

	*ctx = mtdpp_basket_context(m, basket, n, NULL, in_ctx, b, &n_distinct, &n_unknown);
	if (*b > 0)
		notice_unknown_items(fcinfo, &unknown_items, ci, n_unknown, *b);
	/* an answer from nothing the basket holds: said once per statement */
	if (*b == 0 && n_distinct > 0 && mtdpp_first_in_statement(&unknown_basket))
		ereport(NOTICE,
				(errmsg("no item of the basket is known to model \"%s\": the answer is the most popular items",
						mtdpp_shown(ci->model_name)),
				 errdetail("The model was trained on %d items; said once per statement, for the first such basket.",
						   m->n_items),
				 errhint("Train the model on orders holding these items, or check that the basket holds item ids of the model's catalog.")));
	mtdpp_candidate_filters(fcinfo, ci, allowed_arg, excluded_arg, in_ctx, allowed, n_allowed);
	return in_ctx;
}

/*
 * Where each candidate's score comes from: the basket's context CTX (B
 * items), or the fallback.  A kind with item factors scores every item
 * from the basket whenever it knows an item of it; a kind of lists alone
 * only the items on the lists of the basket's items, or those its explain
 * routine names (a rule from the basket reaches them); a kind with
 * neither, none.  The rest rank by the fallback (the
 * items' popularity, or ties).
 */
typedef struct Evidence
{
	const MtdppModel *m;
	const int32 *ctx;
	int			b;
	bool	   *listed;			/* kinds of lists: on a basket item's list */
} Evidence;

static Evidence
basket_evidence(const MtdppModel *m, const int32 *ctx, int b)
{
	const MtdppKindRoutine *kind = mtdpp_kind(m->kind);
	Evidence	ev = {m, ctx, b, NULL};

	if (b > 0 && !kind->factors && kind->neighbors && kind->explain == NULL)
	{
		ev.listed = palloc0(sizeof(bool) * Max(m->n_items, 1));
		for (int s = 0; s < b; s++)
			for (int64 k = m->nbr_start[ctx[s]]; k < m->nbr_start[ctx[s] + 1]; k++)
				ev.listed[m->nbr_index[k]] = true;
	}
	return ev;
}

static bool
from_basket(const Evidence *ev, int c)
{
	const MtdppKindRoutine *kind = mtdpp_kind(ev->m->kind);

	if (ev->b == 0)
		return false;
	if (kind->factors)
		return true;
	if (kind->explain != NULL)
	{
		int32	   *items = palloc(sizeof(int32) * ev->b);
		double		weight;
		bool		fires = kind->explain(ev->m, ev->ctx, ev->b, c, items, &weight) > 0;

		pfree(items);
		return fires;
	}
	return ev->listed != NULL && ev->listed[c];
}

/*
 * one row (item_id, score, rank, from_basket) of a completion; a database
 * whose extension is not yet updated to 0.5.0 asks for the first three
 */
static void
put_completion(FunctionCallInfo fcinfo, const MtdppCallItems *ci, const Evidence *ev,
			   const MtdppRanked *r, int rank)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	values[0] = mtdpp_item_datum(ci, ci->m->item_ids[r->index]);
	values[1] = Float8GetDatum(r->score);
	values[2] = Int32GetDatum(rank);
	values[3] = BoolGetDatum(rsinfo->setDesc->natts > 3 && from_basket(ev, r->index));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

Datum
mtdpp_complete(PG_FUNCTION_ARGS)
{
	int			k;
	MtdppModel *m;
	const char *model_name;
	int32	   *ctx;
	int			b;
	bool	   *in_ctx;
	int32	   *allowed;
	int			n_allowed;
	MtdppRanked *best;
	int			nb;
	MtdppCallItems ci;
	Evidence	ev;

	mtdpp_check_items_arg(fcinfo, 0, "basket");
	k = mtdpp_k_arg(fcinfo, 1);
	m = mtdpp_lookup_model(mtdpp_model_arg(fcinfo, 2), NULL, &model_name);
	mtdpp_call_items(&ci, fcinfo, 0, m, model_name);
	/* the candidate filters are arguments since 0.2.0 */
	in_ctx = completion_candidates(fcinfo, &ci, 3, 4, &ctx, &b, &allowed, &n_allowed);

	k = Min(k, m->n_items);
	best = palloc(sizeof(MtdppRanked) * Max(k, 1));
	nb = mtdpp_top_k(m, ctx, b, in_ctx, allowed, n_allowed, k, best);

	InitMaterializedSRF(fcinfo, 0);
	ev = basket_evidence(m, ctx, b);
	for (int i = 0; i < nb; i++)
		put_completion(fcinfo, &ci, &ev, &best[i], i + 1);
	PG_RETURN_NULL();
}

/*
 * mtdpp_complete_set(basket, k, model, diversity, allowed, excluded): k items
 * that complete the basket together, by greedy MAP in a DPP whose qualities
 * are the model's scores and whose similarities its item factors (diverse.c),
 * in the order chosen.  Diversity 0 is mtdpp_complete's ranking.
 */
Datum
mtdpp_complete_set(PG_FUNCTION_ARGS)
{
	int			k;
	double		diversity;
	MtdppModel *m;
	const char *model_name;
	int32	   *ctx;
	int			b;
	bool	   *in_ctx;
	int32	   *allowed;
	int			n_allowed;
	MtdppRanked *best;
	int			nb;
	MtdppCallItems ci;
	Evidence	ev;

	mtdpp_check_items_arg(fcinfo, 0, "basket");
	k = mtdpp_k_arg(fcinfo, 1);
	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("diversity must not be NULL"),
				 errhint("Pass a value from 0 (the ranking of mtdpp_complete) to 1 (as diverse as the candidates allow), such as 0.5.")));
	diversity = PG_GETARG_FLOAT8(3);
	if (!(diversity >= 0.0 && diversity <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("diversity must be between 0 and 1, not %g", diversity),
				 errhint("Pass a value from 0 (the ranking of mtdpp_complete) to 1 (as diverse as the candidates allow), such as 0.5.")));
	m = mtdpp_lookup_model(mtdpp_model_arg(fcinfo, 2), NULL, &model_name);
	if (diversity > 0.0 && (!mtdpp_kind(m->kind)->factors || m->rank == 0))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a model of kind %s has no item factors to tell similar items apart",
						mtdpp_kind_name(m->kind)),
				 errdetail("Diverse completion measures the similarity of two items by their factors."),
				 errhint("Use a model of a kind with item factors (SELECT name FROM mtdpp_kinds() WHERE 'factors' = ANY (traits)), or diversity => 0.")));
	/* greedy MAP costs O(M k (k + rank)) for M = max(10k, 100) candidates */
	if (diversity > 0.0 && k > MTDPP_SET_MAX_K)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("k is %d, a diverse set holds at most %d items", k, MTDPP_SET_MAX_K),
				 errdetail("Choosing k items among the best max(10k, 100) takes time growing with the cube of k."),
				 errhint("Ask for at most %d items, or for diversity => 0 (the ranking of mtdpp_complete), which takes any k.",
						 MTDPP_SET_MAX_K)));
	mtdpp_call_items(&ci, fcinfo, 0, m, model_name);
	in_ctx = completion_candidates(fcinfo, &ci, 4, 5, &ctx, &b, &allowed, &n_allowed);

	k = Min(k, m->n_items);
	InitMaterializedSRF(fcinfo, 0);
	ev = basket_evidence(m, ctx, b);
	if (diversity == 0.0)
	{
		/* the ranking itself */
		best = palloc(sizeof(MtdppRanked) * Max(k, 1));
		nb = mtdpp_top_k(m, ctx, b, in_ctx, allowed, n_allowed, k, best);
		for (int i = 0; i < nb; i++)
			put_completion(fcinfo, &ci, &ev, &best[i], i + 1);
	}
	else
	{
		int			pool = Min(mtdpp_diverse_pool(k), m->n_items);
		int		   *chosen = palloc(sizeof(int) * Max(k, 1));
		int			nc;

		best = palloc(sizeof(MtdppRanked) * Max(pool, 1));
		nb = mtdpp_top_k(m, ctx, b, in_ctx, allowed, n_allowed, pool, best);
		nc = mtdpp_diverse_select(m, best, nb, k, diversity, chosen);
		for (int i = 0; i < nc; i++)
			put_completion(fcinfo, &ci, &ev, &best[chosen[i]], i + 1);
	}
	PG_RETURN_NULL();
}

/*
 * The dense indices of the N item ids IDS that the model knows and that are
 * not of the basket (IN_BASKET), in the order given, into CANDS; how many.
 */
static int
known_outside_basket(const MtdppModel *m, const int32 *ids, int n, const bool *in_basket,
					  int32 *cands)
{
	int			nc = 0;

	for (int i = 0; i < n; i++)
	{
		int			idx = mtdpp_model_index(m, ids[i]);

		if (idx >= 0 && !in_basket[idx])
			cands[nc++] = idx;
	}
	return nc;
}

/*
 * The arguments (basket, items, model) of mtdpp_score and mtdpp_explain:
 * the call's items (*CI), the basket's context (*CTX, *B; every item of the
 * basket flagged in the array returned), the ITEMS as item numbers (*IDS,
 * *N), and those of them the model knows outside the basket (*CANDS, *NC).
 */
static bool *
basket_and_items(FunctionCallInfo fcinfo, MtdppCallItems *ci, int32 **ctx, int *b,
				 int32 **ids, int *n, int32 **cands, int *nc)
{
	static MtdppStatementOnce unknown_items;
	const char *model_name;
	MtdppModel *m;
	int32	   *basket;
	int			nb,
				n_unknown;
	bool	   *in_basket;

	mtdpp_check_items_arg(fcinfo, 0, "basket");
	mtdpp_check_items_arg(fcinfo, 1, "items");
	m = mtdpp_lookup_model(mtdpp_model_arg(fcinfo, 2), NULL, &model_name);
	mtdpp_call_items(ci, fcinfo, 0, m, model_name);
	basket = mtdpp_items_arg(ci, fcinfo, 0, "basket", &nb);
	*ids = mtdpp_items_arg(ci, fcinfo, 1, "items", n);
	in_basket = palloc0(sizeof(bool) * Max(m->n_items, 1));
	*ctx = mtdpp_basket_context(m, basket, nb, NULL, in_basket, b, NULL, &n_unknown);
	notice_unknown_items(fcinfo, &unknown_items, ci, n_unknown, *b);
	*cands = palloc(sizeof(int32) * Max(*n, 1));
	*nc = known_outside_basket(m, *ids, *n, in_basket, *cands);
	return in_basket;
}

Datum
mtdpp_score(PG_FUNCTION_ARGS)
{
	MtdppCallItems ci;
	const MtdppModel *m;
	int			n,
				nc,
				b;
	int32	   *ids,
			   *cands,
			   *ctx;
	Datum	   *given;
	double	   *scores;
	bool	   *in_basket;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	/* an item of the basket is no completion of it: its score is NULL */
	in_basket = basket_and_items(fcinfo, &ci, &ctx, &b, &ids, &n, &cands, &nc);
	m = ci.m;
	given = mtdpp_items_given(&ci, fcinfo, 1, "items", &n);
	scores = palloc(sizeof(double) * Max(n, 1));
	mtdpp_score_some(m, ctx, b, cands, nc, scores);

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0, c = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};
		int			idx = mtdpp_model_index(m, ids[i]);

		values[0] = given[i];
		if (idx >= 0 && !in_basket[idx])
			values[1] = Float8GetDatum(scores[c++]);
		else
			nulls[1] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}

/*
 * mtdpp_explain of a kind whose score one piece of evidence decides (a
 * rule): for each of the NC candidates CANDS, the basket items of that
 * evidence, each with its weight (a rule's confidence); none when the
 * candidate ranks by popularity.
 */
static void
explain_evidence(FunctionCallInfo fcinfo, const MtdppCallItems *ci, const int32 *ctx, int b,
				 const int32 *cands, int nc)
{
	const MtdppModel *m = ci->m;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32	   *items = palloc(sizeof(int32) * Max(b, 1));

	InitMaterializedSRF(fcinfo, 0);
	for (int c = 0; c < nc; c++)
	{
		double		weight = 0.0;
		int			n = mtdpp_kind(m->kind)->explain(m, ctx, b, cands[c], items, &weight);

		CHECK_FOR_INTERRUPTS();
		for (int k = 0; k < n; k++)
		{
			Datum		values[4];
			bool		nulls[4] = {false, false, false, false};

			values[0] = mtdpp_item_datum(ci, m->item_ids[cands[c]]);
			values[1] = mtdpp_item_datum(ci, m->item_ids[items[k]]);
			values[2] = Float8GetDatum(weight);
			values[3] = Int32GetDatum(k + 1);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	pfree(items);
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
 * A model of rules names instead the rule that decides each completion
 * (explain_evidence).  A kind whose score is a sum over the basket items
 * (the factorization machine: <v_t, v_i> / sqrt(b)) gives those terms
 * instead of leaving items out.
 */
Datum
mtdpp_explain(PG_FUNCTION_ARGS)
{
	MtdppCallItems ci;
	const MtdppModel *m;
	int			n;
	int32	   *ids,
			   *cands;
	int32	   *rest;
	double	   *full,
			   *without;
	int32	   *ctx;
	int			b,
				nc;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	/* the completions to explain: items the model knows, not of the basket */
	(void) basket_and_items(fcinfo, &ci, &ctx, &b, &ids, &n, &cands, &nc);
	m = ci.m;
	if (mtdpp_kind(m->kind)->explain != NULL)
	{
		explain_evidence(fcinfo, &ci, ctx, b, cands, nc);
		PG_RETURN_NULL();
	}
	full = palloc(sizeof(double) * Max(nc, 1));
	without = palloc(sizeof(double) * (size_t) Max(nc, 1) * Max(b, 1));
	rest = palloc(sizeof(int32) * Max(b, 1));
	if (nc > 0 && b > 0 && mtdpp_kind(m->kind)->contributions != NULL)
	{
		/* a score that is a sum over the basket: its terms */
		mtdpp_score_some(m, ctx, b, cands, nc, full);
		mtdpp_kind(m->kind)->contributions(m, ctx, b, cands, nc, without);
		for (int s = 0; s < b; s++)
			for (int c = 0; c < nc; c++)
				without[(size_t) s * nc + c] = full[c] - without[(size_t) s * nc + c];
	}
	else if (nc > 0)
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

			values[0] = mtdpp_item_datum(&ci, m->item_ids[cands[c]]);
			values[1] = mtdpp_item_datum(&ci, m->item_ids[ctx[s]]);
			values[2] = Float8GetDatum(full[c] - without[(size_t) s * nc + c]);
			values[3] = Int32GetDatum(k + 1);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		pfree(order);
	}
	PG_RETURN_NULL();
}
