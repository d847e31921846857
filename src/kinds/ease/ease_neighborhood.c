/*
 * kinds/ease/ease_neighborhood.c
 *		EASE's weights at any catalog size: each item's regression solved on
 *		its co-occurrence neighbourhood rather than by inverting the whole
 *		items x items matrix.
 *
 * EASE's weights with the zero diagonal (Steck, WWW 2019) are, column by
 * column, a ridge regression: for each target item c,
 *
 *		B[., c] = argmin_w |x_c - X_{-c} w|^2 + lambda |w|^2,
 *		so (G_{-c,-c} + lambda I) B[-c, c] = G_{-c, c},	B[c][c] = 0,
 *
 * with G = X^T X (ease_exact.c inverts G + lambda I once for every c, n^3
 * operations and n^2 floats: 10 minutes and 1 GB at 16,000 items).  An
 * item that never met c has G[a][c] = 0 and acts on B[., c] only through
 * the items that did; here the regression of c is restricted to its
 * neighbourhood N(c) of at most NEIGHBORHOOD items: half of them those it
 * shares most baskets with, G[a][c] (the largest right-hand sides), the
 * rest those with the largest share of their baskets holding c,
 * cooc(a, c) / (f(a) + mean popularity) (the items whose weight to c the
 * ridge leaves largest, often rarer ones).  Each order alone misses
 * items the regression needs (the frequent partners, or the rare ones
 * whose weight is large); half of each keeps both, and a neighbourhood
 * twice as large costs four times as much for no gain:
 *
 *		(G_NN + lambda I) w = G_Nc,		B[a][c] = w_a for a in N(c),
 *
 * a system of at most NEIGHBORHOOD unknowns, factorised by Cholesky
 * (mtdpp_cholesky_upper, linalg.c), on two threads (below).  G_NN is read from each item's LISTED most frequent
 * companions: G[a][b] for two members is known when one is in the other's
 * list, and taken as 0 otherwise (a pair neither of whose lists holds the
 * other shares few baskets).  With
 * such entries dropped G_NN + lambda I may fall short of positive definite
 * at a small lambda; that item's system is then solved again with lambda
 * doubled, up to LAMBDA_RETRIES times, a regularisation of that regression
 * alone (the fit returns how many were).
 *
 * Each solved weight goes to the list of the item that gives it, B[a][.],
 * as ease.c's lists: each item keeps its cap largest positive
 * weights, in a bounded heap per item, so no list of all the weights is
 * ever held; equal weights keep the smaller item, as the exact fit does.
 *
 * Cost: the co-occurrence lists (mtdpp_visit_lists, as item-kNN), then per
 * lambda, for each item, its system from NEIGHBORHOOD lists of at most
 * LISTED entries and one Cholesky factorisation, NEIGHBORHOOD^3 / 3 flops:
 * linear in the catalog.  Memory: the lists (8 bytes an entry, at most
 * LISTED + NEIGHBORHOOD an item), one system, and the model's lists.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "kinds/cooccurrence.h"
#include "kinds/ease/ease_neighborhood.h"
#include "model/baskets.h"
#include "model/model.h"
#include "numeric/helper_thread.h"
#include "numeric/linalg.h"

/* most items an item's regression is solved on */
#define NEIGHBORHOOD	128
/* most entries of an item's list, where the systems read G[a][b] */
#define LISTED			1024
/* an item whose system is not positive definite: lambda doubled this often at most */
#define LAMBDA_RETRIES	30
/* items solved between two checks for interrupts; each thread's blocks of a round */
#define ROUND			2048
#define STRIDE			16

struct MtdppEaseNeighborhoods
{
	int			n;
	int64	   *start;			/* item i's list: [start[i], start[i + 1]) */
	int32	   *item;			/* in item order */
	int32	   *count;			/* baskets shared with i */
	const int32 *popularity;	/* baskets holding each item (G's diagonal) */
	int32	   *nb_item;		/* item i's neighbourhood, NEIGHBORHOOD a row */
	int32	   *nb_count;		/* and G[a][i] for each */
	int		   *nb_len;
	double		shrink;			/* the mean popularity */
	float	   *key;			/* scratch of the selection */
	char	   *mark;
	float	   *copy;
	int64		kept;
	int64		retried;		/* systems of the last fit solved at a larger lambda */
	MtdppListTap *tap;			/* NULL, or a visitor riding along the pass */
	Size		scratch;		/* what the pass holds */
	int64		pairs;
	Size		memory;			/* what the neighbourhoods hold */
};

