/*
 * kinds/ease/ease.c
 *		The kind "ease": item-item weights in closed form, the embarrassingly
 *		shallow autoencoder of Steck (WWW 2019), a baseline.
 *
 * With X the binary baskets x items matrix of the training baskets and
 * G = X^T X (co-occurrence counts, popularity on the diagonal), the weights B
 * minimise |X - X B|^2 + lambda |B|^2 under diag(B) = 0, in closed form
 * (Steck, eq. 8):
 *
 *		P = (G + lambda I)^-1,	B = I - P diag(1 / diag(P)),
 *		so B[j][c] = -P[j][c] / P[c][c] for j != c, and B[c][c] = 0;
 *
 *		score(c) = sum over basket items j of B[j][c]  +  PRIOR ln share(c)
 *
 * B is dense, but a completion needs only its strongest weights: each item
 * j keeps the max_neighbors (200) largest positive weights of its row
 * B[j][.], largest first, as its neighbour list (mtdpp.items' neighbors and
 * neighbor_weights, as item-kNN), so a completion costs the neighbours of
 * the basket's items and the tables hold at most items x max_neighbors
 * weights.  Negative weights (an item that predicts another's absence, or
 * evidence that two basket items share) are not kept: they sink candidates
 * below those of no evidence at all, which costs MPR and buys no
 * precision; 200 weights do as well as more, and better than 50.
 *
 * A candidate in no list of the basket scores 0 from it, and would tie with
 * thousands of others.  The prior, the log of the share of training baskets
 * that hold the candidate times PRIOR, orders such candidates by popularity
 * (the best guess without evidence) while moving no score by more than
 * PRIOR times ln of the number of baskets (1e-5 for a million), below the
 * weights that tell candidates apart: on the same slices it gained 0.2 to
 * 3.6 points of MPR over ties and changed no precision, where priors of
 * 1e-2 and more cost precision.  An empty basket is completed by
 * popularity, as by every kind.
 *
 * lambda.  B is unchanged when G and lambda are scaled together (baskets
 * repeated twice give the same weights with twice the lambda), so lambda is
 * sought as a multiple alpha of the mean diagonal of G, the mean popularity,
 * which carries over from one number of baskets to another.  By default
 * alpha is chosen on a validation slice of the training baskets
 * (validation_slice.c): G of the other training baskets, and for each alpha tried
 * the weights truncated as they will be stored, ranked against the whole
 * catalog in the slice's baskets.  The criterion is MPR + P@5 + P@10 + P@20,
 * every one a percentage, so a point of any counts the same (MPR moves
 * little with lambda unless the weights degrade; the precisions decide).
 * The ladder starts at alpha = 1, steps by factors of 4 while the criterion
 * improves, then tries the factors of 2 either side of the best: 4 to 6
 * inversions on the benchmark's data; above 8,000 items, where an inversion
 * takes most of a minute, it stops at the factors of 4 (3 or 4 inversions).
 * The model is then fitted on all the training baskets with lambda = alpha
 * times their mean popularity, and stores that lambda in its
 * hyperparameters.  A lambda given explicitly is used as it is.
 *
 * Dropout (ease_dropout, 0 by default: EASE itself).  Fitted as if each
 * item of a training basket were dropped with probability p and had to be
 * predicted from the others, the weights are in expectation those above
 * with q diag(G), q = p / (1 - p), added to lambda I: a popular item's
 * weights shrink more than a rare one's.  It helps some catalogs and hurts
 * others, so the kind keeps EASE's weights; the hybrid's evidence takes
 * EASE_HYBRID_DROPOUT where it is fitted exactly.
 *
 * Two fits (ease_solver): the exact one (ease_exact.c: one inverse of
 * G + lambda I, n^3), and one item by item on co-occurrence neighbourhoods
 * (ease_neighborhood.c), whose cost grows with the catalog rather than its
 * cube; 'auto' fits exactly up to EASE_EXACT_ITEMS items, where that fits
 * in maintenance_work_mem, and on neighbourhoods otherwise.  The search for
 * lambda is the same for both, and what either holds is checked against
 * maintenance_work_mem first.  A
 * lambda too small for the exact factorisation to go through is skipped by
 * the ladder, and refused when given.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "portability/instr_time.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "kinds/cooccurrence.h"
#include "kinds/ease/ease.h"
#include "kinds/ease/ease_exact.h"
#include "kinds/ease/ease_neighborhood.h"
#include "kinds/popularity/popularity.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"
#include "score/score.h"

/* weight of ln(share of baskets) in every score of a non-empty basket */
#define EASE_PRIOR 1e-6
/* alpha = 2^k, k in this range; the ladder starts at k = 0 */
#define EASE_K_MIN (-12)
#define EASE_K_MAX 8
/* above this many items, the ladder skips the factors of 2 */
#define EASE_REFINE_ITEMS 8000
/*
 * The hybrid's dropout where EASE's weights are fitted exactly (chosen on
 * validation baskets: it makes a better hybrid than EASE's own weights
 * there, and a worse one on neighbourhoods, which keep none).
 */
