/*
 * kind_hybrid.c
 *		The kind "hybrid": the multi-task DPP with co-occurrence evidence.
 *
 * The multi-task DPP and item co-occurrence know different things: the DPP
 * generalises through its factors (every candidate gets a finite,
 * informative score) but its top of the list is blurred; co-occurrence is
 * sharp where two items were bought together often and silent elsewhere.
 * The hybrid adds the evidence to the DPP's score, as a product of experts
 * in probability (a sum in log space):
 *
 *		score(c) = ln w + ln det K_c[B]  +  sum_{j in B} beta * g(j, c)
 *
 * K_c the multi-task kernel (kind_multitask.c), g one of four forms of
 * co-occurrence evidence of the pair, with cooc(j, c) the training baskets
 * holding both and f the baskets holding one:
 *
 *	cosine		cooc(j, c) / sqrt(f(j) f(c)), item-kNN's weight;
 *	log_cosine	ln(1 + cosine / 0.01), which saturates: one strong pair
 *				counts less against many weak ones;
 *	confidence	cooc(j, c) / f(j), the share of baskets holding j that hold
 *				c (an association rule's confidence);
 *	ease		B[j][c], EASE's closed-form weight of j for c (kind_ease.c):
 *				what j says of c once the basket's other items are
 *				accounted for, where the forms above count pairs alone.
 *				Fitted exactly on small catalogs and on neighbourhoods
 *				above (ease_solver, kind_ease.c), where the exact fit
 *				would not fit in maintenance_work_mem, or beyond it not
 *				at all; its lambda chosen on a slice of the other baskets
 *				(exact) or on the hybrid's own slice (neighbourhoods,
 *				where each lambda tried costs a pass over the items);
 *				by default with dropout where fitted exactly
 *				(ease_dropout, kind_ease.c).
 *
 * or, where EASE is offered, two of them: beta * g = beta * cosine +
 * ease_beta * B[j][c] (cosine+ease), since neither kind of evidence wins
 * everywhere: EASE's where co-occurrence is rich, the cosine where baskets
 * are many and short (bench/hybrid/forms.md).
 *
 * g is zero where j and c never met, so the evidence lives on the
 * neighbour lists of the basket's items, stored pre-multiplied by beta in
 * the lists itemknn stores (beta * g(j, c) in item j's list), and it is
 * exact: the pruned top k adds it to each candidate's Hadamard bound and
 * stays exact (topk.c).  beta = 0 is the DPP itself; a large beta ranks
 * by co-occurrence first and by the DPP among items without evidence.
 *
 * Fit.  The DPP is the multitask kind's fit (fit.c), which holds a
 * validation slice of the training baskets out of its training.  The form
 * and beta are then chosen on that slice: the evidence is built from the
 * training baskets without the slice (mtdpp_baskets_without), so neither
 * part has seen the baskets it is judged on, and each validation basket's
 * held-out item is ranked among the whole catalog, as the benchmark ranks
 * it, under every form and every beta of a grid at once (the candidates
 * that can pass it under some beta are the DPP's that can reach its score,
 * plus the neighbours of its basket: mtdpp_scores_reaching), with contexts
 * of at most max_context items, as the trainer's validation.  Each form's
 * beta is the one with the best sum of MPR, P@5, P@10 and P@20 (averaged
 * with the neighbouring betas).  Where EASE is offered, the choice is the
 * pair (beta, ease_beta) of a coarser grid with the best sum (averaged over
 * the neighbouring pairs): one of its betas may be zero, which is the
 * other form alone.  Picking one form on a slice of a thousand baskets or
 * fewer flips between forms with its noise (on amazon_diaper's worst split
 * it fell below item-kNN's P@10, where the pair stayed above it); the pair
 * is never far from the better form (bench/hybrid/forms.md).  Where EASE
 * is not offered, the best of the three forms that count pairs is chosen.  The
 * evidence is then rebuilt from every training basket (with the pair, each
 * item's list is the union of its two lists, cut to max_neighbors if the
 * cosine lists were).  The choice, and what each form reached, go into the
 * model's hyperparams; verbose reports the search.
 *
 * On a long order history (more training baskets than epoch_baskets, so
 * that an epoch is a sample) the DPP runs at most HYBRID_SAMPLED_EPOCHS
 * epochs unless epochs is given: there the evidence ranks the top of the
 * list, and at 50,000 items and 10 million lines the DPP's validation MPR
 * after 10 epochs equals the one after 24 (92.57 and 92.56), the hybrid's
 * criterion on its slice is as high, and the hybrid trains in 525 s, within
 * ten minutes (bench/ease_neighborhood/results.md).
 */
