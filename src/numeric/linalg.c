/*
 * numeric/linalg.c
 *		The only file that calls BLAS and LAPACK.
 *
 * mtdpp needs four things from linear algebra: matrix products that build
 * many small kernels at once (level-3 BLAS), Cholesky factorisations of those
 * kernels for their log-determinants, and solves with (or, for the low-rank
 * normaliser, the inverse of) a factorised kernel for the gradients; and
 * one large inverse, of the items x items Gram matrix of an item-item regression (EASE), in
 * single precision.  Determinants are never formed: ln det K is twice the
 * sum of the logs of the Cholesky diagonal, so a basket of 100 items neither
 * underflows nor overflows.
 *
 * Kernels of a basket are small (a few rows, at most a hundred or so), and
 * LAPACK's per-call overhead dominates below a few dozen rows, so kernels up
 * to SMALL_N rows are factorised by a plain unblocked Cholesky here and
 * larger ones by LAPACK's dpotrf.  Both compute the same factor.
 *
 * BLAS runs single-threaded inside a backend: PostgreSQL's parallel workers
 * are the parallelism, and a threaded BLAS inside every backend of a busy
 * server would oversubscribe the cores.
 *
 * While a model trains, the double-precision routines run in reproducible
 * mode: products and triangular solves by the fixed-order loops of
 * linalg_fixed.c, and Cholesky factors and inverses of every size by the
 * loops below, so that a fit by stochastic gradient gives the same model
 * under every BLAS and kernel set (linalg_fixed.c says why it would not).
 * The single-precision inverse of EASE is a closed form: BLAS's rounding
 * stays within float tolerance there, and its sgemm keeps its speed.
 */
#include "postgres.h"

#include <dlfcn.h>
#include <math.h>
#include <cblas.h>
#include <lapacke.h>

#include "miscadmin.h"

#include "numeric/linalg.h"

#define SMALL_N 48

/* the fixed-order loops instead of BLAS and LAPACK (see above) */
static bool reproducible = false;

/*
 * Sets reproducible mode on or off; returns what it was, for the caller to
 * set back (in a PG_FINALLY: an error must not leave it on).
 */
bool
mtdpp_linalg_set_reproducible(bool on)
{
	bool		was = reproducible;

	reproducible = on;
	return was;
}

/*
 * Ask OpenBLAS (when it is the BLAS behind libblas.so.3) for one thread.
 * Looked up dynamically: the reference BLAS has no such call.
 */
void
mtdpp_blas_init(void)
{
	void		(*set_threads) (int);

	set_threads = (void (*) (int)) dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
	if (set_threads != NULL)
		set_threads(1);
}

/*
 * Cholesky factorisation in place of the symmetric n x n matrix A (only its
 * lower triangle, row-major, is read): A = L L^T, L in the lower triangle.
 * Returns false if A is not numerically positive definite.
 */
MTDPP_VECTORISED
bool
mtdpp_cholesky(double *A, int n)
{
	if (n > SMALL_N && !reproducible)
	{
		/* row-major lower is column-major upper */
		lapack_int	info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', n, A, n);

		if (info < 0)
			elog(ERROR, "dpotrf: argument %d is invalid", (int) -info);
		return info == 0;
	}

	for (int j = 0; j < n; j++)
	{
		double	   *Aj = A + (size_t) j * n;
		double		d = Aj[j];

		for (int k = 0; k < j; k++)
			d -= Aj[k] * Aj[k];
		if (!(d > 0.0))			/* also catches NaN */
			return false;
		d = sqrt(d);
		Aj[j] = d;
		for (int i = j + 1; i < n; i++)
		{
			double	   *Ai = A + (size_t) i * n;
			double		s = Ai[j];

			for (int k = 0; k < j; k++)
				s -= Ai[k] * Aj[k];
			Ai[j] = s / d;
		}
	}
	return true;
}

/*
 * Cholesky factorisation A = U^T U in place of the symmetric n x n matrix A
 * (only its upper triangle, row-major, is read), U in the upper triangle:
 * for the many independent systems of one right-hand side each (EASE on
 * neighbourhoods), which a thread may factorise beside the backend.  The
 * right-looking order makes every update a contiguous row operation the
 * compiler vectorises without reordering a sum, so the factor is the same
 * under every BLAS (none is called) and at every size.  Returns false if A
 * is not numerically positive definite.
 */