#define EASE_HYBRID_DROPOUT 0.5
/* alpha without a validation slice (too few baskets to carve one) */
#define EASE_DEFAULT_ALPHA 1.0
/* largest catalog of the exact fit: one inversion takes about 10 minutes beyond it */
#define EASE_MAX_ITEMS 40000
/*
 * ease_solver 'auto': the exact fit up to this many items (where it takes a
 * minute or two), the neighbourhoods above.  The neighbourhoods' weights
 * are close to the exact ones, not equal: where the exact fit is
 * affordable it is the better one.
 */
#define EASE_EXACT_ITEMS 8000

typedef struct EaseWork
{
	int			n;
	int			cap;			/* weights kept per item */
	bool		neighborhood;
	double		q;				/* lambda I + q diag(G): dropout */
	MtdppEaseNeighborhoods *nb; /* the neighbourhoods' fit, or */
	MtdppEaseExact *exact;		/* the exact one */
} EaseWork;

/* Whether P fits D's weights on neighbourhoods rather than exactly. */
static bool
ease_by_neighborhood(const MtdppParams *p, const MtdppBaskets *d)
{
	if (mtdpp_ease_params(p)->solver == MTDPP_EASE_AUTO)
		return d->n_items > EASE_EXACT_ITEMS;
	return mtdpp_ease_params(p)->solver == MTDPP_EASE_NEIGHBORHOOD;
}

/* What a fit holds at its peak, in bytes; lines and baskets are DATA's. */
static Size
ease_memory(const MtdppBaskets *d, int cap, bool neighborhood)
{
	Size		n = d->n_items;
	Size		s;

	if (neighborhood)
		s = mtdpp_ease_neighborhood_memory(d);
	else
		s = mtdpp_ease_exact_memory(n);
	/* one model's lists at a time, per-item vectors */
	s = add_size(s, mul_size(mul_size(n, cap), sizeof(int32) + sizeof(float4)));
	s = add_size(s, mul_size(n + 1, 2 * sizeof(double) + 3 * sizeof(int64) + sizeof(int32)));
	/* one item's strongest weights, for their sort */
	s = add_size(s, mul_size(cap, sizeof(int32) + sizeof(float4)));
	/* the item index of the baskets, and the baskets without the slice */
	s = add_size(s, mul_size(d->n_lines, 2 * sizeof(int32)));
	s = add_size(s, mul_size(d->n_baskets + 1, sizeof(int64)));
	return s;
}

/* ease_memory on neighbourhoods with a second model's lists: a search of lambda on a slice */
static Size
ease_slice_memory(const MtdppBaskets *d, int cap)
{
	return add_size(ease_memory(d, cap, true),
					mul_size(mul_size(d->n_items, cap), sizeof(int32) + sizeof(float4)));
}

/* the weights an item keeps in mtdpp_ease_lists */
static int
lists_cap(const MtdppParams *p, const MtdppBaskets *data)
{
	return Min(p->max_neighbors > 0 ? p->max_neighbors : MTDPP_DEFAULT_NEIGHBORS,
			   Max(data->n_items - 1, 0));
}

