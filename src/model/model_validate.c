/*
 * model/model_validate.c
 *		What a valid model is: the one definition, checked wherever a model
 *		enters the database or leaves its tables.
 *
 * A model is checked three times in its life: when training has made it
 * (mtdpp_fit, before it becomes a value), when a value becomes a model
 * (mtdpp_save and mtdpp_train, before anything is written) and when its rows
 * are read back from the tables (the cache), since anyone may have changed
 * them by hand.  The checks are the same; only the error says where the
 * values came from.  Values are checked as the tables hold them: in single
 * precision (real), so a double that overflows real is refused before it is
 * stored, not after.
 *
 * A valid model gives a finite score to every item for every basket.  For
 * the DPP kinds, a score is ln w + ln det K over a context of b items, with
 * K = A + diag(d), A = V_B diag(R_c^2) V_B^T positive semidefinite (R = 1
 * for the single-kernel kinds) and d_s = D_s^2 + J, J = MTDPP_JITTER.  In
 * exact arithmetic det K >= J^b > 0; in double precision the Cholesky
 * factorisation that computes it must not break down.  With the kernel
 * scaled to a unit diagonal, H = S^-1 K S^-1, S^2 = diag(K),
 *
 *		lambda_min(H) >= min_s d_s / K_ss >= 1 / (1 + nu * rho),
 *		nu = max_s |V_s|^2 / d_s,	rho = max_{c,j} R_cj^2,
 *
 * since S^-1 A S^-1 is positive semidefinite and K_ss <= d_s (1 + nu rho).
 * The kernel as computed (r rounded products summed, the bias added)
 * differs from one with these values by at most gamma_{r+2} (K_ss K_uu)^1/2
 * in each entry, so by at most n gamma_{r+2} in the norm of H; and Cholesky
 * runs to completion, in any order of its sums, on a matrix whose scaled
 * form has lambda_min > n gamma_{n+1} / (1 - n gamma_{n+1}) (Higham,
 * Accuracy and Stability of Numerical Algorithms, Thm. 10.7), with gamma_k
 * = k u / (1 - k u), u = 2^-53.  So every kernel of up to n items
 * factorises when, with 1% to spare for the second-order terms,
 *
 *		1 + nu * rho <= 1 / (1.01 n (n + r + 3) u)
 *
 * with n = MTDPP_MAX_CONTEXT + 1: the single-kernel kinds factorise the
 * context and one candidate (the Schur complement of the candidate is the
 * last pivot of that factorisation).  The limit is about 5e11 at rank 64 and
 * 8e10 at rank 1024, far above what trained models reach (their largest nu
 * and largest rho come from different items).  The score then lies between ln w + b ln J and
 * ln w + sum_s ln(d_s (1 + nu rho)): finite.  The completion bounds (topk.c)
 * work in single precision on terms up to n nu rho and n nu, so nu itself
 * stays below FLT_MAX / (2 n).
 *
 * ln w lies in the range the hyperparameter w allows ([1e-12, 1e12]): an
 * ln w of 1e308 would swallow every determinant.  Popularity counts the
 * training baskets holding an item: 0 to n_baskets.  item-kNN weights are
 * cosines of co-occurrence counts, in [0, 1], EASE weights any finite reals,
 * so a score (a sum over at most MTDPP_MAX_CONTEXT basket items, in double
 * precision) stays finite; a neighbour is an item of the model, listed once.
 * The lists of rules hold antecedents and consequents (validate_rules).
 * Poisson factors are expected Gamma variables: finite and nonnegative
 * reals, so that a score, a sum of their products with a basket's expected
 * factors, is finite and nonnegative; its ln w is the ln of the shape a of
 * the prior of a basket's factors, within a's range (validate_poisson).
 */
#include "postgres.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "kinds/kinds.h"
#include "model/model.h"

typedef struct Origin
{
	int			sqlstate;
	const char *hint;
} Origin;

