/*
 * kinds/list.c
 *		The list of kinds: every model kind, entered into the table of kinds
 *		(kinds.c) when the library loads, and the default one; and the fit
 *		of a model of any kind.
 *
 * The table is filled here rather than written out in kinds.c so that the
 * table, which every part of the extension asks about a kind, depends on
 * none of the kinds: a kind's fit (fit.c, say) can ask the table in turn.
 */
#include "postgres.h"

#include "kinds/kinds.h"
#include "numeric/linalg.h"
#include "train/baskets.h"

/* each kind's struct, defined in its folder */
extern const MtdppKindRoutine mtdpp_kind_multitask;
extern const MtdppKindRoutine mtdpp_kind_multitask_nobias;
extern const MtdppKindRoutine mtdpp_kind_logistic;
extern const MtdppKindRoutine mtdpp_kind_lowrank;
extern const MtdppKindRoutine mtdpp_kind_itemknn;
extern const MtdppKindRoutine mtdpp_kind_popularity;
extern const MtdppKindRoutine mtdpp_kind_ease;
extern const MtdppKindRoutine mtdpp_kind_hybrid;
extern const MtdppKindRoutine mtdpp_kind_rules;
extern const MtdppKindRoutine mtdpp_kind_poisson;
extern const MtdppKindRoutine mtdpp_kind_fm;
extern const MtdppKindRoutine mtdpp_kind_bayesian_lowrank;
extern const MtdppKindRoutine mtdpp_kind_gru;

/* every kind: one line each, at its number (a number not in use: NULL) */
static const MtdppKindRoutine *const all_kinds[] = {
	[MTDPP_MULTITASK] = &mtdpp_kind_multitask,
	[MTDPP_MULTITASK_NOBIAS] = &mtdpp_kind_multitask_nobias,
	[MTDPP_LOGISTIC] = &mtdpp_kind_logistic,
	[MTDPP_LOWRANK] = &mtdpp_kind_lowrank,
	[MTDPP_ITEMKNN] = &mtdpp_kind_itemknn,
	[MTDPP_POPULARITY] = &mtdpp_kind_popularity,
	[MTDPP_EASE] = &mtdpp_kind_ease,
	[MTDPP_HYBRID] = &mtdpp_kind_hybrid,
	[MTDPP_RULES] = &mtdpp_kind_rules,
	[MTDPP_POISSON] = &mtdpp_kind_poisson,
	[MTDPP_FM] = &mtdpp_kind_fm,
	[MTDPP_BAYESIAN_LOWRANK] = &mtdpp_kind_bayesian_lowrank,
	[MTDPP_GRU] = &mtdpp_kind_gru,
};

StaticAssertDecl(lengthof(all_kinds) <= MTDPP_N_KINDS, "every kind has a number");

/* fills the table of kinds: called by _PG_init */
void
mtdpp_kinds_init(void)
{
	for (int k = 0; k < lengthof(all_kinds); k++)
		if (all_kinds[k] != NULL)
			mtdpp_kind_register(all_kinds[k]);

	/*
	 * The kind trained when a call names none: the hybrid since 0.4.0 (the
	 * multi-task DPP before).  A stored model keeps the kind it was trained
	 * as; mtdpp.sql's defaults name it too.
	 */
	mtdpp_kind_register_default(MTDPP_HYBRID);
}

/*
 * Fits a model of kind p->kind to DATA, the hyperparameters that depend on
 * the data resolved first (and so stored with the model).  The fit runs in
 * the numeric core's reproducible mode (linalg_fixed.c): the same data and
 * seed give the same model under every BLAS and kernel set.  One rule for
 * every kind that learns from items bought together: without a basket of
 * two items there is nothing to learn, and it is refused alike.
 */
MtdppModel *
mtdpp_kind_fit(MtdppBaskets *data, const MtdppParams *given)
{
	MtdppParams p = *given;
	MtdppModel *volatile m = NULL;
	bool		was;
	bool		pairs = false;

	for (int b = 0; b < data->n_baskets && !pairs; b++)
		pairs = data->start[b + 1] - data->start[b] >= 2;
	if (!pairs && !mtdpp_kind(p.kind)->single_items)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no basket of the training data has two or more items"),
				 errdetail("%d baskets were read, over %d distinct items.",
						   data->n_baskets, data->n_items),
				 errhint("A basket-completion model learns from baskets of at least two items: check order_col and item_col, or train kind => 'popularity', which counts items alone.")));
	/*
	 * Positions that order no basket: gru refuses them (gru_fit.c), and so
	 * does target 'last', whose last item added would be the highest id;
	 * the other kinds hear it.
	 */
	if (data->positions && !data->ordered && pairs && p.target == MTDPP_TARGET_LAST &&
		!mtdpp_kind(p.kind)->add_order)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("target => 'last' needs the order in which each basket's items were added, and the position column is constant within every basket"),
				 errdetail("Every line of each of the %d baskets has the same position: no item is the last added.", data->n_baskets),
				 errhint("Give a position column that orders the lines of a basket (an add-to-cart rank or time), or use target => 'random'.")));
	if (data->positions && !data->ordered && pairs && !mtdpp_kind(p.kind)->add_order)
		ereport(NOTICE,
				(errmsg("the position column is constant within every basket: the baskets have no add-to-cart order"),
				 errdetail("Every line of a basket has the same position, so the items of each basket are read in item order."),
				 errhint("Give a position column that orders the lines of a basket (an add-to-cart rank or time), or leave position_col out.")));
	mtdpp_params_for_data(&p, data->n_items);
	was = mtdpp_linalg_set_reproducible(true);
	PG_TRY();
	{
		m = mtdpp_kind(p.kind)->fit(data, &p);
	}
	PG_FINALLY();
	{
		mtdpp_linalg_set_reproducible(was);
	}
	PG_END_TRY();
	return m;
}
