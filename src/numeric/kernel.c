/*
 * numeric/kernel.c
 *		The numeric core: the ln det of a context's kernel under a batch of
 *		targets, shared by training, scoring, the exact top k and validation.
 *
 * For a context C of b items and a target t, the multi-task kernel is
 *
 *		K_t[C] = V_C diag(R_t^2) V_C^T + D_C^2		(paper, eq. "rescal")
 *
 * Its entry (s, u) is sum_j V_sj V_uj R_tj^2, linear in R_t^2.  So for one
 * context we form once the r x b(b+1)/2 matrix of products V_sj V_uj (the
 * "pairs"), and one level-3 BLAS call, R^2 (targets x r) times the pairs,
 * yields the lower triangle of every target's kernel at once.  Each kernel is
 * then unpacked, its bias added, and factorised by Cholesky; its ln det is
 * twice the sum of the logs of the factor's diagonal (linalg.c), so that
 * baskets of 100 items neither underflow nor overflow.
 *
 * The single-kernel kinds score by the Schur complement of one kernel
 * instead: their routines call mtdpp_schur_logdets below.
 *
 * mtdpp_kernels_logdet does this for one batch of targets whose rows of R^2
 * are at hand; training keeps the Cholesky factors it returns for the
 * gradients (fit_loss.c), the single-kernel kinds train through it with R = 1
 * (L = V V^T + D^2).  mtdpp_targets_logdet runs it over a list of candidates
 * or a range of the catalog, a block at a time: scoring (the multi-task kinds),
 * the exact scores of the top k and of validation (topk_bounded.c).  So the trainer
 * and the scorer cannot drift apart.
 *
 * An ensemble of the multi-task kinds keeps its fits side
 * by side in the columns of V and R: the pairs of the whole rank hold each
 * fit's pairs in turn, so mtdpp_targets_logdet runs the core once per fit on
 * its columns and returns the mean.
 *
 * The rows of V and R^2 come in double whichever precision the model holds:
 * a model in training holds double; a model in a backend's cache holds
 * float, R^2 in panels (model.h), converted here row by row.
 */
#include "postgres.h"

#include <math.h>

#include "model/model.h"
#include "numeric/kernel.h"
#include "numeric/linalg.h"

/* candidates scored per BLAS call: bounds the scratch to about 16 MB */
#define SCORE_SCRATCH_DOUBLES (2 * 1024 * 1024)

static void
gather_of(const double *d, const float *f, int r, const int32 *idx, int n, double *out)
{
	for (int t = 0; t < n; t++)
	{
		double	   *o = out + (size_t) t * r;

		if (d != NULL)
			memcpy(o, d + (size_t) idx[t] * r, sizeof(double) * r);
		else
		{
			const float *src = f + (size_t) idx[t] * r;

			for (int j = 0; j < r; j++)
				o[j] = src[j];
		}
	}
}

/* rows of a cached model's R^2 (items IDX, or START on), out of its panels */
static void
gather_panels(const MtdppModel *m, const int32 *idx, int start, int n, double *out)
{
	int			r = m->rank;

	for (int t = 0; t < n; t++)
	{
		const float *lane = m->R2f + mtdpp_panel_cell(r, idx ? idx[t] : start + t, 0);
		double	   *o = out + (size_t) t * r;

		for (int j = 0; j < r; j++)
			o[j] = lane[(size_t) j * MTDPP_PANEL];
	}
}

/*
 * Rows START .. START + N - 1 of R^2 as double: in place for a model in
 * training, else converted into SCRATCH (n x rank).
 */
const double *
mtdpp_rows_R2(const MtdppModel *m, int start, int n, double *scratch)
{
	if (m->R2 != NULL)
		return m->R2 + (size_t) start * m->rank;
	gather_panels(m, NULL, start, n, scratch);
	return scratch;
}

/* The rows of R^2 of the N items IDX, as double, into OUT (n x rank). */
void
mtdpp_gather_R2(const MtdppModel *m, const int32 *idx, int n, double *out)
{
	if (m->R2 != NULL)
		gather_of(m->R2, NULL, m->rank, idx, n, out);
	else
		gather_panels(m, idx, 0, n, out);
}

/* The rows of V of the N items IDX, as double, into OUT (n x rank). */
void
mtdpp_gather_V(const MtdppModel *m, const int32 *idx, int n, double *out)
{
	gather_of(m->V, m->Vf, m->rank, idx, n, out);
}

/* rows of candidates per BLAS call for a context of b items */
int
mtdpp_score_block_rows(const MtdppModel *m, int b)
{
	int			npair = b * (b + 1) / 2;
	int			rows = SCORE_SCRATCH_DOUBLES / Max(npair, m->rank);

	return Max(16, Min(rows, 4096));
}

