/*
 * numeric/helper_thread.h
 *		A second thread for computation only (helper_thread.c).
 */
#ifndef MTDPP_HELPER_THREAD_H
#define MTDPP_HELPER_THREAD_H

#include "postgres.h"

/* helper_thread.c: a second thread for computation only */
typedef struct MtdppHelper MtdppHelper;
extern MtdppHelper *mtdpp_helper_start(void);
extern MtdppHelper *mtdpp_helper_start_for(const char *purpose);
extern void mtdpp_helper_stop(MtdppHelper *h);
extern void mtdpp_helper_run_pair(MtdppHelper *h, void (*fn) (void *), void *a, void *b);

#endif							/* MTDPP_HELPER_THREAD_H */
