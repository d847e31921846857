/*
 * kinds/hybrid/hybrid_weights.c
 *		The search of the hybrid's weights of evidence on its validation
 *		slice.
 *
 * The hybrid's DPP (hybrid.c) is trained without a validation slice
 * of the training baskets; the form and beta of its evidence are chosen on
 * that slice.  The evidence is built from the training baskets without the
 * slice (mtdpp_baskets_without), so neither part has seen the baskets it
 * is judged on, and each validation basket's held-out item is ranked among
 * the whole catalog, as the benchmark ranks it, under every form and every
 * beta of a grid at once (the candidates that can pass it under some beta
 * are the DPP's that can reach its score, plus the neighbours of its
 * basket: mtdpp_scores_reaching), with contexts of at most max_context
 * items, as the trainer's validation.  Each form's beta is the one with the
 * best sum of MPR, P@5, P@10 and P@20 (averaged with the neighbouring
 * betas).  Where EASE is offered, the choice is the pair (beta, ease_beta)
 * of a coarser grid with the best sum (averaged over the neighbouring
 * pairs): one of its betas may be zero, which is the other form alone;
 * the cosine alone is then searched on its finer grid too, the fallback
 * should EASE not fit on every basket, and the other two forms not at all.
 * Picking one form on a slice of a thousand baskets or fewer flips between
 * forms with its noise, and a wrong pick can fall below item-kNN; the pair
 * is never far from the better form.  Where EASE is not
 * offered, the best of the three forms that count pairs is chosen.
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "portability/instr_time.h"

#include "fit/params.h"
#include "kinds/cooccurrence.h"
#include "kinds/ease/ease.h"
#include "kinds/hybrid/hybrid_weights.h"
#include "kinds/itemknn/itemknn.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "score/score.h"

const char *const mtdpp_hybrid_form_names[N_FORMS + 1] = {"cosine", "log_cosine", "confidence", "ease", "cosine+ease"};

/* the grid of beta: 0, then 2^(g/2 - 4) for g = 0 .. 30 (1/16 to 2048) */
#define N_BETAS				32

static double
grid_beta(int g)
{
	return g == 0 ? 0.0 : pow(2.0, (g - 1) / 2.0 - 4.0);
}

/* the grid of the pair (cosine, ease): every other beta, 0 and 2^-3.5 to 2^14.5 */
#define N_PAIR_BETAS		20

static double
pair_beta(int g)
{
	return grid_beta(2 * g);
}

/* What one choice of weights reached on the slice, summed over its baskets. */
typedef struct RankSums
{
	double		pr;				/* percentile ranks */
	int			top5;
	int			top10;
	int			top20;
} RankSums;

/* Every (form, beta) of the grid, and every pair (cosine beta, EASE beta). */
typedef struct GridSums
{
	int			n;				/* baskets measured */
	RankSums	grid[N_COSINE_FORMS][N_BETAS];
	RankSums	pair[N_PAIR_BETAS][N_PAIR_BETAS];
} GridSums;

static void
sums_metrics(const RankSums *r, int n, MtdppMetrics *out)
{
	out->n = n;
	out->mpr = r->pr / Max(n, 1);
	out->p5 = 100.0 * r->top5 / Max(n, 1);
	out->p10 = 100.0 * r->top10 / Max(n, 1);
	out->p20 = 100.0 * r->top20 / Max(n, 1);
}

/*
 * Candidates of one validation basket: NE with evidence first (CANDS[j],
 * scoring SCORES[j] before it), then NZ without, whose DPP scores ZS are
 * sorted: their score is the same under every weight, so each cell counts
 * those above the held-out item by binary search and loops over the NE
 * alone.
 */
typedef struct BasketCands
{
	const int32 *cands;
	const double *scores;
	int			ne;
	const double *zs;
	int			nz;
} BasketCands;

