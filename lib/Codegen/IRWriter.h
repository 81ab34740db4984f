//===- IRWriter.h - writes one gpu.func of a generated kernel ---*- C++ -*-===//
//
// The kernel families (NormKernels.cpp, PointwiseKernels.cpp,
// RotaryKernels.cpp) write their gpu.func in MLIR's textual form through
// this class, specialised by shape and dtype; KernelModule.cpp parses the
// whole gpu.module back and verifies it, so every kernel is checked IR
// before it is lowered. Memory is addressed through the LLVM dialect
// (!llvm.ptr<1> arguments, llvm.getelementptr, llvm.load/llvm.store with an
// explicit alignment): a vector<V x T> load with alignment 16 is what
// becomes one 16-byte `ld.global.v4` in PTX. Arithmetic is arith/math on
// vector<V x f32>, loops are scf.for, the block reduction gpu.shuffle and a
// workgroup buffer.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_LIB_CODEGEN_IRWRITER_H
#define ACCEL_LIB_CODEGEN_IRWRITER_H

#include "accel/Codegen/KernelSpec.h"

#include <map>
#include <string>

namespace accel::codegen {

class IRWriter {
public:
  explicit IRWriter(const KernelVariant &v);

  const KernelVariant &variant() const { return v_; }
  unsigned width() const { return v_.vectorWidth; }
  /// Element and vector types: "bf16", "vector<8xbf16>", "vector<8xf32>".
  const std::string &elem() const { return elem_; }
  const std::string &vecT() const { return vecT_; }
  const std::string &vecF() const { return vecF_; }
  /// Alignment in bytes of a vector of activations / of f32.
  unsigned alignT() const;
  unsigned alignF() const;

  /// Appends one line of the body; `fresh()` names a new SSA value.
  void line(const std::string &text);
  std::string fresh();
  /// `%r = <rhs>` on a fresh name; returns the name.
  std::string def(const std::string &rhs);

  // Constants (cached: each is defined once, at its first use, in the entry block).
  std::string index(int64_t v);
  std::string i64(int64_t v);
  std::string f32(double v);
  std::string splat(double v); // vector<V x f32>

  std::string toI64(const std::string &index);
  std::string toIndex(const std::string &i64v);
  /// base + offset elements of `elemType` (an LLVM element type, possibly a vector).
  std::string gep(const std::string &base, const std::string &offsetI64,
                  const std::string &elemType);
  std::string load(const std::string &ptr, const std::string &type, unsigned align);
  void store(const std::string &value, const std::string &ptr, const std::string &type,
             unsigned align);
  /// Activations to f32 and back (identity for f32; truncf rounds to nearest even).
  std::string extend(const std::string &vt);
  std::string truncate(const std::string &vf);
  /// The sum over the block of an f32 (every thread gets it): a butterfly
  /// over each warp, then through `scratch` (32 floats of workgroup memory)
  /// across warps when the block has more than one.
  std::string blockSum(const std::string &value, const std::string &scratch);

  /// The whole gpu.func: `signature` is what follows `gpu.func @symbol`.
  std::string finish(const std::string &signature, bool scratch) const;

private:
  KernelVariant v_;
  std::string elem_, vecT_, vecF_;
  std::string consts_, body_;
  std::map<std::string, std::string> constCache_;
  unsigned next_ = 0;
  std::string constant(const std::string &key, const std::string &rhs);
};

/// kind(x) on a vector<V x f32> (the runtime's formulas, runtime/cuda/kernels/Common.cuh);
/// "" for an unknown kind.
std::string emitActivation(IRWriter &w, const std::string &kind, const std::string &x);
bool isKnownActivation(const std::string &kind);

/// The gpu.func of one variant of each family.
std::string emitNormKernel(const KernelSpec &spec, const KernelVariant &v);
std::string emitPointwiseKernel(const KernelSpec &spec, const KernelVariant &v);
std::string emitRotaryKernel(const KernelSpec &spec, const KernelVariant &v);

} // namespace accel::codegen

#endif // ACCEL_LIB_CODEGEN_IRWRITER_H
