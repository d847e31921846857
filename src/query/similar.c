/*
 * query/similar.c
 *		mtdpp_similar: the items most like an item, by the model's own measure.
 *
 * Each kind says how alike two of its items are (the routine similar of
 * its struct, kinds.h): the weights of its neighbour lists, the confidence
 * of a rule of one antecedent item, the cosine of its item factors (the
 * kinds with factors), the evidence of its lists and then that cosine.  A
 * measure may rank items in tiers (items with evidence before those
 * without) and may say nothing of an item
 * (a list's measure, of the items off the list): such an item is never
 * proposed, so fewer than k rows can come back.  Here: the arguments, the
 * filters of mtdpp_complete, and the k best, ties broken by item id; the
 * measures several kinds share are similarity.c's.
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/tuplestore.h"

#include "model/kinds.h"
#include "model/model.h"
#include "query/arguments.h"
#include "query/item_args.h"
#include "score/score.h"
#include "shown.h"
#include "store/store.h"

PG_FUNCTION_INFO_V1(mtdpp_similar);

typedef struct SimilarItem
{
	int8		tier;
	double		sim;
	int32		index;
} SimilarItem;

/* the higher tier first, then the greater similarity, then the lower item id */
static int
cmp_similar(const void *a, const void *b)
{
	const SimilarItem *x = a,
			   *y = b;

	if (x->tier != y->tier)
		return x->tier > y->tier ? -1 : 1;
	if (x->sim != y->sim)
		return x->sim > y->sim ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* The dense index of ITEM in model M, or an error naming it and the model. */
static int
known_item(const MtdppModel *m, int32 item, const char *shown, const char *model_name)
{
	int			idx = mtdpp_model_index(m, item);

	if (idx < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("item %s is not an item of model \"%s\"", mtdpp_shown(shown), mtdpp_shown(model_name)),
				 errdetail("The model was trained on %d items; it measures the similarity of those alone.",
						   m->n_items),
				 errhint("Ask for an item of the model's catalog: its items are the rows of mtdpp.items with its model_id.")));
	return idx;
}

/*
 * mtdpp_similar(item, k, model, allowed, excluded): the k items most like
 * ITEM by the model's measure, best first, never ITEM itself, only ALLOWED
 * ones (when given) and never EXCLUDED ones, as (item_id, similarity, rank).
 */
Datum
mtdpp_similar(PG_FUNCTION_ARGS)
{
	int			k;
	MtdppModel *m;
	const char *model_name;
	const MtdppKindRoutine *kind;
	int			item;
	bool	   *no;
	int32	   *allowed;
	int			n_allowed,
				n = 0;
	double	   *sim;
	int8	   *tier;
	SimilarItem *cands;
	ReturnSetInfo *rsinfo;
	MtdppCallItems ci;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("item must not be NULL"),
				 errhint("Pass the id of an item of the model's catalog.")));
	k = mtdpp_k_arg(fcinfo, 1);
	m = mtdpp_lookup_model(mtdpp_model_arg(fcinfo, 2), NULL, &model_name);
	kind = mtdpp_kind(m->kind);
	if (kind->similar == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a model of kind %s has no measure of how alike two items are",
						kind->name),
				 errdetail("Model \"%s\" ranks items by themselves, whatever the basket.",
						   mtdpp_shown(model_name)),
				 errhint("Use a model of a kind that measures it: SELECT name FROM mtdpp_kinds() WHERE 'similar' = ANY (traits) lists them.")));
	mtdpp_call_items(&ci, fcinfo, 0, m, model_name);
	item = known_item(m, mtdpp_item_arg(&ci, fcinfo, 0), mtdpp_item_arg_text(fcinfo, 0), model_name);

	no = palloc0(sizeof(bool) * Max(m->n_items, 1));
	no[item] = true;
	mtdpp_candidate_filters(fcinfo, &ci, 3, 4, no, &allowed, &n_allowed);

	sim = palloc(sizeof(double) * Max(m->n_items, 1));
	tier = palloc(sizeof(int8) * Max(m->n_items, 1));
	kind->similar(m, item, sim, tier);
	cands = palloc(sizeof(SimilarItem) * Max(m->n_items, 1));
	for (int i = 0; i < m->n_items; i++)
		if (!no[i] && tier[i] != MTDPP_SIMILAR_NONE)
			cands[n++] = (SimilarItem) {tier[i], sim[i], i};
	qsort(cands, n, sizeof(SimilarItem), cmp_similar);

	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	for (int i = 0; i < Min(n, k); i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = mtdpp_item_datum(&ci, m->item_ids[cands[i].index]);
		values[1] = Float8GetDatum(cands[i].sim);
		values[2] = Int32GetDatum(i + 1);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}
