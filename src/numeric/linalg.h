/*
 * numeric/linalg.h
 *		The numeric core: the extension's only calls into BLAS and LAPACK
 *		(linalg.c), and the loops compiled for the CPU it runs on.
 */
#ifndef MTDPP_LINALG_H
#define MTDPP_LINALG_H

/*
 * The few loops that do most of the work outside BLAS (small Cholesky
 * factors and solves, kernel assembly, gradient and optimiser steps) are
 * compiled twice on x86-64: for the baseline and for AVX2 with FMA, chosen
 * at load time by the CPU (about twice as fast where AVX2 exists).
 */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define MTDPP_VECTORISED __attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
#endif
#ifndef MTDPP_VECTORISED
#define MTDPP_VECTORISED
#endif

extern void mtdpp_blas_init(void);
extern bool mtdpp_linalg_set_reproducible(bool on);
extern bool mtdpp_cholesky(double *A, int n);
extern double mtdpp_cholesky_logdet(const double *L, int n);
extern bool mtdpp_cholesky_upper(double *A, int n);
extern void mtdpp_cholesky_upper_solve(const double *U, int n, double *b);
extern void mtdpp_cholesky_inverse(double *A, int n);
extern void mtdpp_cholesky_solve(const double *L, int n, double *B, int m);
extern void mtdpp_gemm_nt(int m, int n, int k, const double *A, int lda,
						  const double *B, int ldb, double *C, int ldc);
extern void mtdpp_trsm_right_lt(int m, int n, const double *L, double *B);
extern void mtdpp_symmetric_eigen(double *A, int n, double *W);
extern void mtdpp_gemm_tn(int m, int n, int k, const double *A, int lda,
						  const double *B, int ldb, double *C, int ldc);
extern bool mtdpp_spd_inverse_float(float *A, int n);
extern Size mtdpp_spd_inverse_float_memory(int n);
extern void mtdpp_gemm_nn(int m, int n, int k, const double *A, int lda,
						  const double *B, int ldb, double *C, int ldc);
extern void mtdpp_gemv_float(int m, int k, const float *A, const float *x, float *y);
extern double mtdpp_log_p_one(double log_z);
extern double mtdpp_log_p_zero(double log_z);

/* linalg_fixed.c: products and a solve in a fixed order (reproducible mode) */
extern void mtdpp_fixed_gemm_nn(int m, int n, int k, const double *A, int lda,
								const double *B, int ldb, double *C, int ldc);
extern void mtdpp_fixed_gemm_nt(int m, int n, int k, const double *A, int lda,
								const double *B, int ldb, double *C, int ldc);
extern void mtdpp_fixed_gemm_tn(int m, int n, int k, const double *A, int lda,
								const double *B, int ldb, double *C, int ldc);
extern void mtdpp_fixed_trsm_right_lt(int m, int n, const double *L, double *B);

#endif							/* MTDPP_LINALG_H */
