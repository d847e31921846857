/*
 * fit/fit_loss.c
 *		The DPP fit's loss and its gradients.
 *
 * Loss.  With s_t = ln det K_t[C], K_t = V diag(R_t^2) V^T + D^2:
 *	softmax (default): -s_pos + ln sum_t exp(s_t) over the positive and its
 *		negatives; d/ds_t = softmax_t - [t = pos].  Invariant to the scale of
 *		the determinant, which grows with the basket, so one w does not have
 *		to fit baskets of 2 and of 30 items at once.
 *	logistic (the paper's): z = w det K, y = 1: -ln(1 - exp(-z)), y = 0: z;
 *		d/ds = -z / expm1(z) or z.
 * From d ln det K = tr(K^-1 dK) (paper, appendix), with M = K^-1 V_C:
 *		d/dV_C = 2 M diag(R_t^2)
 *		d/dR_tj = 2 R_tj sum_s V_sj M_sj
 *		d/dD_s = 2 [K^-1]_ss D_s
 * checked against finite differences by mtdpp.gradient_check.  The other
 * kinds reuse this machinery: the logistic DPP with R = 1 on whole baskets
 * against baskets with one item swapped; the low-rank DPP with R = 1, D = 0,
 * loss -ln det L_B plus the normaliser ln det(I + V^T V) per minibatch;
 * the factorization machine (fit_bilinear.c) with its own score in place of
 * ln det K_t and the same losses over it.
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "fit/fit_int.h"
#include "fit/params.h"
#include "model/kinds.h"
#include "model/model.h"
#include "numeric/kernel.h"
#include "numeric/linalg.h"

void
touch_row(bool *flags, int32 *list, int *n, int row)
{
	if (!flags[row])
	{
		flags[row] = true;
		list[(*n)++] = row;
	}
}

/*
 * Forward pass: every target's kernel, factorised, and its ln det, by the
 * numeric core that scoring uses (kernel.c); the Cholesky factors stay in
 * sh->K for the backward pass.  A numerically singular kernel carries no
 * signal (its ln det is -inf) and is counted.
 */
static pg_attribute_always_inline void
context_logdets(Shard *sh, int b, int nt)
{
	MtdppModel *m = sh->tr->m;

	mtdpp_gather_R2(m, sh->targets, nt, sh->R2rows);
	mtdpp_gather_V(m, sh->ctx, b, sh->VC);
	mtdpp_context_pairs(sh->VC, b, m->rank, sh->P);
	sh->n_singular += mtdpp_kernels_logdet(m, sh->ctx, b, sh->P, sh->R2rows, nt,
										   sh->packed, sh->K, true, sh->logdet);
}

/*
 * The loss of one context's NT targets, added to *LOSS, and its derivative
 * g_t with respect to each ln det into sh->g (see the essay); false when the
 * example carries no gradient (a positive whose kernel is singular).
 */
static pg_attribute_always_inline bool
context_loss(Shard *sh, int nt, double *loss)
{
	Trainer    *tr = sh->tr;
	MtdppModel *m = tr->m;

	if (tr->likelihood)
	{
		/* low-rank DPP: the basket's ln det, normaliser added per batch */
		*loss -= sh->logdet[0];
		sh->g[0] = -1.0;
	}
	else if (tr->p->loss == MTDPP_LOSS_SOFTMAX)
	{
		/* cross-entropy of the positive among its negatives */
		double		top,
					sum = 0.0;

		/*
		 * Negatives drawn with probability q (popularity^power) compete with
		 * the logit ln det K - ln(n q), which keeps the softmax an estimate of
		 * the one over the whole catalog (a sampled softmax).
		 */
		if (tr->neg_logq != NULL)
			for (int t = 1; t < nt; t++)
				sh->logdet[t] -= tr->neg_logq[sh->targets[t]];
		top = sh->logdet[0];
		for (int t = 1; t < nt; t++)
			top = Max(top, sh->logdet[t]);
		for (int t = 0; t < nt; t++)
			sum += exp(sh->logdet[t] - top);
		*loss += top + log(sum) - sh->logdet[0];
		for (int t = 0; t < nt; t++)
			sh->g[t] = exp(sh->logdet[t] - top) / sum - (t == 0 ? 1.0 : 0.0);
		if (isinf(sh->logdet[0]))
		{
			*loss = 0.0;
			return false;
		}
	}
	else
	{
		for (int t = 0; t < nt; t++)
		{
			double		log_z = m->log_w + sh->logdet[t];

			if (sh->labels[t] > 0.5)
			{
				*loss -= mtdpp_log_p_one(log_z);
				if (log_z < -30.0)
					sh->g[t] = -1.0;
				else
				{
					double		z = exp(Min(log_z, 700.0));

					sh->g[t] = -z / expm1(z);
				}
			}
			else
			{
				*loss -= mtdpp_log_p_zero(log_z);
				sh->g[t] = exp(Min(log_z, 700.0));
			}
		}
	}
	return true;
}

/*
 * Backward pass: the gradients of one context's NT targets, weighted by
 * sh->g and scaled by SCALE, into the shard's gradients.
 */