MTDPP_VECTORISED
bool
mtdpp_cholesky_upper(double *A, int n)
{
	for (int j = 0; j < n; j++)
	{
		double	   *restrict Uj = A + (size_t) j * n;
		double		d = Uj[j];
		double		inv;

		if (!(d > 0.0))			/* also catches NaN */
			return false;
		d = sqrt(d);
		Uj[j] = d;
		inv = 1.0 / d;
		for (int k = j + 1; k < n; k++)
			Uj[k] *= inv;
		for (int i = j + 1; i < n; i++)
		{
			double	   *restrict Ai = A + (size_t) i * n;
			double		u = Uj[i];

			for (int k = i; k < n; k++)
				Ai[k] -= u * Uj[k];
		}
	}
	return true;
}

/*
 * Solves A x = b in place of b, A = U^T U factorised by
 * mtdpp_cholesky_upper: U^T y = b by rows of U (each a contiguous update of
 * the unknowns after it), then U x = y by dot products with its rows.
 */
MTDPP_VECTORISED
void
mtdpp_cholesky_upper_solve(const double *U, int n, double *restrict b)
{
	for (int i = 0; i < n; i++)
	{
		const double *restrict Ui = U + (size_t) i * n;
		double		y = b[i] / Ui[i];

		b[i] = y;
		for (int k = i + 1; k < n; k++)
			b[k] -= Ui[k] * y;
	}
	for (int i = n - 1; i >= 0; i--)
	{
		const double *Ui = U + (size_t) i * n;
		double		s = b[i];

		for (int k = i + 1; k < n; k++)
			s -= Ui[k] * b[k];
		b[i] = s / Ui[i];
	}
}

/* ln det A from its Cholesky factor */
double
mtdpp_cholesky_logdet(const double *L, int n)
{
	double		s = 0.0;

	for (int i = 0; i < n; i++)
		s += log(L[(size_t) i * n + i]);
	return 2.0 * s;
}

/*
 * Inverse of A from its Cholesky factor (as left by mtdpp_cholesky), written
 * over it as a full symmetric matrix.
 */
void
mtdpp_cholesky_inverse(double *A, int n)
{
	if (n > SMALL_N && !reproducible)
	{
		lapack_int	info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'U', n, A, n);

		if (info != 0)
			elog(ERROR, "dpotri failed with info %d on a %d x %d kernel", (int) info, n, n);
	}
	else
	{
		/* invert L in place (lower triangle), then A^-1 = L^-T L^-1 */
		for (int j = 0; j < n; j++)
		{
			A[(size_t) j * n + j] = 1.0 / A[(size_t) j * n + j];
			for (int i = j + 1; i < n; i++)
			{
				double		s = 0.0;

				for (int k = j; k < i; k++)
					s -= A[(size_t) i * n + k] * A[(size_t) k * n + j];
				A[(size_t) i * n + j] = s / A[(size_t) i * n + i];
			}
		}
		/* lower triangle of L^-T L^-1: (i >= j) sum_k>=i Linv[k][i] Linv[k][j] */
		for (int i = 0; i < n; i++)
			for (int j = 0; j <= i; j++)
			{
				double		s = 0.0;

				for (int k = i; k < n; k++)
					s += A[(size_t) k * n + i] * A[(size_t) k * n + j];
				A[(size_t) i * n + j] = s;
			}
	}
	/* mirror the lower triangle (row-major) into the upper one */
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			A[(size_t) i * n + j] = A[(size_t) j * n + i];
}

/*
 * Solves A X = B in place of B (n x m, row-major), A = L L^T factorised by
 * mtdpp_cholesky: a forward then a backward substitution, each step a
 * row operation over the m columns (contiguous, and rows i and k never
 * overlap: restrict lets the compiler vectorise it).  n^2 m flops each way, and no inverse formed.
 */
