/*
 * kinds/rules/rules.c
 *		The kind "rules": association rules, the associative classifier of
 *		the paper's Tables 1 and 2 (CBA, Liu, Hsu and Ma, KDD 1998).
 *
 * Rules A -> c with antecedents of up to three items are mined from the
 * training baskets (rules_mine.c) and kept when at least min_support of the
 * baskets hold A and c, and min_confidence of those holding A hold c.  A
 * candidate scores by the best confidence among the rules to it whose
 * antecedent lies in the basket, as CBA classifies by its most confident
 * rule that fires:
 *
 *		score(c) = 1 + max conf(A -> c) + TIE * share(c)	if a rule to c fires,
 *		score(c) = share(c) - 1								otherwise,
 *
 * share(c) = (n(c) + 1/2) / (N + 1) the share of the N training baskets
 * holding c.  Every candidate with a rule that fires ranks above every one
 * without, and those rank by popularity, as the kind popularity ranks them
 * (an empty basket too).  Of equal confidences the more popular candidate
 * comes first: TIE (1e-9) is too small to reorder confidences but those
 * closer than 1e-9.  Every score is finite; no logarithm is taken, so a
 * completion costs a pass over the catalog and the basket's lists.
 *
 * Thresholds.  By default min_support, min_confidence and max_antecedent are
 * chosen on a validation slice of the training baskets (validation_slice.c):
 * the rules of the other baskets are mined once at the lowest support tried
 * (1%, 0.5%, 0.2%, 0.1%, ... down to 2 baskets) with the longest
 * antecedents that fit: while the mining would exceed maintenance_work_mem
 * or take too long, first shorter antecedents, then a higher support (the
 * support a rule needs decides how many candidates any rule reaches, so
 * MPR, which a low support raises most).  Each setting
 * tried then keeps its share of those rules and is measured by MPR + P@5 +
 * P@10 + P@20 against the whole catalog, as ease chooses its lambda.  The
 * search moves one threshold at a time over its grid (confidences 0 to
 * 0.5), keeping the best, twice round.  The model is then mined from every
 * training basket at the thresholds chosen, which it stores.
 *
 * Storage.  The rules whose antecedent starts with item a (its smallest
 * dense index, so the smallest item id) are a's neighbour list in
 * mtdpp.items: each rule is its other antecedent items, each of weight
 * -n(A) (the baskets holding A; negative marks an antecedent item), then
 * its consequent, of weight its confidence in (0, 1].  A completion reads
 * the lists of the basket's items only; mtdpp_rules lists them all.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "portability/instr_time.h"

#include "fit/fit.h"
#include "fit/params.h"
#include "kinds/popularity/popularity.h"
#include "kinds/rules/rules.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "model/model.h"

/* orders confidences closer than this by popularity */
#define RULES_TIE		1e-9
/* supports tried: 1%, 0.5%, 0.2%, 0.1%, ... while at least 2 baskets */
#define RULES_MAX_SUPPORT	0.01
#define RULES_MIN_COUNT		2
/* without a validation slice: CBA's thresholds as the paper ran it */
#define RULES_PAPER_SUPPORT	0.01
#define RULES_PAPER_CONFIDENCE	0.2

static const double confidences[] = {0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5};

/* the baskets of N a support S asks for */
static int
support_count(double s, int n)
{
	return Max((int) ceil(s * n - 1e-9), 1);
}

static int
cmp_rule(const void *x, const void *y)
{
	const MtdppRule *a = x,
			   *b = y;

	for (int k = 0; k < MTDPP_MAX_ANTECEDENT; k++)
		if (a->ante[k] != b->ante[k])
			return a->ante[k] < b->ante[k] ? -1 : 1;
	return a->cons < b->cons ? -1 : a->cons > b->cons;
}

static inline bool
rule_kept(const MtdppRule *r, int min_count, double min_conf, int max_ante)
{
	return r->n_rule >= min_count && mtdpp_rule_length(r) <= max_ante &&
		(double) r->n_rule / r->n_ante >= min_conf;
}

/*
 * The rules of SET that the thresholds keep into M's neighbour lists (see
 * above); the rules are sorted by antecedent, so each owner's lie together.
 */
