/*
 * kind_single.c
 *		The single-kernel DPP kinds: "logistic" (single-task logistic DPP,
 *		L = V V^T + D^2) and "lowrank" (Gartrell et al. 2017, L = V V^T,
 *		maximum likelihood).
 *
 * One kernel serves every target, so a candidate c is scored through
 *
 *		det L[B + c] = det L[B] (L_cc - L_cB L[B]^-1 L_Bc)
 *
 * One GEMM gives L_cB for every candidate (V V_B^T), one triangular solve
 * with the Cholesky factor of L[B] gives the Schur complements: cheaper than
 * a kernel per candidate, so these kinds score the whole catalog even for a
 * few candidates, and complete without the pruning of topk.c.
 *		logistic:	ln(w det L[B + c]), P(y = 1 | B + c) = 1 - exp(-exp(score))
 *		lowrank:	ln det L[B + c] - ln det L[B], the conditional density
 *
 * Both train by train.c's stochastic gradient with R = 1, through the
 * numeric core (kernel.c): the logistic DPP on whole baskets against baskets
 * with one item swapped, the low-rank DPP by maximum likelihood.  The
 * low-rank kernel has rank r, so any r + 1 items are linearly dependent and
 * det L = 0: it conditions on at most rank - 1 items (the last ones of the
 * basket), which leaves every candidate a positive conditional probability.
 */
#include "postgres.h"

#include <math.h>

#include "mtdpp.h"

/*
 * Rows START .. START + N - 1 of V as double: in place for a model in
 * training, else converted from float into SCRATCH (n x rank).
 */
static const double *
rows_V(const MtdppModel *m, int start, int n, double *scratch)
{
	const float *src;

	if (m->V != NULL)
		return m->V + (size_t) start * m->rank;
	src = m->Vf + (size_t) start * m->rank;
	for (size_t i = 0; i < (size_t) n * m->rank; i++)
		scratch[i] = src[i];
	return scratch;
}

/*
 * Every item's score as the completion of CTX: ln(w det L[B + c]), or with
 * CONDITIONAL the conditional ln det L[B + c] - ln det L[B].
 */
static void
schur_scores(const MtdppModel *m, const int32 *ctx, int b, bool conditional,
			 double *scores)
{
	int			r = m->rank;
	int			block = mtdpp_score_block_rows(m, b);
	double	   *VB = palloc(sizeof(double) * (size_t) Max(b, 1) * r);
	double	   *L = palloc(sizeof(double) * (size_t) Max(b, 1) * Max(b, 1));
	double	   *Y = palloc(sizeof(double) * (size_t) block * Max(b, 1));
	double		logdet_b = 0.0;

	double	   *rows = palloc(sizeof(double) * (size_t) block * r);

	mtdpp_gather_V(m, ctx, b, VB);
	if (b > 0)
	{
		mtdpp_gemm_nt(b, b, r, VB, r, VB, r, L, b);
		for (int s = 0; s < b; s++)
			L[(size_t) s * b + s] += m->D2[ctx[s]];
		if (!mtdpp_cholesky(L, b))
		{
			for (int i = 0; i < m->n_items; i++)
				scores[i] = -INFINITY;
			return;
		}
		logdet_b = mtdpp_cholesky_logdet(L, b);
	}
	for (int start = 0; start < m->n_items; start += block)
	{
		int			nt = Min(block, m->n_items - start);

		if (b > 0)
		{
			mtdpp_gemm_nt(nt, b, r, rows_V(m, start, nt, rows), r, VB, r, Y, b);
			mtdpp_trsm_right_lt(nt, b, L, Y);
		}
		for (int t = 0; t < nt; t++)
		{
			int			c = start + t;
			double		schur = m->Vnorm2[c] + m->D2[c];
			double		log_schur;

			for (int s = 0; s < b; s++)
				schur -= Y[(size_t) t * b + s] * Y[(size_t) t * b + s];
			log_schur = schur > 0.0 ? log(schur) : -INFINITY;
			if (conditional)
				scores[c] = log_schur;
			else
				scores[c] = m->log_w + logdet_b + log_schur;
		}
	}
	pfree(VB);
	pfree(L);
	pfree(Y);
	pfree(rows);
}

static void
logistic_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	schur_scores(m, ctx, b, false, scores);
}

static void
lowrank_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	schur_scores(m, ctx, b, true, scores);
}

static int
lowrank_context_limit(const MtdppModel *m)
{
	return Max(0, Min(MTDPP_MAX_CONTEXT, m->rank - 1));
}

static const MtdppKindDefault logistic_defaults[] = {
	/* the single-task logistic DPP keeps the paper's loss: see train.c */
	{"loss", MTDPP_LOSS_LOGISTIC},
	/* best validation MPR on amazon_diaper */
	{"learning_rate", 0.02},
	{"l2", 1e-4},
	{"l2_bias", 1e-4},
	{NULL, 0}
};

static const MtdppKindDefault lowrank_defaults[] = {
	/* best validation MPR on amazon_diaper */
	{"learning_rate", 0.005},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_logistic = {
	.kind = MTDPP_LOGISTIC,
	.name = "logistic",
	.defaults = logistic_defaults,
	.factors = true,
	.bias = true,
	.fit = mtdpp_train_dpp,
	.score_all = logistic_score_all,
};

const MtdppKindRoutine mtdpp_kind_lowrank = {
	.kind = MTDPP_LOWRANK,
	.name = "lowrank",
	.defaults = lowrank_defaults,
	.factors = true,
	.likelihood = true,
	.fit = mtdpp_train_dpp,
	.score_all = lowrank_score_all,
	.context_limit = lowrank_context_limit,
};