MTDPP_VECTORISED
void
mtdpp_cholesky_solve(const double *L, int n, double *B, int m)
{
	for (int i = 0; i < n; i++)
	{
		const double *Li = L + (size_t) i * n;
		double	   *restrict Bi = B + (size_t) i * m;
		double		inv = 1.0 / Li[i];

		for (int k = 0; k < i; k++)
		{
			const double *restrict Bk = B + (size_t) k * m;
			double		l = Li[k];

			for (int j = 0; j < m; j++)
				Bi[j] -= l * Bk[j];
		}
		for (int j = 0; j < m; j++)
			Bi[j] *= inv;
	}
	for (int i = n - 1; i >= 0; i--)
	{
		double	   *restrict Bi = B + (size_t) i * m;
		double		inv = 1.0 / L[(size_t) i * n + i];

		for (int k = i + 1; k < n; k++)
		{
			const double *restrict Bk = B + (size_t) k * m;
			double		l = L[(size_t) k * n + i];

			for (int j = 0; j < m; j++)
				Bi[j] -= l * Bk[j];
		}
		for (int j = 0; j < m; j++)
			Bi[j] *= inv;
	}
}

/* C (m x n) = A (m x k) B^T, B being n x k; all row-major */
void
mtdpp_gemm_nt(int m, int n, int k, const double *A, int lda,
			  const double *B, int ldb, double *C, int ldc)
{
	if (reproducible)
		mtdpp_fixed_gemm_nt(m, n, k, A, lda, B, ldb, C, ldc);
	else
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k,
					1.0, A, lda, B, ldb, 0.0, C, ldc);
}

/*
 * B (m x n) := B L^-T, L (n x n) the lower Cholesky factor left by
 * mtdpp_cholesky: row c of the result is L^-1 b_c, whose squared norm is
 * b_c^T A^-1 b_c.  All row-major.
 */
void
mtdpp_trsm_right_lt(int m, int n, const double *L, double *B)
{
	if (reproducible)
		mtdpp_fixed_trsm_right_lt(m, n, L, B);
	else
		cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
					m, n, 1.0, L, n, B, n);
}

/*
 * Eigendecomposition of the symmetric n x n matrix A (row-major): A is
 * overwritten by its eigenvectors, in columns, and W receives the
 * eigenvalues in ascending order.
 */
void
mtdpp_symmetric_eigen(double *A, int n, double *W)
{
	lapack_int	info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'L', n, A, n, W);

	if (info != 0)
		elog(ERROR, "dsyev failed with info %d on a %d x %d matrix", (int) info, n, n);
}

/* C (m x n) = A^T B, A being k x m and B k x n; all row-major */
void
mtdpp_gemm_tn(int m, int n, int k, const double *A, int lda,
			  const double *B, int ldb, double *C, int ldc)
{
	if (reproducible)
		mtdpp_fixed_gemm_tn(m, n, k, A, lda, B, ldb, C, ldc);
	else
		cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k,
					1.0, A, lda, B, ldb, 0.0, C, ldc);
}

/*
 * C (m x n) = A (m x k) B, B being k x n; all row-major.  Always GEMM, even
 * for one column: GEMV's sums depend on where A lies in memory, GEMM's do
 * not (it copies A into aligned blocks first), and exact scores must come
 * out the same in every call.
 */
void
mtdpp_gemm_nn(int m, int n, int k, const double *A, int lda,
			  const double *B, int ldb, double *C, int ldc)
{
	if (reproducible)
		mtdpp_fixed_gemm_nn(m, n, k, A, lda, B, ldb, C, ldc);
	else
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
					1.0, A, lda, B, ldb, 0.0, C, ldc);
}

/*
 * y (m) = A (m x k, row-major, float) x: a cached model's rows against one
 * vector (a recurrent state's scores).  GEMM with one column, not GEMV, for the reason
 * above; in reproducible mode a loop in a fixed order.
 */
void
mtdpp_gemv_float(int m, int k, const float *A, const float *x, float *y)
{
	if (reproducible || m == 0 || k == 0)
	{
		for (int i = 0; i < m; i++)
		{
			float		s = 0.0f;

			for (int j = 0; j < k; j++)
				s += A[(size_t) i * k + j] * x[j];
			y[i] = s;
		}
		return;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, 1, k,
				1.0f, A, k, x, 1, 0.0f, y, 1);
}

