/*
 * kinds/multitask/gradient_check.c
 *		mtdpp.gradient_check: the DPP fit's gradients (fit_loss.c) against
 *		finite differences of its loss.
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"

#include "fit/fit_int.h"
#include "fit/params.h"
#include "model/kinds.h"
#include "model/model.h"

/*
 * mtdpp.gradient_check(rank, context_size, seed, softmax): the largest relative
 * difference between the analytic gradient of context_step and central
 * finite differences of its loss, over every parameter one context with a
 * positive and two negative targets touches.  A test of the appendix's
 * formulas as implemented, on a random model of 12 items.
 */
PG_FUNCTION_INFO_V1(mtdpp_gradient_check);

static double
loss_only(Shard *sh, int b, int nt)
{
	Trainer    *tr = sh->tr;
	MtdppModel *m = tr->m;
	Size		cells = (Size) m->n_items * m->rank;
	double		loss;

	mtdpp_model_prepare(m);
	loss = context_step(sh, b, nt, 1.0);
	/* discard the gradient it accumulated */
	memset(sh->gV, 0, sizeof(double) * cells);
	memset(sh->gR, 0, sizeof(double) * cells);
	memset(sh->gD, 0, sizeof(double) * m->n_items);
	for (int i = 0; i < m->n_items; i++)
		sh->touchedV[i] = sh->touchedR[i] = false;
	sh->nV = sh->nR = 0;
	return loss;
}

Datum
mtdpp_gradient_check(PG_FUNCTION_ARGS)
{
	int			r = PG_GETARG_INT32(0);
	int			b = PG_GETARG_INT32(1);
	int			n = 12;
	int			nt = 3;
	Trainer		tr;
	Shard	   *sh;
	MtdppParams p;
	MtdppModel *m;
	Size		cells;
	double	   *aV,
			   *aR,
			   *aD;
	double		worst = 0.0;
	const double h = 1e-6;

	if (r < 1 || r > 64 || b < 1 || b > n - nt)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gradient_check takes a rank from 1 to 64 and a context of 1 to %d items", n - nt)));
	mtdpp_params_defaults(&p, MTDPP_MULTITASK);
	p.rank = r;
	p.loss = PG_GETARG_BOOL(3) ? MTDPP_LOSS_SOFTMAX : MTDPP_LOSS_LOGISTIC;
	memset(&tr, 0, sizeof(tr));
	tr.p = &p;
	tr.bias = mtdpp_kind(MTDPP_MULTITASK)->bias;
	tr.task_factors = mtdpp_kind(MTDPP_MULTITASK)->task_factors;
	pg_prng_seed(&tr.rng, (uint64) PG_GETARG_INT64(2));
	m = tr.m = mtdpp_model_alloc(MTDPP_MULTITASK, n, r);
	m->log_w = log(0.5);
	cells = (Size) n * r;
	for (Size c = 0; c < cells; c++)
	{
		m->V[c] = 0.5 * gaussian(&tr.rng);
		m->R[c] = 1.0 + 0.3 * gaussian(&tr.rng);
	}
	for (int i = 0; i < n; i++)
		m->D[i] = 1.0 + 0.2 * gaussian(&tr.rng);
	sh = tr.shards[0] = shard_new(&tr, n, nt, n);
	for (int s = 0; s < b; s++)
		sh->ctx[s] = s;
	for (int t = 0; t < nt; t++)
	{
		sh->targets[t] = b + t;
		sh->labels[t] = (t == 0) ? 1.0 : 0.0;
	}

	/* analytic */
	mtdpp_model_prepare(m);
	(void) context_step(sh, b, nt, 1.0);
	aV = palloc(sizeof(double) * cells);
	aR = palloc(sizeof(double) * cells);
	aD = palloc(sizeof(double) * n);
	memcpy(aV, sh->gV, sizeof(double) * cells);
	memcpy(aR, sh->gR, sizeof(double) * cells);
	memcpy(aD, sh->gD, sizeof(double) * n);
	(void) loss_only(sh, b, nt);

	/* numerical, parameter by parameter */
	for (int kind = 0; kind < 3; kind++)
	{
		double	   *theta = kind == 0 ? m->V : kind == 1 ? m->R : m->D;
		double	   *analytic = kind == 0 ? aV : kind == 1 ? aR : aD;
		Size		len = kind == 2 ? (Size) n : cells;

		for (Size c = 0; c < len; c++)
		{
			double		keep = theta[c],
						up,
						down,
						num,
						err;

			theta[c] = keep + h;
			up = loss_only(sh, b, nt);
			theta[c] = keep - h;
			down = loss_only(sh, b, nt);
			theta[c] = keep;
			num = (up - down) / (2.0 * h);
			err = fabs(num - analytic[c]) / Max(1e-3, fabs(num) + fabs(analytic[c]));
			worst = Max(worst, err);
		}
	}
	PG_RETURN_FLOAT8(worst);
}
