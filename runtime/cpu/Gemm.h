//===- Gemm.h - row-major GEMM on the CPU -----------------------*- C++ -*-===//
//
// C = alpha * op(A) * op(B) + beta * C on row-major matrices, through
// OpenBLAS when the build found it and a plain blocked loop otherwise. With
// beta == 0, C is not read (NaNs in it do not propagate).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_GEMM_H
#define ACCEL_RUNTIME_CPU_GEMM_H

#include <cstdint>

namespace accel::rt::cpu {

/// op(A) is m x k (A is k x m when transA), op(B) is k x n; lda/ldb/ldc are
/// the row strides of A, B and C as stored.
void gemmF32(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
             float alpha, const float *a, int64_t lda, const float *b,
             int64_t ldb, float beta, float *c, int64_t ldc);
void gemmF64(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
             double alpha, const double *a, int64_t lda, const double *b,
             int64_t ldb, double beta, double *c, int64_t ldc);

/// How the rows of a stored weight decode to f32 (gemmF32Weights).
enum class WeightFormat {
  kF32,
  kBF16,    ///< uint16 bf16 bit patterns
  kF16,     ///< uint16 IEEE half bit patterns
  kI8,      ///< int8, times a scale
  kF8E4M3FN ///< uint8 f8E4M3FN bit patterns, times a scale
};

/// C[m, n] = A[m, k] * dequant(W)[n, k]^T (+ beta * C): a linear layer's GEMM
/// with a weight stored as torch's [out_features, in_features] rows of
/// `format`. For kI8 and kF8E4M3FN, row j is multiplied by scales[j]
/// (per-channel, `perChannel`) or by scales[0] (per-tensor); the other
/// formats take no scales. The weight is decoded a block of rows at a time
/// into a small f32 buffer and multiplied through gemmF32, so memory stays
/// bounded whatever the weight's size. ldw is W's row stride in elements.
void gemmF32Weights(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                    const void *w, WeightFormat format, int64_t ldw, const float *scales,
                    bool perChannel, float beta, float *c, int64_t ldc);

/// Whether gemm calls go to a BLAS library.
bool gemmUsesBlas();

} // namespace accel::rt::cpu

#endif // ACCEL_RUNTIME_CPU_GEMM_H