/* maintenance_work_mem in bytes, less BESIDE that the caller holds through the fit */
static Size
ease_limit(Size beside)
{
	Size		limit = (Size) maintenance_work_mem * 1024;

	return limit > beside ? limit - beside : 0;
}

/*
 * Whether P fits D's weights on neighbourhoods: under ease_solver 'auto',
 * also where the exact fit would not fit in maintenance_work_mem beside
 * the BESIDE bytes the caller holds and the neighbourhoods' would, and then
 * *EXACT_NEED says what the exact fit would take, BESIDE included (else 0).
 * Where neither fits, the one that needs less, to be refused with its
 * figure.
 */
static bool
ease_neighborhood_choice(const MtdppParams *p, const MtdppBaskets *d, int cap, Size beside,
						 Size *exact_need)
{
	Size		need,
				nb_need,
				limit = ease_limit(beside);

	*exact_need = 0;
	if (ease_by_neighborhood(p, d) || mtdpp_ease_params(p)->solver != MTDPP_EASE_AUTO)
		return ease_by_neighborhood(p, d);
	need = ease_memory(d, cap, false);
	if (need <= limit)
		return false;
	nb_need = ease_memory(d, cap, true);
	if (nb_need > limit)
		return nb_need < need;
	*exact_need = add_size(need, beside);
	return true;
}

/* ease_neighborhood_choice, with a NOTICE where memory made the choice */
static bool
ease_neighborhood_within(const MtdppParams *p, const MtdppBaskets *d, int cap, Size beside)
{
	Size		need;
	bool		neighborhood = ease_neighborhood_choice(p, d, cap, beside, &need);

	if (need > 0)
		ereport(NOTICE,
				(errmsg("EASE's weights of %d items are fitted on neighbourhoods: the exact fit needs %zu kB, more than maintenance_work_mem (%d kB)",
						d->n_items, (need + 1023) / 1024, maintenance_work_mem),
				 errhint("SET maintenance_work_mem = '%zuMB' fits them exactly.", (need >> 20) + 1)));
	return neighborhood;
}

static void
ease_check_size(const MtdppBaskets *d, int cap, bool neighborhood)
{
	Size		need = ease_memory(d, cap, neighborhood);

	if (!neighborhood && d->n_items > EASE_MAX_ITEMS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("an exact ease fit of %d items is more than the %d items it fits",
						d->n_items, EASE_MAX_ITEMS),
				 errdetail("The exact fit inverts an items x items matrix for each lambda it tries, in time growing with the cube of the items."),
				 errhint("Leave ease_solver out, or set it to 'neighborhood', whose cost grows with the catalog.")));
	if (neighborhood && need > (Size) maintenance_work_mem * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("an ease model of %d items needs %zu kB, more than maintenance_work_mem (%d kB)",
						d->n_items, (need + 1023) / 1024, maintenance_work_mem),
				 errdetail("Its fit on neighbourhoods keeps 8 bytes for each item and each of its most frequent companions (at most 1152 an item), and the weights it keeps."),
				 errhint("Raise maintenance_work_mem to at least %zu MB for this session.",
						 (need >> 20) + 1)));
	if (need > (Size) maintenance_work_mem * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("an ease model of %d items needs %zu kB, more than maintenance_work_mem (%d kB)",
						d->n_items, (need + 1023) / 1024, maintenance_work_mem),
				 errdetail("Its fit inverts an items x items matrix in single precision, 4 bytes per pair of items."),
				 errhint("Raise maintenance_work_mem to at least %zu MB for this session, or use kind => 'itemknn', whose memory grows with co-occurrences rather than with the catalog squared.",
						 (need >> 20) + 1)));
}

static void
ease_work_alloc(EaseWork *w, int n, int cap, bool neighborhood, double q)
{
	memset(w, 0, sizeof(*w));
	w->n = n;
	w->cap = cap;
	w->neighborhood = neighborhood;
	w->q = q;
	if (!neighborhood)
		w->exact = mtdpp_ease_exact_alloc(n, cap);
}

