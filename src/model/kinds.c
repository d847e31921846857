/*
 * model/kinds.c
 *		The table of model kinds, and the calls the rest of the extension
 *		makes through it.
 *
 * A kind is a struct of traits and routines (MtdppKindRoutine, kinds.h), as
 * an index access method is for PostgreSQL, filled by the kind's folder
 * (kinds/<kind>/) and entered by the list (list.c) from the registry of
 * kinds (list.h).  Adding a kind is adding its folder and its line in the
 * registry (kinds/README.md).
 *
 * Everything that depends on the kind asks the table: the hyperparameters
 * (params.c: the kind's own keys, the shared keys it takes, its defaults),
 * fitting (the aggregate), scoring (complete.c, topk.c, through the kind's
 * score_all, score_some and top_k, ranks_of, scores_reaching), what a model stores
 * (model.c, store.c, cache.c) and what a valid model is (model_validate.c).
 */
#include "postgres.h"

#include "model/kinds.h"
#include "model/model.h"
#include "shown.h"

/* every kind, by its number: registered when the library loads (list.c) */
static const MtdppKindRoutine *kinds[MTDPP_N_KINDS];

/* the kind trained when a call names none */
static MtdppKind default_kind;

/* enters KIND into the table */
void
mtdpp_kind_register(const MtdppKindRoutine *kind)
{
	Assert((int) kind->kind >= 0 && kind->kind < MTDPP_N_KINDS);
	kinds[kind->kind] = kind;
}

/* makes KIND, entered already, the one trained when a call names none */
void
mtdpp_kind_register_default(MtdppKind kind)
{
	Assert(mtdpp_kind_exists(kind));
	default_kind = kind;
}

MtdppKind
mtdpp_default_kind(void)
{
	return default_kind;
}

/* whether KIND is the number of a kind (the numbers may have gaps) */
bool
mtdpp_kind_exists(int kind)
{
	return kind >= 0 && kind < MTDPP_N_KINDS && kinds[kind] != NULL;
}

const MtdppKindRoutine *
mtdpp_kind(MtdppKind kind)
{
	if ((int) kind < 0 || kind >= MTDPP_N_KINDS || kinds[kind] == NULL)
		elog(ERROR, "unknown model kind %d", (int) kind);
	return kinds[kind];
}

const char *
mtdpp_kind_name(MtdppKind kind)
{
	return mtdpp_kind(kind)->name;
}

MtdppKind
mtdpp_kind_from_name(const char *name)
{
	for (int k = 0; k < MTDPP_N_KINDS; k++)
		if (kinds[k] != NULL && strcmp(kinds[k]->name, name) == 0)
			return (MtdppKind) k;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown model kind \"%s\"", mtdpp_shown(name)),
			 errhint("SELECT name FROM mtdpp_kinds() lists the kinds.")));
	pg_unreachable();
}

/*
 * Scores every item of the model as the completion of the context CTX (dense
 * indices, distinct) into SCORES (n_items entries).  Context items are
 * scored too; callers skip them.
 */
void
mtdpp_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	mtdpp_kind(m->kind)->score_all(m, ctx, b, scores);
}

/* Scores the N candidates CANDS (dense indices) of the context CTX. */
void
mtdpp_score_some(const MtdppModel *m, const int32 *ctx, int b,
				 const int32 *cands, int n, double *scores)
{
	const MtdppKindRoutine *kind = mtdpp_kind(m->kind);
	double	   *all;

	if (b > 0 && kind->score_some != NULL)
	{
		kind->score_some(m, ctx, b, cands, n, scores);
		return;
	}
	/* one pass over the catalog costs less than a kernel per candidate */
	all = palloc(sizeof(double) * Max(m->n_items, 1));
	kind->score_all(m, ctx, b, all);
	for (int i = 0; i < n; i++)
		scores[i] = all[cands[i]];
	pfree(all);
}

/* Most basket items the model conditions on (the last ones of a basket). */
int
mtdpp_context_limit(const MtdppModel *m)
{
	const MtdppKindRoutine *kind = mtdpp_kind(m->kind);

	return kind->context_limit ? kind->context_limit(m) : MTDPP_MAX_CONTEXT;
}
