/*
 * model.c
 *		Kernels, scores and the serialised form of a model.
 *
 * This is the numeric core that training and query time share.  For a
 * context C of b items and a target t, the multi-task kernel is
 *
 *		K_t[C] = V_C diag(R_t^2) V_C^T + D_C^2		(paper, eq. "rescal")
 *
 * Its entry (s, u) is sum_j V_sj V_uj R_tj^2, linear in R_t^2.  So for one
 * context we form once the r x b(b+1)/2 matrix of products V_sj V_uj (the
 * "pairs"), and one level-3 BLAS call, R^2 (targets x r) times the pairs,
 * yields the lower triangle of every target's kernel at once.  Each kernel is
 * then unpacked, its bias added, and factorised by Cholesky; the score of t
 * is z = ln(w det K_t[C]), so that P(y = 1 | C, t) = 1 - exp(-exp(z)).
 * Ranking by z rather than by ln P(y = 1) keeps apart candidates whose
 * probabilities all round to 1 in double precision.
 *
 * Training uses the same pairs and product for the positive and negative
 * targets of one context, so the trainer and the scorer cannot drift apart.
 *
 * An empty context (every basket item unknown to the model) has no kernel:
 * completions then fall back to popularity, scored ln(share of baskets).
 */
#include "postgres.h"

#include <math.h>

#include "mtdpp.h"

/* candidates scored per BLAS call: bounds the scratch to about 16 MB */
#define SCORE_SCRATCH_DOUBLES (2 * 1024 * 1024)

typedef struct SerialHeader
{
	uint32		magic;
	uint16		format;
	uint16		kind;
	int32		n_items;
	int32		rank;
	double		log_w;
	int32		n_baskets;
	int32		epochs_run;
	int64		n_examples;
	int32		best_epoch;
	int32		json_len;		/* bytes of hyperparameter JSON, padded to 8 */
	double		final_loss;
	double		seconds;
} SerialHeader;

