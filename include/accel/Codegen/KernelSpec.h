//===- KernelSpec.h - what one generated kernel computes -------*- C++ -*-===//
//
// A generated kernel is one family (rms_norm, add_rms_norm, residual_add,
// activation, gated_act, rotary) specialised for the shapes the plan knows
// at compile time (the hidden size, the intermediate size, heads and
// head_dim), in one variant per activation dtype (f32, bf16, f16: storage in
// that dtype, arithmetic in f32; norm weights and rotary tables f32). Each
// variant has its own vector width: 16 bytes of the dtype when the
// specialised row divides into them, else 1 (the scalar path).
//
// The launch contract (parameter list, grid rule, block size) is what the
// plan records (accel.plan.Kernel) and what runtime/cuda/GpuPlanKernels
// checks before it launches anything.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_CODEGEN_KERNELSPEC_H
#define ACCEL_CODEGEN_KERNELSPEC_H

#include <cstdint>
#include <string>
#include <vector>

namespace accel::codegen {

enum class Family { RmsNorm, AddRmsNorm, ResidualAdd, Activation, GatedAct, Rotary };

/// The activation dtypes a plan's kernels come in (the runtime picks one at
/// load: accel-run --dtype).
enum class ElemType { F32, BF16, F16 };
constexpr ElemType kAllElemTypes[] = {ElemType::F32, ElemType::BF16, ElemType::F16};

const char *familyName(Family f);
/// "f32", "bf16", "f16": the runtime's dtype names, and MLIR's type names.
const char *elemTypeName(ElemType t);
unsigned elemTypeBytes(ElemType t);

/// How the runtime sizes the grid (accel.plan.Kernel.Grid).
enum class GridRule {
  Rows,     // one block per row (norms: rows = elements / hidden; rotary: tokens)
  Elements, // grid-stride over elements / vector_width, block_size threads a block
};

struct KernelSpec {
  Family family = Family::RmsNorm;
  /// rms_norm, add_rms_norm: the row length (hidden). residual_add,
  /// activation: the last dimension, which only decides vectorisation
  /// (0: unknown, scalar). gated_act: the intermediate size I (input rows are
  /// 2 * I, gate first).
  int64_t hidden = 0;
  /// activation, gated_act: the transformer dialect's spelling ("silu", ...).
  std::string activation;
  /// rotary (half_split only): heads, head_dim, rotary_dim (even, at most
  /// head_dim), cos/sin tables instead of inverse frequencies, i64 positions.
  int64_t heads = 0, headDim = 0, rotaryDim = 0;
  bool tables = false;
  bool positions64 = true;

  /// The kernel's name in the plan, unique per specialisation:
  /// "rms_norm_h4096", "gated_act_silu_i11008", "rotary_h32_d128_r128_freq_p64".
  std::string name() const;
  bool operator<(const KernelSpec &o) const { return name() < o.name(); }
};

/// One dtype variant of a kernel.
struct KernelVariant {
  ElemType dtype = ElemType::F32;
  std::string symbol;   // the gpu.func / PTX entry: "<name>_<dtype>"
  unsigned vectorWidth = 1;
  unsigned blockSize = 32;
  /// sm_90+: the kernel starts with griddepcontrol.launch_dependents and
  /// griddepcontrol.wait, so the runtime may launch it with programmatic
  /// dependent launch (docs/codegen.md).
  bool dependentLaunch = false;
};

KernelVariant variantOf(const KernelSpec &spec, ElemType dtype);
GridRule gridRule(Family f);

/// The launch parameters in order, as "name:type" with type one of `act*`
/// (a pointer to activations in the variant's dtype), `f32*`, `i32*`, `i64*`,
/// `i64`, `f32`. The plan records them; the runtime checks them.
std::vector<std::string> kernelParams(const KernelSpec &spec);

} // namespace accel::codegen

#endif // ACCEL_CODEGEN_KERNELSPEC_H
