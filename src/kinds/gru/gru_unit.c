/*
 * kinds/gru/gru_unit.c
 *		The gated recurrent unit of the kind gru (gru.c): one step, and
 *		the state after a context, which scoring and training (gru_fit.c)
 *		share.
 *
 * With W_x, W_h and b the model's weights (gru.h's layout), one step from
 * state h on input x (an item's input embedding) is
 *
 *		z = sigma(Wxz x + Whz h + bz),  r = sigma(Wxr x + Whr h + br),
 *		n = tanh(Wxn x + bn + r * (Whn h)),  h' = (1 - z) * n + z * h,
 *
 * the formulation of cuDNN and PyTorch (the reset gate applied after W_h).
 * Each state lies in (-1, 1)^D.
 */
#include "postgres.h"

#include <math.h>

#include "kinds/gru/gru.h"
#include "model/model.h"
#include "numeric/linalg.h"

static inline double
sigmoid(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

/*
 * One step of the unit: the state after input X (D numbers) from state H
 * into OUT; the gates z, r, n and Whn h into GATES (4D) if not NULL, for
 * backpropagation (gru_fit.c).
 */
MTDPP_VECTORISED void
mtdpp_gru_step(const double *W, int d, const double *x, const double *h,
			   double *out, double *gates)
{
	const double *Wx = W,
			   *Wh = W + 3 * d * d,
			   *bias = W + 6 * d * d;

	for (int j = 0; j < d; j++)
	{
		double		a[3],
					u[3];

		for (int g = 0; g < 3; g++)
		{
			const double *wx = Wx + (size_t) (g * d + j) * d,
					   *wh = Wh + (size_t) (g * d + j) * d;
			double		sa = bias[g * d + j],
						su = 0.0;

			for (int k = 0; k < d; k++)
			{
				sa += wx[k] * x[k];
				su += wh[k] * h[k];
			}
			a[g] = sa;
			u[g] = su;
		}
		{
			double		z = sigmoid(a[0] + u[0]),
						r = sigmoid(a[1] + u[1]),
						n = tanh(a[2] + r * u[2]);

			out[j] = (1.0 - z) * n + z * h[j];
			if (gates)
			{
				gates[j] = z;
				gates[d + j] = r;
				gates[2 * d + j] = n;
				gates[3 * d + j] = u[2];
			}
		}
	}
}

/* the state after reading the context CTX of B items, in their order, into H (rank numbers) */
void
mtdpp_gru_hidden(const MtdppModel *m, const int32 *ctx, int b, double *h)
{
	int			d = m->rank;
	double	   *x = palloc(sizeof(double) * d * 2);
	double	   *next = x + d;

	memset(h, 0, sizeof(double) * d);
	for (int s = 0; s < b; s++)
	{
		for (int k = 0; k < d; k++)
			x[k] = m->V ? m->V[(size_t) ctx[s] * d + k] : m->Vf[(size_t) ctx[s] * d + k];
		mtdpp_gru_step(m->weights, d, x, h, next, NULL);
		memcpy(h, next, sizeof(double) * d);
	}
	pfree(x);
}