/* bytes the neighbourhoods of D hold, besides the model's lists */
Size
mtdpp_ease_neighborhood_memory(const MtdppBaskets *d)
{
	Size		n = Max(d->n_items, 1);
	Size		k = Min(NEIGHBORHOOD, n);
	Size		s = mul_size(mul_size(n, Min(LISTED, n) + NEIGHBORHOOD), 2 * sizeof(int32));

	s = add_size(s, mul_size(n + 1, sizeof(int64)));
	/* the selection's scratch, two threads' systems and position maps, a round's solutions */
	s = add_size(s, mul_size(n, 2 * sizeof(float) + 2 * sizeof(int32) + sizeof(int32) + sizeof(int64)));
	s = add_size(s, mul_size(2 * (k * k + 2 * k), sizeof(double)));
	s = add_size(s, mul_size(Min(ROUND, n), NEIGHBORHOOD * sizeof(float) + 1));
	s = add_size(s, mul_size(2 * (n / 64 + 1), sizeof(uint64)));
	/* mtdpp_visit_lists' index of the baskets (4 bytes a line) and its counts */
	s = add_size(s, mul_size(Max(d->n_lines, 1), sizeof(int32)));
	s = add_size(s, mul_size(n, 3 * sizeof(int64)));
	return s;
}

/*
 * Of the D values KEY, which to keep so that at most LIMIT remain: those
 * above the returned threshold, and *TIES of those equal to it (the first).
 */
static float
cut_point(const float *key, float *copy, int d, int limit, int *ties)
{
	float		least;

	memcpy(copy, key, sizeof(float) * d);
	least = mtdpp_kth_largest(copy, d, limit);
	*ties = limit;
	for (int t = 0; t < d; t++)
		*ties -= key[t] > least;
	return least;
}

/*
 * Item I's lists, in item order: its LISTED most frequent companions, where
 * the systems read G, and its neighbourhood: its NEIGHBORHOOD / 2 most
 * frequent companions, and as many with the largest share of their baskets
 * holding I.
 */
static void
visit_neighborhood(int i, const int32 *seen, const int32 *count, int d, void *arg)
{
	MtdppEaseNeighborhoods *e = arg;
	float		least = 0.0f;
	int			ties = 0,
				got = 0;
	bool		cut = d > LISTED;

	if (e->tap)
	{
		if (i == 0)
		{
			/* the pass's figures are written before its first item */
			*e->tap->scratch_bytes = e->scratch + e->memory;
			*e->tap->pairs = e->pairs;
		}
		e->tap->visit(i, seen, count, d, e->tap->arg);
	}
	e->start[i] = e->kept;
	for (int t = 0; t < d; t++)
		e->key[t] = (float) count[seen[t]];
	if (cut)
		least = cut_point(e->key, e->copy, d, LISTED, &ties);
	for (int t = 0; t < d; t++)
		if (!cut || e->key[t] > least || (e->key[t] == least && ties-- > 0))
		{
			e->item[e->kept] = seen[t];
			e->count[e->kept++] = count[seen[t]];
		}

	/* half the neighbourhood by count, the rest by share of their baskets */
	for (int t = 0; t < d; t++)
		e->mark[t] = 0;
	if (d > NEIGHBORHOOD)
	{
		for (int t = 0; t < d; t++)
			e->key[t] = (float) count[seen[t]];
		least = cut_point(e->key, e->copy, d, NEIGHBORHOOD / 2, &ties);
		for (int t = 0; t < d; t++)
			if (e->key[t] > least || (e->key[t] == least && ties-- > 0))
				e->mark[t] = 1;
		for (int t = 0; t < d; t++)
			e->key[t] = e->mark[t] ? -1.0f :
				(float) (count[seen[t]] / (e->popularity[seen[t]] + e->shrink));
		least = cut_point(e->key, e->copy, d, NEIGHBORHOOD - NEIGHBORHOOD / 2, &ties);
		for (int t = 0; t < d; t++)
			if (e->key[t] > least || (e->key[t] == least && ties-- > 0))
				e->mark[t] = 1;
	}
	else
		for (int t = 0; t < d; t++)
			e->mark[t] = 1;
	for (int t = 0; t < d; t++)
		if (e->mark[t])
		{
			e->nb_item[(int64) i * NEIGHBORHOOD + got] = seen[t];
			e->nb_count[(int64) i * NEIGHBORHOOD + got++] = count[seen[t]];
		}
	e->nb_len[i] = got;
}