static void
rules_lists(const MtdppRuleSet *set, MtdppModel *m, int min_count, double min_conf,
			int max_ante)
{
	int			n = m->n_items;
	int64		total = 0,
				at = 0;

	if (m->nbr_start == NULL)
		m->nbr_start = mtdpp_alloc_huge(sizeof(int64) * (n + 1));
	memset(m->nbr_start, 0, sizeof(int64) * (n + 1));
	for (int64 k = 0; k < set->n; k++)
		if (rule_kept(&set->rules[k], min_count, min_conf, max_ante))
		{
			m->nbr_start[set->rules[k].ante[0] + 1] += mtdpp_rule_length(&set->rules[k]);
			total += mtdpp_rule_length(&set->rules[k]);
		}
	for (int i = 0; i < n; i++)
		m->nbr_start[i + 1] += m->nbr_start[i];
	if (m->nbr_index)
		pfree(m->nbr_index);
	if (m->nbr_weight)
		pfree(m->nbr_weight);
	m->nbr_index = mtdpp_alloc_huge(sizeof(int32) * Max(total, 1));
	m->nbr_weight = mtdpp_alloc_huge(sizeof(float4) * Max(total, 1));
	for (int64 k = 0; k < set->n; k++)
	{
		const MtdppRule *r = &set->rules[k];

		if (!rule_kept(r, min_count, min_conf, max_ante))
			continue;
		for (int t = 1; t < mtdpp_rule_length(r); t++)
		{
			m->nbr_index[at] = r->ante[t];
			m->nbr_weight[at++] = (float4) -r->n_ante;
		}
		m->nbr_index[at] = r->cons;
		m->nbr_weight[at++] = (float4) ((double) r->n_rule / r->n_ante);
	}
	Assert(at == total);
}

/* the best confidence of a rule of M that fires in the context (IN: n_items flags) into BEST, per item */
static void
best_rules(const MtdppModel *m, const int32 *ctx, int b, const bool *in, float *best)
{
	for (int s = 0; s < b; s++)
	{
		int			a = ctx[s];
		int64		k = m->nbr_start[a],
					end = m->nbr_start[a + 1];

		while (k < end)
		{
			bool		fires = true;

			for (; k < end && m->nbr_weight[k] < 0.0f; k++)
				fires &= in[m->nbr_index[k]];
			if (k == end)
				break;
			if (fires && m->nbr_weight[k] > best[m->nbr_index[k]])
				best[m->nbr_index[k]] = m->nbr_weight[k];
			k++;
		}
	}
}

/* score(c): 1 + the best confidence that fires, else share - 1; ties by popularity */
static void
rules_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	bool	   *in;
	float	   *best;
	double		total = (double) m->n_baskets + 1.0;

	for (int i = 0; i < m->n_items; i++)
		scores[i] = (m->popularity[i] + 0.5) / total - 1.0;
	if (b == 0)
		return;
	in = palloc0(sizeof(bool) * Max(m->n_items, 1));
	best = palloc(sizeof(float) * Max(m->n_items, 1));
	for (int i = 0; i < m->n_items; i++)
		best[i] = -1.0f;
	for (int s = 0; s < b; s++)
		in[ctx[s]] = true;
	best_rules(m, ctx, b, in, best);
	for (int i = 0; i < m->n_items; i++)
		if (best[i] >= 0.0f)
			scores[i] = 1.0 + best[i] + RULES_TIE * (scores[i] + 1.0);
	pfree(best);
	pfree(in);
}

/*
 * mtdpp_explain: the antecedent of the rule that decides C's score (of
 * equal confidences, the one whose antecedent more baskets hold, then the
 * first in the basket's order) into ITEMS, its confidence into *WEIGHT.
 */
static int
rules_explain(const MtdppModel *m, const int32 *ctx, int b, int c, int32 *items,
			  double *weight)
{
	bool	   *in = palloc0(sizeof(bool) * Max(m->n_items, 1));
	float		best = -1.0f,
				best_ante = 0.0f;
	int			n = 0;

	for (int s = 0; s < b; s++)
		in[ctx[s]] = true;
	for (int s = 0; s < b; s++)
	{
		int			a = ctx[s];
		int64		k = m->nbr_start[a],
					end = m->nbr_start[a + 1];

		while (k < end)
		{
			int64		first = k;
			bool		fires = true;
			float		n_ante;

			for (; k < end && m->nbr_weight[k] < 0.0f; k++)
				fires &= in[m->nbr_index[k]];
			if (k == end)
				break;
			n_ante = k > first ? -m->nbr_weight[first] : (float) m->popularity[a];
			if (fires && m->nbr_index[k] == c &&
				(m->nbr_weight[k] > best || (m->nbr_weight[k] == best && n_ante > best_ante)))
			{
				best = m->nbr_weight[k];
				best_ante = n_ante;
				n = 0;
				items[n++] = a;
				for (int64 t = first; t < k; t++)
					items[n++] = m->nbr_index[t];
			}
			k++;
		}
	}
	*weight = best;
	pfree(in);
	return n;
}

