/*
 * score/topk_bounded.c
 *		The pruned top k of the kinds whose score is ln w + ln det of a
 *		kernel per candidate, plus a term of their own (co-occurrence
 *		evidence): helpers their routines (top_k, ranks_of,
 *		scores_reaching) call.
 *
 * For the multi-task kinds each candidate c has its own kernel
 * K_c = V_B diag(R_c^2) V_B^T + D_B^2, positive definite, so Hadamard's
 * inequality bounds its determinant by the product of its diagonal:
 *
 *		ln det K_c <= sum_s ln(sum_j V_sj^2 R_cj^2 + D_s^2)
 *
 * The diagonals of every candidate's kernel come from one GEMM,
 * R^2 (n x r) times (V_B o V_B)^T (r x b): b/(b+1)/2 of the work of the
 * full kernels, and no factorisation.  Then:
 *	 1. the k candidates with the largest bounds are scored exactly;
 *	 2. tau, the k-th best exact score so far, is a lower bound of the final
 *		k-th best; every candidate whose bound reaches tau is scored exactly
 *		(in one batch), the others provably cannot enter the top k.
 * The answer is the same as scoring everything (ties broken by item id).
 * A kind that adds co-occurrence evidence to the DPP's score passes it
 * (EV, every item's) and it is added to the bound as well: the evidence is
 * exact and nonzero only on the neighbours of the basket's items, so
 * ln bound + evidence still bounds the score, and the pruning stays exact.
 * An ensemble's score is the mean of its fits', which
 * share D: the product of the fits' bounds, taken to the power 1/N, bounds
 * it, so the pruning stays exact with a threshold raised to the power N.
 * The exact scores come from the numeric core (kernel.c) that training and
 * mtdpp_score use; ln w is added last, as the kinds' score_some adds it
 * first, so that these helpers give the scores they always gave.  A large
 * cached catalog is scanned rather than bounded whole (topk_scan.c), and
 * where the kind adds evidence, answered from candidates
 * (topk_candidates.c).
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "model/model.h"
#include "numeric/kernel.h"
#include "numeric/linalg.h"
#include "score/score.h"
#include "score/topk_int.h"


/*
 * ln det of the kernels of the N candidates CANDS (dense indices), by the
 * numeric core (kernel.c), up to 1024 a BLAS call
 */
void
mtdpp_exact_logdets(const MtdppModel *m, const int32 *ctx, int b, const double *P,
			  const int32 *cands, int n, double *logdet)
{
	mtdpp_targets_logdet(m, ctx, b, P, cands, 0, n, Min(Max(n, 1), 1024), logdet);
}

/*
 * The bound products of N items held in panels (see MTDPP_PANEL):
 *		bound[i] = prod_s (1 + widen * sum_j R2_ij W_js),
 * W being r x b.  Each item is a SIMD lane: a panel row is one vector, each
 * W_js a broadcast, and up to 8 columns of W accumulate at once, so every
 * panel is read from memory once per 8 columns.  Panels are STRIDE rows
 * apart (the model's rank; r is one fit's, of an ensemble).
 */
typedef float panel_vec __attribute__((vector_size(MTDPP_PANEL * sizeof(float))));

static inline __attribute__((always_inline)) void
panel_columns(const float *panel, int r, const float *W, int b, int s0, int width,
			  double widen, double *prod)
{
	panel_vec	acc[8] = {{0}};

	for (int j = 0; j < r; j++)
	{
		const float *w = W + (size_t) j * b + s0;
		panel_vec	x;

		memcpy(&x, panel + (size_t) j * MTDPP_PANEL, sizeof(x));
		for (int s = 0; s < width; s++)
			acc[s] += x * w[s];
	}
	for (int s = 0; s < width; s++)
		for (int l = 0; l < MTDPP_PANEL; l++)
			prod[l] *= 1.0 + (double) acc[s][l] * widen;
}

