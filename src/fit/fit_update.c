/*
 * fit/fit_update.c
 *		The DPP fit's optimiser: Adam or momentum on the rows a minibatch
 *		touched, with the shards' gradients summed first.
 *
 * Optimiser.  Adam (default) or the paper's momentum, on the rows a minibatch
 * touches only, so an epoch costs the examples and not the catalog.  Rows
 * touched receive the popularity-weighted L2 term l2 * alpha_i * theta_i with
 * alpha_i = mean popularity / popularity_i: rare items, seen in few
 * examples, are held closer to zero (Gartrell et al. 2017).  That decay
 * drives many task factors towards zero, and Adam follows them down
 * geometrically, through the subnormal numbers: so a parameter that falls
 * below what can carry signal (MTDPP_NEGLIGIBLE) is made zero there, and
 * with it, where its gradient is proportional to it (task factors, biases),
 * its moments, so that it stays zero.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "fit/fit_int.h"
#include "fit/params.h"
#include "model/model.h"
#include "numeric/helper_thread.h"
#include "numeric/linalg.h"

/*
 * Optimiser moments too small to move any parameter are zero, so that a
 * moment whose gradients stopped does not decay into subnormal numbers: a
 * first moment below 2^-120 moves a parameter by less than 2^-85 (Adam's
 * step is at most learning_rate (<= 10) x its bias correction (< 32) x
 * m1 / 1e-8), below MTDPP_NEGLIGIBLE; a second moment below 2^-200 adds
 * less than 2^-100 to the 1e-8 of Adam's denominator, which a double cannot
 * hold.
 */
#define NEGLIGIBLE_MOMENT	0x1p-120
#define NEGLIGIBLE_MOMENT2	0x1p-200

/*
 * Adam or momentum on one row of parameters; clears its gradient.  A
 * parameter below LEAST is zero (see MTDPP_NEGLIGIBLE).  With ABSORBING, its
 * gradient is proportional to it (task factors, biases): a parameter that
 * reached zero would stay there but for its momentum, so its moments are
 * cleared with it, and zero is where it stays.
 */
MTDPP_VECTORISED
static void
update_row(Trainer *tr, double *theta, double *grad, double *m1, double *m2,
		   int len, double l2, double lr, double least, bool absorbing)
{
	const MtdppParams *p = tr->p;

	if (p->optimizer == MTDPP_OPT_ADAM)
	{
		double		b1 = p->momentum,
					b2 = 0.999;
		double		step = lr * tr->adam_correction;

		for (int j = 0; j < len; j++)
		{
			double		gj = grad[j] + l2 * theta[j];

			m1[j] = b1 * m1[j] + (1.0 - b1) * gj;
			m2[j] = b2 * m2[j] + (1.0 - b2) * gj * gj;
			theta[j] -= step * m1[j] / (sqrt(m2[j]) + 1e-8);
			grad[j] = 0.0;
		}
	}
	else
	{
		/* Nesterov momentum, in the form that needs no look-ahead point */
		double		mu = p->momentum;

		for (int j = 0; j < len; j++)
		{
			double		gj = grad[j] + l2 * theta[j];

			m1[j] = mu * m1[j] - lr * gj;
			theta[j] += mu * m1[j] - lr * gj;
			grad[j] = 0.0;
		}
	}

	/* what carries no signal is zero (m2 is not used by momentum: zero) */
	for (int j = 0; j < len; j++)
	{
		bool		off = fabs(theta[j]) < least;

		theta[j] = off ? 0.0 : theta[j];
		m1[j] = (fabs(m1[j]) < NEGLIGIBLE_MOMENT || (off && absorbing)) ? 0.0 : m1[j];
		m2[j] = (m2[j] < NEGLIGIBLE_MOMENT2 || (off && absorbing)) ? 0.0 : m2[j];
	}
}

/* FN(A) here and FN(B) on the helper thread, if any; returns when both are done */
void
run_pair(Trainer *tr, void (*fn) (void *), void *a, void *b)
{
	mtdpp_helper_run_pair(tr->helper, fn, a, b);
}

