/*
 * kinds/hybrid/hybrid.c
 *		The kind "hybrid": the multi-task DPP with co-occurrence evidence.
 *
 * The multi-task DPP and item co-occurrence know different things: the DPP
 * generalises through its factors (every candidate gets a finite,
 * informative score) but its top of the list is blurred; co-occurrence is
 * sharp where two items were bought together often and silent elsewhere.
 * The hybrid adds the evidence to the DPP's score, as a product of experts
 * in probability (a sum in log space):
 *
 *		score(c) = ln w + ln det K_c[B]  +  sum_{j in B} beta * g(j, c)
 *
 * K_c the multi-task kernel (multitask.c), g one of four forms of
 * co-occurrence evidence of the pair, with cooc(j, c) the training baskets
 * holding both and f the baskets holding one:
 *
 *	cosine		cooc(j, c) / sqrt(f(j) f(c)), item-kNN's weight;
 *	log_cosine	ln(1 + cosine / 0.01), which saturates: one strong pair
 *				counts less against many weak ones;
 *	confidence	cooc(j, c) / f(j), the share of baskets holding j that hold
 *				c (an association rule's confidence);
 *	ease		B[j][c], EASE's closed-form weight of j for c (ease.c):
 *				what j says of c once the basket's other items are
 *				accounted for, where the forms above count pairs alone.
 *				Fitted exactly on small catalogs and on neighbourhoods
 *				above (ease_solver, ease.c), where the exact fit
 *				would not fit in maintenance_work_mem, or beyond it not
 *				at all; its lambda chosen on a slice of the other baskets
 *				(exact) or on the hybrid's own slice (neighbourhoods,
 *				where each lambda tried costs a pass over the items);
 *				by default with dropout where fitted exactly
 *				(ease_dropout, ease.c).
 *
 * or, where EASE is offered, two of them: beta * g = beta * cosine +
 * ease_beta * B[j][c] (cosine+ease), since neither kind of evidence wins
 * everywhere: EASE's where co-occurrence is rich, the cosine where baskets
 * are many and short.
 *
 * g is zero where j and c never met, so the evidence lives on the
 * neighbour lists of the basket's items, stored pre-multiplied by beta in
 * the lists itemknn stores (beta * g(j, c) in item j's list), and it is
 * exact: the pruned top k adds it to each candidate's Hadamard bound and
 * stays exact (score/topk_bounded.c, which the routines top_k, ranks_of
 * and scores_reaching call with the evidence).  beta = 0 is the DPP itself; a large beta ranks
 * by co-occurrence first and by the DPP among items without evidence.
 *
 * Fit.  The DPP is the multitask kind's fit (fit.c), which holds a
 * validation slice of the training baskets out of its training; the form
 * and weights of the evidence are chosen on that slice (hybrid_weights.c),
 * and the evidence is then rebuilt from every training basket (with the
 * pair, each item's list is the union of its two lists, cut to
 * max_neighbors if the cosine lists were).  The choice, and what each form
 * reached, go into the model's hyperparams; verbose reports the search.
 *
 * On a long order history (more training baskets than epoch_baskets, so
 * that an epoch is a sample) the DPP runs at most HYBRID_SAMPLED_EPOCHS
 * epochs unless epochs is given: there the evidence ranks the top of the
 * list, and the DPP's later epochs no longer move its validation MPR, so
 * a long history trains in minutes, not hours.
 */
#include "postgres.h"

#include <math.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "fit/progress.h"
#include "kinds/cooccurrence.h"
#include "kinds/ease/ease.h"
#include "kinds/hybrid/hybrid_weights.h"
#include "kinds/itemknn/itemknn.h"
#include "kinds/multitask/multitask.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"
#include "score/score.h"

/* the DPP's epochs, at most, where an epoch is a sample of the baskets */
#define HYBRID_SAMPLED_EPOCHS	10

/* without a validation slice: the form and beta most data chose */
#define DEFAULT_FORM		FORM_COSINE
#define DEFAULT_BETA		8.0

/*
 * The hyperparams of the hybrid: the DPP's (its fit's choices included),
 * named hybrid, and the form and beta with what they reached on the slice.
 */
