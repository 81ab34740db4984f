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

/// Whether gemm calls go to a BLAS library.
bool gemmUsesBlas();

} // namespace accel::rt::cpu

#endif // ACCEL_RUNTIME_CPU_GEMM_H