/*
 * mtdpp_similar: the confidence of the rule {ITEM} -> c, for each c it
 * reaches (the rules of ITEM's list with no other antecedent item); the
 * items no such rule reaches have no measure.
 */
static void
rules_similar(const MtdppModel *m, int item, double *sim, int8 *tier)
{
	int64		k,
				end;

	for (int i = 0; i < m->n_items; i++)
	{
		sim[i] = 0.0;
		tier[i] = MTDPP_SIMILAR_NONE;
	}
	if (m->nbr_start == NULL)
		return;
	k = m->nbr_start[item];
	end = m->nbr_start[item + 1];
	while (k < end)
	{
		int64		first = k;

		for (; k < end && m->nbr_weight[k] < 0.0f; k++)
			;
		if (k == end)
			break;
		if (k == first)
		{
			sim[m->nbr_index[k]] = m->nbr_weight[k];
			tier[m->nbr_index[k]] = 1;
		}
		k++;
	}
}

/* The search: the rules of the baskets outside the slice, and the settings to try. */
typedef struct RulesSearch
{
	MtdppValidation *v;
	MtdppModel *m;
	MtdppRuleSet set;
	int			n_baskets;		/* outside the slice */
	double		supports[16];	/* descending; the last is the floor mined */
	int			n_supports;
	double		confidences[lengthof(confidences)];
	int			n_confidences;
	int			antes[MTDPP_MAX_ANTECEDENT];
	int			n_antes;
	double		criterion[16][lengthof(confidences)][MTDPP_MAX_ANTECEDENT]; /* 0: not tried */
	bool		verbose;
	Size		beside;			/* held beside the mining: every basket, not only the rest */
} RulesSearch;

/* the criterion of setting AT (indices into the three grids) */
static double
rules_try(RulesSearch *s, const int *at)
{
	MtdppMetrics mm;
	instr_time	start;
	double		sup = s->supports[at[0]],
				conf = s->confidences[at[1]];
	int			ante = s->antes[at[2]];

	if (s->criterion[at[0]][at[1]][at[2]] != 0.0)
		return s->criterion[at[0]][at[1]][at[2]];
	INSTR_TIME_SET_CURRENT(start);
	rules_lists(&s->set, s->m, support_count(sup, s->n_baskets), conf, ante);
	mtdpp_validation_measure(s->v, s->m, &mm);
	if (s->verbose)
		ereport(NOTICE,
				(errmsg("min_support %g, min_confidence %g, max_antecedent %d: " INT64_FORMAT " list entries, validation MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f on %d baskets (%.1f s)",
						sup, conf, ante, s->m->nbr_start[s->m->n_items],
						mm.mpr, mm.p5, mm.p10, mm.p20, mm.n, mtdpp_seconds_since(start))));
	/* a criterion is a sum of percentages, 0 only when nothing ranks: then 1e-9 */
	s->criterion[at[0]][at[1]][at[2]] = Max(mm.mpr + mm.p5 + mm.p10 + mm.p20, 1e-9);
	return s->criterion[at[0]][at[1]][at[2]];
}

/*
 * The supports to try (P's if given, else 1%, 0.5%, 0.2%, 0.1%, ... while
 * at least RULES_MIN_COUNT baskets), the rules of REST mined at the lowest
 * that fits (dropping the lowest while the mining would not).
 */
