/*
 * kinds/poisson/poisson_vi.c
 *		The variational fit of Poisson factorisation (Gopalan, Hofman, Blei
 *		2015, "Scalable Recommendation with Hierarchical Poisson
 *		Factorization"), each training basket a user; and the inference of a
 *		new basket's factors with the item factors fixed.
 *
 * The basket x item count y_ui is Poisson with rate theta_u . beta_i, the
 * factors Gamma-distributed under the hierarchical priors of poisson.h.
 * The mean-field family of the paper: q(theta_uk) = Gamma(shape, rate),
 * likewise beta_ik, the activity xi_u and popularity eta_i, and for each
 * line (u, i) a multinomial phi_ui over the factors.  Batch coordinate
 * ascent, one pass at a time:
 *
 *	for each basket u, for each of its items i:
 *		phi_uik ∝ exp(E[ln theta_uk] + E[ln beta_ik])
 *	theta_uk:	shape a + sum_i phi_uik,	rate E[xi_u] + sum_i E[beta_ik]
 *	xi_u:		shape a' + K a,				rate b' + sum_k E[theta_uk]
 *	beta_ik:	shape c + sum_u phi_uik,	rate E[eta_i] + sum_u E[theta_uk]
 *	eta_i:		shape c' + K c,				rate d' + sum_k E[beta_ik]
 *
 * with E[ln x] = digamma(shape) - ln(rate).  The sums over every item (and
 * every basket) in the rates need no pass over the zeros: a pass costs the
 * lines times K, plus K digammas and exponentials per basket and item.  A
 * basket's rate of theta is then E[xi_u] plus one column sum per factor,
 * so baskets keep only their theta shapes (single precision) and E[xi_u].
 *
 * Deterministic: the initial item shapes are c plus a uniform draw from
 * the seed, and every sum runs in a fixed order on one core.
 */
#include "postgres.h"

#include <math.h>

#include "common/pg_prng.h"
#include "miscadmin.h"

#include "fit/progress.h"
#include "kinds/poisson/poisson.h"
#include "model/baskets.h"

