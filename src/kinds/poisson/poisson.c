/*
 * kinds/poisson/poisson.c
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
 * which query-time inference needs, is the model's own value (MtdppModel.own,
 * read back from its stored hyperparameters; a model stored before it had
 * that place kept it as its ln w).  An empty basket is completed by popularity, as by
 * every kind; mtdpp_explain gives the basket items' leave-one-out
 * contributions.
 *
 * Rank and c.  By default both are chosen on a validation slice of the
 * training baskets (validation_slice.c), each fit on the other training
 * baskets and ranking the held-out items against the whole catalog, by
 * MPR + P@5 + P@10 + P@20: first c, from 1 and 3 on by factors of about 3
 * (0.3 to 30) in the direction that improves the criterion while it does,
 * at rank 32 (or the rank given); then the rank at that c, from 32 and 64
 * on by factors of 2 (8 to 128) likewise.  The model is then fitted on all
 * the training baskets with the values chosen, which it stores.  A value
 * given is used as it is.  The inner shape a of theta and the passes are
 * not searched per fit: their defaults, the paper's a = 0.3 and 60 passes,
 * were chosen on validation baskets carved out of training baskets (a from
 * 0.1 to 1; more passes than 60 gain nothing beyond the noise).
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

#include "fit/fit.h"
#include "fit/params.h"
#include "fit/progress.h"
#include "kinds/poisson/poisson.h"
#include "kinds/popularity/popularity.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"
#include "score/score.h"

/* the ranks the choice may try: 2^k for k in this range, starting at 32 and 64 */
#define POISSON_K_MIN 3
#define POISSON_K_MAX 7

/*
 * The work of one fit, in products of a line and a factor: a pass costs
 * the lines times the rank, and a digamma and an exponential (about 8 such
 * products) per basket, item and factor.  A fit of more than
 * POISSON_MAX_WORK (about 20 minutes on one core) is refused, and the
 * search skips the ranks beyond it.
 */
#define POISSON_MAX_WORK 6e10

static double
poisson_work(const MtdppBaskets *d, int rank, int passes)
{
	return (double) passes * rank * ((double) d->n_lines + 8.0 * d->n_baskets + 8.0 * d->n_items);
}

static void
poisson_check_size(const MtdppBaskets *d, int rank, int passes)
{
	Size		need = mtdpp_poisson_memory(d, rank);

	if (poisson_work(d, rank, passes) > POISSON_MAX_WORK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a poisson fit of " INT64_FORMAT " lines in %d baskets at rank %d by %d passes is too long",
						d->n_lines, d->n_baskets, rank, passes),
				 errdetail("A pass costs the lines times the rank, plus a digamma per basket, item and factor: about %.0f minutes in all on one core here, and the search of the rank and c fits several times.",
						   poisson_work(d, rank, passes) / 5e7 / 60.0),
				 errhint("Give a smaller rank or fewer epochs, or train on a sample of the baskets.")));
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
	/* its own values, the prior shapes, as fitted; ln w is unused (0) */
	*mtdpp_poisson_model(m) = *mtdpp_poisson_params(p);
	/* no task factors: R = 1 */
	for (Size c = 0; c < cells; c++)
		m->R[c] = 1.0;
	mtdpp_poisson_fit(data, p->rank, mtdpp_poisson_params(p)->a, mtdpp_poisson_params(p)->c, p->epochs, p->seed,
					  p->verbose, m->V);
	/* below MTDPP_NEGLIGIBLE a factor is zero (model.h) */
	for (Size c = 0; c < cells; c++)
		if (m->V[c] < MTDPP_NEGLIGIBLE)
			m->V[c] = 0.0;
	return m;
}

/* the prior shapes c the choice may try, starting at 1 and 3 */
static const double POISSON_C[] = {0.3, 1.0, 3.0, 10.0, 30.0};

/* The search for the rank and c on a validation slice, and what it has measured. */
typedef struct PoissonSearch
{
	MtdppValidation *v;
	MtdppBaskets *rest;			/* the training baskets outside the slice */
	MtdppParams p;
	int			n_tried;
	struct
	{
		double		c;
		int			rank;
		double		criterion;
	}			tried[lengthof(POISSON_C) + POISSON_K_MAX - POISSON_K_MIN + 1];
} PoissonSearch;

