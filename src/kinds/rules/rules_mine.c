/*
 * kinds/rules/rules_mine.c
 *		Association rules mined from the training baskets (Agrawal and
 *		Srikant's Apriori, as the associative classifier CBA of Liu, Hsu and
 *		Ma, KDD 1998, mines them), antecedents of up to three items.
 *
 * An itemset is frequent when at least min_count training baskets hold all
 * its items.  Levels are counted in turn, each only over what the one
 * before left, since a superset of an infrequent itemset is infrequent:
 *
 *   1. items: their popularity, which every model holds;
 *   2. pairs: the co-occurrence lists of item-kNN (itemknn.c), which
 *      count each item's partners a range of items at a time; the frequent
 *      ones are kept, per item, in ascending order;
 *   3. triples whose three pairs are frequent, and
 *   4. quadruples whose four triples are frequent, each counted in a hash
 *      table by one pass over the baskets, a basket's candidates found by
 *      walking its items with every prefix frequent.  The candidates that
 *      prove infrequent stay in the table (a hash table keeps the memory of
 *      what it drops) and are skipped by their count.
 *
 * Every frequent itemset I gives a rule I - {c} -> c for each of its items
 * c, of confidence n(I) / n(I - {c}).  A rule is kept only when its
 * confidence exceeds that of every rule from a proper subset of its
 * antecedent to the same consequent: the subset fires whenever the rule does
 * (a completion scores a candidate by its best rule that fires), and has at
 * least its support, so no threshold keeps the rule without the subset.
 *
 * Memory is checked as it grows (the pair lists, the hash tables, the
 * rules) against maintenance_work_mem, counted with the baskets beside
 * them (and the pair pass's scratch while it runs).  The caller either refuses the
 * thresholds given (REFUSE) or, choosing them, tries a higher floor.  The
 * limits and a cancel are checked within a basket's counts, every
 * TICK_MASK + 1 candidates: one basket of a few thousand items holds
 * billions of candidate triples, so checking between baskets only would let
 * one basket run on for minutes past them.  Beside maintenance_work_mem a
 * basket's frequent pairs take a bit matrix of at most PAIR_BITS_BYTES
 * (longer baskets look their pairs up instead), and the hash tables' last
 * TICK_MASK + 1 entries at most before the check catches them.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/hsearch.h"

#include "kinds/cooccurrence.h"
#include "kinds/rules/rules.h"
#include "model/baskets.h"
#include "model/kinds.h"

/* bytes a hash entry of an itemset takes, with dynahash's header and buckets */
#define ITEMSET_BYTES	64
/*
 * A search (not REFUSE) gives up a floor after this much work: a candidate
 * visited counts 1, a hash table operation HASH_STEPS (about what it costs
 * beside a visit).  A few seconds on one core.
 */
#define MINE_STEPS		50000000.0
#define HASH_STEPS		10
/* candidates visited between checks of the limits and of a cancel */
#define TICK_MASK		0xffff
/* a basket's frequent pairs as a bit matrix up to this size (5,792 items) */
#define PAIR_BITS_BYTES	(4 * 1024 * 1024)

typedef struct ItemsetKey
{
	int32		v[4];			/* ascending, -1 past the last */
} ItemsetKey;

typedef struct ItemsetEntry
{
	ItemsetKey	key;
	int32		count;
} ItemsetEntry;

typedef struct Miner
{
	const MtdppBaskets *data;
	int			min_count;
	bool		refuse;
	bool		over;			/* a limit was passed (only when not REFUSE) */
	Size		limit;			/* maintenance_work_mem, in bytes */
	Size		held;			/* the baskets' and, in the pair pass, its scratch */
	Size		used;			/* pair lists and rules */
	double		steps;
	uint64		ticks;			/* candidates visited, for stopped() */
	const char *over_what;		/* the limit passed, when over */
	Size		over_bytes;		/* the memory asked for then, if that limit */
	/* the frequent pairs, each item's partners ascending (both directions) */
	int64	   *pair_start;
	int32	   *pair_item;
	int32	   *pair_count;
	int64		pair_capacity;
	HTAB	   *triples;
	HTAB	   *quads;
	/* a basket's items (frequent in pairs), and which pairs of them are frequent */
	int32	   *basket;
	uint8	   *pf;				/* bit x * len + y; NULL: look them up */
	int			basket_capacity;
	MtdppRuleSet *out;
	int64		rule_capacity;
	int64		entries;		/* the rules' entries in a model's lists */
	int64		room;			/* the entries a model value has room for */
} Miner;