/* The other shards' gradients into shard 0's, in shard order. */
void
merge_shards(Trainer *tr)
{
	int			r = tr->m->rank;
	Shard	   *sh = tr->shards[0];

	for (int k = 1; k < TRAIN_SHARDS; k++)
	{
		Shard	   *o = tr->shards[k];

		for (int q = 0; q < o->nV; q++)
		{
			int			i = o->listV[q];
			double	   *to = sh->gV + (size_t) i * r,
					   *from = o->gV + (size_t) i * r;

			touch_row(sh->touchedV, sh->listV, &sh->nV, i);
			for (int j = 0; j < r; j++)
				to[j] += from[j];
			memset(from, 0, sizeof(double) * r);
			sh->gD[i] += o->gD[i];
			o->gD[i] = 0.0;
			o->touchedV[i] = false;
		}
		for (int q = 0; q < o->nR; q++)
		{
			int			i = o->listR[q];
			double	   *to = sh->gR + (size_t) i * r,
					   *from = o->gR + (size_t) i * r;

			touch_row(sh->touchedR, sh->listR, &sh->nR, i);
			for (int j = 0; j < r; j++)
				to[j] += from[j];
			memset(from, 0, sizeof(double) * r);
			o->touchedR[i] = false;
		}
		o->nV = o->nR = 0;
	}
}

/* half of a minibatch's update: the rows of one half of each touched list */
typedef struct UpdateHalf
{
	Trainer    *tr;
	double		lr;
	int			part;			/* 0 or 1 */
} UpdateHalf;

static void
update_half(void *arg)
{
	UpdateHalf *u = (UpdateHalf *) arg;
	Trainer    *tr = u->tr;
	MtdppModel *m = tr->m;
	const MtdppParams *p = tr->p;
	int			r = m->rank;
	Shard	   *sh = tr->shards[0];

	for (int k = (int) ((int64) sh->nV * u->part / 2); k < (int) ((int64) sh->nV * (u->part + 1) / 2); k++)
	{
		int			i = sh->listV[k];
		double		alpha = tr->mean_pop / Max(m->popularity[i], 1);

		double	   *Vi = m->V + (size_t) i * r;
		double		norm2 = 0.0;

		update_row(tr, Vi, sh->gV + (size_t) i * r,
				   tr->mV + (size_t) i * r, tr->vV + (size_t) i * r, r,
				   p->l2 * alpha, u->lr, MTDPP_NEGLIGIBLE, false);
		for (int j = 0; j < r; j++)
			norm2 += Vi[j] * Vi[j];
		m->Vnorm2[i] = norm2;
		if (tr->bias)
		{
			update_row(tr, m->D + i, sh->gD + i, tr->mD + i, tr->vD + i, 1,
					   p->l2_bias * alpha, u->lr, MTDPP_NEGLIGIBLE_ROOT, true);
			m->D2[i] = m->D[i] * m->D[i] + MTDPP_JITTER;
		}
		sh->touchedV[i] = false;
	}
	for (int k = (int) ((int64) sh->nR * u->part / 2); k < (int) ((int64) sh->nR * (u->part + 1) / 2); k++)
	{
		int			i = sh->listR[k];
		double		alpha = tr->mean_pop / Max(m->popularity[i], 1);
		double	   *Ri = m->R + (size_t) i * r;
		double	   *R2i = m->R2 + (size_t) i * r;

		update_row(tr, Ri, sh->gR + (size_t) i * r,
				   tr->mR + (size_t) i * r, tr->vR + (size_t) i * r, r,
				   p->l2 * alpha, u->lr, MTDPP_NEGLIGIBLE_ROOT, true);
		for (int j = 0; j < r; j++)
			R2i[j] = Ri[j] * Ri[j];
		sh->touchedR[i] = false;
	}
}

/* Adam (or momentum) on every touched row, the rows split between threads. */
void
apply_updates(Trainer *tr, double lr)
{
	const MtdppParams *p = tr->p;
	UpdateHalf	half[2] = {{tr, lr, 0}, {tr, lr, 1}};

	merge_shards(tr);
	tr->step++;
	/* Adam's bias correction, once per minibatch */
	tr->adam_correction = sqrt(1.0 - pow(0.999, (double) tr->step)) /
		(1.0 - pow(p->momentum, (double) tr->step));
	run_pair(tr, update_half, &half[0], &half[1]);
	tr->shards[0]->nV = tr->shards[0]->nR = 0;
}
