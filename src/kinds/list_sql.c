/*
 * kinds/list_sql.c
 *		mtdpp_kinds(): the registry of kinds (kinds/list.h) as SQL reads it,
 *		from the table of kinds.  A test that loops over mtdpp_kinds() covers
 *		a new kind without an edit (test/sql/conformance.sql).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "fit/params.h"
#include "model/kinds.h"

PG_FUNCTION_INFO_V1(mtdpp_kinds);

/* The traits a kind commits to (kinds/README.md), by the names SQL reads. */
static ArrayType *
kind_traits(const MtdppKindRoutine *kind)
{
	const struct
	{
		const char *name;
		bool		has;
	}			traits[] = {
		{"factors", kind->factors},
		{"task_factors", kind->task_factors},
		{"bias", kind->bias},
		{"neighbors", kind->neighbors},
		{"signed_weights", kind->signed_weights},
		{"cosine_weights", kind->cosine_weights},
		{"signed_task_factors", kind->signed_task_factors},
		{"weights", kind->weights},
		{"single_items", kind->single_items},
		{"add_order", kind->add_order},
		{"own_capacity", kind->own_capacity},
		{"likelihood", kind->likelihood},
		{"bilinear", kind->bilinear},
		{"bounded", kind->bounded},
		{"ensemble", kind->ensemble},
		{"blocks", kind->blocks_key != NULL},
		{"chooses", kind->chooses != NULL},
		{"validate", kind->validate != NULL},
		{"restore", kind->restore != NULL},
		{"score_some", kind->score_some != NULL},
		{"top_k", kind->top_k != NULL},
		{"ranks_of", kind->ranks_of != NULL},
		{"scores_reaching", kind->scores_reaching != NULL},
		{"context_limit", kind->context_limit != NULL},
		{"explain", kind->explain != NULL},
		{"contributions", kind->contributions != NULL},
		{"similar", kind->similar != NULL},
	};
	Datum		names[lengthof(traits)];
	int			n = 0;

	for (int t = 0; t < lengthof(traits); t++)
		if (traits[t].has)
			names[n++] = CStringGetTextDatum(traits[t].name);
	return construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT);
}

/* The keys a kind defines for itself (its own_keys). */
static ArrayType *
kind_keys(const MtdppKindRoutine *kind)
{
	int			n = 0;
	Datum	   *names;

	while (kind->own_keys != NULL && kind->own_keys[n].name != NULL)
		n++;
	names = palloc(sizeof(Datum) * Max(n, 1));
	for (int k = 0; k < n; k++)
		names[k] = CStringGetTextDatum(kind->own_keys[k].name);
	return construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT);
}

/*
 * mtdpp_kinds(): every kind of the registry, by number: its name, its
 * number in the stored model format, its traits and the keys it owns.
 */
Datum
mtdpp_kinds(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (int k = 0; k < MTDPP_N_KINDS; k++)
	{
		const MtdppKindRoutine *kind;
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		if (!mtdpp_kind_exists(k))
			continue;
		kind = mtdpp_kind((MtdppKind) k);
		values[0] = CStringGetTextDatum(kind->name);
		values[1] = Int32GetDatum(k);
		values[2] = PointerGetDatum(kind_traits(kind));
		values[3] = PointerGetDatum(kind_keys(kind));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_NULL();
}
