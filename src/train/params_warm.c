/*
 * train/params_warm.c
 *		The hyperparameters a warm start resolves from the model it starts
 *		from (cache.c looks that model up; fit_epochs.c trains from it).
 */
#include "postgres.h"

#include <math.h>

#include "train/params.h"

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
void
mtdpp_params_warm(MtdppParams *p, double old_rate, int old_epochs)
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