/*
 * The neighbourhoods of D's items, from its co-occurrence lists; TAP (if
 * not NULL) visits each list too, and is done when this returns.
 */
MtdppEaseNeighborhoods *
mtdpp_ease_neighborhoods(const MtdppBaskets *d, MtdppListTap *tap)
{
	MtdppEaseNeighborhoods *e = palloc0(sizeof(MtdppEaseNeighborhoods));
	Size		n = Max(d->n_items, 1);
	Size		room = mul_size(n, Min(LISTED, n));

	e->n = d->n_items;
	e->popularity = d->popularity;
	e->start = mtdpp_alloc_huge(sizeof(int64) * (n + 1));
	e->item = mtdpp_alloc_huge(mul_size(room, sizeof(int32)));
	e->count = mtdpp_alloc_huge(mul_size(room, sizeof(int32)));
	e->nb_item = mtdpp_alloc_huge(mul_size(mul_size(n, NEIGHBORHOOD), sizeof(int32)));
	e->nb_count = mtdpp_alloc_huge(mul_size(mul_size(n, NEIGHBORHOOD), sizeof(int32)));
	e->nb_len = palloc0(sizeof(int) * n);
	e->shrink = (double) d->n_lines / n;
	e->key = mtdpp_alloc_huge(sizeof(float) * n);
	e->copy = mtdpp_alloc_huge(sizeof(float) * n);
	e->mark = palloc(n);
	e->tap = tap;
	e->memory = tap ? mtdpp_ease_neighborhood_memory(d) : 0;
	mtdpp_visit_lists(d, visit_neighborhood, e, &e->scratch, &e->pairs);
	e->start[e->n] = e->kept;
	e->tap = NULL;
	if (tap)
		tap->done = true;
	pfree(e->key);
	pfree(e->copy);
	pfree(e->mark);
	e->key = e->copy = NULL;
	return e;
}

void
mtdpp_ease_neighborhoods_free(MtdppEaseNeighborhoods *e)
{
	pfree(e->start);
	pfree(e->item);
	pfree(e->count);
	pfree(e->nb_item);
	pfree(e->nb_count);
	pfree(e->nb_len);
	pfree(e);
}

/* weight X of item C against Y of item D: is X the weaker (the first evicted)? */
static inline bool
weaker(float x, int32 c, float y, int32 d)
{
	return x < y || (x == y && c > d);
}

/* places W of C, taken from the root, into the heap of LEN entries */
static void
sift_down(int32 *idx, float4 *wt, int len, int32 c, float w)
{
	int			at = 0;

	for (;;)
	{
		int			child = 2 * at + 1;

		if (child >= len)
			break;
		if (child + 1 < len && weaker(wt[child + 1], idx[child + 1], wt[child], idx[child]))
			child++;
		if (!weaker(wt[child], idx[child], w, c))
			break;
		idx[at] = idx[child];
		wt[at] = wt[child];
		at = child;
	}
	idx[at] = c;
	wt[at] = w;
}

/* An item's bounded heap (the weakest on top, LEN of CAP) offered weight W of C. */
static void
heap_offer(int32 *idx, float4 *wt, int *len, int cap, int32 c, float w)
{
	int			at;

	if (*len == cap)
	{
		if (cap > 0 && weaker(wt[0], idx[0], w, c))
			sift_down(idx, wt, cap, c, w);
		return;
	}
	at = (*len)++;
	while (at > 0 && weaker(w, c, wt[(at - 1) / 2], idx[(at - 1) / 2]))
	{
		idx[at] = idx[(at - 1) / 2];
		wt[at] = wt[(at - 1) / 2];
		at = (at - 1) / 2;
	}
	idx[at] = c;
	wt[at] = w;
}

/* an item's heap of LEN sorted in place, strongest first (the weakest go last) */
static void
heap_sort(int32 *idx, float4 *wt, int len)
{
	for (int h = len - 1; h > 0; h--)
	{
		int32		c = idx[h];
		float		w = wt[h];

		idx[h] = idx[0];
		wt[h] = wt[0];
		sift_down(idx, wt, h, c, w);
	}
}

