/*
 * linalg.c
 *		The only file that calls BLAS and LAPACK.
 *
 * mtdpp needs four things from linear algebra: matrix products that build
 * many small kernels at once (level-3 BLAS), Cholesky factorisations of those
 * kernels for their log-determinants, and solves with (or, for the low-rank
 * normaliser, the inverse of) a factorised kernel for the gradients; and
 * one large inverse, of the items x items Gram matrix of the kind ease, in
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
 */
#include "postgres.h"

#include <dlfcn.h>
#include <math.h>

#include <cblas.h>
#include <lapacke.h>

#include "miscadmin.h"

#include "mtdpp.h"

#define SMALL_N 48

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
	if (n > SMALL_N)
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
	if (n > SMALL_N)
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
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
				1.0, A, lda, B, ldb, 0.0, C, ldc);
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
 * to hold another matrix.  These are LAPACK's blocked Cholesky factorisation
 * (spotrf), triangular inverse (strtri) and product L^-T L^-1 (slauum),
 * written out block column by block column, each block's work in level-3
 * BLAS, so that an inversion of minutes can be cancelled between blocks.
 * Returns false if A is not numerically positive definite.
 */
#define INV_BLOCK 256
#define AT(i, j) (A + (i) + (size_t) (j) * n)

static bool
spd_factor_float(float *A, int n)
{
	for (int j = 0; j < n; j += INV_BLOCK)
	{
		int			jb = Min(INV_BLOCK, n - j),
					rest = n - j - jb;

		CHECK_FOR_INTERRUPTS();
		if (j > 0)
			cblas_ssyrk(CblasColMajor, CblasLower, CblasNoTrans, jb, j,
						-1.0f, AT(j, 0), n, 1.0f, AT(j, j), n);
		if (LAPACKE_spotrf_work(LAPACK_COL_MAJOR, 'L', jb, AT(j, j), n) != 0)
			return false;
		if (rest == 0)
			continue;
		if (j > 0)
			cblas_sgemm(CblasColMajor, CblasNoTrans, CblasTrans, rest, jb, j,
						-1.0f, AT(j + jb, 0), n, AT(j, 0), n, 1.0f, AT(j + jb, j), n);
		cblas_strsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
					rest, jb, 1.0f, AT(j, j), n, AT(j + jb, j), n);
	}
	return true;
}

/* L^-1 in place of the lower Cholesky factor L (strtri, lower, by blocks) */
static void
triangular_inverse_float(float *A, int n)
{
	for (int j = ((n - 1) / INV_BLOCK) * INV_BLOCK; j >= 0; j -= INV_BLOCK)
	{
		int			jb = Min(INV_BLOCK, n - j),
					rest = n - j - jb;
		lapack_int	info;

		CHECK_FOR_INTERRUPTS();
		if (rest > 0)
		{
			cblas_strmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit,
						rest, jb, 1.0f, AT(j + jb, j + jb), n, AT(j + jb, j), n);
			cblas_strsm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit,
						rest, jb, -1.0f, AT(j, j), n, AT(j + jb, j), n);
		}
		info = LAPACKE_strtri_work(LAPACK_COL_MAJOR, 'L', 'N', jb, AT(j, j), n);
		if (info != 0)
			elog(ERROR, "strtri failed with info %d on a block of %d rows", (int) info, jb);
	}
}

/* M^T M in place of the lower triangular M (slauum, lower, by blocks) */
static void
lower_gram_float(float *A, int n)
{
	for (int i = 0; i < n; i += INV_BLOCK)
	{
		int			ib = Min(INV_BLOCK, n - i),
					rest = n - i - ib;
		lapack_int	info;

		CHECK_FOR_INTERRUPTS();
		if (i > 0)
			cblas_strmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit,
						ib, i, 1.0f, AT(i, i), n, AT(i, 0), n);
		info = LAPACKE_slauum_work(LAPACK_COL_MAJOR, 'L', ib, AT(i, i), n);
		if (info != 0)
			elog(ERROR, "slauum failed with info %d on a block of %d rows", (int) info, ib);
		if (rest == 0)
			continue;
		if (i > 0)
			cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, ib, i, rest,
						1.0f, AT(i + ib, i), n, AT(i + ib, 0), n, 1.0f, AT(i, 0), n);
		cblas_ssyrk(CblasColMajor, CblasLower, CblasTrans, ib, rest,
					1.0f, AT(i + ib, i), n, 1.0f, AT(i, i), n);
	}
}

#undef AT

bool
mtdpp_spd_inverse_float(float *A, int n)
{
	if (!spd_factor_float(A, n))
		return false;
	triangular_inverse_float(A, n);
	lower_gram_float(A, n);
	return true;
}