static char *
hybrid_json(const MtdppModel *dpp, const MtdppParams *p, HybridForm form,
			double beta, double ease_beta, double lambda, double dropout, bool neighborhood,
			const MtdppMetrics *chosen)
{
	const char *prefix = "{\"kind\": \"multitask\"";
	StringInfoData s;

	initStringInfo(&s);
	if (dpp->hyperparams && strncmp(dpp->hyperparams, prefix, strlen(prefix)) == 0)
		appendStringInfo(&s, "{\"kind\": \"hybrid\"%s", dpp->hyperparams + strlen(prefix));
	else
		appendStringInfo(&s, "%s", mtdpp_params_to_json(p));
	s.len--;					/* the closing brace */
	/* the keys the hybrid takes beyond its DPP's (those of its evidence) */
	if (dpp->hyperparams && strncmp(dpp->hyperparams, prefix, strlen(prefix)) == 0)
		appendStringInfoString(&s, mtdpp_params_json_beyond(p, MTDPP_MULTITASK));
	appendStringInfo(&s, ", \"evidence\": \"%s\", \"evidence_weight\": %.15g",
					 mtdpp_hybrid_form_names[form], beta);
	if (form == FORM_COSINE_EASE)
		appendStringInfo(&s, ", \"evidence_ease_weight\": %.15g", ease_beta);
	if (form == FORM_EASE || form == FORM_COSINE_EASE)
		appendStringInfo(&s, ", \"evidence_lambda\": %.15g, \"evidence_ease_dropout\": %.15g, \"evidence_ease_solver\": \"%s\"",
						 lambda, dropout, neighborhood ? "neighborhood" : "exact");
	if (chosen->n > 0)
		appendStringInfo(&s, ", \"evidence_validation\": {\"baskets\": %d, \"mpr\": %.4f, \"p5\": %.4f, \"p10\": %.4f, \"p20\": %.4f}",
						 chosen->n, chosen->mpr, chosen->p5, chosen->p10, chosen->p20);
	appendStringInfo(&s, "}");
	return s.data;
}

/* weights of the union of two lists, read by cmp_by_weight */
static int
cmp_by_weight(const void *a, const void *b, void *arg)
{
	const double *w = (const double *) arg;
	double		wa = w[*(const int32 *) a],
				wb = w[*(const int32 *) b];

	return wa > wb ? -1 : wa < wb ? 1 : (*(const int32 *) a > *(const int32 *) b) - (*(const int32 *) a < *(const int32 *) b);
}

/*
 * The longest list each item of M may keep of the union of its two lists
 * (M's and EASE's) so that they all take at most ROOM pairs: 0 when they
 * fit whole, else the largest such cap (mtdpp_list_cap, as item-kNN's).
 */
static int
union_cap(const MtdppModel *m, const MtdppModel *ease, int64 room)
{
	int			n = m->n_items;
	int64	   *length = mtdpp_alloc_huge(sizeof(int64) * Max(n, 1));
	bool	   *in = palloc0(sizeof(bool) * Max(n, 1));
	int64		total = 0,
				longest = 0;
	int			cap;

	for (int j = 0; j < n; j++)
	{
		int64		len = m->nbr_start[j + 1] - m->nbr_start[j];

		CHECK_FOR_INTERRUPTS();

		for (int64 q = m->nbr_start[j]; q < m->nbr_start[j + 1]; q++)
			in[m->nbr_index[q]] = true;
		for (int64 q = ease->nbr_start[j]; q < ease->nbr_start[j + 1]; q++)
			len += !in[ease->nbr_index[q]];
		for (int64 q = m->nbr_start[j]; q < m->nbr_start[j + 1]; q++)
			in[m->nbr_index[q]] = false;
		length[j] = len;
		total += len;
		longest = Max(longest, len);
	}
	pfree(in);
	if (total <= room)
	{
		pfree(length);
		return 0;
	}
	cap = mtdpp_list_cap(length, n, longest, room);
	pfree(length);
	return cap;
}

/*
 * M's lists (cosines) become BETA * cosine + EASE_BETA * EASE's weight, over
 * the union of each item's two lists; with CAP > 0, each item keeps its CAP
 * strongest, as the cosine lists alone would; with CAP 0 (no cut), the
 * lists are cut all the same where their union would take more than ROOM
 * pairs (the value a model is stored as).
 */
