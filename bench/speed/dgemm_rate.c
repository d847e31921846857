/*
 * dgemm_rate: single-core double-precision GEMM rate of the system BLAS
 * (whatever libblas.so.3 points to), on a square 512x512 product and on the
 * shapes mtdpp's scorer uses: (candidates x rank) times (rank x b(b+1)/2)
 * for the full kernels, and (candidates x rank) times (rank x b) for the
 * Hadamard bounds.  Also times the unblocked Cholesky of a b x b kernel
 * (the same algorithm as src/linalg.c for b <= 48) to give its rate.
 *
 * Usage: dgemm_rate [seconds per shape]   (default 0.5)
 * On a shared machine, run it more than once and keep the best of each shape.
 * Output: one line per shape, "name m n k gflops".
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dlfcn.h>
#include <cblas.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double *
rnd(size_t n)
{
	double	   *a = malloc(n * sizeof(double));

	for (size_t i = 0; i < n; i++)
		a[i] = (double) rand() / RAND_MAX - 0.5;
	return a;
}

/* C (m x n) = A (m x k) B (k x n), row-major, as mtdpp_gemm_nn does */
static void
gemm_rate(const char *name, int m, int n, int k, double budget)
{
	double	   *A = rnd((size_t) m * k),
			   *B = rnd((size_t) k * n),
			   *C = calloc((size_t) m * n, sizeof(double));
	long		reps = 0;
	double		t0,
				t,
				best = 1e30;

	/* warm-up */
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, A, k, B, n, 0.0, C, n);
	t0 = now();
	do
	{
		double		s = now();

		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, A, k, B, n, 0.0, C, n);
		t = now() - s;
		if (t < best)
			best = t;
		reps++;
	} while (now() - t0 < budget);
	printf("%s %d %d %d %.2f %.2f\n", name, m, n, k,
		   2.0 * m * n * k / best * 1e-9,
		   2.0 * m * n * k * reps / (now() - t0) * 1e-9);
	free(A);
	free(B);
	free(C);
}

/* the unblocked Cholesky of src/linalg.c, on SPD b x b matrices */
static int
chol(double *A, int n)
{
	for (int j = 0; j < n; j++)
	{
		double	   *Aj = A + (size_t) j * n;
		double		d = Aj[j];

		for (int k = 0; k < j; k++)
			d -= Aj[k] * Aj[k];
		if (!(d > 0.0))
			return 0;
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
	return 1;
}

static void
chol_rate(int b, double budget)
{
	double	   *G = rnd((size_t) b * b),
			   *S = calloc((size_t) b * b, sizeof(double)),
			   *W = malloc((size_t) b * b * sizeof(double));
	long		reps = 0;
	double		t0,
				sink = 0;

	for (int i = 0; i < b; i++)
		for (int j = 0; j < b; j++)
		{
			double		s = (i == j) ? b : 0.0;

			for (int q = 0; q < b; q++)
				s += G[i * b + q] * G[j * b + q];
			S[i * b + j] = s;
		}
	t0 = now();
	do
	{
		memcpy(W, S, (size_t) b * b * sizeof(double));
		chol(W, b);
		sink += W[(size_t) b * b - 1];
		reps++;
	} while (now() - t0 < budget);
	/* one rate only (over all calls), printed in both columns */
	printf("cholesky %d %d %d %.3f %.3f\n", b, b, b,
		   (double) b * b * b / 3.0 * reps / (now() - t0) * 1e-9 + sink * 0.0,
		   (double) b * b * b / 3.0 * reps / (now() - t0) * 1e-9);
	free(G);
	free(S);
	free(W);
}

int
main(int argc, char **argv)
{
	double		budget = argc > 1 ? atof(argv[1]) : 0.5;
	void		(*set_threads) (int) = (void (*) (int)) dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
	char	   *(*corename) (void) = (char *(*) (void)) dlsym(RTLD_DEFAULT, "openblas_get_corename");
	char	   *(*config) (void) = (char *(*) (void)) dlsym(RTLD_DEFAULT, "openblas_get_config");
	int			sizes[] = {1, 5, 10, 20, 50};

	if (set_threads)
		set_threads(1);			/* as mtdpp does in each backend */
	printf("blas %s | %s\n", corename ? corename() : "not-openblas",
		   config ? config() : "-");
	gemm_rate("square", 512, 512, 512, budget);
	/* a call short enough to run inside one time slice of a busy machine */
	gemm_rate("square256", 256, 256, 256, budget);
	for (int i = 0; i < 5; i++)
	{
		int			b = sizes[i];
		int			npair = b * (b + 1) / 2;
		char		name[64];

		for (int r = 64; r <= 128; r += 64)
		{
			snprintf(name, sizeof(name), "kernels_b%d_r%d", b, r);
			gemm_rate(name, 4096, npair, r, budget);
			snprintf(name, sizeof(name), "bounds_b%d_r%d", b, r);
			gemm_rate(name, 4096, b, r, budget);
		}
		chol_rate(b, budget);
	}
	return 0;
}
