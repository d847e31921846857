/*
 * numeric/linalg_fixed.c
 *		Double-precision products and a triangular solve whose every sum runs
 *		in one fixed order, whatever the BLAS, its kernel set, or where the
 *		operands lie in memory.
 *
 * A fit by stochastic gradient is a chain of a million small steps, each
 * starting from the last.  A difference in the last bit of one product grows
 * over the epochs until early stopping picks another epoch, and the model is
 * another model.  BLAS gives no such guarantee: OpenBLAS's SSE3 kernels
 * (Prescott, which it falls back to on a CPU it does not know) have no fused
 * multiply-add and block a sum differently from its AVX2 ones, and the
 * reference BLAS and BLIS differ again.  So while a model trains
 * (mtdpp_linalg_set_reproducible, called by the training aggregate), linalg.c sends
 * its double-precision products and solves here, and trains the same model
 * under every BLAS and kernel set of a machine.
 *
 * Each element of C = A B is sum_p a_ip b_pj, added from zero in increasing
 * p, by the same sequence of operations in every path: the tiles of 4 x 8
 * elements that keep the sums in registers, and the tiles at the edges,
 * which compute a full tile over repeated rows and padded columns and keep
 * only their own.  Where 8 columns of a row of B are not contiguous (B
 * transposed, or the last columns), they are copied, BLOCK_P rows at a time,
 * into a small buffer on the stack that every tile of those columns reads
 * (no allocation: a helper thread of the trainer calls these too).
 *
 * Completion keeps BLAS (faster on large catalogs, and its scores are the
 * ones earlier releases gave): reproducible arithmetic is a property of the
 * training run, not of the model.
 */
#include "postgres.h"

#include "numeric/linalg.h"

#define TILE_I 4			/* tile() is written out for these two */
#define TILE_J 8
#define BLOCK_P 256

/* four doubles, one AVX2 register (two SSE2 ones in the baseline build) */
typedef double v4d __attribute__((vector_size(4 * sizeof(double))));

/*
 * C[0..mi, 0..nj) += sum_p a(r, p) b(p, *) over kk values of p, where row r
 * of A starts at ROWS[r] and its p-th value is ROWS[r][p * aps], and the 8
 * values b(p, *) lie at BT + p * ldbt.  The 4 x 8
 * sums stay in eight vector registers (named, so that none is spilled)
 * while p runs.
 */
MTDPP_VECTORISED
static void
tile(int kk, const double *const rows[TILE_I], ptrdiff_t aps,
	 const double *bt, ptrdiff_t ldbt, int mi, int nj, double *C, int ldc)
{
	double		c[TILE_I][TILE_J];
	v4d			c00, c01, c10, c11, c20, c21, c30, c31;
	const double *r0 = rows[0],
			   *r1 = rows[1],
			   *r2 = rows[2],
			   *r3 = rows[3];

	for (int r = 0; r < TILE_I; r++)
		for (int j = 0; j < TILE_J; j++)
			c[r][j] = (r < mi && j < nj) ? C[(size_t) r * ldc + j] : 0.0;
	memcpy(&c00, &c[0][0], sizeof(v4d));
	memcpy(&c01, &c[0][4], sizeof(v4d));
	memcpy(&c10, &c[1][0], sizeof(v4d));
	memcpy(&c11, &c[1][4], sizeof(v4d));
	memcpy(&c20, &c[2][0], sizeof(v4d));
	memcpy(&c21, &c[2][4], sizeof(v4d));
	memcpy(&c30, &c[3][0], sizeof(v4d));
	memcpy(&c31, &c[3][4], sizeof(v4d));
	for (int p = 0; p < kk; p++)
	{
		v4d			b0,
					b1,
					a;

		memcpy(&b0, bt + p * ldbt, sizeof(v4d));
		memcpy(&b1, bt + p * ldbt + 4, sizeof(v4d));
		a = (v4d) {r0[p * aps], r0[p * aps], r0[p * aps], r0[p * aps]};
		c00 += a * b0;
		c01 += a * b1;
		a = (v4d) {r1[p * aps], r1[p * aps], r1[p * aps], r1[p * aps]};
		c10 += a * b0;
		c11 += a * b1;
		a = (v4d) {r2[p * aps], r2[p * aps], r2[p * aps], r2[p * aps]};
		c20 += a * b0;
		c21 += a * b1;
		a = (v4d) {r3[p * aps], r3[p * aps], r3[p * aps], r3[p * aps]};
		c30 += a * b0;
		c31 += a * b1;
	}
	memcpy(&c[0][0], &c00, sizeof(v4d));
	memcpy(&c[0][4], &c01, sizeof(v4d));
	memcpy(&c[1][0], &c10, sizeof(v4d));
	memcpy(&c[1][4], &c11, sizeof(v4d));
	memcpy(&c[2][0], &c20, sizeof(v4d));
	memcpy(&c[2][4], &c21, sizeof(v4d));
	memcpy(&c[3][0], &c30, sizeof(v4d));
	memcpy(&c[3][4], &c31, sizeof(v4d));
	for (int r = 0; r < mi; r++)
		for (int j = 0; j < nj; j++)
			C[(size_t) r * ldc + j] = c[r][j];
}

