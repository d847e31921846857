/*
 * mtdpp_stubs.h
 *		What the harnesses share beyond the PostgreSQL runtime: see
 *		mtdpp_stubs.c.
 */
#ifndef MTDPP_FUZZ_STUBS_H
#define MTDPP_FUZZ_STUBS_H

#include "../src/fit/fit.h"
#include "../src/model/kinds.h"
#include "../src/model/model.h"
#include "../src/fit/params.h"
#include "../src/store/store.h"

/* called with the baskets the trainer receives, after they are checked */
extern void (*fuzz_baskets_hook) (const MtdppBaskets *data);
extern void fuzz_check_baskets(const MtdppBaskets *d);

#endif							/* MTDPP_FUZZ_STUBS_H */
