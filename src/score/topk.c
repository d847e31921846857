/*
 * score/topk.c
 *		The k best completions of a basket, the ranks of held-out items
 *		and the candidates reaching a score, through the kind's routines.
 *
 * A kind that need not score every candidate to answer (its routines
 * top_k, ranks_of and scores_reaching: the bounded kinds, whose routines
 * call the pruning of topk_bounded.c) answers for a basket of known items;
 * every other kind, and every kind for an empty context, scores every
 * candidate (score_all, or score_some for a short list) and selects.  The
 * heap of the best k is shared by both ways.
 */
#include "postgres.h"

#include "model/kinds.h"
#include "model/model.h"
#include "score/score.h"
#include "score/topk_int.h"


static void
sift_down(TopK *t, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					r = l + 1,
					w = i;

		if (l < t->n && better(t->h[w].score, t->h[w].index, t->h[l].score, t->h[l].index))
			w = l;
		if (r < t->n && better(t->h[w].score, t->h[w].index, t->h[r].score, t->h[r].index))
			w = r;
		if (w == i)
			return;
		{
			MtdppRanked tmp = t->h[i];

			t->h[i] = t->h[w];
			t->h[w] = tmp;
		}
		i = w;
	}
}

void
mtdpp_topk_offer_slow(TopK *t, double score, int32 index)
{
	if (t->n < t->k)
	{
		t->h[t->n++] = (MtdppRanked) {score, index};
		if (t->n == t->k)
			for (int j = t->k / 2 - 1; j >= 0; j--)
				sift_down(t, j);
	}
	else if (better(score, index, t->h[0].score, t->h[0].index))
	{
		t->h[0] = (MtdppRanked) {score, index};
		sift_down(t, 0);
	}
}

static int
cmp_ranked(const void *a, const void *b)
{
	const MtdppRanked *x = a,
			   *y = b;

	if (better(x->score, x->index, y->score, y->index))
		return -1;
	if (better(y->score, y->index, x->score, x->index))
		return 1;
	return 0;
}

/* sorts the N ranked items OUT, best first */
void
mtdpp_sort_ranked(MtdppRanked *out, int n)
{
	qsort(out, n, sizeof(MtdppRanked), cmp_ranked);
}

/*
 * The K best items (dense indices) as completions of the context CTX, best
 * first, skipping the items EXCLUDE flags; returns how many (at most K).
 * ALLOWED, if not NULL, lists the only candidates (N_ALLOWED distinct items,
 * none of them flagged, every other item flagged): a kind that bounds its
 * scores bounds only them when they are a short list, and a list of K or
 * fewer is scored as it is.
 */
int
mtdpp_top_k(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
			const int32 *allowed, int n_allowed, int k, MtdppRanked *out)
{
	const MtdppKindRoutine *kind = mtdpp_kind(m->kind);
	TopK		top = {out, 0, k};
	double	   *scores;

	if (k <= 0)
		return 0;
	if (b > 0 && kind->top_k != NULL && (allowed == NULL || n_allowed > k))
		return kind->top_k(m, ctx, b, exclude, allowed, n_allowed, k, out);
	if (allowed != NULL)
	{
		scores = palloc(sizeof(double) * Max(n_allowed, 1));
		mtdpp_score_some(m, ctx, b, allowed, n_allowed, scores);
		for (int j = 0; j < n_allowed; j++)
			offer(&top, scores[j], allowed[j]);
	}
	else
	{
		scores = palloc(sizeof(double) * Max(m->n_items, 1));
		mtdpp_score_all(m, ctx, b, scores);
		for (int i = 0; i < m->n_items; i++)
			if (!exclude[i])
				offer(&top, scores[i], i);
	}
	pfree(scores);
	mtdpp_sort_ranked(out, top.n);
	return top.n;
}