/*
 * ln P(y = 1) = ln(1 - exp(-z)) with z = w det K given as ln z, accurate for
 * every z: the series ln z - z/2 where z is tiny (it may not even be
 * representable), expm1 or log1p on either side of ln 2 (Maechler's rule).
 */
double
mtdpp_log_p_one(double log_z)
{
	double		z;

	if (log_z < -30.0)
		return log_z - 0.5 * exp(log_z);
	z = exp(log_z);
	if (z <= M_LN2)
		return log(-expm1(-z));
	return log1p(-exp(-z));
}

/* ln P(y = 0) = -z, saturated well before overflow */
double
mtdpp_log_p_zero(double log_z)
{
	return -exp(Min(log_z, 700.0));
}

/*
 * Inverse of the symmetric positive definite n x n matrix A, in single
 * precision and column-major, read from and written to its lower triangle
 * (diagonal included) only: the strict upper triangle is left as it was, free
 * to hold another matrix.  Block column by block column, as LAPACK's blocked
 * Cholesky factorisation (spotrf), triangular inverse (strtri) and product
 * L^-T L^-1 (slauum), so that an inversion of minutes can be cancelled
 * between blocks.
 *
 * The n^3 work is all matrix products (sgemm), on rectangular blocks; the
 * triangular work on each diagonal block (its factor, its inverse, its
 * product) is done here, in double precision, and a triangular solve or
 * product against a diagonal block is an sgemm with that block's inverse or
 * a zero-filled copy.  No
 * triangular routine of the BLAS is called: their kernels are the ones that
 * crash or write out of bounds on some sizes with some kernel sets (OpenBLAS
 * 0.3.21's SSE3 strsm kernel, which it picks on every CPU it does not know),
 * whereas GEMM is the kernel every BLAS tunes and tests first.  Compared with
 * the triangular routines it adds about 5 n^2 INV_BLOCK flops to the n^3.
 *
 * Returns false if A is not numerically positive definite.
 */
#define INV_BLOCK 128
#define AT(i, j) (A + (i) + (size_t) (j) * n)

/*
 * The diagonal blocks' triangular work, row-major on the lower triangle of
 * a b x b block, each inner loop a contiguous axpy that the compiler
 * vectorises (the small kernels' loops above are dot products, kept as they
 * are so that completions score to the last digit as before).  ROW is b
 * doubles of scratch.
 */
MTDPP_VECTORISED
static bool
block_cholesky(double *A, int b, double *row)
{
	for (int j = 0; j < b; j++)
	{
		double		d = A[(size_t) j * b + j];

		if (!(d > 0.0))			/* also catches NaN */
			return false;
		d = sqrt(d);
		A[(size_t) j * b + j] = d;
		for (int i = j + 1; i < b; i++)
			row[i] = A[(size_t) i * b + j] /= d;
		for (int i = j + 1; i < b; i++)
		{
			double	   *restrict Ai = A + (size_t) i * b;
			double		l = row[i];

			for (int k = j + 1; k <= i; k++)
				Ai[k] -= l * row[k];
		}
	}
	return true;
}

/* L^-1 in place of the lower L, row by row: X_i = -(sum_k<i L_ik X_k) / L_ii */
MTDPP_VECTORISED
static void
block_triangular_inverse(double *A, int b, double *row)
{
	for (int i = 0; i < b; i++)
	{
		double	   *restrict Ai = A + (size_t) i * b;
		double		inv = 1.0 / Ai[i];

		memset(row, 0, sizeof(double) * i);
		for (int k = 0; k < i; k++)
		{
			const double *restrict Xk = A + (size_t) k * b;
			double		l = Ai[k];

			for (int j = 0; j <= k; j++)
				row[j] += l * Xk[j];
		}
		for (int j = 0; j < i; j++)
			Ai[j] = -row[j] * inv;
		Ai[i] = inv;
	}
}

