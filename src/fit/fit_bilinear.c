/*
 * fit/fit_bilinear.c
 *		Bilinear scores (a factorization machine's) and their gradients, in
 *		the trainer of the DPP kinds, for the kinds that score so (bilinear).
 *
 * A basket is a user of Rendle's second-order factorization machine
 * (Rendle 2010, eq. 1): its features are the context items C, each of
 * weight x = 1 / sqrt(b) for b items, and the candidate t, of weight 1.
 * The machine's
 *
 *		y(C, t) = w_0 + sum_f w_f x_f + sum_{f < g} <v_f, v_g> x_f x_g
 *
 * differs from one candidate of a context to another only by
 *
 *		s_t = w_t + <v_t, u>,	u = sum_{i in C} x v_i
 *
 * (the intercept, the context's own weights and its pairs are the same for
 * every candidate, and drop out of a ranking and of the softmax), with w_t
 * the bias D and v_t the factors V.  The trainer (fit_epochs.c) draws the
 * examples of the multi-task kinds, a target and the rest of its basket as
 * context plus negative targets (fit_examples.c), and takes the loss of the
 * DPP kinds over s_t in place of ln det K_t (fit_loss.c: the sampled
 * softmax by default), whose derivative g_t = d loss / d s_t gives
 *
 *		d/dw_t = g_t,	d/dv_t = g_t u,	d/dv_i = x sum_t g_t v_t  (i in C)
 *
 * An example costs (b + nt) rank flops each way, not a kernel per target:
 * the reason a factorization machine trains in a fraction of a DPP's time.
 */
#include "postgres.h"

#include <math.h>

#include "fit/fit_int.h"
#include "model/model.h"

/*
 * The scores s_t of the context sh->ctx (B items) and its NT targets
 * sh->targets into sh->logdet, which the loss reads; the context's sum u
 * stays in sh->GVC and the targets' rows in sh->R2rows for the gradients.
 */
static void
bilinear_scores(Shard *sh, int b, int nt)
{
	const MtdppModel *m = sh->tr->m;
	int			r = m->rank;
	double		x = 1.0 / sqrt((double) b);
	double	   *u = sh->GVC;

	memset(u, 0, sizeof(double) * r);
	for (int s = 0; s < b; s++)
	{
		const double *vs = m->V + (size_t) sh->ctx[s] * r;

		for (int j = 0; j < r; j++)
			u[j] += vs[j];
	}
	for (int j = 0; j < r; j++)
		u[j] *= x;
	for (int t = 0; t < nt; t++)
	{
		const double *vt = m->V + (size_t) sh->targets[t] * r;
		double		dot = 0.0;

		memcpy(sh->R2rows + (size_t) t * r, vt, sizeof(double) * r);
		for (int j = 0; j < r; j++)
			dot += vt[j] * u[j];
		sh->logdet[t] = m->D[sh->targets[t]] + dot;
	}
}

/*
 * The gradients of the context's NT targets, weighted by sh->g (the loss's
 * derivatives) and scaled by SCALE, into the shard's gradients.
 */
static void
bilinear_gradients(Shard *sh, int b, int nt, double scale)
{
	const MtdppModel *m = sh->tr->m;
	int			r = m->rank;
	double		x = 1.0 / sqrt((double) b);
	const double *u = sh->GVC;
	double	   *acc = sh->M;	/* sum_t g_t v_t */

	memset(acc, 0, sizeof(double) * r);
	for (int t = 0; t < nt; t++)
	{
		int			target = sh->targets[t];
		double		gt = sh->g[t] * scale;
		const double *vt = sh->R2rows + (size_t) t * r;
		double	   *gVt = sh->gV + (size_t) target * r;

		if (gt == 0.0)
			continue;
		touch_row(sh->touchedV, sh->listV, &sh->nV, target);
		sh->gD[target] += gt;
		for (int j = 0; j < r; j++)
		{
			gVt[j] += gt * u[j];
			acc[j] += gt * vt[j];
		}
	}
	for (int s = 0; s < b; s++)
	{
		double	   *gVs = sh->gV + (size_t) sh->ctx[s] * r;

		touch_row(sh->touchedV, sh->listV, &sh->nV, sh->ctx[s]);
		for (int j = 0; j < r; j++)
			gVs[j] += x * acc[j];
	}
}

/*
 * Forward and backward pass for one context (sh->ctx, B items) and its NT
 * targets (sh->targets), as context_step (fit_loss.c) for the DPP kinds:
 * adds the gradients (scaled by SCALE) and returns the summed loss.
 */
double
bilinear_context_step(Shard *sh, int b, int nt, double scale)
{
	double		loss = 0.0;

	bilinear_scores(sh, b, nt);
	if (targets_loss(sh, nt, &loss))
		bilinear_gradients(sh, b, nt, scale);
	return loss;
}
