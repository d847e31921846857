/*
 * kinds/list.h
 *		The list of kinds: each kind's number, in the stored model format.
 *		Its routines: the kind's folder, entered by list.c.
 */
#ifndef MTDPP_LIST_H
#define MTDPP_LIST_H

typedef enum MtdppKind
{
	MTDPP_MULTITASK = 0,
	MTDPP_MULTITASK_NOBIAS,
	MTDPP_LOGISTIC,
	MTDPP_LOWRANK,
	MTDPP_ITEMKNN,
	MTDPP_POPULARITY,
	MTDPP_EASE,
	MTDPP_HYBRID,
	MTDPP_RULES,
	MTDPP_POISSON = 9,
	MTDPP_FM = 10,
	MTDPP_BAYESIAN_LOWRANK = 11,
	MTDPP_GRU = 12,
	MTDPP_N_KINDS
} MtdppKind;

#endif							/* MTDPP_LIST_H */