#include "postgres.h"

#include <math.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "fit.h"
#include "kinds.h"
#include "model.h"
#include "params.h"
#include "progress.h"
#include "score.h"

/* the DPP's epochs, at most, where an epoch is a sample of the baskets */
#define HYBRID_SAMPLED_EPOCHS	10

typedef enum HybridForm
{
	FORM_COSINE = 0,
	FORM_LOG_COSINE,
	FORM_CONFIDENCE,
	FORM_EASE,
	N_FORMS,
	/* a choice, not a form of its own: beta * cosine + ease_beta * ease */
	FORM_COSINE_EASE = N_FORMS
} HybridForm;

/* the forms computed from the cosine lists: those before FORM_EASE */
#define N_COSINE_FORMS		FORM_EASE

static const char *const form_names[N_FORMS + 1] = {"cosine", "log_cosine", "confidence", "ease", "cosine+ease"};

/* the cosine at which log_cosine is ln 2 */
#define LOG_COSINE_SCALE	0.01

/* the grid of beta: 0, then 2^(g/2 - 4) for g = 0 .. 30 (1/16 to 2048) */
#define N_BETAS				32

/* without a validation slice: the form and beta most data chose */
#define DEFAULT_FORM		FORM_COSINE
#define DEFAULT_BETA		8.0

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