/*
 * What each lambda starts from: G, or the neighbourhoods of D's items, in
 * whose pass TAP (if not NULL) rides along.
 */
static void
ease_prepare(const MtdppBaskets *d, EaseWork *w, MtdppListTap *tap)
{
	if (!w->neighborhood)
	{
		mtdpp_ease_exact_gram(w->exact, d);
		return;
	}
	if (w->nb)
		mtdpp_ease_neighborhoods_free(w->nb);
	w->nb = mtdpp_ease_neighborhoods(d, tap);
}

/* room for items x cap weights in M's lists */
static void
ease_alloc_lists(MtdppModel *m, int cap)
{
	Size		total = mul_size(Max(m->n_items, 1), Max(cap, 1));

	m->nbr_start = mtdpp_alloc_huge(sizeof(int64) * (m->n_items + 1));
	m->nbr_index = mtdpp_alloc_huge(mul_size(total, sizeof(int32)));
	m->nbr_weight = mtdpp_alloc_huge(mul_size(total, sizeof(float4)));
}

/*
 * Weights of w's G (already built) at LAMBDA into M's lists; false if
 * G + lambda I is not numerically positive definite in single precision.
 */
static bool
ease_weights(EaseWork *w, double lambda, MtdppModel *m)
{
	if (w->neighborhood)
	{
		mtdpp_ease_neighborhood_weights(w->nb, lambda, w->q, w->cap, m);
		return true;
	}
	return mtdpp_ease_exact_weights(w->exact, lambda, w->q, m);
}

static double
mean_popularity(const MtdppBaskets *d)
{
	return d->n_items > 0 ? (double) d->n_lines / d->n_items : 1.0;
}

/* The search for alpha on a validation slice, and what it has measured. */
typedef struct EaseSearch
{
	EaseWork   *w;
	MtdppValidation *v;
	MtdppModel *m;				/* the model of the baskets outside the slice */
	MtdppModel *kept;			/* NULL, or lists of the best alpha tried so far */
	int			kept_k;
	double		mean;			/* their mean popularity */
	bool		verbose;
	double		criterion[EASE_K_MAX - EASE_K_MIN + 1];	/* NAN: not tried */
} EaseSearch;

/* The criterion at alpha = 2^K, measured once (-infinity if G + lambda I breaks down). */
static double
ease_try(EaseSearch *s, int k)
{
	double	   *crit;
	double		lambda = ldexp(s->mean, k);
	MtdppMetrics mm;
	instr_time	start;

	if (k < EASE_K_MIN || k > EASE_K_MAX)
		return -INFINITY;
	crit = &s->criterion[k - EASE_K_MIN];
	if (!isnan(*crit))
		return *crit;
	INSTR_TIME_SET_CURRENT(start);
	if (!ease_weights(s->w, lambda, s->m))
	{
		*crit = -INFINITY;
		if (s->verbose)
			ereport(NOTICE,
					(errmsg("lambda %g (%g times the mean popularity %g): not positive definite in single precision",
							lambda, ldexp(1.0, k), s->mean)));
		return *crit;
	}
	mtdpp_validation_measure(s->v, s->m, &mm);
	*crit = mm.mpr + mm.p5 + mm.p10 + mm.p20;
	if (s->kept != NULL && (s->kept_k > EASE_K_MAX ||
							*crit > s->criterion[s->kept_k - EASE_K_MIN]))
	{
		/* the best so far: its lists kept, the other model's lists the next to fill */
		MtdppModel *t = s->kept;

		s->kept = s->m;
		s->m = t;
		s->kept_k = k;
	}
	if (s->verbose)
		ereport(NOTICE,
				(errmsg("lambda %g (%g times the mean popularity %g): validation MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f on %d baskets (%.1f s)",
						lambda, ldexp(1.0, k), s->mean, mm.mpr, mm.p5, mm.p10, mm.p20, mm.n,
						mtdpp_seconds_since(start))));
	return *crit;
}