/*
 * How many candidates (not excluded, other than HELD) score above HELD and
 * how many tie with it: the rank of a held-out item, as mtdpp_evaluate and
 * the trainer's validation need it (mtdpp_ranks_of of one item).
 */
void
mtdpp_rank_of(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
			  int held, double held_score_if_unknown, int *above, int *ties,
			  int *candidates)
{
	int32		h = held;

	mtdpp_ranks_of(m, ctx, b, exclude, &h, 1, held_score_if_unknown, above, ties,
				   candidates);
}

/*
 * For each of the NH held-out items HELD (distinct dense indices, none
 * flagged in EXCLUDE; below 0: an item the model does not know, scoring
 * HELD_SCORE_IF_UNKNOWN), how many candidates other than itself score above
 * it (ABOVE[h]) and how many tie with it (TIES[h]); the other held-out
 * items are candidates too.  *CANDIDATES: the items EXCLUDE does not flag.
 * A kind with a routine ranks_of answers for a basket of known items (the
 * bounded kinds score exactly only the candidates whose Hadamard bound
 * reaches the lowest score of a held-out item).
 */
void
mtdpp_ranks_of(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
			   const int32 *held, int nh, double held_score_if_unknown, int *above,
			   int *ties, int *candidates)
{
	const MtdppKindRoutine *kind = mtdpp_kind(m->kind);
	double	   *scores;
	double	   *sh;

	if (nh > 0 && b > 0 && kind->ranks_of != NULL)
	{
		kind->ranks_of(m, ctx, b, exclude, held, nh, held_score_if_unknown, above, ties,
					   candidates);
		return;
	}
	*candidates = 0;
	for (int h = 0; h < nh; h++)
		above[h] = ties[h] = 0;
	if (nh == 0)
	{
		for (int i = 0; i < m->n_items; i++)
			*candidates += !exclude[i];
		return;
	}
	scores = palloc(sizeof(double) * Max(m->n_items, 1));
	sh = palloc(sizeof(double) * nh);
	mtdpp_score_all(m, ctx, b, scores);
	for (int h = 0; h < nh; h++)
		sh[h] = held[h] >= 0 ? scores[held[h]] : held_score_if_unknown;
	for (int i = 0; i < m->n_items; i++)
	{
		if (exclude[i])
			continue;
		(*candidates)++;
		for (int h = 0; h < nh; h++)
		{
			if (i == held[h])
				continue;
			above[h] += scores[i] > sh[h];
			ties[h] += scores[i] == sh[h];
		}
	}
	pfree(scores);
	pfree(sh);
}

/*
 * The candidates (the items EXCLUDE does not flag) whose score can reach
 * FLOOR, and every candidate ALSO flags (NULL: none), with their exact
 * scores, into CANDS and SCORES (room for every item); returns how many.  A
 * kind with a routine scores_reaching (a bounded kind) scores exactly only
 * the candidates whose bound reaches FLOOR or that ALSO flags.  A fit that
 * weighs evidence beside a DPP's score so learns the rank of a held-out
 * item scoring FLOOR under any nonnegative weight of evidence held by
 * ALSO's items alone: no other candidate can pass it.
 */
int
mtdpp_scores_reaching(const MtdppModel *m, const int32 *ctx, int b,
					  const bool *exclude, double floor, const bool *also,
					  int32 *cands, double *scores)
{
	const MtdppKindRoutine *kind = mtdpp_kind(m->kind);
	double	   *all;
	int			n = 0;

	if (b > 0 && kind->scores_reaching != NULL)
		return kind->scores_reaching(m, ctx, b, exclude, floor, also, cands, scores);
	all = palloc(sizeof(double) * Max(m->n_items, 1));
	mtdpp_score_all(m, ctx, b, all);
	for (int i = 0; i < m->n_items; i++)
		if (!exclude[i] && (all[i] >= floor || (also && also[i])))
		{
			cands[n] = i;
			scores[n++] = all[i];
		}
	pfree(all);
	return n;
}
