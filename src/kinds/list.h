/*
 * kinds/list.h
 *		The registry of kinds: one line per kind, its symbol, its name as SQL
 *		spells it and its number in the stored model format (a number is
 *		never reused; the lines in ascending order of number).
 *
 * Like PostgreSQL's rmgrlist.h, this file has no include guard: whoever
 * includes it defines MTDPP_KIND(symbol, name, number) first, and each
 * line expands into what that file makes of a kind: the enum MtdppKind
 * (kinds/kind.h), the table of routines, each kind's struct
 * mtdpp_kind_<name> from its folder kinds/<name>/ (kinds/list.c), and
 * through the table the fuzzing seeds and the SQL function mtdpp_kinds().
 * Adding a kind is its folder and its line here.
 */

/* symbol, name, number */
MTDPP_KIND(MTDPP_MULTITASK, multitask, 0)
MTDPP_KIND(MTDPP_MULTITASK_NOBIAS, multitask_nobias, 1)
MTDPP_KIND(MTDPP_LOGISTIC, logistic, 2)
MTDPP_KIND(MTDPP_LOWRANK, lowrank, 3)
MTDPP_KIND(MTDPP_ITEMKNN, itemknn, 4)
MTDPP_KIND(MTDPP_POPULARITY, popularity, 5)
MTDPP_KIND(MTDPP_EASE, ease, 6)
MTDPP_KIND(MTDPP_HYBRID, hybrid, 7)
MTDPP_KIND(MTDPP_RULES, rules, 8)
MTDPP_KIND(MTDPP_POISSON, poisson, 9)
MTDPP_KIND(MTDPP_FM, fm, 10)
MTDPP_KIND(MTDPP_BAYESIAN_LOWRANK, bayesian_lowrank, 11)
MTDPP_KIND(MTDPP_GRU, gru, 12)
