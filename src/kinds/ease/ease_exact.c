/*
 * kinds/ease/ease_exact.c
 *		EASE's weights in closed form, one inverse of G + lambda I over the
 *		whole catalog (ease.c fits so up to a catalog size; above it,
 *		ease_neighborhood.c item by item).
 *
 * Cost: G from the baskets (sum of squared basket sizes), then per lambda one
 * Cholesky inverse of items x items in single precision (n^3 flops, linalg.c,
 * cancellable between blocks), and a pass over P for each item's strongest
 * weights.  Memory: one n x n float matrix holding G in its strict upper
 * triangle and P in its lower one, so each lambda tried starts from G
 * without a copy.  In single precision P's relative error is about 6e-8
 * times the condition number of G + lambda I, at most (largest eigenvalue of
 * G + lambda) / lambda; the weights are stored as reals anyway.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"

#include "kinds/cooccurrence.h"
#include "kinds/ease/ease_exact.h"
#include "model/baskets.h"
#include "numeric/linalg.h"

/* rows of B gathered at a time from P's columns */
#define EASE_BLOCK 64
/* lines counted into G between two checks of a cancel: a few milliseconds */
#define GRAM_TICK (1 << 22)

typedef struct EaseWeight
{
	float4		w;
	int32		c;
} EaseWeight;

struct MtdppEaseExact
{
	int			n;
	int			cap;			/* weights kept per item */
	float	   *A;				/* n x n, column-major: G above, P below */
	double	   *gdiag;			/* G's diagonal */
	double	   *scale;			/* -1 / P[c][c] */
	float	   *rows;			/* EASE_BLOCK rows of P, then of B */
	float	   *scratch;		/* one row, for the selection */
	EaseWeight *kept;			/* one item's strongest weights */
};

/* What the exact fit of N items holds beside the lists, in bytes. */
Size
mtdpp_ease_exact_memory(int n)
{
	Size		s = mul_size(mul_size(n, n), sizeof(float));

	/* the inverse's scratch, the rows of B */
	s = add_size(s, mtdpp_spd_inverse_float_memory(n));
	return add_size(s, mul_size(mul_size(n, EASE_BLOCK + 1), sizeof(float)));
}

/* The exact fit of N items, CAP weights kept per item; G not yet built. */
MtdppEaseExact *
mtdpp_ease_exact_alloc(int n, int cap)
{
	MtdppEaseExact *w = palloc0(sizeof(MtdppEaseExact));

	w->n = n;
	w->cap = cap;
	/* every entry is written before it is read: no need to zero a gigabyte */
	w->A = MemoryContextAllocHuge(CurrentMemoryContext,
								  mul_size(mul_size(Max(n, 1), Max(n, 1)), sizeof(float)));
	w->gdiag = palloc0(sizeof(double) * Max(n, 1));
	w->scale = palloc0(sizeof(double) * Max(n, 1));
	w->rows = mtdpp_alloc_huge(mul_size(mul_size(EASE_BLOCK, Max(n, 1)), sizeof(float)));
	w->scratch = palloc(sizeof(float) * Max(n, 1));
	w->kept = palloc(sizeof(EaseWeight) * Max(cap, 1));
	return w;
}

void
mtdpp_ease_exact_free(MtdppEaseExact *w)
{
	pfree(w->A);
	pfree(w->gdiag);
	pfree(w->scale);
	pfree(w->rows);
	pfree(w->scratch);
	pfree(w->kept);
	pfree(w);
}

/*
 * G of the baskets D, what every lambda starts from: its diagonal into
 * w->gdiag, the rest into the strict upper triangle of w->A (column c holds G[a][c], a < c, contiguous).  Item
 * by item, through an index of the baskets holding each, so counts are exact
 * integers before they become reals and each column is written once.
 */
void
mtdpp_ease_exact_gram(MtdppEaseExact *w, const MtdppBaskets *d)
{
	int			n = d->n_items;
	int64	   *start = palloc0(sizeof(int64) * (n + 1));
	int64	   *fill = palloc(sizeof(int64) * Max(n, 1));
	int32	   *holding = mtdpp_alloc_huge(sizeof(int32) * Max(d->n_lines, 1));
	int32	   *count = palloc0(sizeof(int32) * Max(n, 1));
	int64		work = 0;

	for (int64 k = 0; k < d->n_lines; k++)
		start[d->items[k] + 1]++;
	for (int i = 0; i < n; i++)
		start[i + 1] += start[i];
	memcpy(fill, start, sizeof(int64) * n);
	for (int b = 0; b < d->n_baskets; b++)
		for (int64 k = d->start[b]; k < d->start[b + 1]; k++)
			holding[fill[d->items[k]]++] = b;

	for (int c = 0; c < n; c++)
	{
		float	   *col = w->A + (size_t) c * n;

		/* a cancel is checked by the lines counted, not the items: an item of dense baskets counts millions */
		for (int64 h = start[c]; h < start[c + 1]; h++)
		{
			for (int64 k = d->start[holding[h]]; k < d->start[holding[h] + 1]; k++)
				count[d->items[k]]++;
			work += d->start[holding[h] + 1] - d->start[holding[h]];
			if (work >= GRAM_TICK)
			{
				CHECK_FOR_INTERRUPTS();
				work = 0;
			}
		}
		w->gdiag[c] = count[c];
		for (int a = 0; a < c; a++)
			col[a] = (float) count[a];
		for (int64 h = start[c]; h < start[c + 1]; h++)
			for (int64 k = d->start[holding[h]]; k < d->start[holding[h] + 1]; k++)
				count[d->items[k]] = 0;
	}
	pfree(count);
	pfree(holding);
	pfree(fill);
	pfree(start);
}

