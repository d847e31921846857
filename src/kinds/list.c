/*
 * kinds/list.c
 *		The table of kinds, expanded from the registry (kinds/list.h): every
 *		kind's struct entered into the table of kinds (model/kinds.c) when
 *		the library loads, and the default kind.
 *
 * The table is filled here rather than written out in model/kinds.c so
 * that the table, which every part of the extension asks about a kind,
 * depends on none of the kinds: a kind's fit can ask the table in turn.
 */
#include "postgres.h"

#include "model/kinds.h"

/* each kind's struct, defined in its folder, and its number within the enum */
#define MTDPP_KIND(symbol, name, number) \
	extern const MtdppKindRoutine mtdpp_kind_##name; \
	StaticAssertDecl(number >= 0 && number < MTDPP_N_KINDS, "kind " #name " numbered in order");
#include "kinds/list.h"
#undef MTDPP_KIND

/* every kind at its number (a number not in use: NULL), with its name as listed */
static const MtdppKindRoutine *const all_kinds[] = {
#define MTDPP_KIND(symbol, name, number) [symbol] = &mtdpp_kind_##name,
#include "kinds/list.h"
#undef MTDPP_KIND
};

static const char *const listed_names[] = {
#define MTDPP_KIND(symbol, name, number) [symbol] = #name,
#include "kinds/list.h"
#undef MTDPP_KIND
};

StaticAssertDecl(lengthof(all_kinds) == MTDPP_N_KINDS, "every kind has a number");

/* fills the table of kinds: called by _PG_init */
void
mtdpp_kinds_init(void)
{
	for (int k = 0; k < lengthof(all_kinds); k++)
	{
		if (all_kinds[k] == NULL)
			continue;
		/* a kind's struct says the number and name of its line */
		if ((int) all_kinds[k]->kind != k || strcmp(all_kinds[k]->name, listed_names[k]) != 0)
			elog(ERROR, "kind %s (number %d) is listed as %s, number %d",
				 all_kinds[k]->name, (int) all_kinds[k]->kind, listed_names[k], k);
		/* the answers found without scoring every candidate: all three, or none */
		if ((all_kinds[k]->top_k == NULL) != (all_kinds[k]->ranks_of == NULL) ||
			(all_kinds[k]->top_k == NULL) != (all_kinds[k]->scores_reaching == NULL))
			elog(ERROR, "kind %s defines some of top_k, ranks_of and scores_reaching, not all",
				 all_kinds[k]->name);
		mtdpp_kind_register(all_kinds[k]);
	}

	/*
	 * The kind trained when a call names none: the hybrid since 0.4.0 (the
	 * multi-task DPP before).  A stored model keeps the kind it was trained
	 * as; mtdpp.sql's defaults name it too.
	 */
	mtdpp_kind_register_default(MTDPP_HYBRID);
}