/* X^T X in place of the lower X, row by row from the first: G_i = sum_k>=i X_ki X_k */
MTDPP_VECTORISED
static void
block_lower_gram(double *A, int b, double *row)
{
	for (int i = 0; i < b; i++)
	{
		memset(row, 0, sizeof(double) * (i + 1));
		for (int k = i; k < b; k++)
		{
			const double *restrict Xk = A + (size_t) k * b;
			double		x = Xk[i];

			for (int j = 0; j <= i; j++)
				row[j] += x * Xk[j];
		}
		memcpy(A + (size_t) i * b, row, sizeof(double) * (i + 1));
	}
}

typedef struct SpdInverseWork
{
	double	   *block;			/* two diagonal blocks, row-major, double */
	double	   *row;			/* one row of a block */
	float	   *square;			/* a diagonal block, column-major, float */
	float	   *panel;			/* n x INV_BLOCK floats */
} SpdInverseWork;

/* block := the lower triangle of A's jb x jb diagonal block at j (row-major) */
static void
block_from(const float *A, int n, int j, int jb, double *block)
{
	for (int c = 0; c < jb; c++)
		for (int r = c; r < jb; r++)
			block[(size_t) r * jb + c] = *AT(j + r, j + c);
}

/* A's diagonal block at j := the lower triangle of block */
static void
block_to(float *A, int n, int j, int jb, const double *block)
{
	for (int c = 0; c < jb; c++)
		for (int r = c; r < jb; r++)
			*AT(j + r, j + c) = (float) block[(size_t) r * jb + c];
}

/* square := the lower triangle of block, zeros above, column-major float */
static void
square_from(const double *block, int jb, float *square)
{
	for (int c = 0; c < jb; c++)
		for (int r = 0; r < jb; r++)
			square[r + (size_t) c * jb] = r >= c ? (float) block[(size_t) r * jb + c] : 0.0f;
}

/* B (rows x cols, leading dimension ld) copied into dense column-major out */
static void
copy_block(const float *B, int ld, int rows, int cols, float *out)
{
	for (int c = 0; c < cols; c++)
		memcpy(out + (size_t) c * rows, B + (size_t) c * ld, sizeof(float) * rows);
}

/* A = L L^T in A's lower triangle, left-looking by block columns */
static bool
spd_factor_float(float *A, int n, SpdInverseWork *w)
{
	for (int j = 0; j < n; j += INV_BLOCK)
	{
		int			jb = Min(INV_BLOCK, n - j),
					rest = n - j - jb;

		CHECK_FOR_INTERRUPTS();
		block_from(A, n, j, jb, w->block);
		if (j > 0)
		{
			/* A_jj - L_j0 L_j0^T, the product in full (only its lower half is read) */
			cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, jb, jb, j,
						1.0f, AT(j, 0), n, AT(j, 0), n, 0.0f, w->square, jb);
			for (int c = 0; c < jb; c++)
				for (int r = c; r < jb; r++)
					w->block[(size_t) r * jb + c] -= w->square[r + (size_t) c * jb];
		}
		if (!block_cholesky(w->block, jb, w->row))
			return false;
		block_to(A, n, j, jb, w->block);
		if (rest == 0)
			continue;
		/* the panel below: (A_pj - L_p0 L_j0^T) L_jj^-T */
		if (j > 0)
			cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, rest, jb, j,
						-1.0f, AT(j + jb, 0), n, AT(j, 0), n, 1.0f, AT(j + jb, j), n);
		block_triangular_inverse(w->block, jb, w->row);
		square_from(w->block, jb, w->square);
		copy_block(AT(j + jb, j), n, rest, jb, w->panel);
		cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, rest, jb, jb,
					1.0f, w->panel, rest, w->square, jb, 0.0f, AT(j + jb, j), n);
	}
	return true;
}

/*
 * X = L^-1 in place of the lower factor L, block columns from the last:
 * X_pj = -X_pp L_pj X_jj, X_pp (lower, already inverted) taken by block rows.
 */