static void
merge_lists(MtdppModel *m, const MtdppModel *ease, double beta, double ease_beta, int cap,
			int64 room)
{
	int			n = m->n_items;
	int64		kept = 0;
	int64	   *start;
	int32	   *index;
	float4	   *weight;
	double	   *w;
	bool	   *in;
	int32	   *list;

	if (cap <= 0)
		cap = union_cap(m, ease, room);
	room = m->nbr_start[n] + ease->nbr_start[n];
	start = mtdpp_alloc_huge(sizeof(int64) * (n + 1));
	index = mtdpp_alloc_huge(sizeof(int32) * Max(room, 1));
	weight = mtdpp_alloc_huge(sizeof(float4) * Max(room, 1));
	w = palloc0(sizeof(double) * Max(n, 1));
	in = palloc0(sizeof(bool) * Max(n, 1));
	list = palloc(sizeof(int32) * Max(n, 1));

	for (int j = 0; j < n; j++)
	{
		int			len = 0;

		CHECK_FOR_INTERRUPTS();
		for (int side = 0; side < 2; side++)
		{
			const MtdppModel *from = side == 0 ? m : ease;
			double		scale = side == 0 ? beta : ease_beta;

			for (int64 q = from->nbr_start[j]; q < from->nbr_start[j + 1]; q++)
			{
				int			c = from->nbr_index[q];

				if (!in[c])
				{
					in[c] = true;
					list[len++] = c;
				}
				w[c] += scale * from->nbr_weight[q];
			}
		}
		if (cap > 0 && len > cap)
			qsort_arg(list, len, sizeof(int32), cmp_by_weight, w);
		start[j] = kept;
		for (int t = 0; t < len; t++)
		{
			int			c = list[t];

			if (cap <= 0 || t < cap)
			{
				index[kept] = c;
				weight[kept++] = (float4) w[c];
			}
			in[c] = false;
			w[c] = 0.0;
		}
	}
	start[n] = kept;
	pfree(m->nbr_start);
	pfree(m->nbr_index);
	pfree(m->nbr_weight);
	pfree(w);
	pfree(in);
	pfree(list);
	m->nbr_start = start;
	m->nbr_index = index;
	m->nbr_weight = weight;
}

/*
 * What the fitted DPP M holds beside EASE's fit, which counts it against
 * maintenance_work_mem: its value's bytes, and the squares and norms
 * mtdpp_model_prepare adds for scoring.
 */
static Size
dpp_memory(const MtdppModel *m)
{
	return add_size(mtdpp_model_value_size(MTDPP_MULTITASK, m->n_items, m->rank, m->epochs_run),
					mul_size(mul_size(Max(m->n_items, 1), m->rank + 3), sizeof(double)));
}

/*
 * The weights EASE's lists keep per item in a hybrid of P over N_ITEMS
 * whose lists have ROOM pairs in its value: max_neighbors when given (0
 * here: EASE's own default), else EASE's default cut to what the value
 * holds, with a NOTICE when it is cut and REPORT (when the lists are built).
 */
static int
hybrid_ease_cap(const MtdppParams *p, int n_items, int64 room, bool report)
{
	int64		fits = room / Max(n_items, 1);

	if (p->max_neighbors > 0 || fits >= Min(MTDPP_DEFAULT_NEIGHBORS, n_items - 1))
		return 0;
	if (report)
		ereport(NOTICE,
				(errmsg("EASE's evidence keeps at most " INT64_FORMAT " weights of each of %d items, not %d: more would not fit in the value a model is stored as",
						Max(fits, 1), n_items, MTDPP_DEFAULT_NEIGHBORS),
				 errdetail("A model holds 8 bytes per weight, beside 16 per item and rank unit, and may take half of maintenance_work_mem (%d kB); returned by mtdpp_fit as a value, at most 1 GB.",
						   maintenance_work_mem),
				 errhint("Give max_neighbors to choose the cut, or train on a more recent window of orders.")));
	return (int) Max(fits, 1);
}

/*
 * What the hybrid's fit chooses on its slice, and what building its
 * evidence from every training basket settles: the form, its weights, and
 * EASE's lambda, dropout and solver where EASE's evidence is used.
 */