MTDPP_VECTORISED
static void
panel_bounds(const float *panels, int n, int r, int stride, const float *W, int b,
			 double widen, double *bound)
{
	for (int p = 0; p * MTDPP_PANEL < n; p++)
	{
		const float *panel = panels + (size_t) p * stride * MTDPP_PANEL;
		double		prod[MTDPP_PANEL];
		int			s0 = 0;

		for (int l = 0; l < MTDPP_PANEL; l++)
			prod[l] = 1.0;
		/* constant widths, so that the accumulators stay in registers */
		for (; s0 + 8 <= b; s0 += 8)
			panel_columns(panel, r, W, b, s0, 8, widen, prod);
		if (s0 + 4 <= b)
		{
			panel_columns(panel, r, W, b, s0, 4, widen, prod);
			s0 += 4;
		}
		if (s0 + 2 <= b)
		{
			panel_columns(panel, r, W, b, s0, 2, widen, prod);
			s0 += 2;
		}
		if (s0 < b)
			panel_columns(panel, r, W, b, s0, 1, widen, prod);
		for (int l = 0; l < MTDPP_PANEL && p * MTDPP_PANEL + l < n; l++)
			bound[p * MTDPP_PANEL + l] = prod[l];
	}
}

/*
 * Upper bounds of ln det K_c for every item (CANDS NULL), or for the NC
 * items CANDS lists (bound[j] for cands[j]), or for NC items whose R^2
 * ORDERED holds in panels (a cached model's scan order, topk_scan.c), as
 *		ln det K_c <= offset + ln bound[c]
 * with the offset returned (and the basket's weights W, r x b in float,
 * into WEIGHTS, if not NULL): products rather than logs, so that no log is
 * taken per candidate (a product that overflows is an infinite bound, which
 * only means the candidate is scored exactly).
 *
 * K_c = D (I + E diag(R_c^2) E^T) D with E = D^-1 V_B.  With E E^T = U L U^T
 * (eigenvectors U, b x b) and Y = E^T U (r x b), the rotation U^T gives
 *		det K_c = det D^2 det(I + Y^T diag(R_c^2) Y)
 * and Hadamard's inequality on that matrix,
 *		ln det K_c <= ln det D^2 + sum_k ln(1 + sum_j Y_jk^2 R_cj^2),
 * is exact when R_c^2 is constant and tight when it varies little: far
 * tighter than the bound on K_c itself, whose off-diagonal entries (similar
 * basket items) it ignores.  This is one fit's bound, the fit of the columns
 * COL .. COL + R - 1 of an ensemble (all of them for a
 * model of one fit).
 */
