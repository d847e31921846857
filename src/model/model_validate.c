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
 * ln w + sum_s ln(d_s (1 + nu rho)): finite.  The completion bounds (topk_bounded.c)
 * work in single precision on terms up to n nu rho and n nu, so nu itself
 * stays below FLT_MAX / (2 n).
 *
 * ln w lies in the range the hyperparameter w allows ([1e-12, 1e12]): an
 * ln w of 1e308 would swallow every determinant.  Popularity counts the
 * training baskets holding an item: 0 to n_baskets.  item-kNN weights are
 * cosines of co-occurrence counts, in [0, 1], EASE weights any finite reals,
 * so a score (a sum over at most MTDPP_MAX_CONTEXT basket items, in double
 * precision) stays finite; a neighbour is an item of the model, listed once.
 * A kind whose values obey rules of their own (lists of association rules,
 * factors that are expected Gamma variables, weights shared by every item)
 * checks them itself: its routine validate.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "model/kinds.h"
#include "model/model.h"

static MtdppRefusal
origin_of(MtdppModelOrigin origin)
{
	switch (origin)
	{
		case MTDPP_FROM_TRAINING:
			return (MtdppRefusal) {ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
				"Train again with a lower learning_rate or a larger l2."};
		case MTDPP_FROM_VALUE:
			return (MtdppRefusal) {ERRCODE_INVALID_BINARY_REPRESENTATION,
				"Pass the value returned by the mtdpp_fit aggregate unchanged."};
		case MTDPP_FROM_TABLES:
			break;
	}
	return (MtdppRefusal) {ERRCODE_DATA_CORRUPTED,
		"The model tables were changed by hand; train the model again."};
}

/* the largest 1 + nu * rho at which every kernel factorises (see above) */
static double
kernel_condition_limit(int rank)
{
	double		n = MTDPP_MAX_CONTEXT + 1;

	return 1.0 / (1.01 * n * (n + Max(rank, 0) + 3) * (DBL_EPSILON / 2));
}

/* R[i][j]^2 as the tables (and so the cache) hold it */
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
validate_header(const MtdppModel *m, MtdppRefusal o)
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
validate_items(const MtdppModel *m, MtdppRefusal o)
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
		if (!isfinite(mtdpp_as_real(m->D[i])))
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
validate_factors(const MtdppModel *m, MtdppRefusal o)
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
					d2 = (has_bias(m) ? mtdpp_as_real(m->D[i]) * mtdpp_as_real(m->D[i]) : 0.0) + MTDPP_JITTER;

		for (int j = 0; j < m->rank; j++)
		{
			double		v = mtdpp_factor_at(m, i, j);

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
 * Neighbour lists of items of the model, each once; weights in [0, 1] for
 * cosines (cosine_weights), in [0, MTDPP_MAX_EVIDENCE] for evidence times
 * its weight, any finite real for signed weights (signed_weights), so that every score stays
 * finite.
 */
static void
validate_neighbors(const MtdppModel *m, MtdppRefusal o)
{
	int32	   *last_seen;
	bool		cosine = mtdpp_kind(m->kind)->cosine_weights;
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

/*
 * The fits side by side of a kind that keeps several (its blocks_key: an
 * ensemble's fits, a posterior's samples): a count that divides the rank.
 * Each fit's kernels meet the condition limit above, since a fit's row of V
 * is part of the item's row, whose norm nu bounds, and the limit at the
 * model's rank is below the limit at a fit's.
 */
static void
validate_blocks(const MtdppModel *m, MtdppRefusal o)
{
	const char *key = mtdpp_kind(m->kind)->blocks_key;

	if (key != NULL && (m->blocks < 1 || m->rank % m->blocks != 0))
		ereport(ERROR,
				(errcode(o.sqlstate),
				 errmsg("the %s model of rank %d names %d %s", mtdpp_kind_name(m->kind), m->rank,
						m->blocks, key),
				 errdetail("Its hyperparameters give the count of its %s side by side, from 1 to %d, which divides the rank.",
						   key, MTDPP_MAX_RANK),
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
	MtdppRefusal o = origin_of(origin);
	const MtdppKindRoutine *kind = mtdpp_kind(m->kind);

	validate_header(m, o);
	validate_items(m, o);
	if (kind->validate != NULL)
		kind->validate(m, &o);
	else if (m->rank > 0 && (m->V != NULL || m->Vf != NULL))
		validate_factors(m, o);
	validate_blocks(m, o);
	if (kind->validate == NULL && kind->neighbors)
		validate_neighbors(m, o);
}