/*
 * The ladder: alpha = 1, then by factors of 4 in the direction that
 * improves the criterion while it does, then (up to EASE_REFINE_ITEMS
 * items, where an inversion takes seconds) the factors of 2 either side of
 * the best.  Returns the best k (alpha = 2^k); ties go to the first tried.
 */
static int
ease_ladder(EaseSearch *s)
{
	int			best = 0,
				step = -2;

	for (int k = 0; k < lengthof(s->criterion); k++)
		s->criterion[k] = NAN;
	if (ease_try(s, -2) > ease_try(s, 0))
		best = -2;
	else
		step = 2;
	for (int k = best + step; k >= EASE_K_MIN && k <= EASE_K_MAX; k += step)
	{
		if (!(ease_try(s, k) > ease_try(s, best)))
			break;
		best = k;
	}
	if (s->w->n > EASE_REFINE_ITEMS)
		return best;
	for (int k = best - 1, from = best; k <= from + 1; k += 2)
		if (ease_try(s, k) > ease_try(s, best))
			best = k;
	return best;
}

/*
 * lambda for DATA: alpha chosen on a validation slice of its baskets, times
 * the mean popularity of all of them.
 */
static double
ease_choose_lambda(MtdppBaskets *data, const MtdppParams *p, EaseWork *w)
{
	MtdppValidation v;
	pg_prng_state rng;
	EaseSearch s;
	MtdppBaskets *rest;
	int			k;

	pg_prng_seed(&rng, (uint64) p->seed);
	mtdpp_validation_carve(&v, data, p, &rng);
	if (v.n == 0)
	{
		if (p->verbose)
			ereport(NOTICE,
					(errmsg("too few baskets for a validation slice: lambda is %g times the mean popularity",
							EASE_DEFAULT_ALPHA)));
		return EASE_DEFAULT_ALPHA * mean_popularity(data);
	}
	rest = mtdpp_baskets_without(data, v.is_val);
	ease_prepare(rest, w, NULL);
	memset(&s, 0, sizeof(s));
	s.w = w;
	s.v = &v;
	s.m = mtdpp_counts_model(rest, p);
	s.mean = mean_popularity(rest);
	s.verbose = p->verbose;
	ease_alloc_lists(s.m, w->cap);
	k = ease_ladder(&s);
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("chose %g times the mean popularity on %d validation baskets; fitting on all %d training baskets, lambda %g",
						ldexp(1.0, k), v.n, data->n_baskets, ldexp(mean_popularity(data), k))));
	pfree(s.m->nbr_index);
	pfree(s.m->nbr_weight);
	pfree(rest->items);
	return ldexp(mean_popularity(data), k);
}

/* M's lists and what scoring reads, moved from FROM (of the same items) */
static void
ease_take_lists(MtdppModel *m, MtdppModel *from)
{
	m->nbr_start = from->nbr_start;
	m->nbr_index = from->nbr_index;
	m->nbr_weight = from->nbr_weight;
	from->nbr_start = NULL;
	from->nbr_index = NULL;
	from->nbr_weight = NULL;
}

/*
 * The weights of DATA, the baskets outside the caller's slice V (the
 * hybrid's), into M's lists at alpha chosen on V itself: the ladder's best
 * lists are kept as it goes, so no fit is made twice.  Returns lambda.
 * TAP: as ease_prepare's.
 */
static double
ease_ladder_on_slice(MtdppBaskets *data, const MtdppParams *p, EaseWork *w,
					 MtdppValidation *v, MtdppModel *m, MtdppListTap *tap)
{
	EaseSearch	s;
	int			k;

	ease_prepare(data, w, tap);
	memset(&s, 0, sizeof(s));
	s.w = w;
	s.v = v;
	s.m = mtdpp_counts_model(data, p);
	s.kept = mtdpp_counts_model(data, p);
	s.kept_k = EASE_K_MAX + 1;
	s.mean = mean_popularity(data);
	s.verbose = p->verbose;
	ease_alloc_lists(s.m, w->cap);
	ease_alloc_lists(s.kept, w->cap);
	k = ease_ladder(&s);
	if (s.kept_k != k && !ease_weights(w, ldexp(s.mean, k), s.kept))
		elog(ERROR, "EASE's weights at lambda %g are no longer finite", ldexp(s.mean, k));
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("chose %g times the mean popularity on %d validation baskets, lambda %g",
						ldexp(1.0, k), v->n, ldexp(s.mean, k))));
	ease_take_lists(m, s.kept);
	pfree(s.m->nbr_start);
	pfree(s.m->nbr_index);
	pfree(s.m->nbr_weight);
	return ldexp(s.mean, k);
}

