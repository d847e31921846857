/*
 * kinds/fm/fm.c
 *		The kind "fm": a second-order factorization machine (Rendle 2010)
 *		over the basket's items and the candidate.
 *
 * Each basket is a "user" whose features are its items, each of weight
 * x = 1 / sqrt(b) for a basket of b items, and the candidate c, of weight 1.
 * Of the machine's score (Rendle 2010, eq. 1) only what depends on the
 * candidate ranks it:
 *
 *		score(c | B) = w_c + <v_c, u>,	u = sum_{i in B} x v_i
 *
 * (the intercept, the basket's own weights and the pairs within the basket
 * are the same for every candidate of B).  w_c is the item's bias (the
 * column bias of mtdpp.items), v_c its factors (the column factors), and
 * the rank the size of the embedding.  One embedding serves an item in
 * both roles, as in the machine: an item of the basket and a candidate.
 * The score is a logit: exp(score) is proportional to the probability of
 * c among the candidates of B under the sampled softmax it is trained by.
 *
 * Training.  The stochastic gradient of the DPP kinds (fit.c, fit_epochs.c),
 * with the machine's score in place of a ln det (fit_bilinear.c): every positive
 * is a target against the rest of its basket and `negatives` items drawn
 * outside it, as the multi-task kinds' are (fit_examples.c), the softmax of
 * the positive among them the loss (loss => 'logistic' takes the paper's
 * instead), Adam with the popularity-weighted L2 (fit_update.c) and early
 * stopping on the validation MPR (validation_slice.c).  The rank and L2
 * are chosen on the validation slice when neither is given (fit.c: rank 32
 * with L2 1e-5 against rank 128 with L2 1e-6); the other defaults below
 * were chosen on validation baskets.  An example costs (b + negatives + 1)
 * rank flops, so the fit takes a fraction of the multi-task DPP's time.
 *
 * Scoring.  u is formed once per basket, then every item's score is one dot
 * product: the whole catalog costs n_items x rank, so every item is scored
 * (no pruning) and a top k is the top k of the full ranking, exactly.  The
 * same loop serves one candidate and the whole catalog, so that their
 * scores are equal to the last bit.  The empty basket is completed by
 * popularity, as by every kind.
 *
 * Explanation.  The score minus the bias is a sum over the basket:
 * contribution(i, c) = <v_c, x v_i>, which mtdpp_explain lists.
 */
#include "postgres.h"

#include <math.h>

#include "fit/fit.h"
#include "fit/params.h"
#include "kinds/popularity/popularity.h"
#include "model/kinds.h"
#include "model/model.h"
#include "score/score.h"

/* the basket's sum u = x sum_{i in B} v_i (B > 0) into U */
static void
fm_basket_sum(const MtdppModel *m, const int32 *ctx, int b, double *u)
{
	int			r = m->rank;
	double		x = 1.0 / sqrt((double) b);

	memset(u, 0, sizeof(double) * r);
	for (int s = 0; s < b; s++)
	{
		size_t		row = (size_t) ctx[s] * r;

		if (m->V != NULL)
			for (int j = 0; j < r; j++)
				u[j] += m->V[row + j];
		else
			for (int j = 0; j < r; j++)
				u[j] += m->Vf[row + j];
	}
	for (int j = 0; j < r; j++)
		u[j] *= x;
}

/* <v_i, u>, in double precision, in the order of the factors */
static inline double
fm_dot(const MtdppModel *m, int i, const double *u)
{
	int			r = m->rank;
	size_t		row = (size_t) i * r;
	double		dot = 0.0;

	if (m->V != NULL)
		for (int j = 0; j < r; j++)
			dot += m->V[row + j] * u[j];
	else
		for (int j = 0; j < r; j++)
			dot += m->Vf[row + j] * u[j];
	return dot;
}

static void
fm_score_some(const MtdppModel *m, const int32 *ctx, int b,
			  const int32 *cands, int n, double *scores)
{
	double	   *u = palloc(sizeof(double) * Max(m->rank, 1));

	fm_basket_sum(m, ctx, b, u);
	for (int c = 0; c < n; c++)
		scores[c] = m->D[cands[c]] + fm_dot(m, cands[c], u);
	pfree(u);
}

static void
fm_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	double	   *u;

	if (b == 0)
	{
		mtdpp_popularity_scores(m, scores);
		return;
	}
	u = palloc(sizeof(double) * Max(m->rank, 1));
	fm_basket_sum(m, ctx, b, u);
	for (int i = 0; i < m->n_items; i++)
		scores[i] = m->D[i] + fm_dot(m, i, u);
	pfree(u);
}

/*
 * mtdpp_explain: basket item s contributes <v_c, x v_s> to candidate c,
 * into OUT[s * n + c]; the contributions sum to the score less the bias.
 */
static void
fm_contributions(const MtdppModel *m, const int32 *ctx, int b,
				 const int32 *cands, int n, double *out)
{
	double	   *v = palloc(sizeof(double) * Max(m->rank, 1));
	double		x = 1.0 / sqrt((double) b);

	for (int s = 0; s < b; s++)
	{
		for (int j = 0; j < m->rank; j++)
			v[j] = x * (m->V ? m->V[(size_t) ctx[s] * m->rank + j] :
						(double) m->Vf[(size_t) ctx[s] * m->rank + j]);
		for (int c = 0; c < n; c++)
			out[(size_t) s * n + c] = fm_dot(m, cands[c], v);
	}
	pfree(v);
}

/* the shared keys it takes */
static const char *const fm_keys_taken[] = {MTDPP_SGD_KEYS, MTDPP_VALIDATION_KEYS, MTDPP_WARM_KEYS, NULL};

static const MtdppKindDefault fm_defaults[] = {
	/* rank and L2 chosen on the validation slice (fit.c) */
	{"rank", MTDPP_RANK_CHOSEN},
	{"l2", -1.0},

	/*
	 * chosen on validation baskets among 0.001 to 0.03: as good as 0.001 in
	 * a third of its epochs, and better than the larger steps; more
	 * negatives or positives, another init_scale or no l2_bias cost more
	 * and changed little
	 */
	{"learning_rate", 0.003},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_fm = {
	.kind = MTDPP_FM,
	.name = "fm",
	.keys = fm_keys_taken,
	.defaults = fm_defaults,
	.factors = true,
	.bias = true,
	.bilinear = true,
	.fit = mtdpp_fit_dpp,
	.score_all = fm_score_all,
	.score_some = fm_score_some,
	.contributions = fm_contributions,
	.similar = mtdpp_similar_cosine,
};