typedef struct HybridChoice
{
	HybridForm	form;
	double		beta;
	double		alpha;			/* EASE's lambda per mean popularity, as chosen */
	double		cosine_beta;	/* the best cosine's weight, the fallback */
	double		ease_beta;
	double		lambda;
	double		dropout;
	bool		ease_neighborhood;
	MtdppMetrics chosen;
} HybridChoice;

/*
 * M's lists (the model's item ids and the DPP's factors set) become the
 * evidence of every training basket of DATA, pre-multiplied by the weight
 * CH chose: EASE's where its form uses it (fitted with EASE_P, its lists
 * cut to fit ROOM), else, or where EASE fails on all the baskets, the
 * co-occurrence lists cut to CAP; DP is the DPP's hyperparameters, whose
 * cut the reports name.
 */
static void
build_evidence(MtdppModel *m, MtdppBaskets *data, const MtdppParams *p, const MtdppParams *dp,
			   const MtdppParams *ease_p, int cap, int64 room, HybridChoice *ch)
{
	bool		built = false;
	int64		distinct = -1;	/* of the cosine lists, once built */

	if (ch->form == FORM_EASE || ch->form == FORM_COSINE_EASE)
	{
		MtdppModel *ease = ch->form == FORM_EASE ? m : mtdpp_model_alloc(MTDPP_EASE, data->n_items, 0);
		MtdppParams ep = *ease_p;
		MtdppListTap tap;
		MtdppCosineLists *cosine = NULL;

		/* lambda scales with the baskets: the same multiple of the mean popularity */
		ch->lambda = ch->alpha * data->n_lines / Max(data->n_items, 1);
		/* and the weights are fitted as they were on the slice */
		mtdpp_ease_params(&ep)->solver = ch->ease_neighborhood ? MTDPP_EASE_NEIGHBORHOOD : MTDPP_EASE_EXACT;
		(void) hybrid_ease_cap(p, data->n_items, room, true);
		if (ch->form == FORM_COSINE_EASE)
			cosine = mtdpp_cosine_lists_start(data, m, cap, &tap);
		built = mtdpp_ease_lists(data, &ep, &ch->lambda, ease, &ch->ease_neighborhood, NULL,
								 &ch->dropout, dpp_memory(m), cosine ? &tap : NULL);
		if (cosine)
		{
			/* the cosine lists: counted in the neighbourhoods' pass, or in one of their own */
			distinct = mtdpp_cosine_lists_finish(cosine);
			mtdpp_report_neighbor_cap(dp, p, distinct, m->nbr_start[m->n_items]);
		}
		if (built && ch->form == FORM_EASE)
			for (int64 q = 0; q < m->nbr_start[m->n_items]; q++)
				m->nbr_weight[q] = (float4) (ch->beta * m->nbr_weight[q]);
		else if (built)
			/*
			 * the union is cut by max_neighbors when given, else to what the
			 * value holds: CAP sized the cosine lists beside EASE's fit,
			 * whose memory is free by now, and would cut EASE's lists too
			 */
			merge_lists(m, ease, ch->beta, ch->ease_beta, Max(p->max_neighbors, 0), room);
		else
		{
			/* not positive definite on all the baskets: the best cosine */
			ch->form = FORM_COSINE;
			ch->beta = ch->cosine_beta;
			ch->ease_beta = 0.0;
		}
	}
	if (!built)
	{
		if (distinct < 0)
		{
			distinct = mtdpp_cooccurrence_lists(data, m, cap);
			mtdpp_report_neighbor_cap(dp, p, distinct, m->nbr_start[m->n_items]);
		}
		for (int j = 0; j < m->n_items; j++)
			for (int64 q = m->nbr_start[j]; q < m->nbr_start[j + 1]; q++)
				m->nbr_weight[q] = (float4) (ch->beta * mtdpp_hybrid_form_weight(ch->form, (double) m->nbr_weight[q],
																	data->popularity[j],
																	data->popularity[m->nbr_index[q]]));
	}
	if (ch->beta == 0.0)
		memset(m->nbr_start, 0, sizeof(int64) * (m->n_items + 1));
}