/*
 * The pairs of a context whose rows of V are VB (b x r): P[j][q] =
 * V_{c_s, j} V_{c_u, j} for the lower triangle (u <= s) enumerated row by
 * row, q = s(s+1)/2 + u.
 */
MTDPP_VECTORISED
void
mtdpp_context_pairs(const double *VB, int b, int r, double *P)
{
	int			npair = b * (b + 1) / 2;

	for (int s = 0, q = 0; s < b; s++)
	{
		const double *vs = VB + (size_t) s * r;

		for (int u = 0; u <= s; u++, q++)
		{
			const double *vu = VB + (size_t) u * r;

			for (int j = 0; j < r; j++)
				P[(size_t) j * npair + q] = vs[j] * vu[j];
		}
	}
}

/* The pairs of the context CTX, for scoring (r x b(b+1)/2). */
void
mtdpp_basket_pairs(const MtdppModel *m, const int32 *ctx, int b, double *P)
{
	double	   *VB = palloc(sizeof(double) * (size_t) Max(b, 1) * m->rank);

	mtdpp_gather_V(m, ctx, b, VB);
	mtdpp_context_pairs(VB, b, m->rank, P);
	pfree(VB);
}

/* Unpacks one packed kernel row into the b x b matrix K and adds the bias. */
MTDPP_VECTORISED
static void
kernel_unpack(const MtdppModel *m, const int32 *ctx, int b,
			  const double *packed, double *K)
{
	for (int s = 0, q = 0; s < b; s++)
		for (int u = 0; u <= s; u++, q++)
			K[(size_t) s * b + u] = K[(size_t) u * b + s] = packed[q];
	for (int s = 0; s < b; s++)
		K[(size_t) s * b + s] += m->D2[ctx[s]];
}

/*
 * The core for one fit: ln det K_t[CTX] for the NT targets whose rows of
 * R^2, R columns of them from R2ROWS on, LDA apart, are the fit's; P its
 * pairs (R x b(b+1)/2).
 */
static int
fit_kernels_logdet(const MtdppModel *m, const int32 *ctx, int b, const double *P,
				   const double *R2rows, int lda, int r, int nt, double *packed,
				   double *K, bool keep_factors, double *logdet)
{
	int			npair = b * (b + 1) / 2;
	int			singular = 0;

	mtdpp_gemm_nn(nt, npair, r, R2rows, lda, P, npair, packed, npair);
	for (int t = 0; t < nt; t++)
	{
		double	   *Kt = keep_factors ? K + (size_t) t * b * b : K;

		kernel_unpack(m, ctx, b, packed + (size_t) t * npair, Kt);
		if (mtdpp_cholesky(Kt, b))
			logdet[t] = mtdpp_cholesky_logdet(Kt, b);
		else
		{
			logdet[t] = -INFINITY;
			singular++;
		}
	}
	return singular;
}

/*
 * The core: ln det K_t[CTX] for the NT targets whose rows of R^2 are R2ROWS
 * (contiguous, nt x rank), from the context's pairs P, into LOGDET; -inf for
 * a kernel that is not numerically positive definite.  PACKED (nt x
 * b(b+1)/2) is scratch.  With KEEP_FACTORS, K holds nt matrices of b x b and
 * target t's Cholesky factor is left in the t-th (training's gradients need
 * them); otherwise K is one b x b matrix of scratch.  Returns how many
 * kernels were not positive definite.  A model of one fit: training's.
 */
int
mtdpp_kernels_logdet(const MtdppModel *m, const int32 *ctx, int b, const double *P,
					 const double *R2rows, int nt, double *packed, double *K,
					 bool keep_factors, double *logdet)
{
	return fit_kernels_logdet(m, ctx, b, P, R2rows, m->rank, m->rank, nt, packed, K,
							  keep_factors, logdet);
}

/*
 * ln det K_t[CTX] for N targets, BLOCK of them per BLAS call, from the
 * context's pairs P: the items TARGETS lists, or (TARGETS NULL) the items
 * FIRST .. FIRST + N - 1 of the catalog.  For an ensemble,
 * the mean over its fits: fit f's pairs are the rows f r .. f r + r - 1 of
 * P, its R^2 the same columns of a target's row.
 */