static Origin
origin_of(MtdppModelOrigin origin)
{
	switch (origin)
	{
		case MTDPP_FROM_TRAINING:
			return (Origin) {ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
				"Train again with a lower learning_rate or a larger l2."};
		case MTDPP_FROM_VALUE:
			return (Origin) {ERRCODE_INVALID_BINARY_REPRESENTATION,
				"Pass the value returned by the mtdpp_fit aggregate unchanged."};
		case MTDPP_FROM_TABLES:
			break;
	}
	return (Origin) {ERRCODE_DATA_CORRUPTED,
		"The model tables were changed by hand; train the model again."};
}

/* the largest 1 + nu * rho at which every kernel factorises (see above) */
static double
kernel_condition_limit(int rank)
{
	double		n = MTDPP_MAX_CONTEXT + 1;

	return 1.0 / (1.01 * n * (n + Max(rank, 0) + 3) * (DBL_EPSILON / 2));
}

/* a value as the tables hold it: single precision */
static inline double
as_real(double x)
{
	return (double) (float) x;
}

/* V[i][j] and R[i][j]^2 as the tables (and so the cache) hold them */
static inline double
factor_at(const MtdppModel *m, int i, int j)
{
	size_t		c = (size_t) i * m->rank + j;

	return m->V ? as_real(m->V[c]) : (double) m->Vf[c];
}

static inline double
task_square_at(const MtdppModel *m, int i, int j)
{
	if (m->R)
	{
		float		r = (float) m->R[(size_t) i * m->rank + j];

		return (double) (r * r);
	}
	return (double) mtdpp_r2f(m, i, j);
}

static bool
has_bias(const MtdppModel *m)
{
	return mtdpp_kind(m->kind)->bias;
}

static bool
has_task_factors(const MtdppModel *m)
{
	return mtdpp_kind(m->kind)->task_factors;
}

static void
validate_header(const MtdppModel *m, Origin o)
{
	double		lo = log(MTDPP_MIN_W),
				hi = log(MTDPP_MAX_W);

	if (!(m->log_w >= lo && m->log_w <= hi))
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("log_w of the model is %g, outside %g to %g", m->log_w, lo, hi),
				 errdetail("ln w must lie within the range of the hyperparameter w, %g to %g.",
						   MTDPP_MIN_W, MTDPP_MAX_W),
				 errhint("%s", o.hint)));
	if (m->n_items < 0 || m->rank < 0 || m->rank > MTDPP_MAX_RANK || m->n_baskets < 0)
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("the model has %d items, rank %d and %d baskets", m->n_items, m->rank,
						m->n_baskets),
				 errdetail("Item and basket counts are not negative; the rank lies from 0 to %d.",
						   MTDPP_MAX_RANK),
				 errhint("%s", o.hint)));
	/* the record of its training: epoch 0 is a warm start's starting point */
	if (m->best_epoch < 0 || m->best_epoch > m->epochs_run || m->n_examples < 0)
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("the model's best epoch is %d of %d, with " INT64_FORMAT " examples",
						m->best_epoch, m->epochs_run, m->n_examples),
				 errdetail("The best epoch lies from 0 to the epochs run; examples are not negative."),
				 errhint("%s", o.hint)));
	if (!(isfinite(m->seconds) && m->seconds >= 0.0))
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("the model's training took %g seconds", m->seconds),
				 errdetail("Training takes a finite, non-negative time."),
				 errhint("%s", o.hint)));
}

static void
validate_items(const MtdppModel *m, Origin o)
{
	for (int i = 0; i < m->n_items; i++)
	{
		if (i > 0 && m->item_ids[i] <= m->item_ids[i - 1])
			ereport(ERROR,
					(errcode(o.sqlstate),
					 errmsg("item %d follows item %d", m->item_ids[i], m->item_ids[i - 1]),
					 errdetail("A model's item ids are distinct and in ascending order."),
					 errhint("%s", o.hint)));
		if (m->popularity[i] < 0 || m->popularity[i] > m->n_baskets)
			ereport(ERROR,
					(errcode(o.sqlstate),
					 errmsg("popularity of item %d is %d, outside 0 to %d",
							m->item_ids[i], m->popularity[i], m->n_baskets),
					 errdetail("Popularity counts the model's %d training baskets that hold the item.",
							   m->n_baskets),
					 errhint("%s", o.hint)));
		if (!isfinite(as_real(m->D[i])))
			ereport(ERROR,
					(errcode(o.sqlstate),
					 errmsg("bias of item %d is %g, not a finite real", m->item_ids[i], m->D[i]),
					 errhint("%s", o.hint)));
	}
}