/*
 * Target C's system (G_NN + lambda I + Q diag(G_NN)) into the upper
 * triangle of A (K x K, row-major), the right side G_Nc into RHS; POS maps
 * an item to its place in N(c) (-1 elsewhere).
 */
static void
build_system(const MtdppEaseNeighborhoods *e, int c, const int32 *pos, const uint64 *member,
			 double lambda, double q, double *A, double *rhs)
{
	int64		s = (int64) c * NEIGHBORHOOD;
	int			k = e->nb_len[c];

	memset(A, 0, sizeof(double) * k * k);
	for (int p = 0; p < k; p++)
	{
		int			a = e->nb_item[s + p];

		rhs[p] = e->nb_count[s + p];
		A[(size_t) p * k + p] = e->popularity[a] * (1.0 + q) + lambda;
		for (int64 q = e->start[a]; q < e->start[a + 1]; q++)
		{
			int32		b = e->item[q];
			int			r;

			/* most companions are not members: a bit of a small map tells */
			if ((member[b >> 6] & (UINT64CONST(1) << (b & 63))) == 0)
				continue;
			r = pos[b];
			if (r > p)
				A[(size_t) p * k + r] = e->count[q];
			else if (r >= 0 && r < p)
				A[(size_t) r * k + p] = e->count[q];
		}
	}
}

/*
 * The systems of the items are independent: they are solved a round of
 * ROUND items at a time, on two threads when training may use two cores
 * (max_parallel_maintenance_workers above 0, as the DPP's fit), each taking
 * every other block of STRIDE items.  Between rounds the backend checks for
 * interrupts and offers the round's solutions to the lists, in item order,
 * so one thread or two give the same weights.
 */

/* one thread's share of a round: touches only its own scratch and its items' slots */
typedef struct SolveJob
{
	const MtdppEaseNeighborhoods *e;
	double		lambda;
	double		q;				/* the diagonal's share added, Q diag(G) */
	int			from;			/* the round: items [from, to) */
	int			to;
	int			part;			/* this thread's blocks: part, part + parts, ... */
	int			parts;
	int32	   *pos;			/* n entries, -1 but during an item's system */
	uint64	   *member;			/* a bit per item: in the system's neighbourhood */
	double	   *A;
	double	   *rhs;
	float	   *sol;			/* the round's solutions, NEIGHBORHOOD an item */
	int8	   *tries;			/* the round's items: lambda doublings, -1 none enough */
} SolveJob;

/* item C's system at J's lambda (doubled while not positive definite), solved into its slot */
static void
solve_item(SolveJob *j, int c)
{
	const MtdppEaseNeighborhoods *e = j->e;
	int64		s = (int64) c * NEIGHBORHOOD;
	int			k = e->nb_len[c];
	double		l = j->lambda;
	int			tries = 0;
	float	   *out = j->sol + (int64) (c - j->from) * NEIGHBORHOOD;

	j->tries[c - j->from] = 0;
	if (k == 0)
		return;
	for (int p = 0; p < k; p++)
	{
		int32		a = e->nb_item[s + p];

		j->pos[a] = p;
		j->member[a >> 6] |= UINT64CONST(1) << (a & 63);
	}
	build_system(e, c, j->pos, j->member, l, j->q, j->A, j->rhs);
	while (!mtdpp_cholesky_upper(j->A, k))
	{
		if (++tries > LAMBDA_RETRIES)
			break;
		l = 2.0 * Max(l, 1.0);
		build_system(e, c, j->pos, j->member, l, j->q, j->A, j->rhs);
	}
	for (int p = 0; p < k; p++)
	{
		int32		a = e->nb_item[s + p];

		j->pos[a] = -1;
		j->member[a >> 6] = 0;
	}
	if (tries > LAMBDA_RETRIES)
	{
		j->tries[c - j->from] = -1;
		return;
	}
	mtdpp_cholesky_upper_solve(j->A, k, j->rhs);
	for (int p = 0; p < k; p++)
		out[p] = (float) j->rhs[p];
	j->tries[c - j->from] = (int8) tries;
}

/* a thread's share of the round: no allocation, no error, no interrupt */
static void
solve_part(void *arg)
{
	SolveJob   *j = arg;

	for (int b = j->from + j->part * STRIDE; b < j->to; b += j->parts * STRIDE)
		for (int c = b; c < Min(b + STRIDE, j->to); c++)
			solve_item(j, c);
}

