/*
 * kinds/gru/gru.c
 *		The kind "gru": a recurrent network over a basket's items in the
 *		order they were added, GRU4Rec (Hidasi, Karatzoglou, Baltrunas and
 *		Tikk, "Session-based recommendations with recurrent neural
 *		networks", 2015), the Recurrent Neural Network of the paper's
 *		Table 2.
 *
 * Each item i has an input embedding x_i (its factors V_i, D numbers), an
 * output embedding o_i (its task factors R_i) and an output bias b_i (its
 * bias D_i).  A context c_1 .. c_B, in add-to-cart order (mtdpp_complete's
 * basket array order), is read by a gated recurrent unit of hidden size D
 * from h_0 = 0:
 *
 *		z = sigma(Wxz x + Whz h + bz),  r = sigma(Wxr x + Whr h + br),
 *		n = tanh(Wxn x + bn + r * (Whn h)),  h' = (1 - z) * n + z * h,
 *
 * and every item scores s_i = o_i . h_B + b_i (one GEMM of the catalog's
 * output embeddings against h_B, linalg.c): every item is scored, there is
 * no pruning, so the top k is exactly the full ranking.  With an empty
 * basket the scores are the output biases, which training makes a
 * popularity prior.  Every score is finite: h lies in (-1, 1)^D.
 *
 * The weights W_x, W_h and b are shared by every item: they are the
 * model's weights (mtdpp.models.weights, gru.h's layout), not rows of
 * mtdpp.items.  A cached model keeps the output embeddings in single
 * precision as the tables hold them, with their sign (Rf).
 *
 * mtdpp_explain reports leave-one-out contributions: the score of a
 * completion less its score without each basket item (the order of the
 * others kept).  The unit is gru_unit.c's, the fit gru_fit.c's.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "fit/params.h"
#include "kinds/gru/gru.h"
#include "model/kinds.h"
#include "model/model.h"
#include "numeric/linalg.h"
#include "score/score.h"

/* s_i = o_i . h + b_i for every item */
static void
gru_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	int			d = m->rank,
				n = m->n_items;
	double	   *h = palloc(sizeof(double) * d);

	mtdpp_gru_hidden(m, ctx, b, h);
	if (m->R != NULL)
		mtdpp_gemm_nn(n, 1, d, m->R, d, h, 1, scores, 1);
	else
	{
		float	   *hf = palloc(sizeof(float) * d);
		float	   *sf = palloc(sizeof(float) * Max(n, 1));

		for (int k = 0; k < d; k++)
			hf[k] = (float) h[k];
		mtdpp_gemv_float(n, d, m->Rf, hf, sf);
		for (int i = 0; i < n; i++)
			scores[i] = sf[i];
		pfree(sf);
		pfree(hf);
	}
	for (int i = 0; i < n; i++)
		scores[i] += m->D[i];
	pfree(h);
}

/* the shared keys it takes */
static const char *const gru_keys_taken[] = {"rank", "epochs", "learning_rate", "negatives", "negative_power", "patience", "l2", "init_scale", "epoch_baskets", MTDPP_VALIDATION_KEYS, NULL};

static const MtdppKindDefault gru_defaults[] = {
	/* the hidden size and the step: chosen on the validation slice when not given */
	{"rank", MTDPP_RANK_CHOSEN},
	{"learning_rate", 0.05},
	{"l2", 0.0},
	{"epochs", 20},
	{"patience", 3},
	{"negatives", 32},
	/*
	 * uniform negatives: on validation baskets, better than GRU4Rec's
	 * popularity^0.5 on MPR and precision, most in a long tail
	 */
	{"negative_power", 0.0},
	{"init_scale", 0.1},
	/* the last 24 items of a training basket are read; validation against 1000 items */
	{"max_context", 24},
	{"validation_baskets", 1000},
	{NULL, 0}
};

/*
 * gru: its factors (input embeddings), task factors (output embeddings)
 * and weights finite reals, as many weights as its rank asks.  The state h
 * then lies in (-1, 1)^rank, so a score o_i . h + b_i is finite while
 * |o_i|_1 + |b_i| is a finite real, which is checked too.
 */
static void
gru_validate(const MtdppModel *m, const MtdppRefusal *o)
{
	int			d = m->rank;

	if (m->weights == NULL || m->n_weights != 6 * d * d + 3 * d)
		ereport(ERROR,
				(errcode(o->sqlstate),
				 errmsg("the gru model of rank %d has %d weights, not %d",
						d, m->weights ? m->n_weights : 0, 6 * d * d + 3 * d),
				 errdetail("A gru model of hidden size d shares 6 d^2 + 3 d recurrent weights."),
				 errhint("%s", o->hint)));
	for (int k = 0; k < m->n_weights; k++)
		if (!isfinite(mtdpp_as_real(m->weights[k])))
			ereport(ERROR,
					(errcode(o->sqlstate),
					 errmsg("weight %d of the gru model is %g, not a finite real", k + 1, m->weights[k]),
					 errhint("%s", o->hint)));
	for (int i = 0; i < m->n_items; i++)
	{
		double		sum = fabs(mtdpp_as_real(m->D[i]));

		for (int j = 0; j < d; j++)
		{
			size_t		c = (size_t) i * d + j;
			double		r = m->R ? mtdpp_as_real(m->R[c]) : (double) m->Rf[c];

			if (!isfinite(mtdpp_factor_at(m, i, j)) || !isfinite(r))
				ereport(ERROR,
						(errcode(o->sqlstate),
						 errmsg("factor %d of item %d is %g and its task factor %g: not both finite reals",
								j + 1, m->item_ids[i], mtdpp_factor_at(m, i, j), r),
						 errhint("%s", o->hint)));
			sum += fabs(r);
		}
		if (!(sum <= FLT_MAX))
			ereport(ERROR,
					(errcode(o->sqlstate),
					 errmsg("task factors and bias of item %d sum to %g in absolute value, beyond a real",
							m->item_ids[i], sum),
					 errhint("%s", o->hint)));
	}
}

/* what it chooses on its validation slice: its hidden size and step, unless given */
static const char *
gru_chooses(const MtdppParams *p, const char **instead)
{
	*instead = ", or give rank => ... and \"learning_rate\" to train without a validation slice";
	if (p->rank == MTDPP_RANK_CHOSEN || !mtdpp_param_given(p, "learning_rate"))
		return "chooses its hidden size (rank) and learning_rate on the validation baskets when they are not given";
	return NULL;
}

const MtdppKindRoutine mtdpp_kind_gru = {
	.kind = MTDPP_GRU,
	.name = "gru",
	.keys = gru_keys_taken,
	.defaults = gru_defaults,
	.factors = true,
	.task_factors = true,
	.bias = true,
	.signed_task_factors = true,
	.weights = true,
	.add_order = true,
	.own_capacity = true,
	.fit = mtdpp_gru_fit,
	.chooses = gru_chooses,
	.validate = gru_validate,
	.score_all = gru_score_all,
	.similar = mtdpp_similar_cosine,
};
