/*
 * train/warm_start.c
 *		A warm start: the model it starts from (the active version of the
 *		model warm_start names, read as the current role may read it), and
 *		the hyperparameters it resolves from that model (fit_epochs.c
 *		trains from it).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "fit/params.h"
#include "model/kinds.h"
#include "model/model.h"
#include "store/store.h"

/*
 * A warm start's rate never falls below this share of learning_rate, however
 * long the chain of warm starts before it: at a tenth, an epoch still gains
 * as much on validation baskets as at a quarter.
 */
#define WARM_RATE_FLOOR 0.1

/*
 * What a warm start from a model that began at rate OLD_RATE and kept its
 * epoch OLD_EPOCHS resolves: its rate continues that schedule (the old
 * model's parameters were tuned at that rate, and a fresh optimiser at the
 * initial rate first undoes them), its epochs and patience are its own.
 * Whatever the caller gave wins.
 */
static void
warm_params(MtdppParams *p, double old_rate, int old_epochs)
{
	if (!mtdpp_param_given(p, "warm_learning_rate"))
	{
		if (mtdpp_param_given(p, "learning_rate") || !(old_rate > 0.0))
			p->warm_learning_rate = p->learning_rate;
		else
			p->warm_learning_rate = Max(old_rate * pow(p->lr_decay, Max(old_epochs, 0)),
										p->learning_rate * WARM_RATE_FLOOR);
	}
	if (!mtdpp_param_given(p, "epochs"))
		p->epochs = p->warm_epochs;
	if (!mtdpp_param_given(p, "patience"))
		p->patience = p->warm_patience;
	p->warm_slice = !mtdpp_param_given(p, "validation_baskets");
}

/*
 * Where the schedule of the active version of model NAME left off: the rate
 * it began at into *RATE (0 if its row does not say), the epoch it kept
 * into *EPOCHS and its L2 into *L2 (-1 if its row does not say).
 */
static void
warm_schedule(const char *name, double *rate, int *epochs, double *l2)
{
	bool		isnull;
	Datum		d;

	*rate = 0.0;
	*epochs = 0;
	*l2 = -1.0;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT best_epoch, "
							  "COALESCE((hyperparams OPERATOR(pg_catalog.->>) 'warm_learning_rate')::pg_catalog.float8, "
							  "(hyperparams OPERATOR(pg_catalog.->>) 'learning_rate')::pg_catalog.float8), "
							  "(hyperparams OPERATOR(pg_catalog.->>) 'l2')::pg_catalog.float8 "
							  "FROM mtdpp.models WHERE name OPERATOR(pg_catalog.=) $1 AND active",
							  1, (Oid[]) {TEXTOID}, (Datum[]) {CStringGetTextDatum(name)},
							  NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read mtdpp.models");
	if (SPI_processed > 0)
	{
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
			*epochs = DatumGetInt32(d);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
		if (!isnull)
			*rate = DatumGetFloat8(d);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull);
		if (!isnull)
			*l2 = DatumGetFloat8(d);
	}
	SPI_finish();
}

/*
 * The active version of the model P names as a warm start, as the current
 * role may read it; it must be of the kind and rank being trained.  The
 * warm start's own settings are resolved into P (warm_params).
 */
const MtdppModel *
mtdpp_warm_start(MtdppParams *p)
{
	const MtdppModel *warm = mtdpp_lookup_model(p->warm_start, NULL, NULL);
	double		rate,
				l2;
	int			epochs;

	/* an ensemble's rank is its fits' side by side: no one fit to continue */
	if (warm->blocks != 1 && warm->kind == p->kind)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot warm-start from model \"%s\", an ensemble of %d fits of rank %d",
						p->warm_start, warm->blocks,
						warm->rank / Max(warm->blocks, 1)),
				 errdetail("A warm start continues one fit; an ensemble keeps several side by side."),
				 errhint("Train it again with fits => %d, without warm_start, or warm-start from a model of one fit.",
						 warm->blocks)));
	warm_schedule(p->warm_start, &rate, &epochs, &l2);
	/* a rank left to choose is the earlier model's, with its L2: no search */
	if (p->rank == MTDPP_RANK_CHOSEN)
	{
		p->rank = warm->rank;
		p->l2 = l2 >= 0.0 ? l2 : MTDPP_CAPACITY_LOW_L2;
	}
	if (warm->kind != p->kind || warm->rank != p->rank)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot warm-start a %s model of rank %d from model \"%s\", a %s model of rank %d",
						mtdpp_kind_name(p->kind), p->rank, p->warm_start,
						mtdpp_kind_name(warm->kind), warm->rank),
				 errhint("Train with kind => '%s' and rank => %d, or without warm_start.",
						 mtdpp_kind_name(warm->kind), warm->rank)));
	warm_params(p, rate, epochs);
	return warm;
}
