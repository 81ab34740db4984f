//===- Gemm.cpp - row-major GEMM on the CPU -------------------------------===//
#include "runtime/cpu/Gemm.h"

#include <algorithm>
#include <climits>
#include <vector>

#ifndef ACCEL_HAVE_CBLAS
#define ACCEL_HAVE_CBLAS 0
#endif
#if ACCEL_HAVE_CBLAS
#include <cblas.h>
#endif

namespace accel::rt::cpu {

namespace {

template <typename T>
void scaleC(int64_t m, int64_t n, T beta, T *c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    T *row = c + i * ldc;
    if (beta == T(0))
      std::fill(row, row + n, T(0));
    else if (beta != T(1))
      for (int64_t j = 0; j < n; ++j)
        row[j] *= beta;
  }
}

/// The fallback: C rows accumulate alpha * A[i, p] * B[p, :] (B read by
/// rows, so the inner loop vectorises); a transposed B is copied once.
template <typename T>
void gemmLoop(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha,
              const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
              int64_t ldc) {
  scaleC(m, n, beta, c, ldc);
  std::vector<T> bt;
  if (transB) {
    bt.resize(size_t(k * n));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        bt[size_t(p * n + j)] = b[j * ldb + p];
    b = bt.data();
    ldb = n;
  }
  for (int64_t i = 0; i < m; ++i) {
    T *crow = c + i * ldc;
    for (int64_t p = 0; p < k; ++p) {
      const T av = alpha * (transA ? a[p * lda + i] : a[i * lda + p]);
      const T *brow = b + p * ldb;
      for (int64_t j = 0; j < n; ++j)
        crow[j] += av * brow[j];
    }
  }
}

bool fitsInt(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
             int64_t ldc) {
  for (int64_t v : {m, n, k, lda, ldb, ldc})
    if (v > INT_MAX)
      return false;
  return true;
}

} // namespace

bool gemmUsesBlas() { return ACCEL_HAVE_CBLAS != 0; }

namespace {

#if ACCEL_HAVE_CBLAS
void cblasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
               const float *a, int lda, const float *b, int ldb, float beta, float *c,
               int ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void cblasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
               const double *a, int lda, const double *b, int ldb, double beta, double *c,
               int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
#endif

/// C = alpha * op(A) op(B) + beta * C through BLAS when the sizes fit its
/// int arguments, else the plain loop.
template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha, const T *a,
          int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    scaleC(m, n, beta, c, ldc);
    return;
  }
#if ACCEL_HAVE_CBLAS
  if (fitsInt(m, n, k, lda, ldb, ldc)) {
    if (beta == T(0))
      scaleC(m, n, T(0), c, ldc); // never let NaN garbage in C through
    cblasGemm(transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
    return;
  }
#endif
  gemmLoop(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

} // namespace

void gemmF32(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
             float alpha, const float *a, int64_t lda, const float *b,
             int64_t ldb, float beta, float *c, int64_t ldc) {
  gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemmF64(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
             double alpha, const double *a, int64_t lda, const double *b,
             int64_t ldb, double beta, double *c, int64_t ldc) {
  gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

} // namespace accel::rt::cpu
