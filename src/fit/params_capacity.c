/*
 * fit/params_capacity.c
 *		The rank and L2 policy of the kinds fitted by the stochastic
 *		gradient: chosen on the validation slice of the training baskets
 *		when the call gives neither.
 *
 * Which hyperparameters leave the rank and L2 to the fit: the fit of the
 * multi-task kinds chooses both on the validation slice of the training
 * baskets when the call gives neither (fit.c, mtdpp_fit_dpp_slice, says
 * how and why), and a model's size is bounded by the larger rank it may
 * keep (the fits it keeps side by side, if any: their ranks added up).
 */
#include "postgres.h"

#include "fit/params.h"
#include "model/kinds.h"
#include "shown.h"

/* a kind whose rank and L2 the fit chooses: both left unset by default */
const MtdppKindDefault mtdpp_capacity_defaults[] = {
	{"rank", MTDPP_RANK_CHOSEN},
	{"l2", -1.0},
	{NULL, 0}
};

/*
 * Fits side by side (the kind's blocks_key: an ensemble's fits, a
 * posterior's samples) at the largest rank the choice may keep, within
 * MTDPP_MAX_RANK; an ensemble starts cold, its fits differing by their seeds.
 */
static void
check_blocks(const MtdppParams *p, const char *key)
{
	int			n = mtdpp_param_int(p, key);
	int			r = p->rank == MTDPP_RANK_CHOSEN ? MTDPP_CAPACITY_MAX_RANK : p->rank;

	if (n <= 1)
		return;
	if (n * r > MTDPP_MAX_RANK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind %s keeps %s x rank factors per item, and %d x %d is more than %d",
						mtdpp_kind_name(p->kind), key, n, r, MTDPP_MAX_RANK),
				 p->rank == MTDPP_RANK_CHOSEN ?
				 errdetail("Without a rank or an l2, the rank is chosen on validation baskets and may be %d.",
						   MTDPP_CAPACITY_MAX_RANK) : 0,
				 MTDPP_MAX_RANK / r >= 2 ?
				 errhint("Give at most %d %s at rank %d, or a rank of at most %d.",
						 MTDPP_MAX_RANK / r, key, r, MTDPP_MAX_RANK / n) :
				 errhint("Give a rank of at most %d for %d %s.",
						 MTDPP_MAX_RANK / n, n, key)));
	if (p->warm_start[0] != '\0' && mtdpp_kind_takes(p->kind, "warm_start"))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s %d cannot be trained with a warm start from model \"%s\"",
						key, n, mtdpp_shown(p->warm_start)),
				 errdetail("The %s of an ensemble are independent fits from seeds seed, seed + 1, ...; a warm start would start them all from one model.", key),
				 errhint("Leave out warm_start to train %d %s afresh, or leave out %s to warm-start one fit.",
						 n, key, key)));
}

/*
 * After the call's keys: with a rank or an L2 given, the other takes the
 * value it had before it was chosen, and there is no search.  Fits kept
 * side by side multiply the rank a model holds.
 */
void
mtdpp_capacity_resolve(MtdppParams *p)
{
	const MtdppKindRoutine *kind = mtdpp_kind(p->kind);

	if (!kind->factors || kind->own_capacity)
		return;
	if (p->rank == MTDPP_RANK_CHOSEN && p->l2 >= 0.0)
		p->rank = MTDPP_CAPACITY_LOW_RANK;
	if (p->rank != MTDPP_RANK_CHOSEN && p->l2 < 0.0)
		p->l2 = MTDPP_CAPACITY_LOW_L2;
	if (kind->blocks_key != NULL)
		check_blocks(p, kind->blocks_key);
}

/* the largest rank a fit of P may keep: what its model's size is bounded by */
int
mtdpp_capacity_max_rank(const MtdppParams *p)
{
	const char *key = mtdpp_kind(p->kind)->blocks_key;
	int			n = key ? mtdpp_param_int(p, key) : 1;

	return (p->rank == MTDPP_RANK_CHOSEN ? MTDPP_CAPACITY_MAX_RANK : p->rank) * Max(n, 1);
}

/*
 * Whether the larger rank the choice tries keeps a model of N_ITEMS that
 * fits mtdpp_model_budget() (half of maintenance_work_mem, and 1 GB for a
 * model returned as a value):
 * if not, the choice trains the smaller rank alone (fit.c says so), rather
 * than fail when the model is stored.  True when the rank is not chosen.
 */
bool
mtdpp_capacity_large_fits(const MtdppParams *p, int n_items)
{
	const MtdppKindRoutine *kind = mtdpp_kind(p->kind);

	if (p->rank != MTDPP_RANK_CHOSEN || !kind->factors || kind->own_capacity)
		return true;
	return mtdpp_model_value_size(p->kind, n_items, mtdpp_capacity_max_rank(p), p->epochs) <=
		mtdpp_model_budget();
}

/*
 * The largest rank a fit of P over N_ITEMS may keep: mtdpp_capacity_max_rank,
 * or the smaller rank of the choice where the larger one's value would not
 * fit (mtdpp_capacity_large_fits).
 */
int
mtdpp_capacity_value_rank(const MtdppParams *p, int n_items)
{
	const char *key = mtdpp_kind(p->kind)->blocks_key;
	int			n = key ? mtdpp_param_int(p, key) : 1;

	if (mtdpp_capacity_large_fits(p, n_items))
		return mtdpp_capacity_max_rank(p);
	return MTDPP_CAPACITY_LOW_RANK * Max(n, 1);
}
