/*
 * kinds/rules/rules.h
 *		Association rules: mining them from training baskets (rules_mine.c),
 *		the kind "rules" that completes baskets with them and mtdpp_rules,
 *		which lists them (rules.c).
 */
#ifndef MTDPP_RULES_H
#define MTDPP_RULES_H

#include "fit/params.h"
#include "model/baskets.h"

/* the values of its own keys, in its block of MtdppParams (< 0: chosen on validation) */
typedef struct MtdppRulesParams
{
	double		min_support;	/* share of baskets */
	double		min_confidence;
	int			max_antecedent; /* items of an antecedent */
} MtdppRulesParams;

#define mtdpp_rules_params(p) MTDPP_KIND_PARAMS((p), MTDPP_RULES, MtdppRulesParams)

/* the most items an antecedent holds */
#define MTDPP_MAX_ANTECEDENT	3

/* A rule A -> c: the baskets holding A, and those holding A and c. */
typedef struct MtdppRule
{
	int32		ante[MTDPP_MAX_ANTECEDENT]; /* dense indices, ascending; -1 past the last */
	int32		cons;
	int32		n_rule;			/* training baskets holding A and c */
	int32		n_ante;			/* training baskets holding A */
} MtdppRule;

static inline int
mtdpp_rule_length(const MtdppRule *r)
{
	return r->ante[2] >= 0 ? 3 : r->ante[1] >= 0 ? 2 : 1;
}

/* Rules mined at a support floor: every rule any threshold above it keeps. */
typedef struct MtdppRuleSet
{
	MtdppRule  *rules;
	int64		n;
	int			min_count;		/* baskets a rule's items all lie in, at least */
	int			max_antecedent; /* items an antecedent holds, at most */
	int64		itemsets;		/* frequent itemsets of 2 items or more */
	/* when a search gave up: the limit it passed, the memory in use or asked for */
	const char *over_what;
	Size		over_bytes;
} MtdppRuleSet;

/* rules_mine.c */
extern bool mtdpp_mine_rules(const MtdppBaskets *data, int min_count, int max_antecedent,
							 bool refuse, Size beside, MtdppRuleSet *out);

#endif							/* MTDPP_RULES_H */