/* zeroed memory that may exceed 1 GB (large catalogs at high rank) */
void *
mtdpp_alloc_huge(Size size)
{
	return MemoryContextAllocExtended(CurrentMemoryContext, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

/* what every model has: its items, their popularity and bias */
static MtdppModel *
model_items(MtdppKind kind, int n_items, int rank)
{
	MtdppModel *m = palloc0(sizeof(MtdppModel));

	m->kind = kind;
	m->n_items = n_items;
	m->rank = rank;
	m->item_ids = palloc0(mul_size(Max(n_items, 1), sizeof(int32)));
	m->popularity = palloc0(mul_size(Max(n_items, 1), sizeof(int32)));
	m->D = palloc0(mul_size(Max(n_items, 1), sizeof(double)));
	return m;
}

/* A model to train or serialise: V and R in double. */
MtdppModel *
mtdpp_model_alloc(MtdppKind kind, int n_items, int rank)
{
	MtdppModel *m = model_items(kind, n_items, rank);
	Size		cells = mul_size(n_items, rank);

	m->V = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
	m->R = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
	return m;
}

/*
 * A model in a backend's cache keeps only what scoring reads, in float: V and
 * R^2 (half the memory of double, the precision the tables store), R^2 in
 * panels (see MTDPP_PANEL), zero past the last item.
 */
MtdppModel *
mtdpp_model_alloc_cached(MtdppKind kind, int n_items, int rank)
{
	MtdppModel *m = model_items(kind, n_items, rank);
	Size		cells = mul_size(Max(n_items, 1), Max(rank, 1));
	Size		panels = (Max(n_items, 1) + MTDPP_PANEL - 1) / MTDPP_PANEL;

	m->Vf = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(cells, sizeof(float)));
	m->R2f = MemoryContextAllocExtended(CurrentMemoryContext,
										mul_size(mul_size(panels, MTDPP_PANEL * sizeof(float)), Max(rank, 1)),
										MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	return m;
}

/* qsort and bsearch order of int32 */
int
mtdpp_cmp_int32(const void *a, const void *b)
{
	int32		x = *(const int32 *) a,
				y = *(const int32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * Rows of V and of R^2 as double, whichever precision the model holds: a
 * model in training holds double and its rows are returned in place; a
 * cached model holds float (R^2 in panels), converted into SCRATCH
 * (n x rank).
 */
static const double *
rows_of(const double *d, const float *f, int r, int start, int n, double *scratch)
{
	const float *src;

	if (d != NULL)
		return d + (size_t) start * r;
	src = f + (size_t) start * r;
	for (size_t i = 0; i < (size_t) n * r; i++)
		scratch[i] = src[i];
	return scratch;
}

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

const double *
mtdpp_rows_R2(const MtdppModel *m, int start, int n, double *scratch)
{
	if (m->R2 != NULL)
		return m->R2 + (size_t) start * m->rank;
	gather_panels(m, NULL, start, n, scratch);
	return scratch;
}

const double *
mtdpp_rows_V(const MtdppModel *m, int start, int n, double *scratch)
{
	return rows_of(m->V, m->Vf, m->rank, start, n, scratch);
}

void
mtdpp_gather_R2(const MtdppModel *m, const int32 *idx, int n, double *out)
{
	if (m->R2 != NULL)
		gather_of(m->R2, NULL, m->rank, idx, n, out);
	else
		gather_panels(m, idx, 0, n, out);
}

void
mtdpp_gather_V(const MtdppModel *m, const int32 *idx, int n, double *out)
{
	gather_of(m->V, m->Vf, m->rank, idx, n, out);
}

/* Builds the squared factors that scoring reads; call after any change. */
void
mtdpp_model_prepare(MtdppModel *m)
{
	Size		cells = (Size) m->n_items * m->rank;
	bool		bias = (m->kind != MTDPP_MULTITASK_NOBIAS && m->kind != MTDPP_LOWRANK);

	if (m->R != NULL)
	{
		if (m->R2 == NULL)
			m->R2 = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
		for (Size i = 0; i < cells; i++)
			m->R2[i] = m->R[i] * m->R[i];
	}
	if (m->D2 == NULL)
		m->D2 = palloc0(mul_size(Max(m->n_items, 1), sizeof(double)));
	for (int i = 0; i < m->n_items; i++)
		m->D2[i] = (bias ? m->D[i] * m->D[i] : 0.0) + MTDPP_JITTER;
	if (m->Vnorm2 == NULL)
		m->Vnorm2 = palloc0(mul_size(Max(m->n_items, 1), sizeof(double)));
	for (int i = 0; i < m->n_items; i++)
	{
		double		s = 0.0;

		for (int j = 0; j < m->rank; j++)
		{
			double		v = m->V ? m->V[(size_t) i * m->rank + j] : m->Vf[(size_t) i * m->rank + j];

			s += v * v;
		}
		m->Vnorm2[i] = s;
	}
}

/*
 * Most basket items a kind can condition on.  The low-rank DPP's kernel has
 * rank r, so any r + 1 items are linearly dependent and det L = 0: it
 * conditions on at most rank - 1 items (the last ones of the basket), which
 * leaves every candidate a positive conditional probability.
 */
int
mtdpp_context_limit(const MtdppModel *m)
{
	if (m->kind == MTDPP_LOWRANK)
		return Max(0, Min(MTDPP_MAX_CONTEXT, m->rank - 1));
	return MTDPP_MAX_CONTEXT;
}

bool
mtdpp_model_is_dpp(const MtdppModel *m)
{
	return m->kind != MTDPP_ITEMKNN && m->kind != MTDPP_POPULARITY;
}

/* dense index of ITEM_ID, or -1 if the model has never seen it */
int
mtdpp_model_index(const MtdppModel *m, int32 item_id)
{
	int			lo = 0,
				hi = m->n_items - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (m->item_ids[mid] == item_id)
			return mid;
		if (m->item_ids[mid] < item_id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
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

/* The pairs of the context CTX, for scoring. */
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
void
mtdpp_kernel_unpack(const MtdppModel *m, const int32 *ctx, int b,
					const double *packed, double *K)
{
	for (int s = 0, q = 0; s < b; s++)
		for (int u = 0; u <= s; u++, q++)
			K[(size_t) s * b + u] = K[(size_t) u * b + s] = packed[q];
	for (int s = 0; s < b; s++)
		K[(size_t) s * b + s] += m->D2[ctx[s]];
}

/*
 * ln det of K_t[ctx] for NT targets whose R^2 rows are at R2ROWS
 * (contiguous, nt x rank), from the pairs P.  PACKED (nt x npair) and K
 * (b x b) are scratch.  -inf for a kernel that is not positive definite.
 */
static void
kernels_logdet(const MtdppModel *m, const int32 *ctx, int b, const double *P,
			   const double *R2rows, int nt, double *packed, double *K,
			   double *logdet)
{
	int			npair = b * (b + 1) / 2;

	mtdpp_gemm_nn(nt, npair, m->rank, R2rows, m->rank, P, npair, packed, npair);
	for (int t = 0; t < nt; t++)
	{
		mtdpp_kernel_unpack(m, ctx, b, packed + (size_t) t * npair, K);
		logdet[t] = mtdpp_cholesky(K, b) ? mtdpp_cholesky_logdet(K, b) : -INFINITY;
	}
}

static void mtdpp_score_multitask(const MtdppModel *m, const int32 *ctx, int b,
								  double *scores);

static double
popularity_score(const MtdppModel *m, int item)
{
	double		total = m->n_baskets > 0 ? m->n_baskets : 1;

	return log((m->popularity[item] + 0.5) / (total + 1.0));
}

/* rows of candidates per BLAS call for a context of b items */
static int
score_block_rows(const MtdppModel *m, int b)
{
	int			npair = b * (b + 1) / 2;
	int			rows = SCORE_SCRATCH_DOUBLES / Max(npair, m->rank);

	return Max(16, Min(rows, 4096));
}

/*
 * Single-kernel kinds (logistic, lowrank): L = V V^T + D^2 and a candidate c
 * is scored through det L[B + c] = det L[B] (L_cc - L_cB L[B]^-1 L_Bc).
 * One GEMM gives L_cB for every candidate (V V_B^T), one triangular solve
 * with the Cholesky factor of L[B] gives the Schur complements.
 *		logistic:	ln(w det L[B + c]), P(y = 1 | B + c) = 1 - exp(-exp(score))
 *		lowrank:	ln det L[B + c] - ln det L[B], the conditional density
 */
static void
score_single_kernel(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	int			r = m->rank;
	int			block = score_block_rows(m, b);
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
			mtdpp_gemm_nt(nt, b, r, mtdpp_rows_V(m, start, nt, rows), r, VB, r, Y, b);
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
			if (m->kind == MTDPP_LOGISTIC)
				scores[c] = m->log_w + logdet_b + log_schur;
			else
				scores[c] = log_schur;
		}
	}
	pfree(VB);
	pfree(L);
	pfree(Y);
	pfree(rows);
}

/*
 * Scores every item of the model as the completion of the context CTX (dense
 * indices, distinct) into SCORES (n_items entries).  Context items are
 * scored too; callers skip them.
 */
void
mtdpp_score_all(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	if (m->kind == MTDPP_LOGISTIC || m->kind == MTDPP_LOWRANK)
	{
		score_single_kernel(m, ctx, b, scores);
		return;
	}
	if (m->kind == MTDPP_ITEMKNN && b > 0)
	{
		mtdpp_itemknn_scores(m, ctx, b, scores);
		return;
	}
	mtdpp_score_multitask(m, ctx, b, scores);
}

/* The multi-task kinds: one kernel per candidate, as the essay above says. */
static void
mtdpp_score_multitask(const MtdppModel *m, const int32 *ctx, int b, double *scores)
{
	int			npair = b * (b + 1) / 2;
	int			block;
	double	   *P,
			   *packed,
			   *K,
			   *rows;

	if (b == 0 || !mtdpp_model_is_dpp(m))
	{
		for (int i = 0; i < m->n_items; i++)
			scores[i] = popularity_score(m, i);
		return;
	}

	block = score_block_rows(m, b);
	P = palloc(sizeof(double) * (size_t) m->rank * npair);
	packed = palloc(sizeof(double) * (size_t) block * npair);
	K = palloc(sizeof(double) * (size_t) b * b);
	rows = palloc(sizeof(double) * (size_t) block * m->rank);
	mtdpp_basket_pairs(m, ctx, b, P);
	for (int start = 0; start < m->n_items; start += block)
	{
		int			nt = Min(block, m->n_items - start);

		kernels_logdet(m, ctx, b, P, mtdpp_rows_R2(m, start, nt, rows), nt,
					   packed, K, scores + start);
		for (int t = start; t < start + nt; t++)
			scores[t] += m->log_w;
	}
	pfree(P);
	pfree(packed);
	pfree(K);
	pfree(rows);
}

/* Scores the N candidates CANDS (dense indices) of the context CTX. */
void
mtdpp_score_some(const MtdppModel *m, const int32 *ctx, int b,
				 const int32 *cands, int n, double *scores)
{
	int			npair = b * (b + 1) / 2;
	int			r = m->rank;
	int			block;
	double	   *P,
			   *packed,
			   *K,
			   *rows;

	if (b == 0 || (m->kind != MTDPP_MULTITASK && m->kind != MTDPP_MULTITASK_NOBIAS))
	{
		/* one pass over the catalog costs less than a kernel per candidate */
		double	   *all = palloc(sizeof(double) * Max(m->n_items, 1));

		mtdpp_score_all(m, ctx, b, all);
		for (int i = 0; i < n; i++)
			scores[i] = all[cands[i]];
		pfree(all);
		return;
	}

	block = Min(score_block_rows(m, b), Max(n, 1));
	P = palloc(sizeof(double) * (size_t) r * npair);
	packed = palloc(sizeof(double) * (size_t) block * npair);
	rows = palloc(sizeof(double) * (size_t) block * r);
	K = palloc(sizeof(double) * (size_t) b * b);
	mtdpp_basket_pairs(m, ctx, b, P);
	for (int start = 0; start < n; start += block)
	{
		int			nt = Min(block, n - start);

		mtdpp_gather_R2(m, cands + start, nt, rows);
		kernels_logdet(m, ctx, b, P, rows, nt, packed, K, scores + start);
		for (int t = start; t < start + nt; t++)
			scores[t] += m->log_w;
	}
	pfree(P);
	pfree(packed);
	pfree(rows);
	pfree(K);
}

/*
 * Serialised form (bytea): a header, the resolved hyperparameters as JSON,
 * the training history, then the per-item arrays.  The format word lets a
 * later version read an older model or refuse it clearly.
 */
bytea *
mtdpp_model_serialize(const MtdppModel *m)
{
	SerialHeader h;
	StringInfoData buf;
	int			json_len = m->hyperparams ? strlen(m->hyperparams) + 1 : 1;
	int			padded = TYPEALIGN(8, json_len);
	Size		cells = (Size) m->n_items * m->rank;
	static const char zeros[8] = {0};

	memset(&h, 0, sizeof(h));
	h.magic = MTDPP_MODEL_MAGIC;
	h.format = MTDPP_FORMAT_VERSION;
	h.kind = m->kind;
	h.n_items = m->n_items;
	h.rank = m->rank;
	h.log_w = m->log_w;
	h.n_baskets = m->n_baskets;
	h.epochs_run = m->epochs_run;
	h.n_examples = m->n_examples;
	h.best_epoch = m->best_epoch;
	h.json_len = padded;
	h.final_loss = m->final_loss;
	h.seconds = m->seconds;

	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, zeros, VARHDRSZ);
	appendBinaryStringInfo(&buf, (char *) &h, sizeof(h));
	appendBinaryStringInfo(&buf, m->hyperparams ? m->hyperparams : "", json_len);
	appendBinaryStringInfo(&buf, zeros, padded - json_len);
	if (m->epochs_run > 0)
	{
		appendBinaryStringInfo(&buf, (char *) m->loss_history, sizeof(double) * m->epochs_run);
		appendBinaryStringInfo(&buf, (char *) m->val_history, sizeof(double) * m->epochs_run);
	}
	appendBinaryStringInfo(&buf, (char *) m->item_ids, sizeof(int32) * m->n_items);
	appendBinaryStringInfo(&buf, (char *) m->popularity, sizeof(int32) * m->n_items);
	appendBinaryStringInfo(&buf, (char *) m->D, sizeof(double) * m->n_items);
	appendBinaryStringInfo(&buf, (char *) m->V, sizeof(double) * cells);
	appendBinaryStringInfo(&buf, (char *) m->R, sizeof(double) * cells);
	if (m->kind == MTDPP_ITEMKNN)
	{
		int64		nn = m->nbr_start[m->n_items];

		appendBinaryStringInfo(&buf, (char *) m->nbr_start, sizeof(int64) * (m->n_items + 1));
		appendBinaryStringInfo(&buf, (char *) m->nbr_index, sizeof(int32) * nn);
		appendBinaryStringInfo(&buf, (char *) m->nbr_weight, sizeof(float4) * nn);
	}
	SET_VARSIZE(buf.data, buf.len);
	return (bytea *) buf.data;
}

static void
read_bytes(const char **pos, const char *end, void *dst, Size len)
{
	if (len > (Size) (end - *pos))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model value is truncated"),
				 errhint("Pass the value returned by the mtdpp_fit aggregate unchanged.")));
	memcpy(dst, *pos, len);
	*pos += len;
}

MtdppModel *
mtdpp_model_deserialize(bytea *blob)
{
	const char *pos = VARDATA_ANY(blob);
	const char *end = pos + VARSIZE_ANY_EXHDR(blob);
	SerialHeader h;
	MtdppModel *m;
	Size		cells;

	read_bytes(&pos, end, &h, sizeof(h));
	if (h.magic != MTDPP_MODEL_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("value is not an mtdpp model"),
				 errhint("Pass the value returned by the mtdpp_fit aggregate.")));
	if (h.format != MTDPP_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model has format %d, this version reads format %d",
						h.format, MTDPP_FORMAT_VERSION),
				 errhint("Train the model again with this version of mtdpp.")));
	/* the DPP kinds have factors (rank 1 or more), the baselines none */
	if (h.kind > MTDPP_POPULARITY || h.n_items < 0 || h.rank < 0 ||
		h.rank > MTDPP_MAX_RANK || h.epochs_run < 0 || h.json_len < 0 || !isfinite(h.log_w) ||
		(h.kind == MTDPP_ITEMKNN || h.kind == MTDPP_POPULARITY) != (h.rank == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model header is corrupt")));

	/* the sizes the header claims must fit in the value before anything is allocated */
	if ((double) h.json_len + 16.0 * h.epochs_run + 16.0 * h.n_items +
		16.0 * (double) h.n_items * h.rank > (double) (end - pos))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model value is truncated"),
				 errdetail("Its header describes %d items at rank %d, more than its %zu bytes hold.",
						   h.n_items, h.rank, (Size) (end - pos)),
				 errhint("Pass the value returned by the mtdpp_fit aggregate unchanged.")));
	m = mtdpp_model_alloc((MtdppKind) h.kind, h.n_items, h.rank);
	m->log_w = h.log_w;
	m->n_baskets = h.n_baskets;
	m->epochs_run = h.epochs_run;
	m->n_examples = h.n_examples;
	m->best_epoch = h.best_epoch;
	m->final_loss = h.final_loss;
	m->seconds = h.seconds;
	m->hyperparams = palloc0(h.json_len + 1);
	read_bytes(&pos, end, m->hyperparams, h.json_len);
	m->loss_history = palloc0(sizeof(double) * Max(1, h.epochs_run));
	m->val_history = palloc0(sizeof(double) * Max(1, h.epochs_run));
	read_bytes(&pos, end, m->loss_history, sizeof(double) * h.epochs_run);
	read_bytes(&pos, end, m->val_history, sizeof(double) * h.epochs_run);
	cells = (Size) h.n_items * h.rank;
	read_bytes(&pos, end, m->item_ids, sizeof(int32) * h.n_items);
	read_bytes(&pos, end, m->popularity, sizeof(int32) * h.n_items);
	read_bytes(&pos, end, m->D, sizeof(double) * h.n_items);
	read_bytes(&pos, end, m->V, sizeof(double) * cells);
	read_bytes(&pos, end, m->R, sizeof(double) * cells);
	if (m->kind == MTDPP_ITEMKNN)
	{
		int64		nn;

		m->nbr_start = mtdpp_alloc_huge(sizeof(int64) * (m->n_items + 1));
		read_bytes(&pos, end, m->nbr_start, sizeof(int64) * (m->n_items + 1));
		nn = m->nbr_start[m->n_items];
		if (m->nbr_start[0] != 0 || nn < 0 || nn > (int64) (end - pos))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("mtdpp model neighbour lists are corrupt")));
		m->nbr_index = mtdpp_alloc_huge(sizeof(int32) * Max(nn, 1));
		m->nbr_weight = mtdpp_alloc_huge(sizeof(float4) * Max(nn, 1));
		read_bytes(&pos, end, m->nbr_index, sizeof(int32) * nn);
		read_bytes(&pos, end, m->nbr_weight, sizeof(float4) * nn);
		for (int i = 0; i < m->n_items; i++)
			if (m->nbr_start[i] > m->nbr_start[i + 1])
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
						 errmsg("mtdpp model neighbour lists are corrupt")));
		for (int64 k = 0; k < nn; k++)
			if (m->nbr_index[k] < 0 || m->nbr_index[k] >= m->n_items)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
						 errmsg("mtdpp model neighbour lists are corrupt")));
	}
	for (int i = 1; i < m->n_items; i++)
		if (m->item_ids[i] <= m->item_ids[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("mtdpp model item ids are not ascending")));
	for (Size c = 0; c < cells; c++)
		if (!isfinite(m->V[c]) || !isfinite(m->R[c]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("mtdpp model factors of item %d are not finite", m->item_ids[c / Max(m->rank, 1)])));
	for (int i = 0; i < m->n_items; i++)
		if (!isfinite(m->D[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("mtdpp model bias of item %d is not finite", m->item_ids[i])));
	return m;
}
