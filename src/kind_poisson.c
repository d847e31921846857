/*
 * kind_poisson.c
 *		The kind "poisson": Poisson factorisation of the baskets x items
 *		matrix (Gopalan, Hofman, Blei: "Scalable Recommendation with Poisson
 *		Factorization", 2013), each training basket a user.
 *
 * A basket u holds item i a Poisson number of times of rate theta_u .
 * beta_i, with Gamma priors on the nonnegative factors (hierarchical:
 * poisson.h), fitted by batch coordinate-ascent variational inference
 * (poisson_vi.c).  The model keeps E[beta] as each item's factors (rank
 * factors, nonnegative; no bias, no task factors).  A basket to complete is
 * a new user: its E[theta] is inferred from its items with the item factors
 * fixed (MTDPP_POISSON_QUERY_PASSES passes of the same coordinate ascent,
 * deterministic), and a candidate c scores its expected rate
 *
 *		score(c) = E[theta] . E[beta_c]
 *
 * computed for every item (no pruning).  The inner prior shape a of theta,
 * which query-time inference needs, is stored as the model's ln w (a lies
 * within w's range).  An empty basket is completed by popularity, as by
 * every kind; mtdpp_explain gives the basket items' leave-one-out
 * contributions.
 *
 * Rank.  By default it is chosen on a validation slice of the training
 * baskets (validation_slice.c): a fit of the other training baskets at
 * ranks 32 and 64, then by factors of 2 (from 16 to 128) in the direction
 * that improves MPR + P@5 + P@10 + P@20 while it does, each ranking the
 * held-out items against the whole catalog.  The model is then fitted on all
 * the training baskets at the rank chosen.  A rank given is used as it is.
 *
 * Cost: a pass is the training lines times the rank, plus a digamma and an
 * exponential per basket, item and factor; epochs passes per fit.  Memory:
 * the items' shapes and moments in double, the baskets' shapes in single
 * precision (mtdpp_poisson_memory), checked against maintenance_work_mem.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "portability/instr_time.h"

#include "fit.h"
#include "kinds.h"
#include "model.h"
#include "params.h"
#include "poisson.h"

/* the ranks the choice may try: 2^k for k in this range, starting at 32 and 64 */
#define POISSON_K_MIN 4
#define POISSON_K_MAX 7

static double
seconds_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_DOUBLE(now);
}

static void
poisson_check_size(const MtdppBaskets *d, int rank)
{
	Size		need = mtdpp_poisson_memory(d, rank);

	if (need > (Size) maintenance_work_mem * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a poisson model of %d items and %d baskets at rank %d needs %zu kB, more than maintenance_work_mem (%d kB)",
						d->n_items, d->n_baskets, rank, (need + 1023) / 1024, maintenance_work_mem),
				 errdetail("Its fit keeps 32 bytes for each item and factor, and 4 for each basket and factor."),
				 errhint("Raise maintenance_work_mem to at least %zu MB for this session, or give a smaller rank.",
						 (need >> 20) + 1)));
}

/* A model of DATA's items with E[beta] at P's rank. */
static MtdppModel *
poisson_model(const MtdppBaskets *data, const MtdppParams *p)
{
	MtdppModel *m = mtdpp_model_alloc(MTDPP_POISSON, data->n_items, p->rank);
	Size		cells = (Size) data->n_items * p->rank;

	memcpy(m->item_ids, data->item_ids, sizeof(int32) * data->n_items);
	memcpy(m->popularity, data->popularity, sizeof(int32) * data->n_items);
	m->n_baskets = data->n_baskets;
	m->n_examples = data->n_lines;
	m->log_w = log(p->poisson_a);
	/* no task factors: R = 1 */
	for (Size c = 0; c < cells; c++)
		m->R[c] = 1.0;
	mtdpp_poisson_fit(data, p->rank, p->poisson_a, p->poisson_c, p->epochs, p->seed,
					  p->verbose, m->V);
	/* below MTDPP_NEGLIGIBLE a factor is zero (model.h) */
	for (Size c = 0; c < cells; c++)
		if (m->V[c] < MTDPP_NEGLIGIBLE)
			m->V[c] = 0.0;
	return m;
}

/* The search for the rank on a validation slice. */
typedef struct PoissonSearch
{
	MtdppValidation *v;
	MtdppBaskets *rest;			/* the training baskets outside the slice */
	MtdppParams p;
	double		criterion[POISSON_K_MAX - POISSON_K_MIN + 1];	/* NAN: not tried */
} PoissonSearch;