/* the first of the NZ sorted scores ZS above T (or at least T: AT_LEAST) */
static int
first_above(const double *zs, int nz, double t, bool at_least)
{
	int			lo = 0,
				hi = nz;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (zs[mid] > t || (at_least && zs[mid] == t))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * Splits the NP candidates CANDS (scoring SCORES) into those ALSO flags or
 * whose score is NaN, kept in CANDS and SCORES, and the rest, whose scores
 * are sorted behind them; into C.
 */
static void
split_candidates(int32 *cands, double *scores, int np, const bool *also, BasketCands *c)
{
	int			ne = 0;

	for (int j = 0; j < np; j++)
		if (also[cands[j]] || isnan(scores[j]))
		{
			int32		tc = cands[j];
			double		ts = scores[j];

			cands[j] = cands[ne];
			scores[j] = scores[ne];
			cands[ne] = tc;
			scores[ne++] = ts;
		}
	qsort(scores + ne, np - ne, sizeof(double), cmp_double);
	c->cands = cands;
	c->scores = scores;
	c->ne = ne;
	c->zs = scores + ne;
	c->nz = np - ne;
}

/*
 * Adds to R the rank among N items of the held-out item scoring TARGET, the
 * other candidates C scoring their score + B1 * EV1[c] + B2 * EV2[c].
 */
static void
add_rank(RankSums *r, int n, double target, const BasketCands *c,
		 const double *ev1, double b1, const double *ev2, double b2)
{
	int			over = first_above(c->zs, c->nz, target, false),
				above = c->nz - over,
				ties = over - first_above(c->zs, c->nz, target, true);
	double		rank;

	for (int j = 0; j < c->ne; j++)
	{
		double		s = c->scores[j] + b1 * ev1[c->cands[j]] + b2 * ev2[c->cands[j]];

		above += s > target;
		ties += s == target;
	}
	rank = 1.0 + above + 0.5 * ties;
	r->pr += 100.0 * (n - rank) / (n - 1);
	r->top5 += rank <= 5.0;
	r->top10 += rank <= 10.0;
	r->top20 += rank <= 20.0;
}

/*
 * The cell of the ROWS x COLS grid SUMS (row-major, over N baskets) whose sum
 * of MPR, P@5, P@10 and P@20, averaged with the neighbouring cells, is
 * best: a slice of a thousand baskets measures a precision within a point
 * or two, so a lone peak is more likely noise than better weights.  Ties go
 * to the earlier cell.  The cell into *ROW and *COL; returns its average.
 */
static double
best_smoothed(const RankSums *sums, int rows, int cols, int n, int *row, int *col)
{
	double	   *total = palloc(sizeof(double) * rows * cols);
	double		best = -1.0;

	for (int c = 0; c < rows * cols; c++)
	{
		MtdppMetrics mt;

		sums_metrics(&sums[c], n, &mt);
		total[c] = mt.mpr + mt.p5 + mt.p10 + mt.p20;
	}
	*row = *col = 0;
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++)
		{
			double		smooth = 0.0;
			int			cells = 0;

			for (int h = Max(r - 1, 0); h <= Min(r + 1, rows - 1); h++)
				for (int k = Max(c - 1, 0); k <= Min(c + 1, cols - 1); k++)
				{
					smooth += total[h * cols + k];
					cells++;
				}
			smooth /= cells;
			if (smooth > best)
			{
				best = smooth;
				*row = r;
				*col = c;
			}
		}
	pfree(total);
	return best;
}

/*
 * Ranks the held-out item of validation basket K under every form and beta,
 * adding to SUMS.  EV holds one dense array of evidence per form, zero
 * everywhere (and left so); ALSO, CANDS, SCORES and TOUCHED are scratch of
 * one entry per item.
 */
static void
grid_basket(MtdppValidation *v, int k, const MtdppModel *dpp, const MtdppModel *evid,
			const MtdppModel *ease, const int32 *freq, double **ev, bool *also,
			int32 *cands, double *scores, int32 *touched, GridSums *sums)
{
	int			held = v->held[k];
	int			b = mtdpp_validation_context(v, k, Min(mtdpp_context_limit(dpp),
														 v->max_context));
	int			nt = 0,
				np,
				n = 0;
	double		sh;
	BasketCands bc;

	for (int s = 0; s < b; s++)
	{
		int			j = v->ctx[s];

		for (int64 q = evid->nbr_start[j]; q < evid->nbr_start[j + 1]; q++)
		{
			int			c = evid->nbr_index[q];

			if (!also[c])
			{
				also[c] = true;
				touched[nt++] = c;
			}
			for (int f = 0; f < (ease ? 1 : N_COSINE_FORMS); f++)
				ev[f][c] += mtdpp_hybrid_form_weight(f, (double) evid->nbr_weight[q], freq[j], freq[c]);
		}
		for (int64 q = ease ? ease->nbr_start[j] : 0; ease && q < ease->nbr_start[j + 1]; q++)
		{
			int			c = ease->nbr_index[q];

			if (!also[c])
			{
				also[c] = true;
				touched[nt++] = c;
			}
			ev[FORM_EASE][c] += ease->nbr_weight[q];
		}
	}
	for (int i = 0; i < dpp->n_items; i++)
		n += !v->exclude[i];
	mtdpp_score_some(dpp, v->ctx, b, &held, 1, &sh);
	v->exclude[held] = true;
	np = mtdpp_scores_reaching(dpp, v->ctx, b, v->exclude, sh, also, cands, scores);
	v->exclude[held] = false;
	split_candidates(cands, scores, np, also, &bc);

	/* beside EASE, the cosine alone (the fallback) and the pair's grid */
	for (int f = 0; f < (ease ? 1 : N_COSINE_FORMS) && n > 1; f++)
		for (int g = 0; g < N_BETAS; g++)
			add_rank(&sums->grid[f][g], n, sh + grid_beta(g) * ev[f][held], &bc,
					 ev[f], grid_beta(g), ev[f], 0.0);
	for (int g1 = 0; ease && g1 < N_PAIR_BETAS && n > 1; g1++)
		for (int g2 = 0; g2 < N_PAIR_BETAS; g2++)
		{
			double		b1 = pair_beta(g1),
						b2 = pair_beta(g2);

			add_rank(&sums->pair[g1][g2], n, sh + b1 * ev[FORM_COSINE][held] + b2 * ev[FORM_EASE][held],
					 &bc, ev[FORM_COSINE], b1, ev[FORM_EASE], b2);
		}
	sums->n += n > 1;

	for (int t = 0; t < nt; t++)
	{
		also[touched[t]] = false;
		for (int f = 0; f < N_FORMS; f++)
			ev[f][touched[t]] = 0.0;
	}
	mtdpp_validation_release(v, k);
}

