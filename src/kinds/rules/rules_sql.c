/*
 * kinds/rules/rules_sql.c
 *		mtdpp_rules(model): the association rules of a model of kind rules,
 *		one row each, to read and join with the catalog.
 *
 * A model holds its rules in its items' lists (rules.c): each rule in
 * the list of its antecedent's first item, its other antecedent items of
 * weight -n(A), then its consequent of weight its confidence.  A row gives
 * the rule with its support n(A + c) / N, confidence n(A + c) / n(A) and
 * lift, confidence / (n(c) / N): how many times likelier c is in a basket
 * holding A than in any.  n(A + c) is confidence times n(A), rounded (exact
 * while counts stay below 2^23, as confidences are stored in single
 * precision).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

#include "kinds/rules/rules.h"
#include "model/kinds.h"
#include "model/model.h"
#include "query/item_args.h"
#include "shown.h"
#include "store/store.h"

PG_FUNCTION_INFO_V1(mtdpp_rules);

/* one row: the antecedent ANTE (N dense indices), consequent C, confidence CONF, N_ANTE */
static void
put_rule(FunctionCallInfo fcinfo, const MtdppCallItems *ci, const int32 *ante, int n, int32 c,
		 double conf, double n_ante)
{
	const MtdppModel *m = ci->m;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		ids[MTDPP_MAX_ANTECEDENT];
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	double		baskets = Max(m->n_baskets, 1);
	double		n_rule = rint(conf * n_ante);

	for (int k = 0; k < n; k++)
		ids[k] = mtdpp_item_datum(ci, m->item_ids[ante[k]]);
	get_typlenbyvalalign(ci->out_type, &typlen, &typbyval, &typalign);
	values[0] = PointerGetDatum(construct_array(ids, n, ci->out_type, typlen, typbyval, typalign));
	values[1] = mtdpp_item_datum(ci, m->item_ids[c]);
	values[2] = Float8GetDatum(n_rule / baskets);
	values[3] = Float8GetDatum(n_rule / n_ante);
	values[4] = Float8GetDatum(n_rule / n_ante / (Max(m->popularity[c], 1) / baskets));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

Datum
mtdpp_rules(PG_FUNCTION_ARGS)
{
	const char *name = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	const char *model_name;
	MtdppModel *m = mtdpp_lookup_model(name, NULL, &model_name);
	MtdppCallItems ci;

	if (m->kind != MTDPP_RULES)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("model \"%s\" is of kind %s, not rules",
						name ? mtdpp_shown(name) : "(the default)", mtdpp_kind_name(m->kind)),
				 errhint("Name a model trained with kind => 'rules'.")));
	mtdpp_call_items(&ci, fcinfo, 1, m, model_name);
	if (ci.keys != NULL && ci.out_type != ci.keys->type && ci.keys->type != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the items of model \"%s\" are %s", mtdpp_shown(model_name),
						format_type_be(ci.keys->type)),
				 errhint("Ask for them in that type: mtdpp_rules('%s', NULL::%s).", mtdpp_shown(model_name),
						 format_type_be(ci.keys->type))));
	InitMaterializedSRF(fcinfo, 0);
	for (int a = 0; a < m->n_items; a++)
	{
		int64		k = m->nbr_start[a];

		while (k < m->nbr_start[a + 1])
		{
			int32		ante[MTDPP_MAX_ANTECEDENT];
			int			n = 0;
			double		n_ante = m->popularity[a];

			ante[n++] = a;
			for (; m->nbr_weight[k] < 0.0f; k++)
			{
				ante[n++] = m->nbr_index[k];
				n_ante = -m->nbr_weight[k];
			}
			put_rule(fcinfo, &ci, ante, n, m->nbr_index[k], m->nbr_weight[k], n_ante);
			k++;
		}
	}
	PG_RETURN_NULL();
}