/* J's scratch for N items, systems of at most KMAX unknowns */
static void
solve_job_init(SolveJob *j, const MtdppEaseNeighborhoods *e, double lambda, double q,
			   int part, int parts, int kmax, float *sol, int8 *tries)
{
	int			n = Max(e->n, 1);

	j->e = e;
	j->lambda = lambda;
	j->q = q;
	j->part = part;
	j->parts = parts;
	j->pos = palloc(sizeof(int32) * n);
	for (int i = 0; i < n; i++)
		j->pos[i] = -1;
	j->member = palloc0(sizeof(uint64) * (n / 64 + 1));
	j->A = palloc(sizeof(double) * kmax * kmax);
	j->rhs = palloc(sizeof(double) * kmax);
	j->sol = sol;
	j->tries = tries;
}

/*
 * EASE's weights at LAMBDA and Q (each item's regularisation lambda plus Q
 * times its popularity, ease.c) into M's lists (room for CAP an item,
 * allocated by the caller), each item's CAP largest positive ones, largest
 * first.  Returns the systems solved at a larger lambda than LAMBDA.
 */
int64
mtdpp_ease_neighborhood_weights(MtdppEaseNeighborhoods *e, double lambda, double q, int cap,
								MtdppModel *m)
{
	int			n = e->n;
	int		   *len = palloc0(sizeof(int) * Max(n, 1));
	int			kmax = Min(NEIGHBORHOOD, Max(n, 1));
	int			round = Min(ROUND, Max(n, 1));
	MtdppHelper *h = NULL;
	SolveJob	job[2];
	int			parts = 1;
	float	   *sol;
	int8	   *tries;
	int64		at = 0;

	if (n > ROUND)
	{
		h = mtdpp_helper_start_for("EASE systems");
		parts = h ? 2 : 1;
	}
	sol = palloc(sizeof(float) * round * NEIGHBORHOOD);
	tries = palloc(sizeof(int8) * round);
	for (int t = 0; t < parts; t++)
		solve_job_init(&job[t], e, lambda, q, t, parts, kmax, sol, tries);
	e->retried = 0;
	for (int from = 0; from < n; from += ROUND)
	{
		CHECK_FOR_INTERRUPTS();
		for (int t = 0; t < parts; t++)
		{
			job[t].from = from;
			job[t].to = Min(n, from + ROUND);
		}
		if (parts == 2)
			mtdpp_helper_run_pair(h, solve_part, &job[0], &job[1]);
		else
			solve_part(&job[0]);
		for (int c = from; c < job[0].to; c++)
		{
			int64		s = (int64) c * NEIGHBORHOOD;
			const float *w = sol + (int64) (c - from) * NEIGHBORHOOD;

			if (tries[c - from] < 0)
				elog(ERROR, "the EASE system of item %d is not positive definite at lambda %g doubled %d times",
					 c, lambda, LAMBDA_RETRIES);
			e->retried += tries[c - from] > 0;
			for (int p = 0; p < e->nb_len[c]; p++)
			{
				int			a = e->nb_item[s + p];

				if (w[p] > 0.0f && isfinite(w[p]))
					heap_offer(m->nbr_index + (int64) a * cap, m->nbr_weight + (int64) a * cap,
							   &len[a], cap, c, w[p]);
			}
		}
	}
	mtdpp_helper_stop(h);

	/* each heap sorted, strongest first, and the lists packed */
	for (int a = 0; a < n; a++)
	{
		heap_sort(m->nbr_index + (int64) a * cap, m->nbr_weight + (int64) a * cap, len[a]);
		m->nbr_start[a] = at;
		memmove(m->nbr_index + at, m->nbr_index + (int64) a * cap, sizeof(int32) * len[a]);
		memmove(m->nbr_weight + at, m->nbr_weight + (int64) a * cap, sizeof(float4) * len[a]);
		at += len[a];
	}
	m->nbr_start[n] = at;
	for (int t = 0; t < parts; t++)
	{
		pfree(job[t].pos);
		pfree(job[t].member);
		pfree(job[t].A);
		pfree(job[t].rhs);
	}
	pfree(sol);
	pfree(tries);
	pfree(len);
	return e->retried;
}
