//===- MatMulNBits.cpp - com.microsoft MatMulNBits ------------------------===//
//
// Y = A @ dequant(B)^T (+ bias), B holding N rows of K `bits`-bit weights
// (2, 4 or 8) in blocks of block_size along K: B is uint8 [N, k_blocks,
// block_size * bits / 8], values packed low bits first. Each block has a
// scale (scales [N * k_blocks]) and a zero point: packed uint8 like B
// (rows of ceil(k_blocks * bits / 8) bytes), or in the scales' type, or
// absent (2^(bits-1)). g_idx [K], when given, names each k's block. The
// weights are dequantised to f32 once per call and multiplied by sgemm.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/onnx/ElementwiseUtil.h"

namespace accel::rt::onnx {

namespace {

Status kMatMulNBits(KernelContext &ctx) {
  const Tensor &a0 = *ctx.in(0), &b = *ctx.in(1), &scales0 = *ctx.in(2);
  const Tensor *zp = ctx.in(3), *gIdx = ctx.in(4), *bias = ctx.in(5);
  const int64_t K = ctx.attrInt("K", 0), N = ctx.attrInt("N", 0);
  const int64_t bits = ctx.attrInt("bits", 4), blockSize = ctx.attrInt("block_size", 0);
  ACCEL_RT_RETURN_IF_ERROR(checkAllowed(ctx, a0, kAllowFloat));
  if (K <= 0 || N <= 0 || blockSize <= 0)
    return ctx.error("attributes K, N and block_size must be positive");
  if (bits != 2 && bits != 4 && bits != 8)
    return ctx.unsupported("bits=" + std::to_string(bits) + " (2, 4 and 8 are supported)");
  if (a0.rank() < 1 || a0.dim(-1) != K)
    return ctx.error("A " + a0.describe() + " must end in K = " + std::to_string(K));
  const int64_t kBlocks = (K + blockSize - 1) / blockSize;
  const int64_t blob = blockSize * bits / 8;
  if (b.dtype() != DType::kU8 || b.numElements() != N * kBlocks * blob)
    return ctx.error("B " + b.describe() + " must be uint8 [" + std::to_string(N) + ", " +
                     std::to_string(kBlocks) + ", " + std::to_string(blob) + "]");
  if (scales0.numElements() != N * kBlocks)
    return ctx.error("scales " + scales0.describe() + " must hold N * k_blocks = " +
                     std::to_string(N * kBlocks) + " values");
  const std::vector<float> scales = scales0.toFloats();
  const int64_t zpRow = (kBlocks * bits + 7) / 8;
  std::vector<float> zpf;
  const uint8_t *zpPacked = nullptr;
  if (zp) {
    if (zp->dtype() == DType::kU8) {
      if (zp->numElements() != N * zpRow)
        return ctx.error("packed zero_points " + zp->describe() + " must hold " +
                         std::to_string(N * zpRow) + " bytes");
      zpPacked = zp->data<uint8_t>();
    } else if (isFloat(zp->dtype()) && zp->numElements() == N * kBlocks) {
      zpf = zp->toFloats();
    } else {
      return ctx.error("zero_points " + zp->describe() + " must be packed uint8 or one per block");
    }
  }
  std::vector<int64_t> group;
  if (gIdx) {
    ACCEL_RT_ASSIGN_OR_RETURN(group, readIndexTensor(ctx, *gIdx, "g_idx"));
    if (int64_t(group.size()) != K)
      return ctx.error("g_idx must hold K values, got " + gIdx->describe());
    for (int64_t g : group)
      if (g < 0 || g >= kBlocks)
        return ctx.error("g_idx value " + std::to_string(g) + " is not a block index");
  }
  const uint32_t mask = (1u << bits) - 1;
  const float defaultZp = float(1 << (bits - 1));
  Tensor w;
  ACCEL_RT_ASSIGN_OR_RETURN(w, Tensor::allocate(DType::kF32, {N, K}));
  float *pw = w.data<float>();
  const uint8_t *pb = b.data<uint8_t>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t blk = k / blockSize, i = k % blockSize;
      const int64_t sb = gIdx ? group[size_t(k)] : blk; // block of scale / zero point
      const int64_t bit = i * bits;
      const uint32_t q = (pb[(n * kBlocks + blk) * blob + bit / 8] >> (bit % 8)) & mask;
      float z = defaultZp;
      if (zpPacked) {
        const int64_t zbit = sb * bits;
        z = float((zpPacked[n * zpRow + zbit / 8] >> (zbit % 8)) & mask);
      } else if (!zpf.empty()) {
        z = zpf[size_t(n * kBlocks + sb)];
      }
      pw[n * K + k] = (float(q) - z) * scales[size_t(n * kBlocks + sb)];
    }
  Tensor a;
  ACCEL_RT_ASSIGN_OR_RETURN(a, convertTo(a0, DType::kF32));
  const int64_t M = a0.numElements() / K;
  Shape outShape = a0.shape();
  outShape.back() = N;
  Tensor y;
  ACCEL_RT_ASSIGN_OR_RETURN(y, Tensor::allocate(DType::kF32, outShape));
  float beta = 0.0f;
  if (bias) {
    if (bias->numElements() != N)
      return ctx.error("bias " + bias->describe() + " must hold N values");
    const std::vector<float> bv = bias->toFloats();
    for (int64_t m = 0; m < M; ++m)
      std::copy(bv.begin(), bv.end(), y.data<float>() + m * N);
    beta = 1.0f;
  }
  cpu::gemmF32(false, true, M, N, K, 1.0f, a.data<float>(), K, pw, K, beta, y.data<float>(), N);
  ACCEL_RT_ASSIGN_OR_RETURN(ctx.outputs[0], convertTo(y, a0.dtype()));
  return Status::ok();
}

} // namespace

void addMatMulNBitsKernel(KernelTable &ms) { ms["MatMulNBits"] = {kMatMulNBits, 3, 6, 1}; }

} // namespace accel::rt::onnx