/*
 * The factors: finite reals, their squares finite reals, and the condition
 * limit above.  nu and rho are taken over the whole model: any items may
 * meet in one kernel.
 */
static void
validate_factors(const MtdppModel *m, Origin o)
{
	double		limit = kernel_condition_limit(m->rank);
	double		nu_limit = FLT_MAX / (2.0 * (MTDPP_MAX_CONTEXT + 1));
	double		nu = 0.0,
				rho = has_task_factors(m) ? 0.0 : 1.0;
	int			nu_item = -1,
				rho_item = -1;
	double		nu_norm2 = 0.0,
				nu_d2 = 0.0;

	for (int i = 0; i < m->n_items; i++)
	{
		double		norm2 = 0.0,
					d2 = (has_bias(m) ? as_real(m->D[i]) * as_real(m->D[i]) : 0.0) + MTDPP_JITTER;

		for (int j = 0; j < m->rank; j++)
		{
			double		v = factor_at(m, i, j);

			if (!isfinite(v))
				ereport(ERROR,
						(errcode(o.sqlstate),
						 errmsg("factor %d of item %d is %g, not a finite real", j + 1,
								m->item_ids[i], m->V ? m->V[(size_t) i * m->rank + j] : v),
						 errhint("%s", o.hint)));
			norm2 += v * v;
		}
		if (norm2 / d2 > nu)
		{
			nu = norm2 / d2;
			nu_item = i;
			nu_norm2 = norm2;
			nu_d2 = d2;
		}
		if (!has_task_factors(m))
			continue;
		for (int j = 0; j < m->rank; j++)
		{
			double		r2 = task_square_at(m, i, j);

			if (!isfinite(r2))
				ereport(ERROR,
						(errcode(o.sqlstate),
						 errmsg("task factor %d of item %d squares to %g, not a finite real", j + 1,
								m->item_ids[i], r2),
						 errhint("%s", o.hint)));
			if (r2 > rho)
			{
				rho = r2;
				rho_item = i;
			}
		}
	}
	if (nu > nu_limit)
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("factors of item %d have squared norm %g, %g times the squared bias and jitter %g",
						m->item_ids[nu_item], nu_norm2, nu, nu_d2),
				 errdetail("That ratio may reach %g, so that the bounds of a completion stay finite in single precision.",
						   nu_limit),
				 errhint("%s", o.hint)));
	/* a factorization machine's scores are dot products: no kernel to factorise */
	if (1.0 + nu * rho > limit && !mtdpp_kind(m->kind)->bilinear)
	{
		if (rho_item < 0)
			ereport(ERROR,
					(errcode(o.sqlstate),
					 errmsg("factors of item %d have squared norm %g, %g times the squared bias and jitter %g",
							m->item_ids[nu_item], nu_norm2, nu, nu_d2),
					 errdetail("That ratio may reach %g at rank %d, so that the kernel of every basket of up to %d items can be factorised in double precision.",
							   limit - 1.0, m->rank, MTDPP_MAX_CONTEXT),
					 errhint("%s", o.hint)));
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("factors of item %d (squared norm %g, %g times the squared bias and jitter %g) and task factors of item %d (largest square %g) are too large together",
						m->item_ids[nu_item], nu_norm2, nu, nu_d2, m->item_ids[rho_item], rho),
				 errdetail("Their product %g may reach %g at rank %d, so that the kernel of every basket of up to %d items can be factorised in double precision.",
						   nu * rho, limit - 1.0, m->rank, MTDPP_MAX_CONTEXT),
				 errhint("%s", o.hint)));
	}
}

/*
 * gru: its factors (input embeddings), task factors (output embeddings)
 * and weights finite reals, as many weights as its rank asks.  The state h
 * then lies in (-1, 1)^rank, so a score o_i . h + b_i is finite while
 * |o_i|_1 + |b_i| is a finite real, which is checked too.
 */