/* g(j, c) of FORM, from their cosine and the baskets holding each */
static inline double
form_weight(HybridForm form, double cosine, int32 freq_j, int32 freq_c)
{
	switch (form)
	{
		case FORM_COSINE:
			return cosine;
		case FORM_LOG_COSINE:
			return log1p(cosine / LOG_COSINE_SCALE);
		case FORM_CONFIDENCE:
			return cosine * sqrt((double) freq_c / Max(freq_j, 1));
		case FORM_EASE:
		case N_FORMS:
			break;
	}
	pg_unreachable();
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
	RankSums	grid[N_FORMS][N_BETAS];
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
 * Adds to R the rank among N items of the held-out item scoring TARGET, the
 * other candidates scoring SCORES[j] + B1 * EV1[c] + B2 * EV2[c] (c =
 * CANDS[j], NP of them).
 */
static void
add_rank(RankSums *r, int n, double target, const double *scores, const int32 *cands,
		 int np, const double *ev1, double b1, const double *ev2, double b2)
{
	int			above = 0,
				ties = 0;
	double		rank;

	for (int j = 0; j < np; j++)
	{
		double		s = scores[j] + b1 * ev1[cands[j]] + b2 * ev2[cands[j]];

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
			for (int f = 0; f < N_COSINE_FORMS; f++)
				ev[f][c] += form_weight(f, (double) evid->nbr_weight[q], freq[j], freq[c]);
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

	for (int f = 0; f < (ease ? N_FORMS : N_COSINE_FORMS) && n > 1; f++)
		for (int g = 0; g < N_BETAS; g++)
			add_rank(&sums->grid[f][g], n, sh + grid_beta(g) * ev[f][held], scores, cands, np,
					 ev[f], grid_beta(g), ev[f], 0.0);
	for (int g1 = 0; ease && g1 < N_PAIR_BETAS && n > 1; g1++)
		for (int g2 = 0; g2 < N_PAIR_BETAS; g2++)
		{
			double		b1 = pair_beta(g1),
						b2 = pair_beta(g2);

			add_rank(&sums->pair[g1][g2], n, sh + b1 * ev[FORM_COSINE][held] + b2 * ev[FORM_EASE][held],
					 scores, cands, np, ev[FORM_COSINE], b1, ev[FORM_EASE], b2);
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
	for (int f = 0; f < N_FORMS; f++)
	{
		if (best_g[f] < 0)
		{
			ereport(NOTICE,
					(errmsg("hybrid: evidence %s not tried (its fit would not fit in maintenance_work_mem)",
							form_names[f])));
			continue;
		}
		sums_metrics(&s->grid[f][best_g[f]], s->n, &mt);
		ereport(NOTICE,
				(errmsg("hybrid: evidence %s, best beta %g: MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f%s",
						form_names[f], grid_beta(best_g[f]), mt.mpr, mt.p5, mt.p10, mt.p20,
						f == form && pair_g[0] < 0 ? " (chosen)" : "")));
		sums_metrics(&s->grid[f][N_BETAS - 1], s->n, &mt);
		ereport(NOTICE,
				(errmsg("hybrid: evidence %s, largest beta %g: MPR %.2f, P@5 %.2f, P@10 %.2f, P@20 %.2f",
						form_names[f], grid_beta(N_BETAS - 1), mt.mpr, mt.p5, mt.p10, mt.p20)));
	}
	if (pair_g[0] >= 0)
	{
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
 * for the DPP DPP, the evidence built from DATA without the slice; the
 * metrics of the choice into CHOSEN.  ALPHA: the EASE lambda chosen, as a
 * multiple of the mean popularity (-1 if the form was not offered);
 * COSINE_BETA: the best beta of the cosine form, a fallback.
 */
static void
choose_weight(MtdppModel *dpp, MtdppBaskets *data, MtdppValidation *v,
			  const MtdppParams *p, int cap, HybridForm *form, double *beta,
			  double *ease_beta, MtdppMetrics *chosen, double *alpha, double *cosine_beta,
			  bool *ease_neighborhood)
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
	int			best_g[N_FORMS];
	int			pair_g[2] = {-1, -1};
	double		best = -1.0;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	mtdpp_cooccurrence_lists(rest, evid, cap);
	*alpha = -1.0;
	/* the whole catalog, as the benchmark ranks */
	memset(v->outside, 0, sizeof(bool) * n);
	memset(v->exclude, 0, sizeof(bool) * n);
	if (mtdpp_ease_lists(rest, p, &lambda, ease, ease_neighborhood, v, &dropout))
		*alpha = lambda / ((double) rest->n_lines / Max(rest->n_items, 1));
	else
		ease = NULL;
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
	for (int f = 0; f < N_FORMS; f++)
	{
		double		form_best;
		int			row;

		best_g[f] = -1;
		if (f == FORM_EASE && ease == NULL)
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

/*
 * The hyperparams of the hybrid: the DPP's (its fit's choices included),
 * named hybrid, and the form and beta with what they reached on the slice.
 */
static char *
hybrid_json(const MtdppModel *dpp, const MtdppParams *p, HybridForm form,
			double beta, double ease_beta, double lambda, double dropout, bool neighborhood,
			const MtdppMetrics *chosen)
{
	const char *prefix = "{\"kind\": \"multitask\"";
	StringInfoData s;

	initStringInfo(&s);
	if (dpp->hyperparams && strncmp(dpp->hyperparams, prefix, strlen(prefix)) == 0)
		appendStringInfo(&s, "{\"kind\": \"hybrid\"%s", dpp->hyperparams + strlen(prefix));
	else
		appendStringInfo(&s, "%s", mtdpp_params_to_json(p));
	s.len--;					/* the closing brace */
	appendStringInfo(&s, ", \"evidence\": \"%s\", \"evidence_weight\": %.15g",
					 form_names[form], beta);
	if (form == FORM_COSINE_EASE)
		appendStringInfo(&s, ", \"evidence_ease_weight\": %.15g", ease_beta);
	if (form == FORM_EASE || form == FORM_COSINE_EASE)
		appendStringInfo(&s, ", \"evidence_lambda\": %.15g, \"evidence_ease_dropout\": %.15g, \"evidence_ease_solver\": \"%s\"",
						 lambda, dropout, neighborhood ? "neighborhood" : "exact");
	if (chosen->n > 0)
		appendStringInfo(&s, ", \"evidence_validation\": {\"baskets\": %d, \"mpr\": %.4f, \"p5\": %.4f, \"p10\": %.4f, \"p20\": %.4f}",
						 chosen->n, chosen->mpr, chosen->p5, chosen->p10, chosen->p20);
	appendStringInfo(&s, "}");
	return s.data;
}

/* weights of the union of two lists, read by cmp_by_weight */
static int
cmp_by_weight(const void *a, const void *b, void *arg)
{
	const double *w = (const double *) arg;
	double		wa = w[*(const int32 *) a],
				wb = w[*(const int32 *) b];

	return wa > wb ? -1 : wa < wb ? 1 : (*(const int32 *) a > *(const int32 *) b) - (*(const int32 *) a < *(const int32 *) b);
}

/*
 * M's lists (cosines) become BETA * cosine + EASE_BETA * EASE's weight, over
 * the union of each item's two lists; with CAP > 0, each item keeps its CAP
 * strongest, as the cosine lists alone would.
 */
static void
merge_lists(MtdppModel *m, const MtdppModel *ease, double beta, double ease_beta, int cap)
{
	int			n = m->n_items;
	int64		room = m->nbr_start[n] + ease->nbr_start[n],
				kept = 0;
	int64	   *start = mtdpp_alloc_huge(sizeof(int64) * (n + 1));
	int32	   *index = mtdpp_alloc_huge(sizeof(int32) * Max(room, 1));
	float4	   *weight = mtdpp_alloc_huge(sizeof(float4) * Max(room, 1));
	double	   *w = palloc0(sizeof(double) * Max(n, 1));
	bool	   *in = palloc0(sizeof(bool) * Max(n, 1));
	int32	   *list = palloc(sizeof(int32) * Max(n, 1));

	for (int j = 0; j < n; j++)
	{
		int			len = 0;

		CHECK_FOR_INTERRUPTS();
		for (int side = 0; side < 2; side++)
		{
			const MtdppModel *from = side == 0 ? m : ease;
			double		scale = side == 0 ? beta : ease_beta;

			for (int64 q = from->nbr_start[j]; q < from->nbr_start[j + 1]; q++)
			{
				int			c = from->nbr_index[q];

				if (!in[c])
				{
					in[c] = true;
					list[len++] = c;
				}
				w[c] += scale * from->nbr_weight[q];
			}
		}
		if (cap > 0 && len > cap)
			qsort_arg(list, len, sizeof(int32), cmp_by_weight, w);
		start[j] = kept;
		for (int t = 0; t < len; t++)
		{
			int			c = list[t];

			if (cap <= 0 || t < cap)
			{
				index[kept] = c;
				weight[kept++] = (float4) w[c];
			}
			in[c] = false;
			w[c] = 0.0;
		}
	}
	start[n] = kept;
	pfree(m->nbr_start);
	pfree(m->nbr_index);
	pfree(m->nbr_weight);
	pfree(w);
	pfree(in);
	pfree(list);
	m->nbr_start = start;
	m->nbr_index = index;
	m->nbr_weight = weight;
}

static MtdppModel *
hybrid_fit(MtdppBaskets *data, const MtdppParams *p)
{
	MtdppParams dp = *p;
	MtdppValidation slice;
	MtdppMetrics chosen = {0};
	MtdppModel *m;
	HybridForm	form = DEFAULT_FORM;
	double		beta = DEFAULT_BETA,
				alpha = -1.0,
				cosine_beta = DEFAULT_BETA,
				ease_beta = 0.0,
				lambda = 0.0,
				dropout = 0.0;
	bool		built = false,
				ease_neighborhood = false;
	int			cap;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	dp.kind = MTDPP_MULTITASK;
	if (!mtdpp_param_given(p, "epochs") && p->epoch_baskets > 0 &&
		data->n_baskets > p->epoch_baskets)
		dp.epochs = Min(dp.epochs, HYBRID_SAMPLED_EPOCHS);
	cap = mtdpp_neighbor_cap(data, p, MTDPP_HYBRID, mtdpp_capacity_max_rank(p));
	if (cap > 0)
		dp.max_neighbors = cap;
	m = mtdpp_train_dpp_slice(data, &dp, &slice);
	mtdpp_model_prepare(m);
	if (slice.n > 0)
	{
		/* the search's baskets and lists go before the final lists are built */
		MemoryContext search = AllocSetContextCreate(CurrentMemoryContext,
													 "mtdpp hybrid weight search",
													 ALLOCSET_DEFAULT_SIZES);
		MemoryContext caller = MemoryContextSwitchTo(search);

		mtdpp_progress_phase(MTDPP_PHASE_WEIGHTS);
		choose_weight(m, data, &slice, p, cap, &form, &beta, &ease_beta, &chosen, &alpha,
					  &cosine_beta, &ease_neighborhood);
		MemoryContextSwitchTo(caller);
		MemoryContextDelete(search);
	}
	else if (p->verbose)
		ereport(NOTICE,
				(errmsg("hybrid: no validation slice, evidence %s with beta %g",
						form_names[form], beta)));

	/* the evidence of every training basket, pre-multiplied by beta */
	mtdpp_progress_phase(MTDPP_PHASE_EVIDENCE);
	m->kind = MTDPP_HYBRID;
	if (form == FORM_EASE || form == FORM_COSINE_EASE)
	{
		MtdppModel *ease = form == FORM_EASE ? m : mtdpp_model_alloc(MTDPP_EASE, data->n_items, 0);
		MtdppParams ep = *p;

		/* lambda scales with the baskets: the same multiple of the mean popularity */
		lambda = alpha * data->n_lines / Max(data->n_items, 1);
		/* and the weights are fitted as they were on the slice */
		ep.ease_solver = ease_neighborhood ? MTDPP_EASE_NEIGHBORHOOD : MTDPP_EASE_EXACT;
		built = mtdpp_ease_lists(data, &ep, &lambda, ease, &ease_neighborhood, NULL, &dropout);
		if (built && form == FORM_EASE)
			for (int64 q = 0; q < m->nbr_start[m->n_items]; q++)
				m->nbr_weight[q] = (float4) (beta * m->nbr_weight[q]);
		else if (built)
		{
			int64		distinct = mtdpp_cooccurrence_lists(data, m, cap);

			mtdpp_report_neighbor_cap(&dp, p, distinct, m->nbr_start[m->n_items]);
			merge_lists(m, ease, beta, ease_beta, cap);
		}
		else
		{
			/* not positive definite on all the baskets: the best cosine */
			form = FORM_COSINE;
			beta = cosine_beta;
			ease_beta = 0.0;
		}
	}
	if (!built)
	{
		int64		distinct = mtdpp_cooccurrence_lists(data, m, cap);

		mtdpp_report_neighbor_cap(&dp, p, distinct, m->nbr_start[m->n_items]);
		for (int j = 0; j < m->n_items; j++)
			for (int64 q = m->nbr_start[j]; q < m->nbr_start[j + 1]; q++)
				m->nbr_weight[q] = (float4) (beta * form_weight(form, (double) m->nbr_weight[q],
																data->popularity[j],
																data->popularity[m->nbr_index[q]]));
	}
	if (beta == 0.0)
		memset(m->nbr_start, 0, sizeof(int64) * (m->n_items + 1));
	m->hyperparams = hybrid_json(m, p, form, beta, ease_beta, lambda, dropout, ease_neighborhood,
								 &chosen);
	m->seconds = mtdpp_seconds_since(start);
	return m;
}

static void
hybrid_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	double	   *ev;

	mtdpp_kind_multitask.score_all(m, ctx, b, scores);
	if (b == 0)
		return;
	ev = palloc(sizeof(double) * Max(m->n_items, 1));
	mtdpp_evidence(m, ctx, b, ev);
	for (int i = 0; i < m->n_items; i++)
		scores[i] += ev[i];
	pfree(ev);
}

static void
hybrid_score_some(const MtdppModel *m, const int32 *ctx, int b,
				  const int32 *cands, int n, double *scores)
{
	double	   *ev = palloc(sizeof(double) * Max(m->n_items, 1));

	mtdpp_kind_multitask.score_some(m, ctx, b, cands, n, scores);
	mtdpp_evidence(m, ctx, b, ev);
	for (int t = 0; t < n; t++)
		scores[t] += ev[cands[t]];
	pfree(ev);
}

static const MtdppKindDefault hybrid_defaults[] = {
	/* the DPP's rank and L2 chosen on validation baskets (fit.c) */
	{"rank", MTDPP_RANK_CHOSEN},
	{"l2", -1.0},
	/* every co-occurring item, while the lists fit in a model value */
	{"max_neighbors", -1},
	/* EASE's evidence with dropout where fitted exactly (kind_ease.c) */
	{"ease_dropout", -1.0},
	{NULL, 0}
};

const MtdppKindRoutine mtdpp_kind_hybrid = {
	.kind = MTDPP_HYBRID,
	.name = "hybrid",
	.defaults = hybrid_defaults,
	.factors = true,
	.task_factors = true,
	.bias = true,
	.neighbors = true,
	.bounded = true,
	.fit = hybrid_fit,
	.score_all = hybrid_score_all,
	.score_some = hybrid_score_some,
};