static MtdppModel *
hybrid_fit(MtdppBaskets *data, const MtdppParams *p)
{
	MtdppParams dp = *p;
	MtdppValidation slice;
	MtdppModel *m;
	HybridChoice ch = {.form = DEFAULT_FORM, .beta = DEFAULT_BETA, .alpha = -1.0,
	.cosine_beta = DEFAULT_BETA};
	int			cap,
				ease_cap;
	int64		room;
	Size		dpp;
	MtdppParams ease_p;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	dp.kind = MTDPP_MULTITASK;
	if (!mtdpp_param_given(p, "epochs") && p->epoch_baskets > 0 &&
		data->n_baskets > p->epoch_baskets)
		dp.epochs = Min(dp.epochs, HYBRID_SAMPLED_EPOCHS);
	/*
	 * The lists fit in the value beside the factors of the largest rank
	 * kept; so do EASE's own lists, whose default length is cut to what
	 * fits.  And they fit in maintenance_work_mem beside the DPP as fitted
	 * and EASE's fit, whose pass they may ride.
	 */
	room = mtdpp_neighbor_room(MTDPP_HYBRID, data->n_items,
							   mtdpp_capacity_value_rank(p, data->n_items), p->epochs);
	ease_cap = hybrid_ease_cap(p, data->n_items, room, false);
	ease_p = *p;
	ease_p.max_neighbors = ease_cap > 0 ? ease_cap : p->max_neighbors;
	m = mtdpp_fit_dpp_slice(data, &dp, &slice);
	mtdpp_model_prepare(m);
	dpp = dpp_memory(m);
	cap = mtdpp_neighbor_cap(data, p, MTDPP_HYBRID, mtdpp_capacity_value_rank(p, data->n_items),
							 add_size(dpp, mtdpp_ease_tap_memory(&ease_p, data, dpp)));
	if (cap > 0)
		dp.max_neighbors = cap;
	if (slice.n > 0)
	{
		/* the search's baskets and lists go before the final lists are built */
		MemoryContext search = AllocSetContextCreate(CurrentMemoryContext,
													 "mtdpp hybrid weight search",
													 ALLOCSET_DEFAULT_SIZES);
		MemoryContext caller = MemoryContextSwitchTo(search);

		mtdpp_progress_phase(MTDPP_PHASE_WEIGHTS);
		mtdpp_hybrid_choose_weights(m, data, &slice, p, cap, dpp, &ch.form, &ch.beta, &ch.ease_beta,
									&ch.chosen, &ch.alpha, &ch.cosine_beta,
									&ch.ease_neighborhood);
		MemoryContextSwitchTo(caller);
		MemoryContextDelete(search);
	}
	else if (p->verbose)
		ereport(NOTICE,
				(errmsg("hybrid: no validation slice, evidence %s with beta %g",
						mtdpp_hybrid_form_names[ch.form], ch.beta)));

	/* the evidence of every training basket, pre-multiplied by beta */
	mtdpp_progress_phase(MTDPP_PHASE_EVIDENCE);
	m->kind = MTDPP_HYBRID;
	build_evidence(m, data, p, &dp, &ease_p, cap, room, &ch);
	m->hyperparams = hybrid_json(m, p, ch.form, ch.beta, ch.ease_beta, ch.lambda, ch.dropout,
								 ch.ease_neighborhood, &ch.chosen);
	m->seconds = mtdpp_seconds_since(start);
	return m;
}

static void
hybrid_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	double	   *ev;

	mtdpp_multitask_score_all(m, ctx, b, scores);
	if (b == 0)
		return;
	ev = palloc(sizeof(double) * Max(m->n_items, 1));
	mtdpp_evidence(m, ctx, b, ev);
	for (int i = 0; i < m->n_items; i++)
		scores[i] += ev[i];
	pfree(ev);
}

static void
hybrid_score_some(const MtdppModel *m, const int32 *ctx, int b,
				  const int32 *cands, int n, double *scores)
{
	double	   *ev = palloc(sizeof(double) * Max(m->n_items, 1));

	mtdpp_multitask_score_some(m, ctx, b, cands, n, scores);
	mtdpp_evidence(m, ctx, b, ev);
	for (int t = 0; t < n; t++)
		scores[t] += ev[cands[t]];
	pfree(ev);
}