static void
validate_gru(const MtdppModel *m, Origin o)
{
	int			d = m->rank;

	if (m->weights == NULL || m->n_weights != 6 * d * d + 3 * d)
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("the gru model of rank %d has %d weights, not %d",
						d, m->weights ? m->n_weights : 0, 6 * d * d + 3 * d),
				 errdetail("A gru model of hidden size d shares 6 d^2 + 3 d recurrent weights."),
				 errhint("%s", o.hint)));
	for (int k = 0; k < m->n_weights; k++)
		if (!isfinite(as_real(m->weights[k])))
			ereport(ERROR,
					(errcode(o.sqlstate),
					 errmsg("weight %d of the gru model is %g, not a finite real", k + 1, m->weights[k]),
					 errhint("%s", o.hint)));
	for (int i = 0; i < m->n_items; i++)
	{
		double		sum = fabs(as_real(m->D[i]));

		for (int j = 0; j < d; j++)
		{
			size_t		c = (size_t) i * d + j;
			double		r = m->R ? as_real(m->R[c]) : (double) m->Rf[c];

			if (!isfinite(factor_at(m, i, j)) || !isfinite(r))
				ereport(ERROR,
						(errcode(o.sqlstate),
						 errmsg("factor %d of item %d is %g and its task factor %g: not both finite reals",
								j + 1, m->item_ids[i], factor_at(m, i, j), r),
						 errhint("%s", o.hint)));
			sum += fabs(r);
		}
		if (!(sum <= FLT_MAX))
			ereport(ERROR,
					(errcode(o.sqlstate),
					 errmsg("task factors and bias of item %d sum to %g in absolute value, beyond a real",
							m->item_ids[i], sum),
					 errhint("%s", o.hint)));
	}
}

/*
 * Neighbour lists of items of the model, each once; weights in [0, 1] for
 * item-kNN (cosines), in [0, MTDPP_MAX_EVIDENCE] for the hybrid (evidence
 * times its weight), any finite real for EASE, so that every score stays
 * finite.
 */
static void
validate_neighbors(const MtdppModel *m, Origin o)
{
	int32	   *last_seen;
	bool		cosine = m->kind == MTDPP_ITEMKNN;
	float4		most = cosine ? 1.0f : (float4) MTDPP_MAX_EVIDENCE;

	if (m->nbr_start == NULL)
	{
		if (m->n_items > 0)
			ereport(ERROR,
					(errcode(o.sqlstate),
					 errmsg("the %s model has no neighbour lists", mtdpp_kind_name(m->kind)),
					 errhint("%s", o.hint)));
		return;
	}
	/* last_seen[c] = the last item whose list named c, plus one */
	last_seen = palloc0(sizeof(int32) * Max(m->n_items, 1));
	for (int i = 0; i < m->n_items; i++)
	{
		for (int64 k = m->nbr_start[i]; k < m->nbr_start[i + 1]; k++)
		{
			int32		c = m->nbr_index[k];
			float4		w = m->nbr_weight[k];

			if (c < 0 || c >= m->n_items)
				ereport(ERROR,
						(errcode(o.sqlstate),
						 errmsg("a neighbour of item %d is not an item of the model", m->item_ids[i]),
						 errhint("%s", o.hint)));
			if (last_seen[c] == i + 1)
				ereport(ERROR,
						(errcode(o.sqlstate),
						 errmsg("item %d is listed twice as a neighbour of item %d",
								m->item_ids[c], m->item_ids[i]),
						 errhint("%s", o.hint)));
			last_seen[c] = i + 1;
			if (mtdpp_kind(m->kind)->signed_weights && !isfinite(w))
				ereport(ERROR,
						(errcode(o.sqlstate),
						 errmsg("weight of neighbour %d of item %d is %g, not a finite real",
								m->item_ids[c], m->item_ids[i], (double) w),
						 errhint("%s", o.hint)));
			if (!mtdpp_kind(m->kind)->signed_weights && !(w >= 0.0f && w <= most))
				ereport(ERROR,
						(errcode(o.sqlstate),
						 errmsg("weight of neighbour %d of item %d is %g, outside 0 to %g",
								m->item_ids[c], m->item_ids[i], (double) w, (double) most),
						 cosine ? errdetail("Neighbour weights are cosines of co-occurrence counts.") :
						 errdetail("Neighbour weights are co-occurrence evidence times its weight."),
						 errhint("%s", o.hint)));
		}
	}
	pfree(last_seen);
}