/* MPR + P@5 + P@10 + P@20 at prior shape C and RANK, measured once */
static double
poisson_try(PoissonSearch *s, double c, int rank)
{
	MtdppModel *m;
	MtdppMetrics mm;
	instr_time	start;
	double		crit;

	for (int t = 0; t < s->n_tried; t++)
		if (s->tried[t].c == c && s->tried[t].rank == rank)
			return s->tried[t].criterion;
	INSTR_TIME_SET_CURRENT(start);
	s->p.rank = rank;
	mtdpp_poisson_params(&s->p)->c = c;
	m = poisson_model(s->rest, &s->p);
	mtdpp_validation_measure(s->v, m, &mm);
	crit = mm.mpr + mm.p5 + mm.p10 + mm.p20;
	if (s->p.verbose)
		ereport(NOTICE,
				(errmsg("rank %d, c %g: validation MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f on %d baskets (%.1f s)",
						rank, c, mm.mpr, mm.p5, mm.p10, mm.p20, mm.n, mtdpp_seconds_since(start))));
	pfree(m->V);
	pfree(m->R);
	if (s->n_tried < lengthof(s->tried))
	{
		s->tried[s->n_tried].c = c;
		s->tried[s->n_tried].rank = rank;
		s->tried[s->n_tried].criterion = crit;
		s->n_tried++;
	}
	return crit;
}

/*
 * The criterion at step I of a ladder: over c (POISSON_C[I], at RANK) or
 * over the rank (2^I, at C); -infinity beyond the ladder's ends.
 */
static double
poisson_step(PoissonSearch *s, bool over_c, int i, double c, int rank)
{
	if (over_c)
		return i >= 0 && i < lengthof(POISSON_C) ? poisson_try(s, POISSON_C[i], rank) : -INFINITY;
	if (i < POISSON_K_MIN || i > POISSON_K_MAX ||
		poisson_work(s->rest, 1 << i, s->p.epochs) > POISSON_MAX_WORK)
		return -INFINITY;
	return poisson_try(s, c, 1 << i);
}

/*
 * Steps FIRST and FIRST + 1, then on in the direction that improves the
 * criterion while it does.  Returns the best step; ties go to the first tried.
 */
static int
poisson_ladder(PoissonSearch *s, bool over_c, int first, double c, int rank)
{
	int			best = first + 1,
				step = 1;

	if (!(poisson_step(s, over_c, first + 1, c, rank) > poisson_step(s, over_c, first, c, rank)))
	{
		best = first;
		step = -1;
	}
	for (int i = best + step;; i += step)
	{
		if (!(poisson_step(s, over_c, i, c, rank) > poisson_step(s, over_c, best, c, rank)))
			break;
		best = i;
	}
	return best;
}

/*
 * The rank and prior shape c for DATA that P leaves to the fit (rank
 * MTDPP_RANK_CHOSEN, c below 0), chosen on a validation slice of its
 * baskets: c first, at the rank given or 32, then the rank at that c.
 */
static void
poisson_choose(MtdppBaskets *data, MtdppParams *p)
{
	MtdppValidation v;
	pg_prng_state rng;
	PoissonSearch s;
	int			rank = p->rank == MTDPP_RANK_CHOSEN ? 32 : p->rank;
	double		c = mtdpp_poisson_params(p)->c < 0.0 ? 3.0 : mtdpp_poisson_params(p)->c;

	pg_prng_seed(&rng, (uint64) p->seed);
	mtdpp_validation_carve(&v, data, p, &rng);
	if (v.n > 0)
	{
		memset(&s, 0, sizeof(s));
		s.v = &v;
		s.rest = mtdpp_baskets_without(data, v.is_val);
		s.p = *p;
		if (mtdpp_poisson_params(p)->c < 0.0)
			c = POISSON_C[poisson_ladder(&s, true, 1, 0.0, rank)];
		if (p->rank == MTDPP_RANK_CHOSEN)
			rank = 1 << poisson_ladder(&s, false, 5, c, 0);
		pfree(s.rest->items);
		pfree(s.rest->start);
	}
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("%s rank %d and c %g%s; fitting on all %d training baskets",
						v.n > 0 ? "chose" : "too few baskets for a validation slice:", rank, c,
						v.n > 0 ? psprintf(" on %d validation baskets", v.n) : "", data->n_baskets)));
	p->rank = rank;
	mtdpp_poisson_params(p)->c = c;
}