/* Reports the search (verbose): the DPP alone, then each form's best. */
static void
report_search(const GridSums *s, const int *best_g, const int *pair_g, int form, double seconds)
{
	MtdppMetrics mt;

	sums_metrics(&s->grid[0][0], s->n, &mt);
	ereport(NOTICE,
			(errmsg("hybrid: %d validation baskets, whole catalog; DPP alone: MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f",
					s->n, mt.mpr, mt.p5, mt.p10, mt.p20)));
	for (int f = 0; f < N_COSINE_FORMS; f++)
	{
		if (best_g[f] < 0)
		{
			ereport(NOTICE,
					(errmsg("hybrid: evidence %s not searched beside EASE's",
							mtdpp_hybrid_form_names[f])));
			continue;
		}
		sums_metrics(&s->grid[f][best_g[f]], s->n, &mt);
		ereport(NOTICE,
				(errmsg("hybrid: evidence %s, best beta %g: MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f%s",
						mtdpp_hybrid_form_names[f], grid_beta(best_g[f]), mt.mpr, mt.p5, mt.p10, mt.p20,
						f == form && pair_g[0] < 0 ? " (chosen)" : "")));
		sums_metrics(&s->grid[f][N_BETAS - 1], s->n, &mt);
		ereport(NOTICE,
				(errmsg("hybrid: evidence %s, largest beta %g: MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f",
						mtdpp_hybrid_form_names[f], grid_beta(N_BETAS - 1), mt.mpr, mt.p5, mt.p10, mt.p20)));
	}
	if (pair_g[0] < 0)
	{
		ereport(NOTICE,
				(errmsg("hybrid: evidence ease not tried (its fit would not fit in maintenance_work_mem, or an exact fit was asked of more items than it fits)")));
	}
	else
	{
		int			row,
					g;

		/* EASE alone: the pair's first row */
		best_smoothed(&s->pair[0][0], 1, N_PAIR_BETAS, s->n, &row, &g);
		sums_metrics(&s->pair[0][g], s->n, &mt);
		ereport(NOTICE,
				(errmsg("hybrid: evidence ease, best beta %g: MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f",
						pair_beta(g), mt.mpr, mt.p5, mt.p10, mt.p20)));
		sums_metrics(&s->pair[pair_g[0]][pair_g[1]], s->n, &mt);
		ereport(NOTICE,
				(errmsg("hybrid: evidence cosine+ease, best betas %g and %g: MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f (chosen)",
						pair_beta(pair_g[0]), pair_beta(pair_g[1]), mt.mpr, mt.p5, mt.p10, mt.p20)));
	}
	ereport(NOTICE, (errmsg("hybrid: weight search %.1f s", seconds)));
}

/*
 * The pair of betas (cosine, EASE's weights) of the best smoothed sum of
 * the four metrics; ties go to the smaller betas.  Into PAIR_G, and as the form and betas of the choice: a
 * pair with one beta zero is the other form alone.
 */