static void
bad_rule(const MtdppModel *m, Origin o, int i, const char *what)
{
	ereport(ERROR,
			(errcode(o.sqlstate),
			 errmsg("a rule of item %d %s", m->item_ids[i], what),
			 errdetail("Each rule in an item's list is its other antecedent items, ascending after the item, of weight minus the baskets holding the antecedent, then its consequent, of weight its confidence."),
			 errhint("%s", o.hint)));
}

/*
 * Rules (rules.c): each item's list a run of rules, each at most
 * MTDPP_MAX_ANTECEDENT - 1 antecedent items after the owner, ascending, of
 * weight -n(A) with n(A) a count of baskets, then a consequent outside the
 * antecedent of confidence in (0, 1].
 */
static void
validate_rules(const MtdppModel *m, Origin o)
{
	if (m->nbr_start == NULL && m->n_items > 0)
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("the %s model has no lists of rules", mtdpp_kind_name(m->kind)),
				 errhint("%s", o.hint)));
	for (int i = 0; i < m->n_items && m->nbr_start != NULL; i++)
	{
		int			markers = 0;
		int32		last = i;
		float4		n_ante = 0.0f;

		for (int64 k = m->nbr_start[i]; k < m->nbr_start[i + 1]; k++)
		{
			int32		c = m->nbr_index[k];
			float4		w = m->nbr_weight[k];

			if (c < 0 || c >= m->n_items)
				bad_rule(m, o, i, "names an item not of the model");
			if (w < 0.0f)
			{
				if (++markers > 2 || c <= last || !(-w >= 1.0f && -w <= (float4) m->n_baskets) ||
					(markers > 1 && w != n_ante))
					bad_rule(m, o, i, "has a malformed antecedent");
				last = c;
				n_ante = w;
				continue;
			}
			if (!(w > 0.0f && w <= 1.0f))
				bad_rule(m, o, i, "has a confidence outside (0, 1]");
			for (int64 t = k - markers; t <= k; t++)
				if (c == i || (t < k && m->nbr_index[t] == c))
					bad_rule(m, o, i, "concludes an item of its antecedent");
			markers = 0;
			last = i;
		}
		if (markers > 0)
			bad_rule(m, o, i, "has an antecedent without a consequent");
	}
}

/*
 * Poisson factorisation (poisson.c): factors E[beta], finite and
 * nonnegative reals; ln w the ln of the prior shape a, in [0.01, 100].
 */
static void
validate_poisson(const MtdppModel *m, Origin o)
{
	if (!(m->log_w >= log(0.01) - 1e-9 && m->log_w <= log(100.0) + 1e-9))
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("log_w of the poisson model is %g, outside ln 0.01 to ln 100", m->log_w),
				 errdetail("A poisson model keeps the ln of its prior shape a, which lies from 0.01 to 100, as its ln w."),
				 errhint("%s", o.hint)));
	for (int i = 0; i < m->n_items && (m->V != NULL || m->Vf != NULL); i++)
		for (int j = 0; j < m->rank; j++)
		{
			double		v = factor_at(m, i, j);

			if (!isfinite(v) || v < 0.0)
				ereport(ERROR,
						(errcode(o.sqlstate),
						 errmsg("factor %d of item %d is %g, not a finite nonnegative real", j + 1,
								m->item_ids[i], m->V ? m->V[(size_t) i * m->rank + j] : v),
						 errdetail("The factors of a poisson model are the expected values of Gamma variables."),
						 errhint("%s", o.hint)));
		}
}

