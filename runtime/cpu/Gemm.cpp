//===- Gemm.cpp - row-major GEMM on the CPU -------------------------------===//
#include "runtime/cpu/Gemm.h"

#include "core/DType.h"

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

/// Decodes `count` elements of row `row` of W into `out`.
void decodeRow(const void *w, WeightFormat format, int64_t ldw, int64_t row, int64_t count,
               float scale, float *out) {
  switch (format) {
  case WeightFormat::kF32: {
    const float *r = static_cast<const float *>(w) + row * ldw;
    std::copy(r, r + count, out);
    return;
  }
  case WeightFormat::kBF16: {
    const uint16_t *r = static_cast<const uint16_t *>(w) + row * ldw;
    for (int64_t i = 0; i < count; ++i)
      out[i] = bf16ToF32(r[i]);
    return;
  }
  case WeightFormat::kF16: {
    const uint16_t *r = static_cast<const uint16_t *>(w) + row * ldw;
    for (int64_t i = 0; i < count; ++i)
      out[i] = f16ToF32(r[i]);
    return;
  }
  case WeightFormat::kI8: {
    const int8_t *r = static_cast<const int8_t *>(w) + row * ldw;
    for (int64_t i = 0; i < count; ++i)
      out[i] = float(r[i]) * scale;
    return;
  }
  case WeightFormat::kF8E4M3FN: {
    // 256 entries: decode through a table built once.
    static const std::vector<float> table = [] {
      std::vector<float> t(256);
      for (int i = 0; i < 256; ++i)
        t[size_t(i)] = f8E4M3FNToF32(uint8_t(i));
      return t;
    }();
    const uint8_t *r = static_cast<const uint8_t *>(w) + row * ldw;
    for (int64_t i = 0; i < count; ++i)
      out[i] = table[r[i]] * scale;
    return;
  }
  }
}

} // namespace

void gemmF32Weights(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                    const void *w, WeightFormat format, int64_t ldw, const float *scales,
                    bool perChannel, float beta, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0)
    return;
  if (format == WeightFormat::kF32) {
    gemmF32(false, true, m, n, k, 1.0f, a, lda, static_cast<const float *>(w), ldw, beta, c,
            ldc);
    return;
  }
  const bool scaled = format == WeightFormat::kI8 || format == WeightFormat::kF8E4M3FN;
  // Blocks of output columns (weight rows): about 4 MiB of decoded f32.
  const int64_t block =
      std::max<int64_t>(1, std::min<int64_t>(n, (int64_t(1) << 20) / std::max<int64_t>(k, 1)));
  std::vector<float> buf(size_t(block * k));
  for (int64_t j0 = 0; j0 < n; j0 += block) {
    const int64_t nb = std::min(block, n - j0);
    for (int64_t j = 0; j < nb; ++j) {
      const float s = !scaled ? 1.0f : scales[perChannel ? j0 + j : 0];
      decodeRow(w, format, ldw, j0 + j, k, s, buf.data() + size_t(j * k));
    }
    gemmF32(false, true, m, nb, k, 1.0f, a, lda, buf.data(), k, beta, c + j0, ldc);
  }
}

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
