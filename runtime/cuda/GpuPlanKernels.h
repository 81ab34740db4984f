//===- GpuPlanKernels.h - the kernels a plan carries, on the GPU -*- C++ -*-===//
//
// GPU plans carry the kernels the compiler generated (lib/Codegen,
// docs/codegen.md): one module as PTX and, usually, as a cubin for the
// plan's SM. load() brings it onto the device with cuModuleLoadDataEx: the
// cubin when the GPU's SM is the plan's, else the PTX, which the driver
// compiles for the GPU at hand (so an sm_80 plan runs on an sm_90 GPU).
// $ACCEL_GPU_FORCE_PTX=1 takes the PTX even when the cubin would do.
//
// A step that names a generated kernel (its `kernel` attribute) runs it
// through prepareGeneratedStep(); every other step keeps the runtime's
// hand-written kernels (runtime/cuda/ops). Before anything is launched, each
// kernel's recorded parameter list is checked against the one this runtime
// passes, so a plan from a mismatched accelc fails at load in one sentence.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CUDA_GPUPLANKERNELS_H
#define ACCEL_RUNTIME_CUDA_GPUPLANKERNELS_H

#include "runtime/cuda/GpuSteps.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace accel::rt::engine {

/// One generated kernel, resolved for the compute dtype.
struct PlanKernel {
  std::string name, family;
  gpu::CuFunction fn = nullptr;
  unsigned vectorWidth = 1, blockSize = 32;
  bool rowsGrid = false; // else grid-stride over elements
  bool dependent = false; // starts with griddepcontrol (KernelModule.dependent_launch)
  std::map<std::string, int64_t> ints; // the specialisation (hidden, heads, ...)
  std::string activation;
  int64_t spec(const std::string &key) const {
    auto it = ints.find(key);
    return it == ints.end() ? 0 : it->second;
  }
};

class GpuPlanKernels {
public:
  /// The plan's generated kernels on `gpu`, in the variant of `dtype`. A plan
  /// without generated kernels gives an empty set.
  static StatusOr<std::unique_ptr<GpuPlanKernels>> load(const plan::PlanFile &plan,
                                                        gpu::GpuContext &gpu, DType dtype);
  ~GpuPlanKernels();
  GpuPlanKernels(const GpuPlanKernels &) = delete;
  GpuPlanKernels &operator=(const GpuPlanKernels &) = delete;

  bool empty() const { return kernels_.empty(); }
  size_t size() const { return kernels_.size(); }
  const PlanKernel *find(const std::string &name) const;
  /// "cubin for sm_90" or "PTX for sm_80, compiled by the driver for sm_90".
  const std::string &image() const { return image_; }

private:
  GpuPlanKernels() = default;
  const CudaApi *api_ = nullptr;
  CuModule module_ = nullptr;
  std::map<std::string, PlanKernel> kernels_;
  std::string image_;
};

/// The generated kernel the step names (its `kernel` attribute), or null
/// when it names none or the context has no plan kernels. A name the plan
/// does not define, or a kernel of another family, is an error.
StatusOr<const PlanKernel *> stepPlanKernel(const accel::plan::Step &step,
                                            const GpuPrepareContext &ctx, const char *family);

/// The generated gated activation of a gated_mlp step with fused gate_up
/// (its `kernel` attribute), checked against the step's `kind`; null when it
/// names none.
StatusOr<const PlanKernel *> gatedMlpPlanKernel(const accel::plan::Step &step,
                                                const GpuPrepareContext &ctx);

/// The call of a launch step that names a generated kernel (rms_norm,
/// add_rms_norm, residual_add, activation, gated_act, rotary), or nullopt
/// when it names none.
StatusOr<std::optional<GpuKernel>> prepareGeneratedStep(const plan::PlanFile &plan,
                                                        const accel::plan::Step &step,
                                                        const GpuPrepareContext &ctx);

/// gated_act through a generated kernel: x [rows, 2I] (gate first) → out
/// [rows, I] (gated_mlp's activation between its two GEMMs).
Status launchGatedAct(GpuRunState &st, const PlanKernel &k, const DeviceTensor &x,
                      const DeviceTensor &out);

} // namespace accel::rt::engine

#endif // ACCEL_RUNTIME_CUDA_GPUPLANKERNELS_H
