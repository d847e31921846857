/*
 * train/activate.c
 *		mtdpp_activate: makes a version of a model the active one, by a
 *		promotion rule when the call names one.
 *
 * Without promote (or with 'always'), the version becomes active, whatever
 * it is: a rollback by hand always works, whatever the setting
 * mtdpp.promote, which is for trainings.  With promote => 'if_better:...'
 * the version becomes active only when it beats the active one on the
 * baskets its training held out (promote.c); otherwise the active one
 * stays, a NOTICE says why, and the call returns the active one's model_id.
 */
#include "postgres.h"

#include "fmgr.h"

#include "store/store.h"
#include "train/train.h"

PG_FUNCTION_INFO_V1(mtdpp_activate);

Datum
mtdpp_activate(PG_FUNCTION_ARGS)
{
	/* promote since 0.6.0: a database not yet updated passes three arguments */
	const char *rule = mtdpp_activation_rule(fcinfo, 3);
	char	   *name;
	int			id = mtdpp_version_to_activate(fcinfo, &name);

	if (rule != NULL)
		PG_RETURN_INT32(mtdpp_promote_version(name, id, rule));
	mtdpp_activate_version(name, id);
	PG_RETURN_INT32(id);
}