/*
 * DATA's weights into M's neighbour lists, CAP per item: lambda chosen on a
 * validation slice first when *LAMBDA is negative (and returned there).
 * False if G + lambda I is not numerically positive definite.  TAP (if not
 * NULL) rides along the pass over DATA's neighbourhoods, if there is one.
 */
static bool
ease_fit_lists(MtdppBaskets *data, const MtdppParams *p, double *lambda, double q,
			   MtdppModel *m, int cap, bool neighborhood, MtdppValidation *slice,
			   MtdppListTap *tap)
{
	EaseWork	w;
	bool		ok = true;

	ease_work_alloc(&w, data->n_items, cap, neighborhood, q);
	if (*lambda < 0.0 && slice != NULL)
		*lambda = ease_ladder_on_slice(data, p, &w, slice, m, tap);
	else
	{
		if (*lambda < 0.0)
			*lambda = ease_choose_lambda(data, p, &w);
		ease_prepare(data, &w, tap);
		ease_alloc_lists(m, cap);
		ok = ease_weights(&w, *lambda, m);
	}
	if (w.exact)
		mtdpp_ease_exact_free(w.exact);
	if (w.nb)
		mtdpp_ease_neighborhoods_free(w.nb);
	return ok;
}

/*
 * CAP, the weights each of N items keeps, cut where the lists would not fit
 * in the value a model is stored as (mtdpp_neighbor_room) when max_neighbors
 * was not given, with a NOTICE; a given one is the user's, whose model is
 * refused when stored if it does not fit.
 */
static int
ease_value_cap(const MtdppParams *p, int n, int cap)
{
	int64		fits = mtdpp_neighbor_room(MTDPP_EASE, n, 0, 0) / Max(n, 1);

	if (mtdpp_param_given(p, "max_neighbors") || fits >= cap)
		return cap;
	ereport(NOTICE,
			(errmsg("kept at most " INT64_FORMAT " weights of each of %d items, not %d: more would not fit in the value a model is stored as",
					Max(fits, 1), n, cap),
			 errdetail("A model holds 8 bytes per weight, and may take half of maintenance_work_mem (%d kB); returned by mtdpp_fit as a value, at most 1 GB.",
					   maintenance_work_mem),
			 errhint("Give max_neighbors to choose the cut, or train on a more recent window of orders.")));
	return (int) Max(fits, 1);
}

static MtdppModel *
ease_fit(MtdppBaskets *data, const MtdppParams *given)
{
	MtdppParams p = *given;
	int			n = data->n_items;
	int			cap = Min(p.max_neighbors, Max(n - 1, 0)),
				kept;
	bool		neighborhood;
	MtdppModel *m;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	neighborhood = ease_neighborhood_within(&p, data, cap, 0);
	ease_check_size(data, cap, neighborhood);
	/* checked at the longer lists, which hold more: then cut to the value */
	kept = ease_value_cap(&p, n, cap);
	if (kept < cap)
		p.max_neighbors = cap = kept;	/* the model says what it kept */
	m = mtdpp_counts_model(data, &p);
	/* the model says which fit it had */
	mtdpp_ease_params(&p)->solver = neighborhood ? MTDPP_EASE_NEIGHBORHOOD : MTDPP_EASE_EXACT;
	if (!ease_fit_lists(data, &p, &mtdpp_ease_params(&p)->lambda, mtdpp_ease_params(&p)->dropout / (1.0 - mtdpp_ease_params(&p)->dropout), m, cap,
						neighborhood, NULL, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("X^T X + lambda I of %d items is not positive definite in single precision at lambda %g",
						n, mtdpp_ease_params(&p)->lambda),
				 errdetail("X^T X is singular when the columns of X of some items are linearly dependent, as those of items always bought together; a large enough lambda makes up for it."),
				 errhint("Give a larger lambda, or leave lambda out to have it chosen on validation baskets.")));
	/* the lambda used, chosen or given */
	m->hyperparams = mtdpp_params_to_json(&p);
	m->seconds = mtdpp_seconds_since(start);
	if (p.verbose)
		ereport(NOTICE,
				(errmsg("fitted %d items at lambda %g (%s), %d weights kept per item, in %.1f s",
						n, mtdpp_ease_params(&p)->lambda, neighborhood ? "on neighbourhoods" : "exactly", cap, m->seconds)));
	return m;
}