static void
too_much(Miner *mn, const char *what, Size need)
{
	if (!mn->refuse)
	{
		mn->over = true;
		mn->over_what = "maintenance_work_mem";
		mn->over_bytes = need;
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("association rules at a support of %d baskets need more than %zu kB for %s, more than maintenance_work_mem (%d kB)",
					mn->min_count, need / 1024, what, maintenance_work_mem),
			 errdetail("Frequent pairs take 8 bytes each, candidate itemsets about %d, rules %zu, beside the %zu kB the baskets and the counting hold.",
					   ITEMSET_BYTES, sizeof(MtdppRule), mn->held / 1024),
			 errhint("Raise min_support or lower max_antecedent, or raise maintenance_work_mem for this session; without min_support, training raises it until the rules fit.")));
}

/* whether MORE bytes fit beside what is in use */
static bool
fits(Miner *mn, Size more, const char *what)
{
	Size		hashed = 0;

	if (mn->triples)
		hashed += (Size) hash_get_num_entries(mn->triples) * ITEMSET_BYTES;
	if (mn->quads)
		hashed += (Size) hash_get_num_entries(mn->quads) * ITEMSET_BYTES;
	if (mn->held + mn->used + hashed + more <= mn->limit)
		return true;
	too_much(mn, what, mn->held + mn->used + hashed + more);
	return false;
}

/* item I's frequent partners into the pair lists */
static void
visit_pairs(int i, const int32 *seen, const int32 *count, int d, void *arg)
{
	Miner	   *mn = arg;
	int64		kept = mn->pair_start[i];

	if (mn->over)
	{
		mn->pair_start[i + 1] = kept;
		return;
	}
	for (int t = 0; t < d; t++)
	{
		if (count[seen[t]] < mn->min_count)
			continue;
		if (kept == mn->pair_capacity)
		{
			int64		cap = mn->pair_capacity * 2;

			if (!fits(mn, (Size) (cap - mn->pair_capacity) * 2 * sizeof(int32), "frequent pairs"))
				break;
			mn->used += (Size) (cap - mn->pair_capacity) * 2 * sizeof(int32);
			mn->pair_item = repalloc_huge(mn->pair_item, sizeof(int32) * cap);
			mn->pair_count = repalloc_huge(mn->pair_count, sizeof(int32) * cap);
			mn->pair_capacity = cap;
		}
		mn->pair_item[kept] = seen[t];
		mn->pair_count[kept++] = count[seen[t]];
	}
	mn->pair_start[i + 1] = kept;
}