static void
triangular_inverse_float(float *A, int n, SpdInverseWork *w)
{
	for (int j = ((n - 1) / INV_BLOCK) * INV_BLOCK; j >= 0; j -= INV_BLOCK)
	{
		int			jb = Min(INV_BLOCK, n - j),
					rest = n - j - jb;

		CHECK_FOR_INTERRUPTS();
		block_from(A, n, j, jb, w->block);
		block_triangular_inverse(w->block, jb, w->row);
		if (rest > 0)
		{
			/* panel := L_pj X_jj */
			square_from(w->block, jb, w->square);
			cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, rest, jb, jb,
						1.0f, AT(j + jb, j), n, w->square, jb, 0.0f, w->panel, rest);
			for (int i = j + jb; i < n; i += INV_BLOCK)
			{
				int			ib = Min(INV_BLOCK, n - i),
							off = i - j - jb;
				double	   *diag = w->block + (size_t) jb * jb;

				/* X_ij = -(X_i,(j+jb..i) panel_(..i) + X_ii panel_i) */
				if (off > 0)
					cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, ib, jb, off,
								-1.0f, AT(i, j + jb), n, w->panel, rest, 0.0f, AT(i, j), n);
				block_from(A, n, i, ib, diag);
				square_from(diag, ib, w->square);
				cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, ib, jb, ib,
							-1.0f, w->square, ib, w->panel + off, rest,
							off > 0 ? 1.0f : 0.0f, AT(i, j), n);
			}
		}
		block_to(A, n, j, jb, w->block);
	}
}

/*
 * X^T X in place of the lower triangular X, block rows from the first:
 * row i's blocks are X_ii^T X_i,(0..i) + X_(below i),i^T X_(below i),(0..i),
 * which reads only rows at i and below, not yet overwritten.
 */
static void
lower_gram_float(float *A, int n, SpdInverseWork *w)
{
	for (int i = 0; i < n; i += INV_BLOCK)
	{
		int			ib = Min(INV_BLOCK, n - i),
					rest = n - i - ib;

		CHECK_FOR_INTERRUPTS();
		block_from(A, n, i, ib, w->block);
		if (i > 0)
		{
			square_from(w->block, ib, w->square);
			copy_block(AT(i, 0), n, ib, i, w->panel);
			cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, ib, i, ib,
						1.0f, w->square, ib, w->panel, ib, 0.0f, AT(i, 0), n);
			if (rest > 0)
				cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, ib, i, rest,
							1.0f, AT(i + ib, i), n, AT(i + ib, 0), n, 1.0f, AT(i, 0), n);
		}
		block_lower_gram(w->block, ib, w->row);
		if (rest > 0)
		{
			cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, ib, ib, rest,
						1.0f, AT(i + ib, i), n, AT(i + ib, i), n, 0.0f, w->square, ib);
			for (int c = 0; c < ib; c++)
				for (int r = c; r < ib; r++)
					w->block[(size_t) r * ib + c] += w->square[r + (size_t) c * ib];
		}
		block_to(A, n, i, ib, w->block);
	}
}

#undef AT

/* the scratch mtdpp_spd_inverse_float allocates for n rows, in bytes */
Size
mtdpp_spd_inverse_float_memory(int n)
{
	return sizeof(double) * (2 * INV_BLOCK + 1) * INV_BLOCK +
		sizeof(float) * INV_BLOCK * INV_BLOCK +
		sizeof(float) * (Size) Max(n, 1) * INV_BLOCK;
}

bool
mtdpp_spd_inverse_float(float *A, int n)
{
	SpdInverseWork w;
	bool		ok;

	w.block = palloc(sizeof(double) * 2 * INV_BLOCK * INV_BLOCK);
	w.row = palloc(sizeof(double) * INV_BLOCK);
	w.square = palloc(sizeof(float) * INV_BLOCK * INV_BLOCK);
	w.panel = palloc(sizeof(float) * (Size) Max(n, 1) * INV_BLOCK);
	ok = spd_factor_float(A, n, &w);
	if (ok)
	{
		triangular_inverse_float(A, n, &w);
		lower_gram_float(A, n, &w);
	}
	pfree(w.block);
	pfree(w.row);
	pfree(w.square);
	pfree(w.panel);
	return ok;
}