/*
 * EASE weights of DATA into M's neighbour lists, for the hybrid's evidence:
 * lambda chosen on a validation slice of DATA, as ease_fit chooses it, when
 * *LAMBDA is negative (and returned there).  The fit is ease_solver's; with
 * 'auto', the exact one where it is chosen and fits in maintenance_work_mem,
 * else the neighbourhoods'; *NEIGHBORHOOD says which.  BESIDE: the bytes
 * the caller holds through the fit (its DPP), counted against
 * maintenance_work_mem with the fit's own.  False, with nothing done, when
 * the fit would not fit (or, exact, above EASE_MAX_ITEMS items, which the
 * kind ease refuses): the hybrid then does without this evidence.
 * ease_dropout null (the hybrid's default) is EASE_HYBRID_DROPOUT on the
 * exact fit, 0 on neighbourhoods; *DROPOUT says which was used.  TAP (if
 * not NULL) visits DATA's co-occurrence lists in the neighbourhoods' pass,
 * saving the caller one of its own; tap->done says whether it did.
 */
bool
mtdpp_ease_lists(MtdppBaskets *data, const MtdppParams *given, double *lambda,
				 MtdppModel *m, bool *neighborhood, MtdppValidation *slice, double *dropout,
				 Size beside, MtdppListTap *tap)
{
	MtdppParams p = *given;
	int			cap = lists_cap(&p, data);
	Size		limit = ease_limit(beside);
	Size		need;

	*neighborhood = ease_neighborhood_within(&p, data, cap, beside);
	if (!*neighborhood && data->n_items > EASE_MAX_ITEMS)
		return false;
	need = ease_memory(data, cap, *neighborhood);
	if (need > limit)
	{
		need = add_size(need, beside);
		ereport(NOTICE,
				(errmsg("the evidence leaves EASE's weights out: fitting those of %d items beside the DPP needs %zu kB, more than maintenance_work_mem (%d kB)",
						data->n_items, (need + 1023) / 1024, maintenance_work_mem),
				 errhint("SET maintenance_work_mem = '%zuMB' lets the hybrid weigh them.",
						 (need >> 20) + 1)));
		return false;
	}
	/* the caller's slice judges lambda on neighbourhoods: two lists at a time */
	if (!*neighborhood || *lambda >= 0.0 || ease_slice_memory(data, cap) > limit)
		slice = NULL;
	if (mtdpp_ease_params(&p)->dropout < 0.0)
		mtdpp_ease_params(&p)->dropout = *neighborhood ? 0.0 : EASE_HYBRID_DROPOUT;
	*dropout = mtdpp_ease_params(&p)->dropout;
	/* the kind, slice and candidates of ease */
	p.kind = MTDPP_EASE;
	p.validation_candidates = 0;
	p.validation_baskets = 5000;
	return ease_fit_lists(data, &p, lambda, mtdpp_ease_params(&p)->dropout / (1.0 - mtdpp_ease_params(&p)->dropout), m, cap,
						  *neighborhood, slice, tap);
}

/*
 * The bytes that mtdpp_ease_lists of DATA under P, BESIDE bytes of its
 * caller's held through it, holds at its peak where lists riding its pass
 * (the hybrid's cosine lists) are full: the whole fit on neighbourhoods,
 * with the second list of a slice's search of lambda where it fits, else
 * none, as the exact fit makes no such pass (its caller builds its lists
 * after the fit).  Says nothing: the fit's own NOTICE comes with the fit.
 */