/* baskets holding the pair (A, B), 0 if it is not frequent */
static int32
pair_count(const Miner *mn, int32 a, int32 b)
{
	int64		lo = mn->pair_start[a],
				hi = mn->pair_start[a + 1] - 1;

	while (lo <= hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (mn->pair_item[mid] == b)
			return mn->pair_count[mid];
		if (mn->pair_item[mid] < b)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

static HTAB *
itemset_table(const char *name)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(ItemsetKey);
	ctl.entrysize = sizeof(ItemsetEntry);
	ctl.hcxt = CurrentMemoryContext;
	return hash_create(name, 4096, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* the count of itemset V (ascending, LEN items) in TABLE, 0 if absent */
static pg_noinline int32
lookup(HTAB *table, const int32 *v, int len)
{
	ItemsetKey	key;
	ItemsetEntry *e;

	memset(&key, 0xff, sizeof(key));
	memcpy(key.v, v, sizeof(int32) * len);
	e = hash_search(table, &key, HASH_FIND, NULL);
	return e ? e->count : 0;
}

static void
bump(Miner *mn, HTAB *table, const int32 *v, int len)
{
	ItemsetKey	key;
	ItemsetEntry *e;
	bool		found;

	memset(&key, 0xff, sizeof(key));
	memcpy(key.v, v, sizeof(int32) * len);
	mn->steps += HASH_STEPS;
	e = hash_search(table, &key, HASH_ENTER, &found);
	if (!found)
	{
		e->count = 0;
		/* checked every 4096 new itemsets */
		if ((hash_get_num_entries(table) & 0xfff) == 0)
			(void) fits(mn, 0, "candidate itemsets");
	}
	e->count++;
}

/*
 * Basket B's distinct items that have a frequent pair (and, for the
 * quadruples, NEED_TRIPLE: that lie in a frequent triple, flagged in
 * IN_TRIPLE), ascending, into mn->basket, and which pairs of them are
 * frequent into mn->pf; how many.
 */
static int
basket_items(Miner *mn, int b, const bool *in_triple)
{
	const MtdppBaskets *d = mn->data;
	int			len = 0;

	for (int64 k = d->start[b]; k < d->start[b + 1]; k++)
	{
		int32		i = d->items[k];

		if (mn->pair_start[i + 1] == mn->pair_start[i] || (in_triple && !in_triple[i]))
			continue;
		if (len == mn->basket_capacity)
		{
			mn->basket_capacity *= 2;
			mn->basket = repalloc(mn->basket, sizeof(int32) * mn->basket_capacity);
		}
		mn->basket[len++] = i;
	}
	pg_qsort(mn->basket, len, sizeof(int32), mtdpp_cmp_int32);
	{
		int			u = 0;

		for (int k = 0; k < len; k++)
			if (u == 0 || mn->basket[k] != mn->basket[u - 1])
				mn->basket[u++] = mn->basket[k];
		len = u;
	}
	if (mn->pf)
		pfree(mn->pf);
	mn->pf = NULL;
	if ((Size) len * len / 8 + 1 <= PAIR_BITS_BYTES)
	{
		mn->pf = palloc0((Size) len * len / 8 + 1);
		for (int x = 0; x < len; x++)
		{
			for (int y = x + 1; y < len; y++)
			{
				Size		bit = (Size) x * len + y;

				if (pair_count(mn, mn->basket[x], mn->basket[y]) > 0)
					mn->pf[bit >> 3] |= 1 << (bit & 7);
			}
			if ((x & 0xff) == 0)
				CHECK_FOR_INTERRUPTS();
		}
	}
	return len;
}

/* whether the pair of the basket's X-th and Y-th items (X < Y, LEN items) is frequent */
static inline bool
pf_at(const Miner *mn, int len, int x, int y)
{
	Size		bit = (Size) x * len + y;

	if (mn->pf)
		return (mn->pf[bit >> 3] >> (bit & 7)) & 1;
	return pair_count(mn, mn->basket[x], mn->basket[y]) > 0;
}

/*
 * At each candidate visited: every TICK_MASK + 1, a cancel, and the work
 * limit of a search; true once a limit is passed (the memory limit is
 * checked as the tables grow), when the count stops where it is.
 */
static inline bool
stopped(Miner *mn)
{
	if ((++mn->ticks & TICK_MASK) == 0)
	{
		CHECK_FOR_INTERRUPTS();
		if (!mn->refuse && mn->steps > MINE_STEPS && !mn->over)
		{
			mn->over = true;
			mn->over_what = "the work limit";
		}
	}
	return mn->over;
}

/* triples of basket B whose three pairs are frequent */
static void
count_triples(Miner *mn, int b)
{
	int			len = basket_items(mn, b, NULL);
	int32		v[3];

	for (int x = 0; x < len; x++)
		for (int y = x + 1; y < len; y++)
		{
			if (stopped(mn))
				return;
			if (!pf_at(mn, len, x, y))
				continue;
			for (int z = y + 1; z < len; z++)
			{
				mn->steps++;
				if (stopped(mn))
					return;
				if (!pf_at(mn, len, x, z) || !pf_at(mn, len, y, z))
					continue;
				v[0] = mn->basket[x];
				v[1] = mn->basket[y];
				v[2] = mn->basket[z];
				bump(mn, mn->triples, v, 3);
			}
		}
}

/* whether the triple (A, B, C), ascending, is infrequent */
static inline bool
infrequent3(const Miner *mn, int32 a, int32 b, int32 c)
{
	int32		t[3] = {a, b, c};

	return lookup(mn->triples, t, 3) < mn->min_count;
}

/* quadruples of basket B whose four triples are frequent */
static void
count_quads(Miner *mn, int b, const bool *in_triple)
{
	int			len = basket_items(mn, b, in_triple);
	const int32 *it = mn->basket;
	int32		v[4];

	for (int x = 0; x < len; x++)
		for (int y = x + 1; y < len; y++)
		{
			if (stopped(mn))
				return;
			if (!pf_at(mn, len, x, y))
				continue;
			for (int z = y + 1; z < len; z++)
			{
				mn->steps++;
				if (stopped(mn))
					return;
				if (!pf_at(mn, len, x, z) || !pf_at(mn, len, y, z))
					continue;
				mn->steps += HASH_STEPS;
				if (infrequent3(mn, it[x], it[y], it[z]))
					continue;
				for (int w = z + 1; w < len; w++)
				{
					mn->steps++;
					if (stopped(mn))
						return;
					if (!pf_at(mn, len, x, w) || !pf_at(mn, len, y, w) ||
						!pf_at(mn, len, z, w))
						continue;
					mn->steps += 3 * HASH_STEPS;
					if (infrequent3(mn, it[x], it[y], it[w]) ||
						infrequent3(mn, it[x], it[z], it[w]) ||
						infrequent3(mn, it[y], it[z], it[w]))
						continue;
					v[0] = it[x];
					v[1] = it[y];
					v[2] = it[z];
					v[3] = it[w];
					bump(mn, mn->quads, v, 4);
				}
			}
		}
}

/* one pass over the baskets counting itemsets of SIZE items; false if a limit was passed */
static bool
count_level(Miner *mn, int size)
{
	const MtdppBaskets *d = mn->data;
	bool	   *in_triple = NULL;

	if (size == 4)
	{
		HASH_SEQ_STATUS seq;
		ItemsetEntry *e;

		in_triple = palloc0(sizeof(bool) * Max(d->n_items, 1));
		hash_seq_init(&seq, mn->triples);
		while ((e = hash_seq_search(&seq)) != NULL)
			for (int k = 0; k < 3 && e->count >= mn->min_count; k++)
				in_triple[e->key.v[k]] = true;
	}
	for (int b = 0; b < d->n_baskets && !mn->over; b++)
	{
		if (size == 3)
			count_triples(mn, b);
		else
			count_quads(mn, b, in_triple);
		if ((b & 0xff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!mn->refuse && mn->steps > MINE_STEPS && !mn->over)
		{
			mn->over = true;
			mn->over_what = "the work limit";
		}
	}
	if (in_triple)
		pfree(in_triple);
	return !mn->over;
}

/* baskets holding the itemset V (ascending, LEN items) */
static int32
itemset_count(const Miner *mn, const int32 *v, int len)
{
	switch (len)
	{
		case 1:
			return mn->data->popularity[v[0]];
		case 2:
			return pair_count(mn, v[0], v[1]);
		case 3:
			return lookup(mn->triples, v, 3);
		default:
			return lookup(mn->quads, v, 4);
	}
}

/* V (LEN items, ascending) with C inserted in its place, into OUT */
static int
with_item(const int32 *v, int len, int32 c, int32 *out)
{
	int			n = 0;
	bool		placed = false;

	for (int k = 0; k < len; k++)
	{
		if (!placed && c < v[k])
		{
			out[n++] = c;
			placed = true;
		}
		out[n++] = v[k];
	}
	if (!placed)
		out[n++] = c;
	return n;
}

/* whether a rule from a proper subset of A (LEN items) to C is at least as confident as CONF */
static bool
dominated(const Miner *mn, const int32 *a, int len, int32 c, double conf)
{
	for (int mask = 1; mask < (1 << len) - 1; mask++)
	{
		int32		s[MTDPP_MAX_ANTECEDENT],
					sc[MTDPP_MAX_ANTECEDENT + 1];
		int			n = 0;

		for (int k = 0; k < len; k++)
			if (mask & (1 << k))
				s[n++] = a[k];
		if ((double) itemset_count(mn, sc, with_item(s, n, c, sc)) / itemset_count(mn, s, n) >= conf)
			return true;
	}
	return false;
}

/* the rules of the frequent itemset V (LEN items) into mn->out, but the dominated ones */
static bool
itemset_rules(Miner *mn, const int32 *v, int len, int32 count)
{
	MtdppRuleSet *out = mn->out;

	for (int k = 0; k < len; k++)
	{
		MtdppRule  *r;
		int32		a[MTDPP_MAX_ANTECEDENT];
		int			n = 0;
		int32		n_ante;

		for (int t = 0; t < len; t++)
			if (t != k)
				a[n++] = v[t];
		n_ante = itemset_count(mn, a, n);
		if (n > 1 && dominated(mn, a, n, v[k], (double) count / n_ante))
			continue;
		/* a rule takes its antecedent's length in list entries */
		mn->entries += n;
		if (mn->entries > mn->room)
		{
			if (mn->refuse)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("association rules at a support of %d baskets take more than " INT64_FORMAT " list entries, more than a model holds within maintenance_work_mem (%d kB)",
								mn->min_count, mn->room, maintenance_work_mem),
						 errdetail("A model may take half of maintenance_work_mem beside the baskets, storing it the other half; returned by mtdpp_fit as a value, at most 1 GB."),
						 errhint("Raise min_support or lower max_antecedent, or raise maintenance_work_mem for this session; without min_support, training raises it until the rules fit.")));
			mn->over = true;
			mn->over_what = "the room of a model value";
			return false;
		}
		if (out->n == mn->rule_capacity)
		{
			int64		cap = mn->rule_capacity * 2;

			if (!fits(mn, (Size) (cap - mn->rule_capacity) * sizeof(MtdppRule), "rules"))
				return false;
			mn->used += (Size) (cap - mn->rule_capacity) * sizeof(MtdppRule);
			out->rules = repalloc_huge(out->rules, sizeof(MtdppRule) * cap);
			mn->rule_capacity = cap;
		}
		r = &out->rules[out->n++];
		memset(r->ante, 0xff, sizeof(r->ante));
		memcpy(r->ante, a, sizeof(int32) * n);
		r->cons = v[k];
		r->n_rule = count;
		r->n_ante = n_ante;
	}
	return true;
}

/* the rules of every itemset of TABLE (SIZE items) */
static bool
table_rules(Miner *mn, HTAB *table, int size)
{
	HASH_SEQ_STATUS seq;
	ItemsetEntry *e;

	hash_seq_init(&seq, table);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->count < mn->min_count)
			continue;
		if ((++mn->out->itemsets & 0xfff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!itemset_rules(mn, e->key.v, size, e->count))
		{
			hash_seq_term(&seq);
			return false;
		}
	}
	return true;
}

/* every rule of the frequent itemsets */
static bool
generate_rules(Miner *mn, int max_antecedent)
{
	int			n = mn->data->n_items;

	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		for (int64 k = mn->pair_start[i]; k < mn->pair_start[i + 1]; k++)
		{
			int32		j = mn->pair_item[k],
						v[2];

			if (j < i)
				continue;
			v[0] = i;
			v[1] = j;
			mn->out->itemsets++;
			if (!itemset_rules(mn, v, 2, mn->pair_count[k]))
				return false;
		}
	}
	if (max_antecedent >= 2 && !table_rules(mn, mn->triples, 3))
		return false;
	return max_antecedent < 3 || table_rules(mn, mn->quads, 4);
}

