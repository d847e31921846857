/*
 * sweep.c
 *		Checks every routine of src/numeric/linalg.c (the extension's only caller of
 *		BLAS and LAPACK) against plain loops, over a range of sizes, with
 *		whatever BLAS and kernel set this process loads.
 *
 *     sweep [--from N] [--to N] [--step N] [SIZE ...]
 *
 * Each routine's result is checked by products with random probe vectors,
 * computed here in double precision without BLAS: O(n^2) a check, so the
 * routine under test dominates the cost.  A wrong number is reported with
 * the routine, the size and the relative residual; the exit status is 1 if
 * any check failed.  A crash in the BLAS ends the process: test/linalg/run
 * runs one process per kernel set and reports which one died.
 *
 * The double-precision routines are checked twice: as completion calls them
 * (BLAS and LAPACK) and in the reproducible mode training runs in
 * (linalg_fixed.c).  The second pass also checks that an element's bits do
 * not depend on where its row and column lie, and prints a digest of every
 * bit it computed for sizes up to DIGEST_MAX_N: test/linalg/run requires the
 * same digest under every BLAS and kernel set.
 */
#include "postgres.h"

#include <dlfcn.h>
#include <math.h>

#include "pg_runtime.h"
#include "numeric/linalg.h"

#define PROBES 3
/* the eigendecomposition is of a basket's kernel: no larger is checked */
#define EIGEN_MAX_N 320
/* the largest square product checked in the fixed order */
#define FIXED_SQUARE_MAX_N 320
/* every configuration of test/linalg/run checks the sizes up to this one */
#define DIGEST_MAX_N 769

static int	failures = 0;
static uint64 rng_state = 88172645463325252ULL;

/* the pass under way: " (fixed order)" in reproducible mode, else "" */
static const char *pass_label = "";
static bool digesting = false;
static uint64 digest = 14695981039346656037ULL;

/* true in the fixed-order pass */
static bool
digesting_pass(void)
{
	return pass_label[0] != '\0';
}

/* folds the bits of X[0..n) into the digest (FNV-1a), in the fixed-order pass */
static void
digest_add(const double *x, size_t n)
{
	const unsigned char *b = (const unsigned char *) x;

	if (!digesting)
		return;
	for (size_t i = 0; i < n * sizeof(double); i++)
		digest = (digest ^ b[i]) * 1099511628211ULL;
}

