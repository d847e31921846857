/*
 * fit/fit_capacity.c
 *		The rank and L2 policy of the multi-task kinds: chosen on the
 *		validation slice of the training baskets when the call gives neither.
 *
 * Which hyperparameters leave the rank and L2 to the fit: the fit of the
 * multi-task kinds chooses both on the validation slice of the training
 * baskets when the call gives neither (fit.c, mtdpp_fit_dpp_slice, says
 * how and why), and a model's size is bounded by the larger rank it may
 * keep (a Bayesian low-rank model's: its samples' ranks added up; an
 * ensemble's: its fits').
 */
#include "postgres.h"

#include "kinds/kinds.h"
#include "train/params.h"

/* a kind whose rank and L2 the fit chooses: both left unset by default */
const MtdppKindDefault mtdpp_capacity_defaults[] = {
	{"rank", MTDPP_RANK_CHOSEN},
	{"l2", -1.0},
	{NULL, 0}
};

/*
 * After the call's keys: with a rank or an L2 given, the other takes the
 * value it had before it was chosen, and there is no search.  An ensemble
 * ("fits", fit_ensemble.c) keeps its fits' ranks side by side, within
 * MTDPP_MAX_RANK at the largest rank the choice may keep, and starts cold.
 */
void
mtdpp_capacity_resolve(MtdppParams *p)
{
	/* poisson and gru choose their rank (hidden size) alone (poisson_vi.c, gru_fit.c) */
	if (!mtdpp_kind(p->kind)->factors || p->kind == MTDPP_POISSON || p->kind == MTDPP_GRU)
		return;
	/* the samples of a Bayesian low-rank model side by side: their ranks add up */
	if (p->kind == MTDPP_BAYESIAN_LOWRANK && p->rank * p->samples > MTDPP_MAX_RANK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind bayesian_lowrank keeps samples x rank factors per item, and %d x %d is more than %d",
						p->samples, p->rank, MTDPP_MAX_RANK),
				 errhint("Lower samples or rank.")));
	if (p->rank == MTDPP_RANK_CHOSEN && p->l2 >= 0.0)
		p->rank = MTDPP_CAPACITY_LOW_RANK;
	if (p->rank != MTDPP_RANK_CHOSEN && p->l2 < 0.0)
		p->l2 = MTDPP_CAPACITY_LOW_L2;
	/* an ensemble's fits side by side, at the largest rank the choice may keep */
	if (p->fits > 1 && mtdpp_kind(p->kind)->ensemble)
	{
		int			r = p->rank == MTDPP_RANK_CHOSEN ? MTDPP_CAPACITY_MAX_RANK : p->rank;

		if (p->fits * r > MTDPP_MAX_RANK)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("kind %s keeps fits x rank factors per item, and %d x %d is more than %d",
							mtdpp_kind_name(p->kind), p->fits, r, MTDPP_MAX_RANK),
					 p->rank == MTDPP_RANK_CHOSEN ?
					 errdetail("Without a rank or an l2, the rank is chosen on validation baskets and may be %d.",
							   MTDPP_CAPACITY_MAX_RANK) : 0,
					 MTDPP_MAX_RANK / r >= 2 ?
					 errhint("Give at most %d fits at rank %d, or a rank of at most %d.",
							 MTDPP_MAX_RANK / r, r, MTDPP_MAX_RANK / p->fits) :
					 errhint("Give a rank of at most %d for %d fits.",
							 MTDPP_MAX_RANK / p->fits, p->fits)));
		/* its fits differ by their seeds: a warm start would make them one model */
		if (p->warm_start[0] != '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("fits %d cannot be trained with a warm start from model \"%s\"",
							p->fits, mtdpp_shown(p->warm_start)),
					 errdetail("The fits of an ensemble are independent fits from seeds seed, seed + 1, ...; a warm start would start them all from one model."),
					 errhint("Leave out warm_start to train %d fits afresh, or leave out fits to warm-start one fit.",
							 p->fits)));
	}
}

/* the largest rank a fit of P may keep: what its model's size is bounded by */
int
mtdpp_capacity_max_rank(const MtdppParams *p)
{
	if (p->kind == MTDPP_BAYESIAN_LOWRANK)
		return p->rank * p->samples;	/* its samples side by side */
	return (p->rank == MTDPP_RANK_CHOSEN ? MTDPP_CAPACITY_MAX_RANK : p->rank) *
		(p->fits > 1 ? p->fits : 1);	/* an ensemble's fits side by side */
}