static void
rules_mine_floor(RulesSearch *s, const MtdppBaskets *rest, const MtdppParams *p)
{
	const MtdppRulesParams *rp = mtdpp_rules_params(p);
	static const double steps[] = {1.0, 0.5, 0.2};
	int			n = 0;
	MtdppRuleSet cut = {0};		/* the last setting given up, if any */
	double		cut_support = 0.0;
	int			cut_ante = 0;

	if (rp->min_support > 0.0)
		s->supports[n++] = rp->min_support;
	for (int t = 0; n < lengthof(s->supports) && rp->min_support <= 0.0; t++)
	{
		double		sup = RULES_MAX_SUPPORT * steps[t % 3] / pow(10.0, t / 3);

		if (sup * rest->n_baskets < RULES_MIN_COUNT - 1e-9)
			break;
		s->supports[n++] = sup;
	}
	/* and the fewest baskets a rule is counted in */
	if (rp->min_support <= 0.0 && n < lengthof(s->supports) &&
		(n == 0 || support_count(s->supports[n - 1], rest->n_baskets) > RULES_MIN_COUNT))
		s->supports[n++] = (double) RULES_MIN_COUNT / Max(rest->n_baskets, RULES_MIN_COUNT);
	/*
	 * Of the lowest support, the longest antecedents that fit: coverage
	 * first.  Where not even the grid's highest support fits with single
	 * items (dense baskets), a higher one, doubled up to every basket.
	 */
	for (s->n_supports = n;;)
	{
		double		floor = s->supports[s->n_supports - 1];
		int			longest = s->n_antes;

		for (; s->n_antes > 0; s->n_antes--)
		{
			instr_time	start;

			INSTR_TIME_SET_CURRENT(start);
			if (mtdpp_mine_rules(rest, support_count(floor, rest->n_baskets),
								 s->antes[s->n_antes - 1],
								 s->n_supports == 1 && s->n_antes == 1 &&
								 (floor >= 1.0 || rp->min_support > 0.0), s->beside, &s->set))
				break;
			cut = s->set;
			cut_support = floor;
			cut_ante = s->antes[s->n_antes - 1];
			if (s->verbose)
				ereport(NOTICE,
						(errmsg("rules at min_support %g, max_antecedent %d stopped at %s, at %zu kB (%.1f s)",
								floor, cut_ante, cut.over_what, cut.over_bytes / 1024,
								mtdpp_seconds_since(start))));
		}
		if (s->n_antes > 0)
			break;
		s->n_antes = longest;
		if (s->n_supports > 1)
			s->n_supports--;
		else
			s->supports[0] = Min(floor * 2.0, 1.0);
	}
	if (cut.over_what)
		ereport(NOTICE,
				(errmsg("association rules: the search starts from min_support %g and max_antecedent %d, where the mining fits",
						s->supports[s->n_supports - 1], s->antes[s->n_antes - 1]),
				 errdetail("At min_support %g and max_antecedent %d it stopped at %s, at %zu kB in use or asked for (maintenance_work_mem is %d kB).",
						   cut_support, cut_ante, cut.over_what, cut.over_bytes / 1024,
						   maintenance_work_mem)));
	pg_qsort(s->set.rules, s->set.n, sizeof(MtdppRule), cmp_rule);
}

/*
 * The thresholds not given in P chosen on a validation slice of DATA, one
 * at a time over its grid, twice round; without a slice (too few baskets),
 * P unchanged.
 */