void
mtdpp_targets_logdet(const MtdppModel *m, const int32 *ctx, int b, const double *P,
					 const int32 *targets, int first, int n, int block, double *logdet)
{
	int			npair = b * (b + 1) / 2;
	int			fits = Max(m->blocks, 1);
	int			r = m->rank / fits;
	double	   *rows = palloc(sizeof(double) * (size_t) block * m->rank);
	double	   *packed = palloc(sizeof(double) * (size_t) block * npair);
	double	   *K = palloc(sizeof(double) * (size_t) b * b);
	double	   *one = fits > 1 ? palloc(sizeof(double) * block) : NULL;

	for (int start = 0; start < n; start += block)
	{
		int			nt = Min(block, n - start);
		const double *R2rows;

		if (targets != NULL)
		{
			mtdpp_gather_R2(m, targets + start, nt, rows);
			R2rows = rows;
		}
		else
			R2rows = mtdpp_rows_R2(m, first + start, nt, rows);
		if (fits == 1)
		{
			(void) mtdpp_kernels_logdet(m, ctx, b, P, R2rows, nt, packed, K, false,
										logdet + start);
			continue;
		}
		for (int t = 0; t < nt; t++)
			logdet[start + t] = 0.0;
		for (int f = 0; f < fits; f++)
		{
			(void) fit_kernels_logdet(m, ctx, b, P + (size_t) f * r * npair,
									  R2rows + (size_t) f * r, m->rank, r, nt, packed, K,
									  false, one);
			for (int t = 0; t < nt; t++)
				logdet[start + t] += one[t];
		}
		for (int t = 0; t < nt; t++)
			logdet[start + t] /= fits;
	}
	pfree(rows);
	pfree(packed);
	pfree(K);
	if (one)
		pfree(one);
}

/*
 * Rows START .. START + N - 1 of V as double: in place for a model in
 * training, else converted from float into SCRATCH (n x rank).
 */
static const double *
rows_V(const MtdppModel *m, int start, int n, double *scratch)
{
	const float *src;

	if (m->V != NULL)
		return m->V + (size_t) start * m->rank;
	src = m->Vf + (size_t) start * m->rank;
	for (size_t i = 0; i < (size_t) n * m->rank; i++)
		scratch[i] = src[i];
	return scratch;
}

/*
 * The single-kernel core, L = V V^T + D^2: every item's ln(w det L[B + c])
 * as the completion of the context B = CTX into SCORES, or with CONDITIONAL
 * the conditional ln det L[B + c] - ln det L[B].  From
 *
 *		det L[B + c] = det L[B] (L_cc - L_cB L[B]^-1 L_Bc)
 *
 * one GEMM gives L_cB for a block of candidates (V V_B^T), one triangular
 * solve with the Cholesky factor of L[B] their Schur complements.
 */
void
mtdpp_schur_logdets(const MtdppModel *m, const int32 *ctx, int b, bool conditional,
					double *scores)
{
	int			r = m->rank;
	int			block = mtdpp_score_block_rows(m, b);
	double	   *VB = palloc(sizeof(double) * (size_t) Max(b, 1) * r);
	double	   *L = palloc(sizeof(double) * (size_t) Max(b, 1) * Max(b, 1));
	double	   *Y = palloc(sizeof(double) * (size_t) block * Max(b, 1));
	double		logdet_b = 0.0;
	double	   *rows = palloc(sizeof(double) * (size_t) block * r);

	mtdpp_gather_V(m, ctx, b, VB);
	if (b > 0)
	{
		mtdpp_gemm_nt(b, b, r, VB, r, VB, r, L, b);
		for (int s = 0; s < b; s++)
			L[(size_t) s * b + s] += m->D2[ctx[s]];
		if (!mtdpp_cholesky(L, b))
		{
			for (int i = 0; i < m->n_items; i++)
				scores[i] = -INFINITY;
			return;
		}
		logdet_b = mtdpp_cholesky_logdet(L, b);
	}
	for (int start = 0; start < m->n_items; start += block)
	{
		int			nt = Min(block, m->n_items - start);

		if (b > 0)
		{
			mtdpp_gemm_nt(nt, b, r, rows_V(m, start, nt, rows), r, VB, r, Y, b);
			mtdpp_trsm_right_lt(nt, b, L, Y);
		}
		for (int t = 0; t < nt; t++)
		{
			int			c = start + t;
			double		schur = m->Vnorm2[c] + m->D2[c];
			double		log_schur;

			for (int s = 0; s < b; s++)
				schur -= Y[(size_t) t * b + s] * Y[(size_t) t * b + s];
			log_schur = schur > 0.0 ? log(schur) : -INFINITY;
			if (conditional)
				scores[c] = log_schur;
			else
				scores[c] = m->log_w + logdet_b + log_schur;
		}
	}
	pfree(VB);
	pfree(L);
	pfree(Y);
	pfree(rows);
}