/*
 * Mines the rules of DATA held by at least MIN_COUNT baskets, antecedents of
 * up to MAX_ANTECEDENT items, into OUT.  Beyond maintenance_work_mem: an
 * error if REFUSE, else false (with nothing kept but the limit passed and
 * the memory in use then, in OUT), as also when a search's candidate visits
 * pass MINE_STEPS.  Allocates in the current context.
 */
bool
mtdpp_mine_rules(const MtdppBaskets *data, int min_count, int max_antecedent,
				 bool refuse, Size beside, MtdppRuleSet *out)
{
	Miner		mn = {0};
	Size		scratch;
	Size		over_hashed;
	int64		pairs;
	bool		ok;
	/* the baskets (and BESIDE) are held throughout */
	Size		held = add_size(beside, mtdpp_baskets_bytes(data));
	Size		limit = (Size) maintenance_work_mem * 1024;

	memset(out, 0, sizeof(*out));
	out->min_count = min_count;
	out->max_antecedent = max_antecedent;
	mn.data = data;
	mn.min_count = Max(min_count, 1);
	mn.refuse = refuse;
	mn.limit = limit;
	/* and the pair pass's own scratch while it runs */
	mn.held = add_size(held, mtdpp_visit_scratch_bound(data));
	mn.out = out;
	/* the lists are held twice at the end: in the model, and in its value or what storing it holds */
	mn.room = Min(mtdpp_neighbor_room(MTDPP_RULES, data->n_items, 0, 0),
				  (int64) ((limit > held ? limit - held : 0) / 2 / (sizeof(int32) + sizeof(float4))));
	mn.pair_capacity = 1024;
	mn.pair_start = mtdpp_alloc_huge(sizeof(int64) * (data->n_items + 1));
	mn.pair_item = mtdpp_alloc_huge(sizeof(int32) * mn.pair_capacity);
	mn.pair_count = mtdpp_alloc_huge(sizeof(int32) * mn.pair_capacity);
	mn.basket_capacity = 64;
	mn.basket = palloc(sizeof(int32) * mn.basket_capacity);
	mn.rule_capacity = 1024;
	out->rules = mtdpp_alloc_huge(sizeof(MtdppRule) * mn.rule_capacity);
	mn.used = sizeof(MtdppRule) * mn.rule_capacity +
		sizeof(int64) * (data->n_items + 1);

	mtdpp_visit_lists(data, visit_pairs, &mn, &scratch, &pairs);
	mn.held = held;
	ok = !mn.over;
	if (ok && max_antecedent >= 2)
	{
		mn.triples = itemset_table("mtdpp frequent triples");
		ok = count_level(&mn, 3);
	}
	if (ok && max_antecedent >= 3)
	{
		mn.quads = itemset_table("mtdpp frequent quadruples");
		ok = count_level(&mn, 4);
	}
	if (ok)
		ok = generate_rules(&mn, max_antecedent);
	over_hashed = (mn.triples ? (Size) hash_get_num_entries(mn.triples) * ITEMSET_BYTES : 0) +
		(mn.quads ? (Size) hash_get_num_entries(mn.quads) * ITEMSET_BYTES : 0);
	if (mn.triples)
		hash_destroy(mn.triples);
	if (mn.quads)
		hash_destroy(mn.quads);
	if (mn.pf)
		pfree(mn.pf);
	pfree(mn.basket);
	pfree(mn.pair_start);
	pfree(mn.pair_item);
	pfree(mn.pair_count);
	if (!ok)
	{
		pfree(out->rules);
		memset(out, 0, sizeof(*out));
		out->over_what = mn.over_what;
		out->over_bytes = Max(mn.over_bytes, mn.held + mn.used + over_hashed);
	}
	return ok;
}
