/*
 * kinds/kind.h
 *		MtdppKind: each kind's number in the stored model format, expanded
 *		from the registry of kinds (kinds/list.h).
 */
#ifndef MTDPP_KIND_H
#define MTDPP_KIND_H

typedef enum MtdppKind
{
#define MTDPP_KIND(symbol, name, number) symbol = number,
#include "kinds/list.h"
#undef MTDPP_KIND
	MTDPP_N_KINDS				/* the last line's number plus one */
} MtdppKind;

#endif							/* MTDPP_KIND_H */