/* w->A's lower triangle := G + lambda I + q diag(G), mirrored from the upper by tiles */
static void
ease_regularise(MtdppEaseExact *w, double lambda, double q)
{
	int			n = w->n;
	float	   *A = w->A;

	for (int c0 = 0; c0 < n; c0 += 64)
	{
		CHECK_FOR_INTERRUPTS();
		for (int r0 = c0; r0 < n; r0 += 64)
			for (int c = c0; c < Min(c0 + 64, n); c++)
				for (int r = Max(r0, c + 1); r < Min(r0 + 64, n); r++)
					A[r + (size_t) c * n] = A[c + (size_t) r * n];
	}
	for (int j = 0; j < n; j++)
		A[j + (size_t) j * n] = (float) (w->gdiag[j] * (1.0 + q) + lambda);
}

/* strongest first; equal weights by item */
static int
cmp_weight(const void *a, const void *b)
{
	const EaseWeight *x = a,
			   *y = b;

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return x->c < y->c ? -1 : (x->c > y->c ? 1 : 0);
}

/*
 * The w->cap largest positive weights of ROW (item J's row of B) into IDX
 * and WT, largest first; returns how many.
 */
static int
ease_select(MtdppEaseExact *w, const float *row, int j, int32 *idx, float4 *wt)
{
	int			n = w->n,
				m = 0,
				got = 0;
	float		t;

	for (int c = 0; c < n; c++)
		if (c != j && row[c] > 0.0f)
			w->scratch[m++] = row[c];
	if (m == 0)
		return 0;
	t = mtdpp_kth_largest(w->scratch, m, Min(m, w->cap));
	for (int c = 0; c < n && got < w->cap; c++)
		if (c != j && row[c] > t)
			w->kept[got++] = (EaseWeight) {row[c], c};
	/* t > 0: equal to the last kept */
	for (int c = 0; c < n && got < w->cap; c++)
		if (c != j && row[c] == t)
			w->kept[got++] = (EaseWeight) {row[c], c};
	qsort(w->kept, got, sizeof(EaseWeight), cmp_weight);
	for (int k = 0; k < got; k++)
	{
		idx[k] = w->kept[k].c;
		wt[k] = w->kept[k].w;
	}
	return got;
}

/*
 * Rows J0 .. J0 + NB - 1 of P (symmetric, held in w->A's lower triangle)
 * into w->rows: the part left of the block from P's columns, NB values a
 * run; the rest from the rows' own columns.
 */
static void
ease_gather_rows(MtdppEaseExact *w, int j0, int nb)
{
	int			n = w->n;
	const float *A = w->A;

	for (int c = 0; c < j0; c++)
	{
		const float *run = A + j0 + (size_t) c * n;

		for (int jj = 0; jj < nb; jj++)
			w->rows[(size_t) jj * n + c] = run[jj];
	}
	for (int jj = 0; jj < nb; jj++)
	{
		int			j = j0 + jj;
		float	   *row = w->rows + (size_t) jj * n;

		for (int c = j0; c < j; c++)
			row[c] = A[j + (size_t) c * n];
		memcpy(row + j, A + j + (size_t) j * n, sizeof(float) * (n - j));
	}
}

/*
 * M's neighbour lists from P (w->A's lower triangle): B[j][c] =
 * -P[j][c] / P[c][c], each item's w->cap largest positive ones.  False if a
 * weight is not a finite real (P too ill-conditioned in single precision).
 */
static bool
ease_lists(MtdppEaseExact *w, MtdppModel *m)
{
	int			n = w->n;
	int64		at = 0;

	for (int c = 0; c < n; c++)
	{
		double		d = w->A[c + (size_t) c * n];

		if (!(d > 0.0) || !isfinite(d))
			return false;
		w->scale[c] = -1.0 / d;
	}
	for (int j0 = 0; j0 < n; j0 += EASE_BLOCK)
	{
		int			nb = Min(EASE_BLOCK, n - j0);

		CHECK_FOR_INTERRUPTS();
		ease_gather_rows(w, j0, nb);
		for (int jj = 0; jj < nb; jj++)
		{
			int			j = j0 + jj;
			float	   *row = w->rows + (size_t) jj * n;

			for (int c = 0; c < n; c++)
			{
				row[c] = (float) (row[c] * w->scale[c]);
				if (!isfinite(row[c]))
					return false;
			}
			m->nbr_start[j] = at;
			if (w->cap > 0)
				at += ease_select(w, row, j, m->nbr_index + at, m->nbr_weight + at);
		}
	}
	m->nbr_start[n] = at;
	return true;
}

/*
 * The weights of w's G (already built) at LAMBDA, with Q diag(G) added for
 * dropout, into M's lists (allocated for w->cap an item); false if
 * G + lambda I is not numerically positive definite in single precision.
 */
bool
mtdpp_ease_exact_weights(MtdppEaseExact *w, double lambda, double q, MtdppModel *m)
{
	ease_regularise(w, lambda, q);
	if (!mtdpp_spd_inverse_float(w->A, w->n))
		return false;
	return ease_lists(w, m);
}