double
mtdpp_fit_bounds(const MtdppModel *m, const int32 *ctx, int b, const int32 *cands, int nc,
				 int col, int r, double *bound, float *weights, const float *ordered)
{
	int			R = m->rank;
	int			n = cands || ordered ? nc : m->n_items;
	/* whole panels a block */
	int			block = (Max(16, Min(n, (1 << 20) / Max(b, 1))) + MTDPP_PANEL - 1) / MTDPP_PANEL * MTDPP_PANEL;
	double	   *E = palloc(sizeof(double) * (size_t) b * r);
	double	   *C = palloc(sizeof(double) * (size_t) b * b);
	double	   *L = palloc(sizeof(double) * b);
	double	   *W = palloc(sizeof(double) * (size_t) r * b);
	double	   *diag = m->R2f ? NULL : palloc(sizeof(double) * (size_t) block * b);
	double	   *rows = m->R2f ? NULL : palloc(sizeof(double) * (size_t) block * R);
	float	   *packed = (m->R2f && cands) ? palloc0(sizeof(float) * (size_t) block * r) : NULL;
	float	   *Wf = palloc(sizeof(float) * (size_t) r * b);
	double		logdet_d = 0.0;

	/*
	 * In single precision each diagonal term, a sum of r nonnegative
	 * products of rounded factors, is within (r + 2) float roundings of its
	 * exact value, relative to itself: widened by more than that, it bounds
	 * the exact term.  A margin relative to the term, not to the product,
	 * keeps bounds that differ by less than float's precision apart (a basket
	 * item with near-zero factors makes every bound nearly 1).
	 */
	const double widen = 1.0 + (r + 8) * (double) FLT_EPSILON;

	if (r == R)
		mtdpp_gather_V(m, ctx, b, E);
	else
	{
		/* this fit's columns of the basket's rows */
		double	   *full = palloc(sizeof(double) * (size_t) b * R);

		mtdpp_gather_V(m, ctx, b, full);
		for (int s = 0; s < b; s++)
			memcpy(E + (size_t) s * r, full + (size_t) s * R + col, sizeof(double) * r);
		pfree(full);
	}
	for (int s = 0; s < b; s++)
	{
		double		scale = 1.0 / sqrt(m->D2[ctx[s]]);

		for (int j = 0; j < r; j++)
			E[(size_t) s * r + j] *= scale;
		logdet_d += log(m->D2[ctx[s]]);
	}
	mtdpp_gemm_nt(b, b, r, E, r, E, r, C, b);
	mtdpp_symmetric_eigen(C, b, L);
	/*
	 * W = (E^T U) squared elementwise, r x b.  Nonzero entries below
	 * FLT_MIN / MTDPP_NEGLIGIBLE (2^-46) are raised to it, which only
	 * loosens a bound, by at most 2^-46 times the candidate's sum of R^2,
	 * far below anything the pruning can see: the R^2 of a model are zero or
	 * at least MTDPP_NEGLIGIBLE (2^-80), so no product of the pass below
	 * falls under FLT_MIN into subnormal numbers.
	 */
	mtdpp_gemm_tn(r, b, b, E, r, C, b, W, b);
	for (size_t i = 0; i < (size_t) r * b; i++)
	{
		W[i] *= W[i];
		if (W[i] != 0.0 && W[i] < FLT_MIN / MTDPP_NEGLIGIBLE)
			W[i] = FLT_MIN / MTDPP_NEGLIGIBLE;
		Wf[i] = (float) W[i];
	}
	if (weights != NULL)
		memcpy(weights, Wf, sizeof(float) * (size_t) r * b);

	for (int start = 0; start < n; start += block)
	{
		int			nt = Min(block, n - start);

		if (m->R2f != NULL)
		{
			/* a cached model: single precision straight from its panels */
			const float *panels = (ordered ? ordered : m->R2f) + (size_t) start * R +
				(size_t) col * MTDPP_PANEL;
			int			stride = R;

			if (cands)
			{
				for (int t = 0; t < nt; t++)
					for (int j = 0; j < r; j++)
						packed[mtdpp_panel_cell(r, t, j)] = mtdpp_r2f(m, cands[start + t], col + j);
				panels = packed;
				stride = r;
			}
			panel_bounds(panels, nt, r, stride, Wf, b, widen, bound + start);
			continue;
		}
		else if (cands)
		{
			mtdpp_gather_R2(m, cands + start, nt, rows);
			mtdpp_gemm_nn(nt, b, r, rows + col, R, W, b, diag, b);
		}
		else
			mtdpp_gemm_nn(nt, b, r, mtdpp_rows_R2(m, start, nt, rows) + col, R, W, b, diag, b);
		for (int t = 0; t < nt; t++)
		{
			const double *dt = diag + (size_t) t * b;
			double		prod = 1.0;

			for (int s = 0; s < b; s++)
				prod *= 1.0 + dt[s];
			bound[start + t] = prod;
		}
	}
	pfree(E);
	pfree(C);
	pfree(L);
	pfree(W);
	pfree(Wf);
	if (diag)
		pfree(diag);
	if (rows)
		pfree(rows);
	if (packed)
		pfree(packed);
	return logdet_d;
}

/*
 * The bounds of every fit of the model, multiplied: for an ensemble of N
 * fits, whose score is the mean of theirs and whose fits share D (so the
 * offset), N (mean ln det K_c - offset) <= ln bound[c] (see
 * mtdpp_bound_threshold).
 */
