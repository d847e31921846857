/*
 * kinds/popularity/popularity.c
 *		The kind "popularity": an item's score is the share of training
 *		baskets holding it, whatever the basket.
 *
 * The plain baseline every user should see first: a model that knows only
 * how often each item is bought, so that mtdpp_evaluate shows what the
 * basket adds.  It has no factors (rank 0) and no hyperparameters beyond
 * the kind.  The score is ln((popularity + 1/2) / (baskets + 1)): a log, as
 * the DPP kinds' scores are, and finite for an item of no basket.
 *
 * The other kinds share two things with it: every model holds its items'
 * popularity (mtdpp_counts_model), and a context of which the model knows
 * no item is completed by popularity (mtdpp_popularity_scores).
 */
#include "postgres.h"

#include <math.h>

#include "fit/params.h"
#include "kinds/popularity/popularity.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"

/*
 * A model of DATA's items and their popularity, no factors (rank 0).  Its
 * examples are the lines it counts (a basket's item once), as for every
 * kind that counts rather than samples.
 */
MtdppModel *
mtdpp_counts_model(const MtdppBaskets *data, const MtdppParams *p)
{
	MtdppModel *m = mtdpp_model_alloc(p->kind, data->n_items, 0);

	memcpy(m->item_ids, data->item_ids, sizeof(int32) * data->n_items);
	memcpy(m->popularity, data->popularity, sizeof(int32) * data->n_items);
	m->n_baskets = data->n_baskets;
	m->n_examples = data->n_lines;
	m->hyperparams = mtdpp_params_to_json(p);
	return m;
}

/* ln(share of training baskets) of every item of M, into SCORES */
void
mtdpp_popularity_scores(const MtdppModel *m, double *scores)
{
	double		total = m->n_baskets > 0 ? m->n_baskets : 1;

	for (int i = 0; i < m->n_items; i++)
		scores[i] = log((m->popularity[i] + 0.5) / (total + 1.0));
}

static MtdppModel *
popularity_fit(MtdppBaskets *data, const MtdppParams *p)
{
	return mtdpp_counts_model(data, p);
}

static void
popularity_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	mtdpp_popularity_scores(m, scores);
}

static const MtdppKindDefault popularity_defaults[] = {
	/* no factors */
	{"rank", 0},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_popularity = {
	.kind = MTDPP_POPULARITY,
	.name = "popularity",
	.defaults = popularity_defaults,
	.single_items = true,
	.fit = popularity_fit,
	.score_all = popularity_score_all,
};