static void
choose_pair(const GridSums *sums, int *pair_g, HybridForm *form, double *beta,
			double *ease_beta, MtdppMetrics *chosen)
{
	best_smoothed(&sums->pair[0][0], N_PAIR_BETAS, N_PAIR_BETAS, sums->n, &pair_g[0], &pair_g[1]);
	*form = pair_g[1] == 0 ? FORM_COSINE : pair_g[0] == 0 ? FORM_EASE : FORM_COSINE_EASE;
	*beta = pair_beta(*form == FORM_EASE ? pair_g[1] : pair_g[0]);
	*ease_beta = *form == FORM_COSINE_EASE ? pair_beta(pair_g[1]) : 0.0;
	sums_metrics(&sums->pair[pair_g[0]][pair_g[1]], sums->n, chosen);
}

/*
 * Chooses the form and beta on the slice V (whole catalog as candidates)
 * for the DPP DPP (DPP_MEMORY bytes, which EASE's fit counts beside its
 * own), the evidence built from DATA without the slice; the metrics of the
 * choice into CHOSEN.  ALPHA: the EASE lambda chosen, as a
 * multiple of the mean popularity (-1 if the form was not offered);
 * COSINE_BETA: the best beta of the cosine form, a fallback.
 */
void
mtdpp_hybrid_choose_weights(MtdppModel *dpp, MtdppBaskets *data, MtdppValidation *v,
							const MtdppParams *p, int cap, Size dpp_memory, HybridForm *form, double *beta,
							double *ease_beta, MtdppMetrics *chosen, double *alpha,
							double *cosine_beta, bool *ease_neighborhood)
{
	MtdppBaskets *rest = mtdpp_baskets_without(data, v->is_val);
	MtdppModel *evid = mtdpp_model_alloc(MTDPP_ITEMKNN, data->n_items, 0);
	MtdppModel *ease = mtdpp_model_alloc(MTDPP_EASE, data->n_items, 0);
	double		lambda = -1.0,
				dropout;
	int			n = data->n_items;
	double	   *ev[N_FORMS];
	bool	   *also = palloc0(sizeof(bool) * Max(n, 1));
	int32	   *cands = palloc(sizeof(int32) * Max(n, 1));
	int32	   *touched = palloc(sizeof(int32) * Max(n, 1));
	double	   *scores = palloc(sizeof(double) * Max(n, 1));
	GridSums   *sums = palloc0(sizeof(GridSums));
	int			best_g[N_COSINE_FORMS];
	int			pair_g[2] = {-1, -1};
	double		best = -1.0;
	instr_time	start;
	MtdppListTap tap;
	MtdppCosineLists *cosine;

	INSTR_TIME_SET_CURRENT(start);
	cosine = mtdpp_cosine_lists_start(rest, evid, cap, &tap);
	*alpha = -1.0;
	/* the whole catalog, as the benchmark ranks */
	memset(v->outside, 0, sizeof(bool) * n);
	memset(v->exclude, 0, sizeof(bool) * n);
	if (mtdpp_ease_lists(rest, p, &lambda, ease, ease_neighborhood, v, &dropout, dpp_memory, &tap))
		*alpha = lambda / ((double) rest->n_lines / Max(rest->n_items, 1));
	else
		ease = NULL;
	/* the cosine lists: counted in the neighbourhoods' pass, or in one of their own */
	mtdpp_cosine_lists_finish(cosine);
	for (int f = 0; f < N_FORMS; f++)
		ev[f] = palloc0(sizeof(double) * Max(n, 1));
	for (int k = 0; k < v->n; k++)
	{
		CHECK_FOR_INTERRUPTS();
		grid_basket(v, k, dpp, evid, ease, rest->popularity, ev, also, cands,
					scores, touched, sums);
	}

	/* each form's best smoothed beta; ties go to the earlier form */
	*form = FORM_COSINE;
	*beta = 0.0;
	for (int f = 0; f < N_COSINE_FORMS; f++)
	{
		double		form_best;
		int			row;

		best_g[f] = -1;
		if (f >= N_COSINE_FORMS || (ease != NULL && f != FORM_COSINE))
			continue;
		form_best = best_smoothed(sums->grid[f], 1, N_BETAS, sums->n, &row, &best_g[f]);
		if (form_best > best)
		{
			best = form_best;
			*form = f;
			*beta = grid_beta(best_g[f]);
		}
	}
	*cosine_beta = grid_beta(best_g[FORM_COSINE]);
	*ease_beta = 0.0;
	sums_metrics(&sums->grid[*form][best_g[*form]], sums->n, chosen);
	if (ease != NULL)
		choose_pair(sums, pair_g, form, beta, ease_beta, chosen);
	if (p->verbose)
		report_search(sums, best_g, pair_g, *form, mtdpp_seconds_since(start));
}