static double
uniform(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (double) (rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void
check(const char *routine, int n, double residual, double tolerance)
{
	if (!(residual <= tolerance))
	{
		printf("FAIL %s%s n=%d: relative residual %.3g (tolerance %.3g)\n",
			   routine, pass_label, n, residual, tolerance);
		failures++;
	}
}

/*
 * A symmetric positive definite matrix with eigenvalues in about [0.8, 3.2]:
 * 2 I plus a symmetric matrix of uniform entries scaled by 1/sqrt(n).
 */
static void
spd_matrix(double *S, int n)
{
	double		scale = 1.0 / sqrt((double) n);

	for (int i = 0; i < n; i++)
	{
		for (int j = 0; j < i; j++)
			S[(size_t) i * n + j] = S[(size_t) j * n + i] = uniform() * scale;
		S[(size_t) i * n + i] = 2.0 + uniform() * scale;
	}
}

static void
random_vector(double *v, int n)
{
	for (int i = 0; i < n; i++)
		v[i] = uniform();
}

static double
norm(const double *v, int n)
{
	double		s = 0.0;

	for (int i = 0; i < n; i++)
		s += v[i] * v[i];
	return sqrt(s);
}

/* y = M x for the row-major m x n matrix M (leading dimension ld) */
static void
matvec(const double *M, int m, int n, int ld, const double *x, double *y)
{
	for (int i = 0; i < m; i++)
	{
		double		s = 0.0;

		for (int j = 0; j < n; j++)
			s += M[(size_t) i * ld + j] * x[j];
		y[i] = s;
	}
}

/* y = M^T x for the row-major m x n matrix M */
static void
matvec_t(const double *M, int m, int n, int ld, const double *x, double *y)
{
	for (int j = 0; j < n; j++)
		y[j] = 0.0;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			y[j] += M[(size_t) i * ld + j] * x[i];
}

static double
relative_difference(const double *a, const double *b, int n)
{
	double		d = 0.0;

	for (int i = 0; i < n; i++)
		d += (a[i] - b[i]) * (a[i] - b[i]);
	return sqrt(d) / Max(norm(b, n), 1e-300);
}

/* The SPD inverse in single precision, column-major, lower triangle. */
static void
sweep_spd_inverse_float(int n)
{
	double	   *S = palloc(sizeof(double) * n * n);
	float	   *A = palloc(sizeof(float) * n * n);
	double	   *v = palloc(sizeof(double) * n),
			   *x = palloc(sizeof(double) * n),
			   *y = palloc(sizeof(double) * n);
	double		worst = 0.0;
	bool		upper_kept = true;

	spd_matrix(S, n);
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)
			A[i + (size_t) j * n] = i >= j ? (float) S[(size_t) i * n + j] : -7.0f;
	if (!mtdpp_spd_inverse_float(A, n))
	{
		printf("FAIL spd_inverse_float n=%d: refused a positive definite matrix\n", n);
		failures++;
		return;
	}
	for (int j = 0; j < n; j++)
		for (int i = 0; i < j; i++)
			if (A[i + (size_t) j * n] != -7.0f)
				upper_kept = false;
	if (!upper_kept)
	{
		printf("FAIL spd_inverse_float n=%d: wrote into the upper triangle\n", n);
		failures++;
	}
	for (int p = 0; p < PROBES; p++)
	{
		/* x = A^-1 v from the lower triangle, then y = S x: y must be v */
		random_vector(v, n);
		for (int i = 0; i < n; i++)
		{
			double		s = 0.0;

			for (int j = 0; j < n; j++)
				s += (double) (i >= j ? A[i + (size_t) j * n] : A[j + (size_t) i * n]) * v[j];
			x[i] = s;
		}
		matvec(S, n, n, n, x, y);
		worst = Max(worst, relative_difference(y, v, n));
	}
	check("spd_inverse_float", n, worst, 1e-4);
	pfree(S);
	pfree(A);
	pfree(v);
	pfree(x);
	pfree(y);
}

/* Cholesky in double, its inverse, its solve: row-major lower. */
static void
sweep_cholesky(int n)
{
	double	   *S = palloc(sizeof(double) * n * n),
			   *L = palloc(sizeof(double) * n * n),
			   *X = palloc(sizeof(double) * n * n);
	double	   *v = palloc(sizeof(double) * n),
			   *w = palloc(sizeof(double) * n),
			   *y = palloc(sizeof(double) * n),
			   *z = palloc(sizeof(double) * n);
	double		worst_factor = 0.0,
				worst_inverse = 0.0,
				worst_solve = 0.0,
				logdet_check;

	spd_matrix(S, n);
	memcpy(L, S, sizeof(double) * n * n);
	if (!mtdpp_cholesky(L, n))
	{
		printf("FAIL cholesky n=%d: refused a positive definite matrix\n", n);
		failures++;
		return;
	}
	digest_add(L, (size_t) n * n);
	/* L L^T v = S v, reading only the lower triangle of L */
	for (int p = 0; p < PROBES; p++)
	{
		random_vector(v, n);
		for (int j = 0; j < n; j++)
		{
			double		s = 0.0;

			for (int i = j; i < n; i++)
				s += L[(size_t) i * n + j] * v[i];
			w[j] = s;
		}
		for (int i = 0; i < n; i++)
		{
			double		s = 0.0;

			for (int j = 0; j <= i; j++)
				s += L[(size_t) i * n + j] * w[j];
			y[i] = s;
		}
		matvec(S, n, n, n, v, z);
		worst_factor = Max(worst_factor, relative_difference(y, z, n));
	}
	check("cholesky", n, worst_factor, 1e-12);

	/* ln det: the sum of the logs of the diagonal, against eigenvalue-free bound */
	logdet_check = mtdpp_cholesky_logdet(L, n);
	if (!isfinite(logdet_check) || logdet_check < n * log(0.5) || logdet_check > n * log(4.0))
	{
		printf("FAIL cholesky_logdet n=%d: %g outside [%g, %g]\n",
			   n, logdet_check, n * log(0.5), n * log(4.0));
		failures++;
	}

	/* the solve: S x = v */
	for (int p = 0; p < PROBES; p++)
	{
		random_vector(v, n);
		memcpy(z, v, sizeof(double) * n);
		mtdpp_cholesky_solve(L, n, z, 1);
		digest_add(z, n);
		matvec(S, n, n, n, z, y);
		worst_solve = Max(worst_solve, relative_difference(y, v, n));
	}
	check("cholesky_solve", n, worst_solve, 1e-12);

	/* the inverse, full symmetric */
	memcpy(X, L, sizeof(double) * n * n);
	mtdpp_cholesky_inverse(X, n);
	digest_add(X, (size_t) n * n);
	for (int p = 0; p < PROBES; p++)
	{
		random_vector(v, n);
		matvec(X, n, n, n, v, w);
		matvec(S, n, n, n, w, y);
		worst_inverse = Max(worst_inverse, relative_difference(y, v, n));
	}
	check("cholesky_inverse", n, worst_inverse, 1e-12);
	pfree(S);
	pfree(L);
	pfree(X);
	pfree(v);
	pfree(w);
	pfree(y);
	pfree(z);
}

/*
 * The three products, on the shapes the extension gives them: square, a
 * few columns (a basket against candidates), a short inner dimension (a
 * rank), and a long one (V^T V over the items).  C v is checked against
 * A (B v) without BLAS.  Training has no large square product: the fixed
 * pass checks square ones up to FIXED_SQUARE_MAX_N only.
 */
static void
sweep_products(int n)
{
	int			shapes[4][3] = {{n, n, n}, {n, 1 + n % 7, 1 + n % 64}, {1 + n % 5, n, 1 + n % 33},
								{1 + n % 64, 1 + n % 64, n}};

	for (int s = 0; s < 4; s++)
	{
		if (s == 0 && digesting_pass() && n > FIXED_SQUARE_MAX_N)
			continue;

		int			m = shapes[s][0],
					c = shapes[s][1],
					k = shapes[s][2];
		double	   *A = palloc(sizeof(double) * Max(m, k) * Max(k, m)),
				   *B = palloc(sizeof(double) * Max(c, k) * Max(k, c)),
				   *C = palloc(sizeof(double) * m * c),
				   *v = palloc(sizeof(double) * Max(c, m)),
				   *t = palloc(sizeof(double) * Max(Max(c, m), k)),
				   *want = palloc(sizeof(double) * Max(c, m)),
				   *got = palloc(sizeof(double) * Max(c, m));
		double		worst_nt = 0.0,
					worst_nn = 0.0,
					worst_tn = 0.0;

		for (size_t i = 0; i < (size_t) Max(m, k) * Max(k, m); i++)
			A[i] = uniform();
		for (size_t i = 0; i < (size_t) Max(c, k) * Max(k, c); i++)
			B[i] = uniform();
		for (int p = 0; p < PROBES; p++)
		{
			random_vector(v, c);
			/* C = A B^T: A m x k, B c x k */
			mtdpp_gemm_nt(m, c, k, A, k, B, k, C, c);
			digest_add(C, (size_t) m * c);
			matvec_t(B, c, k, k, v, t);
			matvec(A, m, k, k, t, want);
			matvec(C, m, c, c, v, got);
			worst_nt = Max(worst_nt, relative_difference(got, want, m));
			/* C = A B: A m x k, B k x c */
			mtdpp_gemm_nn(m, c, k, A, k, B, c, C, c);
			digest_add(C, (size_t) m * c);
			matvec(B, k, c, c, v, t);
			matvec(A, m, k, k, t, want);
			matvec(C, m, c, c, v, got);
			worst_nn = Max(worst_nn, relative_difference(got, want, m));
			/* C = A^T B: A k x m, B k x c */
			mtdpp_gemm_tn(m, c, k, A, m, B, c, C, c);
			digest_add(C, (size_t) m * c);
			matvec(B, k, c, c, v, t);
			matvec_t(A, k, m, m, t, want);
			matvec(C, m, c, c, v, got);
			worst_tn = Max(worst_tn, relative_difference(got, want, m));
		}
		check("gemm_nt", n, worst_nt, 1e-12);
		check("gemm_nn", n, worst_nn, 1e-12);
		check("gemm_tn", n, worst_tn, 1e-12);
		pfree(A);
		pfree(B);
		pfree(C);
		pfree(v);
		pfree(t);
		pfree(want);
		pfree(got);
	}
}

/* B := B L^-T for a lower Cholesky factor L: B' L^T v = B v */
static void
sweep_trsm(int n)
{
	int			m = 1 + (n * 7) % 97;
	double	   *S = palloc(sizeof(double) * n * n),
			   *B = palloc(sizeof(double) * m * n),
			   *B0 = palloc(sizeof(double) * m * n),
			   *v = palloc(sizeof(double) * n),
			   *w = palloc(sizeof(double) * n),
			   *want = palloc(sizeof(double) * m),
			   *got = palloc(sizeof(double) * m);
	double		worst = 0.0;

	spd_matrix(S, n);
	if (!mtdpp_cholesky(S, n))
	{
		printf("FAIL cholesky n=%d: refused a positive definite matrix\n", n);
		failures++;
		return;
	}
	for (size_t i = 0; i < (size_t) m * n; i++)
		B[i] = B0[i] = uniform();
	mtdpp_trsm_right_lt(m, n, S, B);
	digest_add(B, (size_t) m * n);
	for (int p = 0; p < PROBES; p++)
	{
		random_vector(v, n);
		/* w = L^T v */
		for (int j = 0; j < n; j++)
		{
			double		s = 0.0;

			for (int i = j; i < n; i++)
				s += S[(size_t) i * n + j] * v[i];
			w[j] = s;
		}
		matvec(B, m, n, n, w, got);
		matvec(B0, m, n, n, v, want);
		worst = Max(worst, relative_difference(got, want, m));
	}
	check("trsm_right_lt", n, worst, 1e-12);
	pfree(S);
	pfree(B);
	pfree(B0);
	pfree(v);
	pfree(w);
	pfree(want);
	pfree(got);
}

/* eigenvectors V (columns) and values W: S V v = V diag(W) v, V^T V v = v */
static void
sweep_eigen(int n)
{
	double	   *S = palloc(sizeof(double) * n * n),
			   *V = palloc(sizeof(double) * n * n),
			   *W = palloc(sizeof(double) * n),
			   *v = palloc(sizeof(double) * n),
			   *t = palloc(sizeof(double) * n),
			   *want = palloc(sizeof(double) * n),
			   *got = palloc(sizeof(double) * n);
	double		worst = 0.0,
				worst_orth = 0.0;

	spd_matrix(S, n);
	memcpy(V, S, sizeof(double) * n * n);
	mtdpp_symmetric_eigen(V, n, W);
	for (int i = 1; i < n; i++)
		if (!(W[i - 1] <= W[i]))
		{
			printf("FAIL symmetric_eigen n=%d: eigenvalues not ascending\n", n);
			failures++;
			break;
		}
	for (int p = 0; p < PROBES; p++)
	{
		random_vector(v, n);
		matvec(V, n, n, n, v, t);
		matvec(S, n, n, n, t, got);
		for (int i = 0; i < n; i++)
			t[i] = W[i] * v[i];
		matvec(V, n, n, n, t, want);
		worst = Max(worst, relative_difference(got, want, n));
		matvec(V, n, n, n, v, t);
		matvec_t(V, n, n, n, t, got);
		worst_orth = Max(worst_orth, relative_difference(got, v, n));
	}
	check("symmetric_eigen", n, worst, 1e-10);
	check("symmetric_eigen (orthonormal)", n, worst_orth, 1e-10);
	pfree(S);
	pfree(V);
	pfree(W);
	pfree(v);
	pfree(t);
	pfree(want);
	pfree(got);
}

/*
 * In the fixed order, an element of a product has the same bits wherever its
 * row and column lie: C = A B against the same product of A without its
 * first row and B without its first column, bit for bit.
 */
static void
sweep_fixed_positions(int n)
{
	int			m = n,
				c = 1 + n % 13,
				k = 1 + (n * 5) % 300;
	double	   *A = palloc(sizeof(double) * m * k),
			   *B = palloc(sizeof(double) * k * c),
			   *C = palloc(sizeof(double) * m * c),
			   *D = palloc(sizeof(double) * m * c);

	for (size_t i = 0; i < (size_t) m * k; i++)
		A[i] = uniform();
	for (size_t i = 0; i < (size_t) k * c; i++)
		B[i] = uniform();
	mtdpp_gemm_nn(m, c, k, A, k, B, c, C, c);
	if (m > 1 && c > 1)
	{
		mtdpp_gemm_nn(m - 1, c - 1, k, A + k, k, B + 1, c, D, c - 1);
		for (int i = 1; i < m; i++)
			for (int j = 1; j < c; j++)
				if (memcmp(&C[(size_t) i * c + j], &D[(size_t) (i - 1) * (c - 1) + j - 1], sizeof(double)) != 0)
				{
					printf("FAIL gemm_nn (fixed order) n=%d: element (%d, %d) has other bits one row and column further\n",
						   n, i, j);
					failures++;
					i = m;
					break;
				}
	}
	pfree(A);
	pfree(B);
	pfree(C);
	pfree(D);
}

/*
 * The factor A = U^T U of the EASE systems, and its solve: no BLAS, the
 * same bits in both passes.
 */
static void
sweep_cholesky_upper(int n)
{
	double	   *S = palloc(sizeof(double) * n * n),
			   *U = palloc(sizeof(double) * n * n);
	double	   *v = palloc(sizeof(double) * n),
			   *w = palloc(sizeof(double) * n),
			   *y = palloc(sizeof(double) * n),
			   *z = palloc(sizeof(double) * n);
	double		worst_factor = 0.0,
				worst_solve = 0.0;
	/* its own draws: the checks after it see the inputs they always had */
	uint64		stream = rng_state;

	spd_matrix(S, n);
	memcpy(U, S, sizeof(double) * n * n);
	/* only the upper triangle is read: spoil the lower */
	for (int i = 1; i < n; i++)
		for (int j = 0; j < i; j++)
			U[(size_t) i * n + j] = NAN;
	if (!mtdpp_cholesky_upper(U, n))
	{
		printf("FAIL cholesky_upper n=%d: refused a positive definite matrix\n", n);
		failures++;
		rng_state = stream;
		return;
	}
	for (int i = 0; i < n; i++)
		digest_add(U + (size_t) i * n + i, n - i);
	/* U^T U v = S v, reading only the upper triangle of U */
	for (int p = 0; p < PROBES; p++)
	{
		random_vector(v, n);
		for (int i = 0; i < n; i++)
		{
			double		s = 0.0;

			for (int j = i; j < n; j++)
				s += U[(size_t) i * n + j] * v[j];
			w[i] = s;
		}
		for (int j = 0; j < n; j++)
		{
			double		s = 0.0;

			for (int i = 0; i <= j; i++)
				s += U[(size_t) i * n + j] * w[i];
			y[j] = s;
		}
		matvec(S, n, n, n, v, z);
		worst_factor = Max(worst_factor, relative_difference(y, z, n));
	}
	check("cholesky_upper", n, worst_factor, 1e-12);
	for (int p = 0; p < PROBES; p++)
	{
		random_vector(v, n);
		memcpy(z, v, sizeof(double) * n);
		mtdpp_cholesky_upper_solve(U, n, z);
		digest_add(z, n);
		matvec(S, n, n, n, z, y);
		worst_solve = Max(worst_solve, relative_difference(y, v, n));
	}
	check("cholesky_upper_solve", n, worst_solve, 1e-12);
	rng_state = stream;
	pfree(S);
	pfree(U);
	pfree(v);
	pfree(w);
	pfree(y);
	pfree(z);
}

static void
sweep_size(void *arg)
{
	int			n = *(int *) arg;

	sweep_spd_inverse_float(n);
	sweep_cholesky(n);
	sweep_products(n);
	sweep_trsm(n);
	if (n <= EIGEN_MAX_N)
		sweep_eigen(n);

	/* again as training calls them */
	mtdpp_linalg_set_reproducible(true);
	pass_label = " (fixed order)";
	digesting = n <= DIGEST_MAX_N;
	sweep_cholesky(n);
	sweep_cholesky_upper(n);
	sweep_products(n);
	sweep_trsm(n);
	sweep_fixed_positions(n);
	digesting = false;
	pass_label = "";
	mtdpp_linalg_set_reproducible(false);
}

static void
run_size(int n)
{
	fuzz_input_begin();
	if (!fuzz_try(sweep_size, &n))
	{
		printf("FAIL n=%d: ERROR %s\n", n, fuzz_error.message);
		failures++;
		mtdpp_linalg_set_reproducible(false);
		pass_label = "";
		digesting = false;
	}
	fuzz_input_end();
}

int
main(int argc, char **argv)
{
	int			from = 0,
				to = 0,
				step = 1,
				checked = 0;

	mtdpp_blas_init();
	{
		char	   *(*corename) (void) = (char *(*) (void)) dlsym(RTLD_DEFAULT, "openblas_get_corename");
		char	   *(*config) (void) = (char *(*) (void)) dlsym(RTLD_DEFAULT, "openblas_get_config");

		if (corename != NULL)
			printf("BLAS: %s, kernels %s\n", config != NULL ? config() : "OpenBLAS", corename());
		else
			printf("BLAS: not OpenBLAS\n");
	}
	for (int a = 1; a < argc; a++)
	{
		if (strcmp(argv[a], "--from") == 0 && a + 1 < argc)
			from = atoi(argv[++a]);
		else if (strcmp(argv[a], "--to") == 0 && a + 1 < argc)
			to = atoi(argv[++a]);
		else if (strcmp(argv[a], "--step") == 0 && a + 1 < argc)
			step = Max(1, atoi(argv[++a]));
		else if (atoi(argv[a]) > 0)
		{
			run_size(atoi(argv[a]));
			checked++;
		}
		else
		{
			fprintf(stderr, "usage: %s [--from N] [--to N] [--step N] [SIZE ...]\n", argv[0]);
			return 2;
		}
		fflush(stdout);
	}
	for (int n = Max(from, 1); from > 0 && n <= to; n += step)
	{
		run_size(n);
		checked++;
		fflush(stdout);
	}
	printf("fixed-order digest: %016llx\n", (unsigned long long) digest);
	printf("%d sizes checked, %d failures\n", checked, failures);
	return failures == 0 ? 0 : 1;
}