static void
rules_choose(MtdppBaskets *data, MtdppParams *p)
{
	MtdppRulesParams *rp = mtdpp_rules_params(p);
	MtdppValidation v;
	pg_prng_state rng;
	RulesSearch s = {0};
	MtdppBaskets *rest;
	int			at[3],
				sizes[3];
	double		best;

	pg_prng_seed(&rng, (uint64) p->seed);
	mtdpp_validation_carve(&v, data, p, &rng);
	if (v.n == 0)
		return;
	rest = mtdpp_baskets_without(data, v.is_val);
	s.v = &v;
	s.verbose = p->verbose;
	s.n_baskets = rest->n_baskets;
	s.m = mtdpp_counts_model(rest, p);
	s.beside = mtdpp_baskets_bytes(data);
	if (rp->min_confidence >= 0.0)
		s.confidences[s.n_confidences++] = rp->min_confidence;
	for (int t = 0; t < lengthof(confidences) && rp->min_confidence < 0.0; t++)
		s.confidences[s.n_confidences++] = confidences[t];
	for (int t = 1; t <= MTDPP_MAX_ANTECEDENT; t++)
		if (rp->max_antecedent <= 0 || rp->max_antecedent == t)
			s.antes[s.n_antes++] = t;
	rules_mine_floor(&s, rest, p);

	/* from the lowest support, every confidence, the longest antecedents */
	at[0] = s.n_supports - 1;
	at[1] = 0;
	at[2] = s.n_antes - 1;
	sizes[0] = s.n_supports;
	sizes[1] = s.n_confidences;
	sizes[2] = s.n_antes;
	best = rules_try(&s, at);
	for (int round = 0; round < 2; round++)
		for (int axis = 0; axis < 3; axis++)
		{
			int			from = at[axis];

			for (int t = 0; t < sizes[axis]; t++)
			{
				int			trial[3] = {at[0], at[1], at[2]};
				double		crit;

				if (t == from)
					continue;
				trial[axis] = t;
				crit = rules_try(&s, trial);
				if (crit > best)
				{
					best = crit;
					at[axis] = t;
				}
			}
		}
	rp->min_support = s.supports[at[0]];
	rp->min_confidence = s.confidences[at[1]];
	rp->max_antecedent = s.antes[at[2]];
	if (p->verbose)
		ereport(NOTICE,
				(errmsg("chose min_support %g, min_confidence %g, max_antecedent %d on %d validation baskets; mining all %d training baskets",
						rp->min_support, rp->min_confidence, rp->max_antecedent, v.n, data->n_baskets)));
	pfree(s.set.rules);
	pfree(rest->items);
}

static MtdppModel *
rules_fit(MtdppBaskets *data, const MtdppParams *given)
{
	MtdppParams p = *given;
	MtdppRulesParams *rp = mtdpp_rules_params(&p);
	MtdppModel *m;
	MtdppRuleSet set;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	if (rp->min_support < 0.0 || rp->min_confidence < 0.0 || rp->max_antecedent <= 0)
		rules_choose(data, &p);
	if (rp->min_support < 0.0)
		rp->min_support = RULES_PAPER_SUPPORT;
	if (rp->min_confidence < 0.0)
		rp->min_confidence = RULES_PAPER_CONFIDENCE;
	if (rp->max_antecedent <= 0)
		rp->max_antecedent = MTDPP_MAX_ANTECEDENT;

	/*
	 * A support the caller did not give, chosen on fewer baskets or the
	 * paper's, may not fit for all: the next higher one then, up to every
	 * basket, so that dense baskets train on what fits rather than fail.
	 */
	while (!mtdpp_mine_rules(data, support_count(rp->min_support, data->n_baskets),
							 rp->max_antecedent,
							 mtdpp_param_given(given, "min_support") || rp->min_support >= 1.0, 0, &set))
	{
		ereport(NOTICE,
				(errmsg("association rules of all %d training baskets at min_support %g stopped at %s, at %zu kB; mining at min_support %g",
						data->n_baskets, rp->min_support, set.over_what, set.over_bytes / 1024,
						Min(rp->min_support * 2.0, 1.0))));
		rp->min_support = Min(rp->min_support * 2.0, 1.0);
	}
	pg_qsort(set.rules, set.n, sizeof(MtdppRule), cmp_rule);
	m = mtdpp_counts_model(data, &p);
	rules_lists(&set, m, support_count(rp->min_support, data->n_baskets), rp->min_confidence,
				rp->max_antecedent);
	m->hyperparams = mtdpp_params_to_json(&p);
	m->seconds = mtdpp_seconds_since(start);
	if (p.verbose)
		ereport(NOTICE,
				(errmsg("mined " INT64_FORMAT " frequent itemsets and " INT64_FORMAT " undominated rules; the thresholds keep " INT64_FORMAT " list entries; %.1f s",
						set.itemsets, set.n, m->nbr_start[m->n_items], m->seconds)));
	pfree(set.rules);
	return m;
}

#define OWN(field) MTDPP_KIND_FIELD(MtdppRulesParams, field)