/* the evidence of every item for CTX, or NULL where the model keeps no lists */
static double *
hybrid_evidence(const MtdppModel *m, const int32 *ctx, int b)
{
	double	   *ev;

	if (m->nbr_start == NULL)
		return NULL;
	ev = palloc(sizeof(double) * Max(m->n_items, 1));
	mtdpp_evidence(m, ctx, b, ev);
	return ev;
}

/* the k best candidates, pruned by their Hadamard bounds raised by the evidence */
static int
hybrid_top_k(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
			 const int32 *allowed, int n_allowed, int k, MtdppRanked *out)
{
	double	   *ev = hybrid_evidence(m, ctx, b);
	int			n = mtdpp_bounded_top_k(m, ctx, b, exclude, allowed, n_allowed, k, ev, out);

	if (ev)
		pfree(ev);
	return n;
}

/* the ranks of held-out items, pruned as the top k is */
static void
hybrid_ranks_of(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
				const int32 *held, int nh, double held_score_if_unknown, int *above,
				int *ties, int *candidates)
{
	double	   *ev = hybrid_evidence(m, ctx, b);

	mtdpp_bounded_ranks_of(m, ctx, b, exclude, held, nh, held_score_if_unknown, ev,
						   above, ties, candidates);
	if (ev)
		pfree(ev);
}

/* the candidates whose bound, raised by the evidence, reaches FLOOR, scored */
static int
hybrid_scores_reaching(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
					   double floor, const bool *also, int32 *cands, double *scores)
{
	double	   *ev = hybrid_evidence(m, ctx, b);
	int			n = mtdpp_bounded_scores_reaching(m, ctx, b, exclude, floor, also, ev,
												  cands, scores);

	if (ev)
		pfree(ev);
	return n;
}

/*
 * mtdpp_similar: the items with evidence from ITEM first (its neighbour
 * list: beta * g(ITEM, j), what ITEM alone adds to j's score), by that
 * evidence; then every other item, by the cosine of the DPP's item factors
 * (mtdpp_similar_cosine).
 */
static void
hybrid_similar(const MtdppModel *m, int item, double *sim, int8 *tier)
{
	double	   *ev = palloc(sizeof(double) * Max(m->n_items, 1));
	int8	   *listed = palloc(sizeof(int8) * Max(m->n_items, 1));

	mtdpp_similar_cosine(m, item, sim, tier);
	mtdpp_similar_lists(m, item, ev, listed);
	for (int i = 0; i < m->n_items; i++)
		if (listed[i] != MTDPP_SIMILAR_NONE)
		{
			sim[i] = ev[i];
			tier[i] = 1;
		}
	pfree(ev);
	pfree(listed);
}

/* the shared keys it takes */
static const char *const hybrid_keys_taken[] = {MTDPP_SGD_KEYS, MTDPP_VALIDATION_KEYS, "ease_solver", "ease_dropout", "max_neighbors", MTDPP_WARM_KEYS, NULL};

static const MtdppKindDefault hybrid_defaults[] = {
	/* the DPP's rank and L2 chosen on validation baskets (fit.c) */
	{"rank", MTDPP_RANK_CHOSEN},
	{"l2", -1.0},
	/* every co-occurring item, while the lists fit in a model value */
	{"max_neighbors", -1},
	/* EASE's evidence with dropout where fitted exactly (ease.c) */
	{"ease_dropout", -1.0},
	{NULL, 0}
};

/* what it chooses on its validation slice: the weights of its evidence, always */
static const char *
hybrid_chooses(const MtdppParams *p, const char **instead)
{
	*instead = "";
	return "weighs its co-occurrence evidence on the validation baskets";
}

const MtdppKindRoutine mtdpp_kind_hybrid = {
	.kind = MTDPP_HYBRID,
	.name = "hybrid",
	.keys = hybrid_keys_taken,
	.defaults = hybrid_defaults,
	.factors = true,
	.task_factors = true,
	.bias = true,
	.neighbors = true,
	.bounded = true,
	.fit = hybrid_fit,
	.chooses = hybrid_chooses,
	.score_all = hybrid_score_all,
	.score_some = hybrid_score_some,
	.top_k = hybrid_top_k,
	.ranks_of = hybrid_ranks_of,
	.scores_reaching = hybrid_scores_reaching,
	.similar = hybrid_similar,
};