static MtdppModel *
poisson_fit(MtdppBaskets *data, const MtdppParams *given)
{
	MtdppParams p = *given;
	MtdppModel *m;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	/* memory for the largest rank the search may try, time for the first */
	if (p.rank == MTDPP_RANK_CHOSEN)
	{
		poisson_check_size(data, 32, p.epochs);
		if (mtdpp_poisson_memory(data, 1 << POISSON_K_MAX) > (Size) maintenance_work_mem * 1024)
			poisson_check_size(data, 1 << POISSON_K_MAX, 1);
	}
	else
		poisson_check_size(data, p.rank, p.epochs);
	if (p.rank == MTDPP_RANK_CHOSEN || mtdpp_poisson_params(&p)->c < 0.0)
	{
		mtdpp_progress_phase(MTDPP_PHASE_CHOOSING_RANK);
		poisson_choose(data, &p);
	}
	mtdpp_progress_phase(MTDPP_PHASE_EPOCHS);
	m = poisson_model(data, &p);
	m->epochs_run = 0;
	/* the rank used, chosen or given */
	m->hyperparams = mtdpp_params_to_json(&p);
	m->seconds = mtdpp_seconds_since(start);
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
	mtdpp_poisson_basket(m, mtdpp_poisson_model(m)->a, ctx, b, etheta);
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

#define OWN(field) MTDPP_KIND_FIELD(MtdppPoissonParams, field)

/* its own hyperparameters (params.c lists them among the others) */
static const MtdppParamKey poisson_keys[] = {
	{"a", MTDPP_PARAM_REAL, OWN(a), 0.3, 0.01, 100.0, NULL, "a number in [0.01, 100]", true, "poisson: shape of the Gamma prior of a basket's factors"},
	{"c", MTDPP_PARAM_REAL, OWN(c), -1, 0.01, 100.0, NULL, "a number in [0.01, 100], or null (chosen on validation baskets)", true, "poisson: shape of the Gamma prior of an item's factors; null: chosen on validation baskets"},
	{NULL}
};

#undef OWN

/* the shared keys it takes */
static const char *const poisson_keys_taken[] = {"rank", "epochs", MTDPP_VALIDATION_KEYS, NULL};

static const MtdppKindDefault poisson_defaults[] = {
	/* chosen on validation baskets */
	{"rank", MTDPP_RANK_CHOSEN},
	/* passes of coordinate ascent, chosen on validation baskets (above) */
	{"epochs", 60},
	/* scoring is a sum over the catalog: validation ranks against all of it */
	{"validation_candidates", 0},
	{"validation_baskets", 2000},
	{NULL, 0}
};

/*
 * Poisson factorisation (poisson.c): factors E[beta], finite and
 * nonnegative reals; its prior shape a in [0.01, 100].
 */
static void
poisson_validate(const MtdppModel *m, const MtdppRefusal *o)
{
	double		a = mtdpp_poisson_model(m)->a;

	if (!(a >= 0.01 - 1e-9 && a <= 100.0 + 1e-9))
		ereport(ERROR,
				(errcode(o->sqlstate),
				 errmsg("the prior shape a of the poisson model is %g, outside 0.01 to 100", a),
				 errdetail("A poisson model keeps the shape a of its basket factors' prior, from 0.01 to 100, among its hyperparameters."),
				 errhint("%s", o->hint)));
	for (int i = 0; i < m->n_items && (m->V != NULL || m->Vf != NULL); i++)
		for (int j = 0; j < m->rank; j++)
		{
			double		v = mtdpp_factor_at(m, i, j);

			if (!isfinite(v) || v < 0.0)
				ereport(ERROR,
						(errcode(o->sqlstate),
						 errmsg("factor %d of item %d is %g, not a finite nonnegative real", j + 1,
								m->item_ids[i], m->V ? m->V[(size_t) i * m->rank + j] : v),
						 errdetail("The factors of a poisson model are the expected values of Gamma variables."),
						 errhint("%s", o->hint)));
		}
}

/* what it chooses on its validation slice: its rank and c, unless given */
static const char *
poisson_chooses(const MtdppParams *p, const char **instead)
{
	*instead = ", or give rank => ... and \"c\" to train without a validation slice";
	if (p->rank == MTDPP_RANK_CHOSEN || mtdpp_poisson_params(p)->c < 0.0)
		return "chooses its rank and the prior shape c not given on the validation baskets";
	return NULL;
}

/*
 * A stored model's prior shape a, which scoring reads, from its
 * hyperparameters.  A model stored before a had a place of its own kept it
 * as its ln w, which is 0 otherwise: such a model scores with the a it
 * always scored with (a = 1 kept ln w 0, and its key says 1).
 */
static void
poisson_restore(MtdppModel *m, const char *(*value_of) (const char *key, void *arg), void *arg)
{
	const char *a = m->log_w != 0.0 ? NULL : value_of("a", arg);

	mtdpp_poisson_model(m)->a = a ? strtod(a, NULL) : exp(m->log_w);
}

const MtdppKindRoutine mtdpp_kind_poisson = {
	.kind = MTDPP_POISSON,
	.name = "poisson",
	.own_keys = poisson_keys,
	.keys = poisson_keys_taken,
	.defaults = poisson_defaults,
	.factors = true,
	.own_capacity = true,
	.fit = poisson_fit,
	.chooses = poisson_chooses,
	.validate = poisson_validate,
	.restore = poisson_restore,
	.score_all = poisson_score_all,
	.similar = mtdpp_similar_cosine,
};