/* digamma(x), x > 0: the recurrence up to 6, then the asymptotic series */
double
mtdpp_digamma(double x)
{
	double		r = 0.0,
				f;

	/* below its domain only a damaged model gets here: no endless recurrence */
	if (!(x >= 0.0))
		return NAN;
	while (x < 6.0)
	{
		r -= 1.0 / x;
		x += 1.0;
	}
	f = 1.0 / (x * x);
	return r + log(x) - 0.5 / x -
		f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

/* What a fit of D at RANK holds at its peak, in bytes. */
Size
mtdpp_poisson_memory(const MtdppBaskets *d, int rank)
{
	Size		cells = mul_size(Max(d->n_items, 1), Max(rank, 1));
	Size		s;

	/* the items' shapes, their accumulators, exp E[ln beta] and E[beta] */
	s = mul_size(cells, 4 * sizeof(double));
	/* the baskets' theta shapes and activities */
	s = add_size(s, mul_size(mul_size(Max(d->n_baskets, 1), Max(rank, 1)), sizeof(float)));
	s = add_size(s, mul_size(Max(d->n_baskets, 1), sizeof(double)));
	s = add_size(s, mul_size(Max(d->n_items, 1), 2 * sizeof(double)));
	return s;
}

typedef struct PoissonFit
{
	int			n,
				k,
				nb;
	double		a,
				c;
	double	   *bshape;			/* n x k: beta's shapes */
	double	   *acc;			/* n x k: sum over baskets of phi */
	double	   *elb;			/* n x k: exp E[ln beta] */
	double	   *eb;				/* n x k: E[beta] */
	double	   *eeta;			/* n: E[eta] */
	double	   *esum;			/* n: sum_k E[beta_ik] */
	float	   *ushape;			/* nb x k: theta's shapes */
	double	   *exi;			/* nb: E[xi] */
	double	   *tsum;			/* k: sum_u E[theta_uk] */
	double	   *tsum_new;
	double	   *colsum;			/* k: sum_i E[beta_ik] */
	double	   *elt;			/* k: one basket's exp E[ln theta] */
	double	   *phi;			/* k */
	double	   *got;			/* k */
} PoissonFit;

/* E[beta], exp E[ln beta] and their sums from beta's shapes and rates */
static void
poisson_item_moments(PoissonFit *f)
{
	int			k = f->k;

	memset(f->colsum, 0, sizeof(double) * k);
	for (int i = 0; i < f->n; i++)
	{
		double		s = 0.0;

		for (int j = 0; j < k; j++)
		{
			size_t		c = (size_t) i * k + j;
			double		rate = f->eeta[i] + f->tsum[j];

			f->eb[c] = f->bshape[c] / rate;
			f->elb[c] = exp(mtdpp_digamma(f->bshape[c])) / rate;
			s += f->eb[c];
			f->colsum[j] += f->eb[c];
		}
		f->esum[i] = s;
	}
}

/* One basket's update: its phi into the items' accumulators, its theta and xi. */
static void
poisson_basket_update(PoissonFit *f, const MtdppBaskets *d, int u)
{
	int			k = f->k;
	float	   *shape = f->ushape + (size_t) u * k;
	double		sumt = 0.0;

	for (int j = 0; j < k; j++)
	{
		f->elt[j] = exp(mtdpp_digamma(shape[j])) / (f->exi[u] + f->colsum[j]);
		f->got[j] = 0.0;
	}
	for (int64 l = d->start[u]; l < d->start[u + 1]; l++)
	{
		const double *elb = f->elb + (size_t) d->items[l] * k;
		double	   *acc = f->acc + (size_t) d->items[l] * k;
		double		s = 0.0;

		for (int j = 0; j < k; j++)
		{
			f->phi[j] = f->elt[j] * elb[j];
			s += f->phi[j];
		}
		if (!(s > 0.0) || !isfinite(s))
		{
			/* every factor underflowed: no preference among them */
			for (int j = 0; j < k; j++)
				f->phi[j] = 1.0;
			s = k;
		}
		s = 1.0 / s;
		for (int j = 0; j < k; j++)
		{
			double		q = f->phi[j] * s;

			f->got[j] += q;
			acc[j] += q;
		}
	}
	for (int j = 0; j < k; j++)
	{
		double		et;

		shape[j] = (float) (f->a + f->got[j]);
		et = shape[j] / (f->exi[u] + f->colsum[j]);
		f->tsum_new[j] += et;
		sumt += et;
	}
	f->exi[u] = (MTDPP_POISSON_A_PRIME + k * f->a) / (MTDPP_POISSON_B_PRIME + sumt);
}

static void
poisson_alloc(PoissonFit *f, const MtdppBaskets *d, int rank)
{
	Size		cells = mul_size(Max(d->n_items, 1), Max(rank, 1));

	f->n = d->n_items;
	f->k = rank;
	f->nb = d->n_baskets;
	f->bshape = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
	f->acc = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
	f->elb = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
	f->eb = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
	f->ushape = mtdpp_alloc_huge(mul_size(mul_size(Max(f->nb, 1), Max(rank, 1)), sizeof(float)));
	f->exi = mtdpp_alloc_huge(mul_size(Max(f->nb, 1), sizeof(double)));
	f->eeta = palloc(sizeof(double) * Max(f->n, 1));
	f->esum = palloc(sizeof(double) * Max(f->n, 1));
	f->tsum = palloc0(sizeof(double) * rank);
	f->tsum_new = palloc0(sizeof(double) * rank);
	f->colsum = palloc0(sizeof(double) * rank);
	f->elt = palloc0(sizeof(double) * rank);
	f->phi = palloc0(sizeof(double) * rank);
	f->got = palloc0(sizeof(double) * rank);
}

static void
poisson_free(PoissonFit *f)
{
	pfree(f->bshape);
	pfree(f->acc);
	pfree(f->elb);
	pfree(f->eb);
	pfree(f->ushape);
	pfree(f->exi);
	pfree(f->eeta);
	pfree(f->esum);
	pfree(f->tsum);
	pfree(f->tsum_new);
	pfree(f->colsum);
	pfree(f->elt);
	pfree(f->phi);
	pfree(f->got);
}

/*
 * Fits D's baskets at RANK with inner shapes A and C by PASSES passes of
 * coordinate ascent from SEED; E[beta] (items x rank, row-major) into EBETA.
 * The caller has checked mtdpp_poisson_memory against maintenance_work_mem.
 */
void
mtdpp_poisson_fit(const MtdppBaskets *d, int rank, double a, double c,
				  int passes, int64 seed, bool verbose, double *ebeta)
{
	PoissonFit	f;
	pg_prng_state rng;
	int			k = rank;

	poisson_alloc(&f, d, rank);
	f.a = a;
	f.c = c;
	pg_prng_seed(&rng, (uint64) seed ^ UINT64CONST(0x9e3779b97f4a7c15));
	for (Size x = 0; x < (Size) f.n * k; x++)
		f.bshape[x] = c + pg_prng_double(&rng);
	for (int i = 0; i < f.n; i++)
		f.eeta[i] = MTDPP_POISSON_C_PRIME / MTDPP_POISSON_D_PRIME;
	for (int u = 0; u < f.nb; u++)
	{
		int64		len = d->start[u + 1] - d->start[u];

		for (int j = 0; j < k; j++)
			f.ushape[(size_t) u * k + j] = (float) (a + (double) len / k);
		f.exi[u] = MTDPP_POISSON_A_PRIME / MTDPP_POISSON_B_PRIME;
	}
	/* beta's rate starts at E[eta] plus one basket's worth of theta */
	for (int j = 0; j < k; j++)
		f.tsum[j] = 1.0;

	mtdpp_progress_fit(rank, passes);	/* a pass is an epoch in mtdpp_progress */
	for (int t = 0; t < passes; t++)
	{
		double		mean_rate = 0.0;

		CHECK_FOR_INTERRUPTS();
		poisson_item_moments(&f);
		memset(f.acc, 0, sizeof(double) * (Size) f.n * k);
		memset(f.tsum_new, 0, sizeof(double) * k);
		for (int u = 0; u < f.nb; u++)
		{
			if ((u & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			poisson_basket_update(&f, d, u);
		}
		for (int i = 0; i < f.n; i++)
		{
			for (int j = 0; j < k; j++)
				f.bshape[(size_t) i * k + j] = c + f.acc[(size_t) i * k + j];
			f.eeta[i] = (MTDPP_POISSON_C_PRIME + k * c) / (MTDPP_POISSON_D_PRIME + f.esum[i]);
		}
		memcpy(f.tsum, f.tsum_new, sizeof(double) * k);
		mtdpp_progress_epoch(t + 1, NAN);
		if (verbose && (t % 10 == 9 || t == passes - 1))
		{
			for (int j = 0; j < k; j++)
				mean_rate += f.tsum[j] * f.colsum[j];
			ereport(NOTICE,
					(errmsg("rank %d, pass %d of %d: expected lines %.0f (observed " INT64_FORMAT ")",
							rank, t + 1, passes, mean_rate, d->n_lines)));
		}
	}
	poisson_item_moments(&f);
	memcpy(ebeta, f.eb, sizeof(double) * (Size) f.n * k);
	poisson_free(&f);
}

/* V[i][j], in double or (a cached model) single precision */
static inline double
factor(const MtdppModel *m, int i, int j)
{
	size_t		c = (size_t) i * m->rank + j;

	return m->V ? m->V[c] : (double) m->Vf[c];
}

/*
 * E[theta] of the basket CTX (B items) into ETHETA (rank entries): its
 * factors and activity by MTDPP_POISSON_QUERY_PASSES passes of coordinate
 * ascent, the item factors fixed at E[beta] (M's factors), theta's inner
 * shape A.  Deterministic: it starts from the prior, whatever came before.
 */
void
mtdpp_poisson_basket(const MtdppModel *m, double a, const int32 *ctx, int b,
					 double *etheta)
{
	int			k = m->rank;
	double	   *colsum = palloc0(sizeof(double) * k);
	double	   *shape = palloc(sizeof(double) * k);
	double	   *elt = palloc(sizeof(double) * k);
	double	   *got = palloc(sizeof(double) * k);
	double	   *phi = palloc(sizeof(double) * k);
	double		exi = MTDPP_POISSON_A_PRIME / MTDPP_POISSON_B_PRIME;

	for (int i = 0; i < m->n_items; i++)
		for (int j = 0; j < k; j++)
			colsum[j] += factor(m, i, j);
	for (int j = 0; j < k; j++)
		shape[j] = a + (double) b / k;
	for (int t = 0; t < MTDPP_POISSON_QUERY_PASSES; t++)
	{
		double		sumt = 0.0;

		for (int j = 0; j < k; j++)
		{
			elt[j] = exp(mtdpp_digamma(shape[j])) / (exi + colsum[j]);
			got[j] = 0.0;
		}
		for (int s = 0; s < b; s++)
		{
			double		z = 0.0;

			for (int j = 0; j < k; j++)
			{
				phi[j] = elt[j] * factor(m, ctx[s], j);
				z += phi[j];
			}
			if (!(z > 0.0) || !isfinite(z))
			{
				for (int j = 0; j < k; j++)
					phi[j] = 1.0;
				z = k;
			}
			for (int j = 0; j < k; j++)
				got[j] += phi[j] / z;
		}
		for (int j = 0; j < k; j++)
		{
			shape[j] = a + got[j];
			sumt += shape[j] / (exi + colsum[j]);
		}
		exi = (MTDPP_POISSON_A_PRIME + k * a) / (MTDPP_POISSON_B_PRIME + sumt);
	}
	for (int j = 0; j < k; j++)
		etheta[j] = shape[j] / (exi + colsum[j]);
	pfree(colsum);
	pfree(shape);
	pfree(elt);
	pfree(got);
	pfree(phi);
}