static double
determinant_bounds(const MtdppModel *m, const int32 *ctx, int b,
				   const int32 *cands, int nc, double *bound)
{
	int			fits = Max(m->blocks, 1);
	int			r = m->rank / fits;
	int			n = cands ? nc : m->n_items;
	double		offset = mtdpp_fit_bounds(m, ctx, b, cands, nc, 0, r, bound, NULL, NULL);
	double	   *more;

	if (fits == 1)
		return offset;
	more = palloc(sizeof(double) * Max(n, 1));
	for (int f = 1; f < fits; f++)
	{
		(void) mtdpp_fit_bounds(m, ctx, b, cands, nc, f * r, r, more, NULL, NULL);
		for (int i = 0; i < n; i++)
			bound[i] *= more[i];
	}
	pfree(more);
	return offset;
}

/*
 * Raises each bound (as determinant_bounds returns them, of item AT[j] for
 * j < N; AT NULL: every item at its own place) by the factor exp(EV) of
 * the evidence the kind adds (EV NULL: none), an overflow being an
 * infinite bound.
 */
static void
raise_by_evidence(const double *ev, const int32 *at, int n, double *bound)
{
	if (ev == NULL)
		return;
	for (int j = 0; j < n; j++)
	{
		double		e = ev[at ? at[j] : j];

		if (e != 0.0)
			bound[j] *= exp(e);
	}
}


/*
 * The least bound, as determinant_bounds returns them for model M, of a
 * candidate that may score SCORE or more (0: every candidate).  A sliver
 * lower than exp(N (score - offset)) for a model of N fits, so that
 * rounding never skips a candidate (an infinite threshold passes only the
 * bounds that overflowed: a finite product of N fits' bounds cannot reach
 * it).
 */
double
mtdpp_bound_threshold(const MtdppModel *m, double score, double offset)
{
	if (isinf(score) && score < 0)
		return 0.0;
	return exp(Max(m->blocks, 1) * (score - offset)) * (1.0 - 1e-12);
}

/* candidates scored exactly at a time once the first k are (see mtdpp_top_k) */
#define SCORE_BLOCK 64

/*
 * mtdpp_bounded_top_k over every item (or the allowed ones) at once, into
 * TOP: bounds, then exact scores (without ln w) by decreasing bound.
 */
