//===- OnnxKernels.h - reference CPU kernels for ONNX operators -*- C++ -*-===//
//
// Runs one ONNX operator on runtime tensors, with the semantics of the ONNX
// spec (opsets 13-23). Two users: the CPU backend of accel-run, which runs
// graphs (or subgraphs raising did not recognise) op by op, and the compiler,
// which evaluates subgraphs with the same kernels (a mask subgraph, cos/sin
// tables).
//
// Floating ops compute in f32 (f64 for f64) and store back in the input's
// dtype; integer ops are exact in their own type. Broadcasting is numpy's.
// Errors are one sentence naming the op: "Reshape: cannot reshape 24
// elements into [5, -1]".
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_CPU_ONNX_ONNXKERNELS_H
#define ACCEL_RUNTIME_CPU_ONNX_ONNXKERNELS_H

#include "core/Status.h"
#include "core/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace accel::rt::onnx {

/// One attribute value, as the ONNX node carries it.
using AttrValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>,
                 std::vector<float>, std::vector<std::string>, Tensor>;
using AttrMap = std::map<std::string, AttrValue, std::less<>>;

/// Runs one ONNX operator. inputs[i] may be nullptr for an absent optional
/// input. `outputs` is resized to the number of outputs the op produces
/// (numOutputs: how many the node asks for, to honour optional outputs; 0 is
/// taken as 1). Outputs never alias memory the caller must not share: they
/// are fresh allocations or share an input's storage (Identity, Reshape,
/// Squeeze, ... return views of their input).
Status runOp(std::string_view opType, std::string_view domain,
             const AttrMap &attrs, const std::vector<const Tensor *> &inputs,
             size_t numOutputs, std::vector<Tensor> &outputs);

/// Whether runOp knows `opType` in `domain` ("", "ai.onnx" or
/// "com.microsoft").
bool isSupported(std::string_view opType, std::string_view domain);

/// Every supported operator as "Op" or "com.microsoft.Op", sorted.
std::vector<std::string> supportedOps();

} // namespace accel::rt::onnx

#endif // ACCEL_RUNTIME_CPU_ONNX_ONNXKERNELS_H