/* its own hyperparameters (params.c lists them among the others) */
static const MtdppParamKey rules_keys[] = {
	{"min_support", MTDPP_PARAM_REAL, OWN(min_support), -1, 1e-9, 1.0, NULL,
		"a number in (0, 1], or null (chosen on validation baskets)", true,
	"rules: share of the training baskets holding a rule's antecedent and consequent, at least; null: chosen on validation baskets"},
	{"min_confidence", MTDPP_PARAM_REAL, OWN(min_confidence), -1, 0.0, 1.0, NULL,
		"a number in [0, 1], or null (chosen on validation baskets)", true,
	"rules: share of the baskets holding a rule's antecedent that hold its consequent, at least; null: chosen on validation baskets"},
	{"max_antecedent", MTDPP_PARAM_INT, OWN(max_antecedent), -1, 1, 3, NULL,
		"an integer from 1 to 3, or null (chosen on validation baskets)", true,
	"rules: items of a rule's antecedent, at most; null: chosen on validation baskets"},
	{NULL}
};

#undef OWN

/* the shared keys it takes */
static const char *const rules_keys_taken[] = {MTDPP_VALIDATION_KEYS, NULL};

static const MtdppKindDefault rules_defaults[] = {
	/* no factors */
	{"rank", 0},
	/* scoring reads the basket's lists: validation ranks against the whole catalog */
	{"validation_candidates", 0},
	{"validation_baskets", 2000},
	{NULL, 0}
};

static void
bad_rule(const MtdppModel *m, const MtdppRefusal *o, int i, const char *what)
{
	ereport(ERROR,
			(errcode(o->sqlstate),
			 errmsg("a rule of item %d %s", m->item_ids[i], what),
			 errdetail("Each rule in an item's list is its other antecedent items, ascending after the item, of weight minus the baskets holding the antecedent, then its consequent, of weight its confidence."),
			 errhint("%s", o->hint)));
}

/*
 * Rules (rules.c): each item's list a run of rules, each at most
 * MTDPP_MAX_ANTECEDENT - 1 antecedent items after the owner, ascending, of
 * weight -n(A) with n(A) a count of baskets, then a consequent outside the
 * antecedent of confidence in (0, 1].
 */
static void
rules_validate(const MtdppModel *m, const MtdppRefusal *o)
{
	if (m->nbr_start == NULL && m->n_items > 0)
		ereport(ERROR,
				(errcode(o->sqlstate),
				 errmsg("the %s model has no lists of rules", mtdpp_kind_name(m->kind)),
				 errhint("%s", o->hint)));
	for (int i = 0; i < m->n_items && m->nbr_start != NULL; i++)
	{
		int			markers = 0;
		int32		last = i;
		float4		n_ante = 0.0f;

		for (int64 k = m->nbr_start[i]; k < m->nbr_start[i + 1]; k++)
		{
			int32		c = m->nbr_index[k];
			float4		w = m->nbr_weight[k];

			if (c < 0 || c >= m->n_items)
				bad_rule(m, o, i, "names an item not of the model");
			if (w < 0.0f)
			{
				if (++markers > 2 || c <= last || !(-w >= 1.0f && -w <= (float4) m->n_baskets) ||
					(markers > 1 && w != n_ante))
					bad_rule(m, o, i, "has a malformed antecedent");
				last = c;
				n_ante = w;
				continue;
			}
			if (!(w > 0.0f && w <= 1.0f))
				bad_rule(m, o, i, "has a confidence outside (0, 1]");
			for (int64 t = k - markers; t <= k; t++)
				if (c == i || (t < k && m->nbr_index[t] == c))
					bad_rule(m, o, i, "concludes an item of its antecedent");
			markers = 0;
			last = i;
		}
		if (markers > 0)
			bad_rule(m, o, i, "has an antecedent without a consequent");
	}
}

/* what it chooses on its validation slice: the thresholds not given */
static const char *
rules_chooses(const MtdppParams *p, const char **instead)
{
	const MtdppRulesParams *r = mtdpp_rules_params(p);

	*instead = ", or give \"min_support\", \"min_confidence\" and \"max_antecedent\" to train without a validation slice";
	if (r->min_support < 0.0 || r->min_confidence < 0.0 || r->max_antecedent < 0)
		return "chooses the thresholds not given on the validation baskets";
	return NULL;
}

const MtdppKindRoutine mtdpp_kind_rules = {
	.kind = MTDPP_RULES,
	.name = "rules",
	.own_keys = rules_keys,
	.keys = rules_keys_taken,
	.defaults = rules_defaults,
	.neighbors = true,
	.signed_weights = true,
	.fit = rules_fit,
	.chooses = rules_chooses,
	.validate = rules_validate,
	.score_all = rules_score_all,
	.explain = rules_explain,
	.similar = rules_similar,
};