static void
pruned_top_k(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
			 const int32 *allowed, int n_allowed, const double *P, const double *ev,
			 TopK *top)
{
	double	   *bound = palloc(sizeof(double) * Max(m->n_items, 1));
	int32	   *cands = palloc(sizeof(int32) * Max(m->n_items, 1));
	bool	   *done = palloc0(sizeof(bool) * Max(m->n_items, 1));
	double	   *scores = palloc(sizeof(double) * Max(m->n_items, 1));
	double		tau,
				offset,
				least;
	int			n = 0,
				scored;

	if (allowed != NULL && n_allowed < m->n_items / 4)
	{
		/*
		 * The allowed items' bounds, at their places (the others are
		 * flagged): gathering a list into panels costs more per item than
		 * the pass over the whole catalog, so a long list takes the pass.
		 */
		double	   *listed = palloc(sizeof(double) * Max(n_allowed, 1));

		offset = determinant_bounds(m, ctx, b, allowed, n_allowed, listed);
		for (int j = 0; j < n_allowed; j++)
			bound[allowed[j]] = listed[j];
		pfree(listed);
	}
	else
		offset = determinant_bounds(m, ctx, b, NULL, 0, bound);
	raise_by_evidence(ev, NULL, m->n_items, bound);

	/* 1. the k largest bounds, scored exactly */
	for (int i = 0; i < m->n_items; i++)
		if (!exclude[i])
			offer(top, bound[i], i);
	for (int j = 0; j < top->n; j++)
	{
		cands[n++] = top->h[j].index;
		done[top->h[j].index] = true;
	}
	mtdpp_exact_logdets(m, ctx, b, P, cands, n, scores);
	top->n = 0;
	for (int j = 0; j < n; j++)
		offer(top, scores[j] + (ev ? ev[cands[j]] : 0.0), cands[j]);

	/*
	 * 2. every other candidate whose bound reaches the k-th best, by
	 * decreasing bound, a block at a time: each block can raise the k-th
	 * best score, and with it the bound the next candidates must reach.
	 */
	tau = (top->n == top->k) ? top->h[0].score : -INFINITY;
	least = mtdpp_bound_threshold(m, tau, offset);
	n = 0;
	for (int i = 0; i < m->n_items; i++)
		if (!exclude[i] && !done[i] && bound[i] >= least)
			cands[n++] = i;
	qsort_arg(cands, n, sizeof(int32), mtdpp_cmp_by_key_desc, bound);
	scored = 0;
	for (int start = 0; start < n && bound[cands[start]] >= least; start += SCORE_BLOCK)
	{
		int			nt = Min(SCORE_BLOCK, n - start);

		while (nt > 0 && bound[cands[start + nt - 1]] < least)
			nt--;
		mtdpp_exact_logdets(m, ctx, b, P, cands + start, nt, scores);
		for (int j = 0; j < nt; j++)
			offer(top, scores[j] + (ev ? ev[cands[start + j]] : 0.0),
				  cands[start + j]);
		scored += nt;
		tau = (top->n == top->k) ? top->h[0].score : -INFINITY;
		least = mtdpp_bound_threshold(m, tau, offset);
	}
	elog(DEBUG1, "mtdpp top %d of %d items: %d scored exactly beyond the first %d (%d reached the first threshold)",
		 top->k, m->n_items, scored, top->k, n);
	pfree(bound);
	pfree(cands);
	pfree(done);
	pfree(scores);
}

/*
 * The K best items as completions of the context CTX of B > 0 items, as
 * mtdpp_top_k finds them (its arguments), for a bounded kind whose score
 * adds EV (every item's evidence; NULL: none) to ln w + ln det K_c.
 * ALLOWED lists more than K candidates when not NULL: only they are
 * bounded or scored when they are a short list (under a quarter of the
 * catalog), so that a short list costs little.
 */
int
mtdpp_bounded_top_k(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
					const int32 *allowed, int n_allowed, int k, const double *ev,
					MtdppRanked *out)
{
	TopK		top = {out, 0, k};
	int			npair = b * (b + 1) / 2;
	double	   *P = palloc(sizeof(double) * (size_t) m->rank * npair);

	mtdpp_basket_pairs(m, ctx, b, P);
	if (allowed == NULL && m->scan_order != NULL)
	{
		/*
		 * a large catalog: from candidates where the kind adds evidence
		 * (topk_candidates.c), else scanned in decreasing task factors
		 * (topk_scan.c)
		 */
		if (!mtdpp_top_k_candidates(m, ctx, b, exclude, P, ev, &top) &&
			!mtdpp_top_k_scan(m, ctx, b, exclude, P, ev, &top))
			elog(ERROR, "mtdpp: a model with a scan order could not be scanned");
	}
	else
		pruned_top_k(m, ctx, b, exclude, allowed, n_allowed, P, ev, &top);
	for (int j = 0; j < top.n; j++)
		top.h[j].score += m->log_w;
	pfree(P);
	mtdpp_sort_ranked(out, top.n);
	return top.n;
}

/*
 * mtdpp_ranks_of (its arguments) of NH > 0 held-out items of a context of
 * B > 0 items, for a bounded kind whose score adds EV (NULL: none): only
 * the candidates whose bound reaches the lowest score of a held-out item
 * are scored exactly.
 */
