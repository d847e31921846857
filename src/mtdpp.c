/*
 * mtdpp.c
 *		The extension's entry: module magic and set-up when a backend loads
 *		the library.
 */
#include "postgres.h"

#include "fmgr.h"

#include "fit/progress.h"
#include "model/kinds.h"
#include "numeric/linalg.h"
#include "pg_compat.h"
#include "score/score.h"
#include "store/store.h"
#include "train/train.h"

MTDPP_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	mtdpp_blas_init();			/* one BLAS thread per backend */
	mtdpp_kinds_init();			/* the table of model kinds */
	mtdpp_cache_init();			/* model cache invalidations */
	mtdpp_shared_init();		/* one copy of a model per server, if preloaded */
	mtdpp_progress_init();		/* trainings seen from any session, if preloaded */
	mtdpp_promote_init();		/* mtdpp.promote */
	mtdpp_candidates_init();	/* mtdpp.candidates */
}