/*
 * C (m x n, row-major, leading dimension ldc) = A B, where a(i, p) is
 * A[i * ais + p * aps] and b(p, j) is B[p * bps + j * bjs]: the strides say
 * which operand is transposed.
 */
static void
fixed_gemm(int m, int n, int k, const double *A, ptrdiff_t ais, ptrdiff_t aps,
		   const double *B, ptrdiff_t bps, ptrdiff_t bjs, double *C, int ldc)
{
	double		bt[BLOCK_P][TILE_J];

	for (int i = 0; i < m; i++)
		memset(C + (size_t) i * ldc, 0, sizeof(double) * n);
	for (int p0 = 0; p0 < k; p0 += BLOCK_P)
	{
		int			kk = Min(BLOCK_P, k - p0);

		for (int j0 = 0; j0 < n; j0 += TILE_J)
		{
			int			nj = Min(TILE_J, n - j0);
			const double *b = &bt[0][0];
			ptrdiff_t	ldb = TILE_J;

			if (bjs == 1 && nj == TILE_J)
			{
				b = B + p0 * bps + j0;
				ldb = bps;
			}
			else
				for (int p = 0; p < kk; p++)
					for (int j = 0; j < TILE_J; j++)
						bt[p][j] = j < nj ? B[(p0 + p) * bps + (j0 + j) * bjs] : 0.0;
			for (int i0 = 0; i0 < m; i0 += TILE_I)
			{
				int			mi = Min(TILE_I, m - i0);
				const double *rows[TILE_I];

				/* an edge tile repeats its last row rather than read past A */
				for (int r = 0; r < TILE_I; r++)
					rows[r] = A + (i0 + Min(r, mi - 1)) * ais + p0 * aps;
				tile(kk, rows, aps, b, ldb, mi, nj, C + (size_t) i0 * ldc + j0, ldc);
			}
		}
	}
}

/* C (m x n) = A (m x k) B, B being k x n */
void
mtdpp_fixed_gemm_nn(int m, int n, int k, const double *A, int lda,
					const double *B, int ldb, double *C, int ldc)
{
	fixed_gemm(m, n, k, A, lda, 1, B, ldb, 1, C, ldc);
}

/* C (m x n) = A (m x k) B^T, B being n x k */
void
mtdpp_fixed_gemm_nt(int m, int n, int k, const double *A, int lda,
					const double *B, int ldb, double *C, int ldc)
{
	fixed_gemm(m, n, k, A, lda, 1, B, 1, ldb, C, ldc);
}

/* C (m x n) = A^T B, A being k x m and B k x n */
void
mtdpp_fixed_gemm_tn(int m, int n, int k, const double *A, int lda,
					const double *B, int ldb, double *C, int ldc)
{
	fixed_gemm(m, n, k, A, 1, lda, B, ldb, 1, C, ldc);
}

/*
 * B (m x n) := B L^-T, L (n x n) lower triangular, all row-major: each row
 * x of the result solves L x = b by forward substitution, its sums in
 * increasing order.
 */
void
mtdpp_fixed_trsm_right_lt(int m, int n, const double *L, double *B)
{
	for (int c = 0; c < m; c++)
	{
		double	   *x = B + (size_t) c * n;

		for (int j = 0; j < n; j++)
		{
			const double *Lj = L + (size_t) j * n;
			double		s = x[j];

			for (int q = 0; q < j; q++)
				s -= Lj[q] * x[q];
			x[j] = s / Lj[j];
		}
	}
}