void
mtdpp_bounded_ranks_of(const MtdppModel *m, const int32 *ctx, int b, const bool *exclude,
					   const int32 *held, int nh, double held_score_if_unknown,
					   const double *ev, int *above, int *ties, int *candidates)
{
	int			npair = b * (b + 1) / 2;
	double	   *P = palloc(sizeof(double) * (size_t) m->rank * npair);
	double	   *bound = palloc(sizeof(double) * Max(m->n_items, 1));
	int32	   *cands = palloc(sizeof(int32) * Max(m->n_items, 1));
	double	   *scores = palloc(sizeof(double) * Max(m->n_items, 1));
	double	   *sh = palloc(sizeof(double) * nh);
	bool	   *is_held = palloc0(sizeof(bool) * Max(m->n_items, 1));
	int			n = 0,
				nc = 0;
	double		lowest = INFINITY,
				offset,
				least;

	*candidates = 0;
	for (int h = 0; h < nh; h++)
	{
		above[h] = ties[h] = 0;
		if (held[h] >= 0)
			is_held[held[h]] = true;
	}
	/* the candidates but the held-out items, then their bounds only */
	for (int i = 0; i < m->n_items; i++)
	{
		if (exclude[i])
			continue;
		(*candidates)++;
		if (!is_held[i])
			cands[nc++] = i;
	}
	mtdpp_basket_pairs(m, ctx, b, P);
	offset = determinant_bounds(m, ctx, b, cands, nc, bound);
	raise_by_evidence(ev, cands, nc, bound);
	for (int h = 0; h < nh; h++)
	{
		if (held[h] >= 0)
		{
			mtdpp_exact_logdets(m, ctx, b, P, &held[h], 1, &sh[h]);
			sh[h] += m->log_w + (ev ? ev[held[h]] : 0.0);
		}
		else
			sh[h] = held_score_if_unknown;
		lowest = Min(lowest, sh[h]);
	}
	least = mtdpp_bound_threshold(m, lowest - m->log_w, offset);
	for (int j = 0; j < nc; j++)
		if (bound[j] >= least)
			cands[n++] = cands[j];
	mtdpp_exact_logdets(m, ctx, b, P, cands, n, scores);
	for (int j = 0; j < n; j++)
	{
		double		s = scores[j] + m->log_w + (ev ? ev[cands[j]] : 0.0);

		for (int h = 0; h < nh; h++)
		{
			above[h] += s > sh[h];
			ties[h] += s == sh[h];
		}
	}
	/* the held-out items against one another */
	for (int h = 0; h < nh; h++)
		for (int g = 0; g < nh; g++)
			if (g != h)
			{
				above[h] += sh[g] > sh[h];
				ties[h] += sh[g] == sh[h];
			}
	pfree(P);
	pfree(bound);
	pfree(cands);
	pfree(scores);
	pfree(sh);
	pfree(is_held);
}

/*
 * mtdpp_scores_reaching (its arguments) of a context of B > 0 items, for a
 * bounded kind whose score adds EV (NULL: none): only the candidates whose
 * bound reaches FLOOR, or that ALSO flags, are scored exactly.
 */
int
mtdpp_bounded_scores_reaching(const MtdppModel *m, const int32 *ctx, int b,
							  const bool *exclude, double floor, const bool *also,
							  const double *ev, int32 *cands, double *scores)
{
	int			n = 0;
	int			npair = b * (b + 1) / 2;
	double	   *P = palloc(sizeof(double) * (size_t) m->rank * npair);
	double	   *bound = palloc(sizeof(double) * Max(m->n_items, 1));
	double		least;

	mtdpp_basket_pairs(m, ctx, b, P);
	least = mtdpp_bound_threshold(m, floor - m->log_w,
								  determinant_bounds(m, ctx, b, NULL, 0, bound));
	raise_by_evidence(ev, NULL, m->n_items, bound);
	for (int i = 0; i < m->n_items; i++)
		if (!exclude[i] && (bound[i] >= least || (also && also[i])))
			cands[n++] = i;
	mtdpp_exact_logdets(m, ctx, b, P, cands, n, scores);
	for (int j = 0; j < n; j++)
		scores[j] += m->log_w + (ev ? ev[cands[j]] : 0.0);
	pfree(P);
	pfree(bound);
	return n;
}
