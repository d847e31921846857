/*
 * kinds/list.c
 *		The list of kinds: every model kind, entered into the table of kinds
 *		(model/kinds.c) when the library loads, and the default one.
 *
 * The table is filled here rather than written out in model/kinds.c so
 * that the table, which every part of the extension asks about a kind,
 * depends on none of the kinds: a kind's fit can ask the table in turn.
 */
#include "postgres.h"

#include "model/kinds.h"

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