static pg_attribute_always_inline void
context_gradients(Shard *sh, int b, int nt, double scale)
{
	Trainer    *tr = sh->tr;
	MtdppModel *m = tr->m;
	int			r = m->rank;

	/*
	 * A target whose weight is below 2^-60 (exp() of a ln det far below the
	 * others') adds nothing to the minibatch's gradient that a double could
	 * hold beside the weights, up to 1, of the examples that carry signal:
	 * it is skipped, so that no subnormal weight enters the loops below.
	 */
	for (int t = 0; t < nt; t++)
		if (fabs(sh->g[t]) < 0x1p-60)
			sh->g[t] = 0.0;

	/*
	 * pass 2: gradients through d ln det K = tr(K^-1 dK).  M = K^-1 V_C by
	 * two triangular solves with the factor of pass 1 (no inverse formed);
	 * the context's rows take 2 g M diag(R_t^2), summed over its targets in
	 * GVC and scattered once; the target's row takes 2 g R_t o colsum(V_C o
	 * M).  The bias needs only the diagonal of K^-1, which K^-1 K = I gives
	 * from M: [K^-1]_ss D2_s = 1 - sum_j M_sj R_tj^2 V_sj.
	 */
	memset(sh->GVC, 0, sizeof(double) * (size_t) b * r);
	for (int t = 0; t < nt; t++)
	{
		int			target = sh->targets[t];
		double		g2 = 2.0 * sh->g[t] * scale;
		const double *L = sh->K + (size_t) t * b * b;
		const double *R2t = m->R2 + (size_t) target * r;
		double	   *Mt = sh->M + (size_t) t * b * r;

		if (g2 == 0.0 || isinf(sh->logdet[t]))
			continue;

		memcpy(Mt, sh->VC, sizeof(double) * (size_t) b * r);
		mtdpp_cholesky_solve(L, b, Mt, r);
		for (int s = 0; s < b; s++)
		{
			const double *Ms = Mt + (size_t) s * r;
			double	   *Gs = sh->GVC + (size_t) s * r;

			for (int j = 0; j < r; j++)
				Gs[j] += g2 * Ms[j] * R2t[j];
			if (tr->bias)
			{
				const double *vs = sh->VC + (size_t) s * r;
				int			item = sh->ctx[s];
				double		x = 0.0;

				for (int j = 0; j < r; j++)
					x += Ms[j] * R2t[j] * vs[j];
				sh->gD[item] += g2 * (1.0 - x) / m->D2[item] * m->D[item];
			}
		}
		if (tr->task_factors)
		{
			const double *Rt = m->R + (size_t) target * r;
			double	   *gRt = sh->gR + (size_t) target * r;

			touch_row(sh->touchedR, sh->listR, &sh->nR, target);
			for (int s = 0; s < b; s++)
			{
				const double *Ms = Mt + (size_t) s * r;
				const double *vs = sh->VC + (size_t) s * r;

				for (int j = 0; j < r; j++)
					gRt[j] += g2 * Rt[j] * vs[j] * Ms[j];
			}
		}
	}
	for (int s = 0; s < b; s++)
	{
		double	   *gVs = sh->gV + (size_t) sh->ctx[s] * r;
		const double *Gs = sh->GVC + (size_t) s * r;

		touch_row(sh->touchedV, sh->listV, &sh->nV, sh->ctx[s]);
		for (int j = 0; j < r; j++)
			gVs[j] += Gs[j];
	}
}

/*
 * Forward and backward pass for one context (sh->ctx, B items) and its NT
 * targets (sh->targets); adds the gradients (scaled by SCALE) and returns
 * the summed loss.
 */
MTDPP_VECTORISED
double
context_step(Shard *sh, int b, int nt, double scale)
{
	double		loss = 0.0;

	context_logdets(sh, b, nt);
	if (!context_loss(sh, nt, &loss))
		return loss;
	context_gradients(sh, b, nt, scale);
	return loss;
}

/*
 * The loss of one context's NT targets whose scores are in sh->logdet (a
 * factorization machine's, fit_bilinear.c), added to *LOSS, and its derivatives
 * into sh->g; false when the example carries no gradient.
 */
bool
targets_loss(Shard *sh, int nt, double *loss)
{
	return context_loss(sh, nt, loss);
}

/*
 * The low-rank DPP's normaliser ln det(L + I) = ln det(I_r + V^T V), whose
 * gradient 2 V (I_r + V^T V)^-1 touches every item; WEIGHT scales it.
 * Returns the normaliser.
 */
double
lowrank_normaliser(Trainer *tr, double weight)
{
	MtdppModel *m = tr->m;
	Shard	   *sh = tr->shards[0];
	int			r = m->rank;
	int			n = m->n_items;
	double		logdet;

	mtdpp_gemm_tn(r, r, n, m->V, r, m->V, r, tr->G, r);
	for (int j = 0; j < r; j++)
		tr->G[(size_t) j * r + j] += 1.0;
	if (!mtdpp_cholesky(tr->G, r))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("training diverged: the low-rank normaliser I + V^T V is not positive definite"),
				 errdetail("The factors of the %d items are no longer finite or have grown too large.", n),
				 errhint("Lower learning_rate (now %g) or raise l2 (now %g).",
						 tr->p->learning_rate, tr->p->l2)));
	logdet = mtdpp_cholesky_logdet(tr->G, r);
	mtdpp_cholesky_inverse(tr->G, r);
	mtdpp_gemm_nn(n, r, r, m->V, r, tr->G, r, tr->VG, r);
	for (int i = 0; i < n; i++)
	{
		double	   *gv = sh->gV + (size_t) i * r;
		const double *vg = tr->VG + (size_t) i * r;

		touch_row(sh->touchedV, sh->listV, &sh->nV, i);
		for (int j = 0; j < r; j++)
			gv[j] += 2.0 * weight * vg[j];
	}
	return logdet;
}