/*
 * A Bayesian low-rank model's samples: the stored hyperparameters name their
 * count, which divides the rank (bayesian_lowrank.c's layout).  Each
 * sample's kernel meets the condition limit above, since a sample's row of V
 * is part of the item's row, whose norm nu bounds.
 */
static void
validate_samples(const MtdppModel *m, Origin o)
{
	const char *at = m->hyperparams ? strstr(m->hyperparams, "\"samples\"") : NULL;
	long		s = 0;

	if (at != NULL)
	{
		at += strlen("\"samples\"");
		while (*at == ' ' || *at == ':')
			at++;
		s = strtol(at, NULL, 10);
	}
	if (s < 1 || s > MTDPP_MAX_RANK || m->rank % s != 0 || m->rank == 0)
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("the Bayesian low-rank model of rank %d names %ld samples", m->rank, s),
				 errdetail("Its hyperparameters give the count of its samples of V, which divides the rank."),
				 errhint("%s", o.hint)));
}

/*
 * The integer KEY holds in the hyperparameters JSON, as written by
 * params.c or read back from jsonb ("key": value; a quote inside a string
 * value is escaped, so the pattern matches keys only); -1 when absent.
 */
int
mtdpp_hyperparam_count(const char *json, const char *key)
{
	char		pattern[64];
	const char *at;
	long		v;

	snprintf(pattern, sizeof(pattern), "\"%s\": ", key);
	if (json == NULL || (at = strstr(json, pattern)) == NULL)
		return -1;
	v = strtol(at + strlen(pattern), NULL, 10);
	return v < 0 || v > MTDPP_MAX_RANK ? 0 : (int) v;
}

/*
 * The fits a model holds side by side (multitask.c): 1 for a kind without ensembles or
 * without "fits" in its hyperparameters (every model of fits 1: params.c
 * stores the key only above 1); 0 for a count that does not divide the
 * rank, which model_validate.c refuses before the model is scored.
 */
int
mtdpp_model_fits(const MtdppModel *m)
{
	int			n;

	if (!mtdpp_kind(m->kind)->ensemble)
		return 1;
	n = mtdpp_hyperparam_count(m->hyperparams, "fits");
	if (n < 0)
		return 1;
	if (n < 1 || m->rank % n != 0)
		return 0;
	return n;
}

/*
 * An ensemble's fits (multitask.c): the stored hyperparameters name
 * their count, which divides the rank, or name none (one fit).  Each fit's
 * kernels meet the condition limit above: a fit's row of V is part of the
 * item's row, whose norm nu bounds, and the limit at the model's rank is
 * below the limit at a fit's.
 */
static void
validate_fits(const MtdppModel *m, Origin o)
{
	int			n = mtdpp_hyperparam_count(m->hyperparams, "fits");

	if (n != -1 && mtdpp_model_fits(m) < 1)
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("the %s model of rank %d names %d fits", mtdpp_kind_name(m->kind), m->rank, n),
				 errdetail("Its hyperparameters give the count of its fits side by side, from 1 to %d, which divides the rank.",
						   MTDPP_MAX_RANK),
				 errhint("%s", o.hint)));
}

/*
 * Checks every value of M, a model just trained, read from a value or read
 * from the tables (ORIGIN), against the definition above; raises the error
 * that fits ORIGIN at the first value that breaks it.
 */
void
mtdpp_model_validate(const MtdppModel *m, MtdppModelOrigin origin)
{
	Origin		o = origin_of(origin);

	validate_header(m, o);
	validate_items(m, o);
	if (m->kind == MTDPP_POISSON)
		validate_poisson(m, o);
	else if (mtdpp_kind(m->kind)->weights)
		validate_gru(m, o);
	else if (m->rank > 0 && (m->V != NULL || m->Vf != NULL))
		validate_factors(m, o);
	if (m->kind == MTDPP_BAYESIAN_LOWRANK)
		validate_samples(m, o);
	if (mtdpp_kind(m->kind)->ensemble)
		validate_fits(m, o);
	if (m->kind == MTDPP_RULES)
		validate_rules(m, o);
	else if (mtdpp_kind(m->kind)->neighbors)
		validate_neighbors(m, o);
}