/* MPR + P@5 + P@10 + P@20 at rank 2^K, measured once */
static double
poisson_try(PoissonSearch *s, int k)
{
	double	   *crit;
	MtdppModel *m;
	MtdppMetrics mm;
	instr_time	start;

	if (k < POISSON_K_MIN || k > POISSON_K_MAX)
		return -INFINITY;
	crit = &s->criterion[k - POISSON_K_MIN];
	if (!isnan(*crit))
		return *crit;
	INSTR_TIME_SET_CURRENT(start);
	s->p.rank = 1 << k;
	m = poisson_model(s->rest, &s->p);
	mtdpp_validation_measure(s->v, m, &mm);
	*crit = mm.mpr + mm.p5 + mm.p10 + mm.p20;
	if (s->p.verbose)
		ereport(NOTICE,
				(errmsg("rank %d: validation MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f on %d baskets (%.1f s)",
						1 << k, mm.mpr, mm.p5, mm.p10, mm.p20, mm.n, seconds_since(start))));
	pfree(m->V);
	pfree(m->R);
	return *crit;
}

/* The rank for DATA, chosen on a validation slice of its baskets. */
static int
poisson_choose_rank(MtdppBaskets *data, const MtdppParams *p)
{
	MtdppValidation v;
	pg_prng_state rng;
	PoissonSearch s;
	int			best = 5,
				step = 1;

	pg_prng_seed(&rng, (uint64) p->seed);
	mtdpp_validation_carve(&v, data, p, &rng);
	if (v.n == 0)
	{
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("too few baskets for a validation slice: rank %d", 1 << best)));
		return 1 << best;
	}
	memset(&s, 0, sizeof(s));
	for (int k = 0; k < lengthof(s.criterion); k++)
		s.criterion[k] = NAN;
	s.v = &v;
	s.rest = mtdpp_baskets_without(data, v.is_val);
	s.p = *p;
	s.p.verbose = p->verbose;
	if (poisson_try(&s, 6) > poisson_try(&s, 5))
		best = 6;
	else
		step = -1;
	for (int k = best + step; k >= POISSON_K_MIN && k <= POISSON_K_MAX; k += step)
	{
		if (!(poisson_try(&s, k) > poisson_try(&s, best)))
			break;
		best = k;
	}
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("chose rank %d on %d validation baskets; fitting on all %d training baskets",
						1 << best, v.n, data->n_baskets)));
	pfree(s.rest->items);
	pfree(s.rest->start);
	return 1 << best;
}

static MtdppModel *
poisson_fit(MtdppBaskets *data, const MtdppParams *given)
{
	MtdppParams p = *given;
	MtdppModel *m;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	poisson_check_size(data, p.rank == MTDPP_RANK_CHOSEN ? 1 << POISSON_K_MAX : p.rank);
	if (p.rank == MTDPP_RANK_CHOSEN)
		p.rank = poisson_choose_rank(data, &p);
	m = poisson_model(data, &p);
	m->epochs_run = 0;
	/* the rank used, chosen or given */
	m->hyperparams = mtdpp_params_to_json(&p);
	m->seconds = seconds_since(start);
	if (p.verbose)
		ereport(NOTICE,
				(errmsg("fitted %d items at rank %d by %d passes in %.1f s",
						data->n_items, p.rank, p.epochs, m->seconds)));
	return m;
}

/* score(c) = E[theta] . E[beta_c], theta inferred from the basket */
static void
poisson_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	int			k = m->rank;
	double	   *etheta;

	if (b == 0 || k == 0)
	{
		mtdpp_popularity_scores(m, scores);
		return;
	}
	etheta = palloc(sizeof(double) * k);
	mtdpp_poisson_basket(m, exp(m->log_w), ctx, b, etheta);
	for (int i = 0; i < m->n_items; i++)
	{
		double		s = 0.0;

		if (m->V)
		{
			const double *v = m->V + (size_t) i * k;

			for (int j = 0; j < k; j++)
				s += etheta[j] * v[j];
		}
		else
		{
			const float *v = m->Vf + (size_t) i * k;

			for (int j = 0; j < k; j++)
				s += etheta[j] * v[j];
		}
		scores[i] = s;
	}
	pfree(etheta);
}

static const MtdppKindDefault poisson_defaults[] = {
	/* chosen on validation baskets */
	{"rank", MTDPP_RANK_CHOSEN},
	/* passes of coordinate ascent */
	{"epochs", 100},
	/* scoring is a sum over the catalog: validation ranks against all of it */
	{"validation_candidates", 0},
	{"validation_baskets", 2000},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_poisson = {
	.kind = MTDPP_POISSON,
	.name = "poisson",
	.defaults = poisson_defaults,
	.factors = true,
	.fit = poisson_fit,
	.score_all = poisson_score_all,
};