Size
mtdpp_ease_tap_memory(const MtdppParams *p, const MtdppBaskets *data, Size beside)
{
	Size		exact_need,
				fit,
				slice,
				limit = ease_limit(beside);
	int			cap = lists_cap(p, data);

	if (!ease_neighborhood_choice(p, data, cap, beside, &exact_need))
		return 0;
	fit = ease_memory(data, cap, true);
	slice = ease_slice_memory(data, cap);
	/* a fit that does not fit is left out of the evidence: no pass to share */
	if (fit > limit)
		return 0;
	return slice <= limit ? slice : fit;
}

/* score(c) = sum over the context of its weights to c, plus the prior */
static void
ease_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	mtdpp_popularity_scores(m, scores);
	if (b == 0)
		return;
	for (int i = 0; i < m->n_items; i++)
		scores[i] *= EASE_PRIOR;
	for (int s = 0; s < b; s++)
	{
		int			j = ctx[s];

		for (int64 k = m->nbr_start[j]; k < m->nbr_start[j + 1]; k++)
			scores[m->nbr_index[k]] += m->nbr_weight[k];
	}
}

static const char *const solver_names[] = {"auto", "exact", "neighborhood", NULL};

#define OWN(field) MTDPP_KIND_FIELD(MtdppEaseParams, field)

/* its own hyperparameters (params.c lists them among the others) */
static const MtdppParamKey ease_keys[] = {
	{"lambda", MTDPP_PARAM_REAL, OWN(lambda), -1, 0.0, 1e12, NULL, "a number in [0, 1e12], or null (chosen on validation baskets)", true,
	"ease: L2 regularisation of the item-item weights, (X^T X + lambda I)^-1; null: chosen on validation baskets, relative to the mean item popularity"},
	{"ease_solver", MTDPP_PARAM_CHOICE, OWN(solver), MTDPP_EASE_AUTO, 0, 0, solver_names,
		"'auto', 'exact' or 'neighborhood'", true,
	"ease, hybrid: how EASE's weights are fitted: 'exact' inverts X^T X + lambda I (the catalog cubed), 'neighborhood' solves each item's regression on its co-occurring items (linear in the catalog); 'auto': exact up to 8,000 items"},
	{"ease_dropout", MTDPP_PARAM_REAL, OWN(dropout), 0.0, 0.0, 0.9, NULL, "a number in [0, 0.9], or null", true,
	"ease, hybrid: EASE's weights fitted as if each item of a basket were dropped with this probability, which regularises each item's weights by lambda plus dropout / (1 - dropout) times its popularity; 0: EASE itself (ease's default); null (hybrid's): 0.5 where the weights are fitted exactly, 0 on neighbourhoods"},
	{NULL}
};

#undef OWN

/* the shared keys it takes */
static const char *const ease_keys_taken[] = {MTDPP_VALIDATION_KEYS, "max_neighbors", NULL};

static const MtdppKindDefault ease_defaults[] = {
	/* no factors */
	{"rank", 0},
	/* scoring is a sparse sum: validation ranks against the whole catalog */
	{"validation_candidates", 0},
	{"validation_baskets", 5000},
	{NULL, 0}
};

/* what it chooses on its validation slice: its lambda, unless given */
static const char *
ease_chooses(const MtdppParams *p, const char **instead)
{
	*instead = ", or give \"lambda\" to train without a validation slice";
	if (mtdpp_ease_params(p)->lambda < 0.0)
		return "chooses its lambda on the validation baskets when it is not given";
	return NULL;
}

const MtdppKindRoutine mtdpp_kind_ease = {
	.kind = MTDPP_EASE,
	.name = "ease",
	.own_keys = ease_keys,
	.keys = ease_keys_taken,
	.defaults = ease_defaults,
	.neighbors = true,
	.signed_weights = true,
	.fit = ease_fit,
	.chooses = ease_chooses,
	.score_all = ease_score_all,
	.similar = mtdpp_similar_lists,
};
